package schemas

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestFailureSignature(t *testing.T) {
	tests := []struct {
		file string
		eco  Ecosystem
		want string // "" means no signature
	}{
		{"pip_no_version.txt", EcosystemPython, "ERROR: Could not find a version that satisfies the requirement torch==1.4.0 (from versions: 1.11.0, 1.12.0, 1.12.1, 1.13.0)"},
		{"pip_cython3.txt", EcosystemPython, "error: subprocess-exited-with-error"},
		{"pip_setup_no_module.txt", EcosystemPython, "ModuleNotFoundError: No module named 'Cython'"},
		{"pip_header.txt", EcosystemPython, "./psycopg/psycopg.h:36:10: fatal error: libpq-fe.h: No such file or directory"},
		{"pip_resolution.txt", EcosystemPython, "ERROR: Cannot install -r requirements.txt (line 2) and urllib3==2.0.4 because these package versions have conflicting dependencies."},
		{"py_import_error.txt", EcosystemPython, "ImportError: cannot import name 'escape' from 'jinja2' (/usr/local/lib/python3.10/dist-packages/jinja2/__init__.py)"},
		{"issue_body_python.txt", EcosystemPython, "ModuleNotFoundError: No module named 'pkg_resources'"},
		{"npm_eresolve.txt", EcosystemJavaScript, "npm ERR! code ERESOLVE"},
		{"npm10_etarget.txt", EcosystemJavaScript, "npm error notarget No matching version found for left-pad@^9.9.9."},
		{"npm_e404.txt", EcosystemJavaScript, "npm ERR! 404  'this-package-does-not-exist-xyz@^1.0.0' is not in this registry."},
		{"node_cannot_find.txt", EcosystemJavaScript, "Error: Cannot find module 'express'"},
		{"node_esm.txt", EcosystemJavaScript, "Error [ERR_REQUIRE_ESM]: require() of ES Module /work/node_modules/chalk/source/index.js from /work/index.js not supported."},
		{"node_not_function.txt", EcosystemJavaScript, ""},
		{"node_path_not_exported.txt", EcosystemJavaScript, `Error [ERR_PACKAGE_PATH_NOT_EXPORTED]: Package subpath './v4' is not defined by "exports" in /work/node_modules/uuid/package.json`},
		{"pybuild_missing.txt", EcosystemPython, "ERROR Missing dependencies:"},
		{"py_traceback_attribute.txt", EcosystemPython, ""},
		{"npm_gyp.txt", EcosystemJavaScript, "npm ERR! gyp ERR! stack Error: `gyp` failed with exit code: 1"},
		{"mvn_resolve.txt", EcosystemJava, "[ERROR] Failed to execute goal on project demo: Could not resolve dependencies for project com.example:demo:jar:1.0-SNAPSHOT: Could not find artifact com.example:missing-lib:jar:9.9.9 in central (https://repo.maven.apache.org/maven2) -> [Help 1]"},
		{"mvn_package.txt", EcosystemJava, "[ERROR] /work/src/main/java/com/example/App.java:[3,23] package com.google.gson does not exist"},
		{"mvn_release.txt", EcosystemJava, "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.11.0:compile (default-compile) on project demo: Fatal error compiling: error: release version 21 not supported -> [Help 1]"},
		{"java_noclass.txt", EcosystemJava, `Exception in thread "main" java.lang.NoClassDefFoundError: com/google/gson/Gson`},
		{"cmake_openssl.txt", EcosystemCPP, "Could NOT find OpenSSL, try to set the path to OpenSSL root folder in the"},
		{"cmake_config.txt", EcosystemCPP, `By not providing "Findfmt.cmake" in CMAKE_MODULE_PATH this project has`},
		{"cpp_header.txt", EcosystemCPP, "/work/main.cpp:3:10: fatal error: openssl/ssl.h: No such file or directory"},
		{"cpp_link.txt", EcosystemCPP, "/usr/bin/ld: cannot find -lcurl: No such file or directory"},
		{"cpp_pkgconfig.txt", EcosystemCPP, "--   Package 'libcurl', required by 'virtual:world', not found"},
		{"cpp_run_so.txt", EcosystemCPP, "./build/app: error while loading shared libraries: libssl.so.1.1: cannot open shared object file: No such file or directory"},
		{"plain_ok.txt", EcosystemPython, ""},
		// Rules of another ecosystem do not apply...
		{"mvn_package.txt", EcosystemPython, ""},
		// ...but an unknown ecosystem uses all of them.
		{"cmake_openssl.txt", Ecosystem(""), "Could NOT find OpenSSL, try to set the path to OpenSSL root folder in the"},
	}
	for _, tt := range tests {
		t.Run(string(tt.eco)+"/"+tt.file, func(t *testing.T) {
			text := readSigFixture(t, tt.file)
			got, ok := FailureSignature(tt.eco, text)
			if ok != (tt.want != "") || got != tt.want {
				t.Fatalf("FailureSignature = %q, %v; want %q", got, ok, tt.want)
			}
			if !ok {
				return
			}
			re, err := regexp.Compile(FailureRegex(got))
			if err != nil {
				t.Fatalf("FailureRegex(%q) does not compile: %v", got, err)
			}
			if !re.MatchString(text) {
				t.Errorf("FailureRegex %q does not match the output it came from", re)
			}
		})
	}
}

