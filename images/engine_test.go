package images_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/envgap/envgap/core/deps"
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

// testPrefix is ENVGAP_TEST_IMAGE_PREFIX: the tests of this file then build and run the
// images named with it (envgap build-images --name-prefix), so that a changed recipe is
// tried on an engine whose unprefixed images others are using.
var testPrefix = os.Getenv("ENVGAP_TEST_IMAGE_PREFIX")

// TestBuildSkipsUpToDateImage builds (or finds) the python image on the
// engine's base and checks a second Build is a no-op.
func TestBuildSkipsUpToDateImage(t *testing.T) {
	if testing.Short() {
		t.Skip("may build an image")
	}
	e := needEngine(t)
	ctx := context.Background()
	opts := images.Options{Only: []string{"python"}, NamePrefix: testPrefix}
	first, err := images.Build(ctx, e.Client(), opts)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	second, err := images.Build(ctx, e.Client(), opts)
	if err != nil {
		t.Fatalf("second Build: %v", err)
	}
	if len(second) != 2 || !second[0].Skipped || !second[1].Skipped || second[1].ID != first[1].ID || second[1].Inputs != first[1].Inputs ||
		second[0].Name != testPrefix+images.Common || second[1].BaseID != first[0].ID {
		t.Fatalf("second Build did not skip the up-to-date images: first %+v second %+v", first, second)
	}
	img, err := e.Client().ImageInspect(ctx, testPrefix+images.Python) // the bare card name resolves too
	if err != nil || img.ID != first[1].ID || img.Config.Labels[images.InputsLabel] != first[1].Inputs {
		t.Fatalf("bare name %s: %v, id %s labels %v; want %s", images.Python, err, img.ID, img.Config.Labels, first[1].ID)
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
			spec := sandbox.Spec{Image: schemas.ImageRef(testPrefix + tt.image), Files: tt.files}
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

// TestCppD2FromConfigure runs a real CMake configure and build in envgap-cpp-eval and
// reads C++ D2 the way the core does (deps.D2Commands' command, deps.CMakeInstalled):
// find_package(ZLIB), find_package(Foo CONFIG) from the project's own prefix, a
// pkg-config module, and a fetched project (a local archive, no network) that fetches
// another in its own build: D2 holds both fetched projects, beyond what the project
// declared (the paper's "fetched projects recursively pull an additional library").
func TestCppD2FromConfigure(t *testing.T) {
	e := needEngine(t)
	files := []sandbox.File{
		{Path: "CMakeLists.txt", Content: []byte(`cmake_minimum_required(VERSION 3.16)
project(d CXX)
include(FetchContent)
find_package(ZLIB REQUIRED)
list(APPEND CMAKE_PREFIX_PATH ${CMAKE_SOURCE_DIR}/prefix)
find_package(Foo CONFIG REQUIRED)
find_package(Threads)
find_package(PkgConfig)
pkg_check_modules(ZZ QUIET zlib)
FetchContent_Declare(MyLib URL ${CMAKE_SOURCE_DIR}/third_party/mylib.tar.gz)
FetchContent_MakeAvailable(MyLib)
add_executable(d m.cpp)
target_link_libraries(d ZLIB::ZLIB mylib)
`)},
		{Path: "m.cpp", Content: []byte("#include <zlib.h>\n#include <iostream>\nint mylib();\nint main() { std::cout << \"zlib \" << zlibVersion() << \" \" << mylib() << std::endl; }\n")},
		{Path: "prefix/lib/cmake/Foo/FooConfig.cmake", Content: []byte("set(Foo_FOUND TRUE)\n")},
		{Path: "src/mylib/CMakeLists.txt", Content: []byte("cmake_minimum_required(VERSION 3.16)\nproject(mylib CXX)\ninclude(FetchContent)\n" +
			"FetchContent_Declare(inner URL ${CMAKE_CURRENT_SOURCE_DIR}/inner.tar.gz)\nFetchContent_MakeAvailable(inner)\n" +
			"add_library(mylib STATIC mylib.cpp)\ntarget_link_libraries(mylib inner)\n")},
		{Path: "src/mylib/mylib.cpp", Content: []byte("int inner(); int mylib() { return inner() + 1; }\n")},
		{Path: "src/inner/CMakeLists.txt", Content: []byte("cmake_minimum_required(VERSION 3.16)\nproject(inner CXX)\nadd_library(inner STATIC inner.cpp)\n")},
		{Path: "src/inner/inner.cpp", Content: []byte("int inner() { return 41; }\n")},
	}
	_, after := deps.D2Commands(schemas.EcosystemCPP, nil)
	steps := []string{
		"mkdir -p third_party && tar czf src/mylib/inner.tar.gz -C src inner && tar czf third_party/mylib.tar.gz -C src mylib && rm -rf src",
		"cmake -S . -B build >/dev/null 2>&1 && cmake --build build >/dev/null && ./build/d",
		after,
	}
	spec := sandbox.Spec{Image: schemas.ImageRef(testPrefix + images.Cpp), Files: files, Collect: []string{deps.EvidenceDir}}
	for i, s := range steps {
		spec.Steps = append(spec.Steps, sandbox.Step{Name: string(rune('a' + i)), Command: s})
	}
	res, err := e.Run(context.Background(), spec)
	if errors.Is(err, sandbox.ErrImageMissing) {
		testenv.Missing(t, "%v", err)
	}
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, sr := range res.Steps {
		if sr.ExitCode != 0 {
			t.Fatalf("step %q exited %d: %s", sr.Command, sr.ExitCode, sr.Output)
		}
	}
	if !strings.Contains(string(res.Steps[1].Output), "zlib 1.") || !strings.Contains(string(res.Steps[1].Output), " 42") {
		t.Errorf("the program did not run: %s", res.Steps[1].Output)
	}
	ds, ok := deps.CMakeInstalled(res.Collected[deps.D2CMakePath])
	if !ok {
		t.Fatalf("no CMake cache collected (%d files: %v)", len(res.Collected), res.Missing)
	}
	var got []string
	for _, d := range ds.Deps {
		got = append(got, deps.Key(schemas.EcosystemCPP, d.Name))
	}
	if strings.Join(got, " ") != "foo zlib inner mylib zlib" {
		t.Errorf("D2 = %v (keys %v), want Foo, ZLIB, inner, mylib and pkg-config's zlib", ds.Deps, got)
	}
}
