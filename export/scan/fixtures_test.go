package scan

import (
	"encoding/base64"
	"math/rand"
	"strings"
)

// Fake secrets of real shape, generated from a fixed seed: none of them was ever issued.
type fakeSecrets struct{ r *rand.Rand }

func newFakes(seed int64) *fakeSecrets { return &fakeSecrets{rand.New(rand.NewSource(seed))} }

const (
	alnum    = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	lowerNum = "abcdefghijklmnopqrstuvwxyz0123456789"
	digits   = "0123456789"
	awsIDSet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	b64Set   = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
)

func (f *fakeSecrets) pick(set string, n int) string {
	var b strings.Builder
	for range n {
		b.WriteByte(set[f.r.Intn(len(set))])
	}
	return b.String()
}

func (f *fakeSecrets) githubPAT() string  { return "ghp_" + f.pick(alnum, 36) }
func (f *fakeSecrets) githubFine() string { return "github_pat_" + f.pick(alnum+"_", 82) }
func (f *fakeSecrets) awsKeyID() string   { return "AKIA" + f.pick(awsIDSet, 16) }
func (f *fakeSecrets) awsSecret() string  { return f.pick(b64Set, 40) }
func (f *fakeSecrets) slackBot() string {
	return "xoxb-" + f.pick(digits, 12) + "-" + f.pick(digits, 13) + "-" + f.pick(alnum, 24)
}
func (f *fakeSecrets) stripeLive() string  { return "sk_live_" + f.pick(alnum, 24) }
func (f *fakeSecrets) gitlabPAT() string   { return "glpat-" + f.pick(alnum, 20) }
func (f *fakeSecrets) npmToken() string    { return "npm_" + f.pick(lowerNum, 36) }
func (f *fakeSecrets) bearerValue() string { return f.pick(alnum, 40) }

// pemKey returns a PEM block with a body of random base64 lines, and the body.
func (f *fakeSecrets) pemKey() string {
	raw := make([]byte, 600)
	f.r.Read(raw)
	body := base64.StdEncoding.EncodeToString(raw)
	var b strings.Builder
	b.WriteString("-----BEGIN RSA PRIVATE KEY-----\n")
	for len(body) > 64 {
		b.WriteString(body[:64] + "\n")
		body = body[64:]
	}
	b.WriteString(body + "\n-----END RSA PRIVATE KEY-----\n")
	return b.String()
}

// cleanFiles are real-looking sources with nothing secret in them.
var cleanFiles = map[string]string{
	"setup.py": `#! /usr/bin/env python3
from setuptools import setup, find_packages

with open("README.md", encoding="utf-8") as fh:
    long_description = fh.read()

setup(
    name="pyroaring",
    version="0.4.2",
    description="Fast and lightweight set for unsigned 32 bits integers.",
    long_description=long_description,
    long_description_content_type="text/markdown",
    setup_requires=["cython<3.0.0"],
    install_requires=["requests>=2.28", "keyring>=23.0"],
    packages=find_packages(exclude=["tests"]),
    python_requires=">=3.8",
    classifiers=["License :: OSI Approved :: MIT License"],
)
`,
	"package.json": `{
  "name": "weather-cli",
  "version": "1.0.0",
  "main": "index.js",
  "scripts": {"start": "node index.js", "test": "jest"},
  "dependencies": {"axios": "^1.6.0", "commander": "^11.1.0", "dotenv": "^16.3.1"},
  "devDependencies": {"jest": "^29.7.0"}
}
`,
	"index.js": `require('dotenv').config();
const axios = require('axios');
const { program } = require('commander');

const apiKey = process.env.WEATHER_API_KEY;
const token = process.env.GITHUB_TOKEN || '';

async function fetchWeather(city) {
  const url = 'https://api.example.com/v1/weather?city=' + encodeURIComponent(city);
  const res = await axios.get(url, { headers: { 'X-Api-Key': apiKey } });
  return res.data;
}

program.argument('<city>').action(async (city) => {
  const data = await fetchWeather(city);
  console.log(JSON.stringify(data, null, 2));
});
program.parse();
`,
	"src/main/java/com/example/App.java": `package com.example;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.URI;

public class App {
    private static final String API_KEY_ENV = "SERVICE_API_KEY";

    public static void main(String[] args) throws Exception {
        String key = System.getenv(API_KEY_ENV);
        HttpClient client = HttpClient.newHttpClient();
        HttpRequest req = HttpRequest.newBuilder(URI.create("https://example.com/api"))
            .header("Authorization", "Bearer " + key)
            .build();
        System.out.println(client.send(req, HttpResponse.BodyHandlers.ofString()).body());
    }
}
`,
	"CMakeLists.txt": `cmake_minimum_required(VERSION 3.16)
project(imgtool CXX)
set(CMAKE_CXX_STANDARD 17)
find_package(PkgConfig REQUIRED)
pkg_check_modules(PNG REQUIRED libpng)
add_executable(imgtool src/main.cpp src/image.cpp)
target_include_directories(imgtool PRIVATE ${PNG_INCLUDE_DIRS})
target_link_libraries(imgtool PRIVATE ${PNG_LIBRARIES})
`,
	"src/main.cpp": `#include <iostream>
#include <string>
#include "image.h"

int main(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << "usage: imgtool FILE.png" << std::endl;
        return 1;
    }
    std::string path = argv[1];
    Image img = Image::load(path);
    std::cout << img.width() << "x" << img.height() << std::endl;
    return 0;
}
`,
}
