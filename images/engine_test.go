package images_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/images"
	"github.com/envgap/envgap/internal/testenv"
	"github.com/envgap/envgap/schemas"
)

// needEngine skips (or fails, with ENVGAP_REQUIRE_ENGINE=1: testenv) without an engine.
func needEngine(t *testing.T) *sandbox.Engine {
	t.Helper()
	e, err := sandbox.Connect(context.Background(), "")
	if err != nil {
		testenv.Missing(t, "no container engine: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// TestBuildSkipsUpToDateImage builds (or finds) the python image on the
// engine's base and checks a second Build is a no-op.
func TestBuildSkipsUpToDateImage(t *testing.T) {
	if testing.Short() {
		t.Skip("may build an image")
	}
	e := needEngine(t)
	ctx := context.Background()
	opts := images.Options{Only: []string{"python"}}
	first, err := images.Build(ctx, e.Client(), opts)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	second, err := images.Build(ctx, e.Client(), opts)
	if err != nil {
		t.Fatalf("second Build: %v", err)
	}
	if len(second) != 1 || !second[0].Skipped || second[0].ID != first[0].ID || second[0].Inputs != first[0].Inputs {
		t.Fatalf("second Build did not skip the up-to-date image: first %+v second %+v", first, second)
	}
	img, err := e.Client().ImageInspect(ctx, images.Python) // the bare card name resolves too
	if err != nil || img.ID != first[0].ID || img.Config.Labels[images.InputsLabel] != first[0].Inputs {
		t.Fatalf("bare name %s: %v, id %s labels %v; want %s", images.Python, err, img.ID, img.Config.Labels, first[0].ID)
	}
}

// TestImagesBehave runs each built evaluation image through the sandbox and
// checks what recipes rely on: the tools of the card's Languages table, the
// directories, and the absence of development libraries.
func TestImagesBehave(t *testing.T) {
	e := needEngine(t)
	common := "command -v strace bash >/dev/null && test -d /work && test -d /evidence && test \"$(pwd)\" = /work && " +
		"! test -e /usr/include/openssl/ssl.h && ! test -e /usr/include/curl/curl.h && ! test -e /usr/include/sqlite3.h"
	tests := []struct {
		image string
		files []sandbox.File
		steps []string
		want  []string // substrings of the joined output
	}{
		{images.Python, []sandbox.File{
			{Path: "setup.py", Content: []byte("from setuptools import setup\nsetup(name='demo', version='1.0', py_modules=['demo'])\n")},
			{Path: "demo.py", Content: []byte("print('demo ok')\n")},
		}, []string{common, "python3 --version", "pip install --no-build-isolation . && python -c 'import demo'", "python3 -m venv /tmp/v && /tmp/v/bin/python -c 'print(1+1)'"},
			[]string{"Python 3.", "Successfully installed demo-1.0", "demo ok", "2"}},
		{images.JavaScript, []sandbox.File{{Path: "index.js", Content: []byte("console.log('node', process.versions.node.split('.')[0])\n")}},
			[]string{common, "node index.js", "npm --version"}, []string{"node 20"}},
		{images.Java, []sandbox.File{
			{Path: "pom.xml", Content: []byte(`<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>demo</groupId><artifactId>demo</artifactId><version>1.0</version><packaging>jar</packaging>
<properties><maven.compiler.source>17</maven.compiler.source><maven.compiler.target>17</maven.compiler.target></properties></project>`)},
			{Path: "src/main/java/demo/App.java", Content: []byte("package demo; public class App { public static void main(String[] a) { System.out.println(\"java ok\"); } }\n")},
		}, []string{common, "java -version 2>&1 | head -1", "mvn -B -q -o package && java -cp target/demo-1.0.jar demo.App"},
			[]string{"openjdk version \"17", "java ok"}},
		{images.Cpp, []sandbox.File{
			{Path: "CMakeLists.txt", Content: []byte("cmake_minimum_required(VERSION 3.10)\nproject(d CXX)\nfind_package(ZLIB REQUIRED)\nadd_executable(d m.cpp)\ntarget_link_libraries(d ZLIB::ZLIB)\n")},
			{Path: "m.cpp", Content: []byte("#include <zlib.h>\n#include <iostream>\nint main() { std::cout << \"zlib \" << zlibVersion() << std::endl; }\n")},
		}, []string{common, "cmake -S . -B build >/dev/null && cmake --build build >/dev/null && ./build/d", "git --version && pkg-config --version", "! pkg-config --exists openssl"},
			[]string{"zlib 1.", "git version"}},
	}
	for _, tt := range tests {
		t.Run(tt.image, func(t *testing.T) {
			spec := sandbox.Spec{Image: schemas.ImageRef(tt.image), Files: tt.files}
			for i, s := range tt.steps {
				spec.Steps = append(spec.Steps, sandbox.Step{Name: string(rune('a' + i)), Command: s})
			}
			res, err := e.Run(context.Background(), spec)
			if errors.Is(err, sandbox.ErrImageMissing) {
				testenv.Missing(t, "%v", err)
			}
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			var all strings.Builder
			for _, sr := range res.Steps {
				all.Write(sr.Output)
				if sr.ExitCode != 0 {
					t.Errorf("step %q exited %d: %s", sr.Command, sr.ExitCode, sr.Output)
				}
			}
			for _, w := range tt.want {
				if !strings.Contains(all.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, all.String())
				}
			}
		})
	}
}