func TestFailureSignatureCleansAndCaps(t *testing.T) {
	long := "ModuleNotFoundError: No module named '" + strings.Repeat("é", 400) + "'"
	tests := []struct {
		name, text, want string
	}{
		{"colour codes", "\x1b[31mnpm ERR!\x1b[0m code E404\r\n", "npm ERR! code E404"},
		{"crlf and quote", "foo\r\n> ModuleNotFoundError: No module named 'yaml'\r\n", "ModuleNotFoundError: No module named 'yaml'"},
		{"carriage return progress", "Downloading 10%\rDownloading 100%\rModuleNotFoundError: No module named 'x'", "ModuleNotFoundError: No module named 'x'"},
		{"first of equals", "ImportError: a\nImportError: b\n", "ImportError: a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eco := EcosystemPython
			if strings.Contains(tt.text, "npm") {
				eco = EcosystemJavaScript
			}
			got, ok := FailureSignature(eco, tt.text)
			if !ok || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, ok, tt.want)
			}
		})
	}
	got, ok := FailureSignature(EcosystemPython, long)
	if !ok || len(got) > MaxSignatureLen || !strings.HasPrefix(got, "ModuleNotFoundError") || !utf8Valid(got) {
		t.Fatalf("long line: got %d bytes %q, %v", len(got), got, ok)
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

func TestFailureRegex(t *testing.T) {
	tests := []struct {
		line  string
		match []string // the same failure printed elsewhere
		not   []string // a different failure
	}{
		{
			line:  "error: subprocess-exited-with-error",
			match: []string{"  error: subprocess-exited-with-error  "},
			not:   []string{"error: metadata-generation-failed"},
		},
		{
			line:  "ModuleNotFoundError: No module named 'Cython'",
			match: []string{`      ModuleNotFoundError: No module named "Cython"`, "ModuleNotFoundError:  No module named ‘Cython’"},
			not:   []string{"ModuleNotFoundError: No module named 'numpy'"},
		},
		{
			line: "ERROR: Could not find a version that satisfies the requirement torch==1.4.0 (from versions: 1.11.0, 1.12.0)",
			match: []string{
				"ERROR: Could not find a version that satisfies the requirement torch==1.4.0 (from versions: none)",
				"ERROR: Could not find a version that satisfies the requirement torch==1.5.1 (from versions: 1.13.0, 2.0.0, 2.0.1)",
			},
			not: []string{"ERROR: Could not find a version that satisfies the requirement numpy==1.4.0 (from versions: none)"},
		},
		{
			line:  "./psycopg/psycopg.h:36:10: fatal error: libpq-fe.h: No such file or directory",
			match: []string{"./psycopg/psycopg.h:38:12: fatal error: libpq-fe.h: No such file or directory"},
			not:   []string{"./psycopg/psycopg.h:36:10: fatal error: Python.h: No such file or directory"},
		},
		{
			line: "/work/main.cpp:3:10: fatal error: openssl/ssl.h: No such file or directory",
			match: []string{
				"/home/runner/work/proj/src/main.cpp:17:10: fatal error: openssl/ssl.h: No such file or directory",
				"C:\\Users\\me\\proj\\main.cpp:3:10: fatal error: openssl/ssl.h: No such file or directory",
			},
			not: []string{"/work/main.cpp:3:10: fatal error: zlib.h: No such file or directory", "/work/util.cpp:3:10: fatal error: openssl/ssl.h: No such file or directory"},
		},
		{
			line:  "CMake Error at /tmp/build-8f3a9c2d/CMakeLists.txt:12 (find_package):",
			match: []string{"CMake Error at /src/CMakeLists.txt:40 (find_package):"},
			not:   []string{"CMake Error at /src/CMakeLists.txt:40 (add_executable):"},
		},
		{
			line:  "File \"/tmp/pip-install-k2x8q1v0/pyroaring_5b1f0e3c8a7d4e2f9c1b/setup.py\", line 9, in <module>",
			match: []string{"File \"/tmp/pip-install-zz91abcd/pyroaring_0123456789abcdef0123/setup.py\", line 11, in <module>"},
		},
		{
			line:  "npm ERR! code ERESOLVE",
			match: []string{"npm error code ERESOLVE", "npm ERR!  code ERESOLVE"},
			not:   []string{"npm ERR! code ETARGET"},
		},
		{
			line:  "npm ERR! 404  'this-package-does-not-exist-xyz@^1.0.0' is not in this registry.",
			match: []string{"npm error 404 'this-package-does-not-exist-xyz@^1.2.0' is not in this registry."},
		},
		{
			line:  "[ERROR] Failed to execute goal on project demo: Could not resolve dependencies for project com.example:demo:jar:1.0-SNAPSHOT: Could not find artifact com.example:missing-lib:jar:9.9.9 in central (https://repo.maven.apache.org/maven2) -> [Help 1]",
			match: []string{"[ERROR] Failed to execute goal on project demo: Could not resolve dependencies for project com.example:demo:jar:1.1-SNAPSHOT: Could not find artifact com.example:missing-lib:jar:9.10.0 in central (https://mirror.example.net/m2) -> [Help 1]"},
			not:   []string{"[ERROR] Failed to execute goal on project demo: Could not resolve dependencies for project com.example:demo:jar:1.0-SNAPSHOT: Could not find artifact com.example:other-lib:jar:9.9.9 in central (https://repo.maven.apache.org/maven2) -> [Help 1]"},
		},
		{
			line:  "[ERROR] /work/src/main/java/com/example/App.java:[3,23] package com.google.gson does not exist",
			match: []string{"[ERROR] /build/repo/src/main/java/com/example/App.java:[4,1] package com.google.gson does not exist"},
		},
		{
			line:  "Fatal error compiling: error: release version 21 not supported -> [Help 1]",
			match: []string{"Fatal error compiling: error: release version 22 not supported -> [Help 1]"},
			not:   []string{"Fatal error compiling: error: invalid target release: 21"},
		},
		{
			line:  "./build/app: error while loading shared libraries: libssl.so.1.1: cannot open shared object file: No such file or directory",
			match: []string{"./build/app: error while loading shared libraries: libssl.so.3: cannot open shared object file: No such file or directory"},
			not:   []string{"./build/app: error while loading shared libraries: libcurl.so.4: cannot open shared object file: No such file or directory"},
		},
		{
			line:  "fatal: reference is not a tree: 3f2a9b1c0d4e5f60718293a4b5c6d7e8f9012345",
			match: []string{"fatal: reference is not a tree: 0000000111111122222223333333444444455555"},
		},
		{
			line:  "Error: Cannot find module 'express'",
			match: []string{"Error: Cannot find module 'express'\nRequire stack:"},
			not:   []string{"Error: Cannot find module 'expres'"},
		},
		{
			line:  "regexp (specials) like a+b* [x] {1} | ^$ \\ .",
			match: []string{"regexp (specials) like a+b* [x] {2} | ^$ \\ ."},
			not:   []string{"regexp specials like aab [x] {2} | ^$ \\ ."},
		},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			pat := FailureRegex(tt.line)
			re, err := regexp.Compile(pat)
			if err != nil {
				t.Fatalf("pattern %q does not compile: %v", pat, err)
			}
			for _, s := range append([]string{tt.line}, tt.match...) {
				if !re.MatchString(s) {
					t.Errorf("pattern %q does not match %q", pat, s)
				}
			}
			for _, s := range tt.not {
				if re.MatchString(s) {
					t.Errorf("pattern %q matches a different failure %q", pat, s)
				}
			}
		})
	}
}

// TestFailureRegexCard checks the card's example: the published pattern and ours find the
// same line.
func TestFailureRegexCard(t *testing.T) {
	card := regexp.MustCompile(`error:\ subprocess\-exited\-with\-error`)
	ours := regexp.MustCompile(FailureRegex("error: subprocess-exited-with-error"))
	text := readSigFixture(t, "pip_cython3.txt")
	if card.FindString(text) == "" || ours.FindString(text) == "" {
		t.Fatalf("card %q or ours %q misses the fixture", card, ours)
	}
}

func readSigFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "signature", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func BenchmarkFailureSignature(b *testing.B) {
	text, err := os.ReadFile(filepath.Join("testdata", "signature", "npm_eresolve.txt"))
	if err != nil {
		b.Fatal(err)
	}
	big := strings.Repeat(string(text), 200)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		FailureSignature(EcosystemJavaScript, big)
	}
}

// TestErrorLine reads real outputs of each ecosystem's tools (made in the evaluation
// images; see the fixtures) and checks the line that identifies the failure.
func TestErrorLine(t *testing.T) {
	tests := []struct {
		file string
		eco  Ecosystem
		want string
	}{
		// Python: a traceback ends with its exception.
		{"py_traceback_attribute.txt", EcosystemPython, "AttributeError: module 'collections' has no attribute 'Mapping'"},
		{"py_import_error.txt", EcosystemPython, "ImportError: cannot import name 'escape' from 'jinja2' (/usr/local/lib/python3.10/dist-packages/jinja2/__init__.py)"},
		// pip: the recognised failure inside its boxed subprocess output.
		{"pip_setup_cython.txt", EcosystemPython, "ModuleNotFoundError: No module named 'Cython'"},
		{"pip_cython3.txt", EcosystemPython, "error: subprocess-exited-with-error"},
		{"pip_no_version.txt", EcosystemPython, "ERROR: Could not find a version that satisfies the requirement torch==1.4.0 (from versions: 1.11.0, 1.12.0, 1.12.1, 1.13.0)"},
		// python -m build without isolation.
		{"pybuild_missing.txt", EcosystemPython, "ERROR Missing dependencies:"},
		// Node.js: the thrown error, not the version banner printed last.
		{"node_path_not_exported.txt", EcosystemJavaScript, `Error [ERR_PACKAGE_PATH_NOT_EXPORTED]: Package subpath './v4' is not defined by "exports" in /work/node_modules/uuid/package.json`},
		{"node_not_function.txt", EcosystemJavaScript, "TypeError: lib.doThing is not a function"},
		{"node_cannot_find.txt", EcosystemJavaScript, "Error: Cannot find module 'express'"},
		{"npm_eresolve.txt", EcosystemJavaScript, "npm ERR! code ERESOLVE"},
		// Maven: the failed goal with its cause, not the help lines after it.
		{"mvn_missing_artifact.txt", EcosystemJava, "[ERROR] Failed to execute goal on project demo: Could not resolve dependencies for project demo:demo:jar:1.0: Could not find artifact com.google.code.gson:gson:jar:2.10.1 in debian-maven-repo (file:///usr/share/maven-repo) -> [Help 1]"},
		{"mvn_package.txt", EcosystemJava, "[ERROR] /work/src/main/java/com/example/App.java:[3,23] package com.google.gson does not exist"},
		{"java_noclass.txt", EcosystemJava, `Exception in thread "main" java.lang.NoClassDefFoundError: com/google/gson/Gson`},
		// CMake: the message of a FATAL_ERROR, the package pkg-config did not find.
		{"cmake_message.txt", EcosystemCPP, "libsodium headers not found; install libsodium-dev"},
		{"cmake_pkg_check.txt", EcosystemCPP, "--   Package 'libzmq', required by 'virtual:world', not found"},
		{"cmake_openssl.txt", EcosystemCPP, "Could NOT find OpenSSL, try to set the path to OpenSSL root folder in the"},
	}
	for _, tt := range tests {
		t.Run(string(tt.eco)+"/"+tt.file, func(t *testing.T) {
			text := readSigFixture(t, tt.file)
			got, ok := ErrorLine(tt.eco, text)
			if !ok || got != tt.want {
				t.Fatalf("ErrorLine = %q, %v; want %q", got, ok, tt.want)
			}
			re, err := regexp.Compile(FailureRegex(got))
			if err != nil {
				t.Fatalf("FailureRegex(%q) does not compile: %v", got, err)
			}
			if line, ok := MatchedLine(re, text); !ok || line != got {
				t.Errorf("MatchedLine(FailureRegex(line)) = %q, %v; want the line back", line, ok)
			}
		})
	}
}

func TestErrorLineFallbacks(t *testing.T) {
	tests := []struct {
		name, text, want string
		ok               bool
	}{
		{"last plain line", "building\nsomething went wrong here\n\nNode.js v20.20.2\n", "something went wrong here", true},
		{"only trailers", "Node.js v20.20.2\n[ERROR] \n", "", false},
		{"nothing", "\n\n", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ErrorLine(EcosystemJavaScript, tt.text)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("ErrorLine = %q, %v; want %q, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestMatchedLine(t *testing.T) {
	text := "Collecting x\r\n  error: subprocess-exited-with-error\r\n  more\n"
	tests := []struct {
		re, want string
		ok       bool
	}{
		{`error:\ subprocess\-exited\-with\-error`, "error: subprocess-exited-with-error", true},
		{`\n\s*error: sub`, "error: subprocess-exited-with-error", true},
		{`(?m)more$`, "more", true},
		{`absent`, "", false},
	}
	for _, tt := range tests {
		got, ok := MatchedLine(regexp.MustCompile(tt.re), text)
		if got != tt.want || ok != tt.ok {
			t.Errorf("MatchedLine(%s) = %q, %v; want %q, %v", tt.re, got, ok, tt.want, tt.ok)
		}
	}
}
