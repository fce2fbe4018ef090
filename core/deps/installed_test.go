package deps

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envgap/envgap/schemas"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPipListDiff(t *testing.T) {
	ds, err := PipListDiff(readTestdata(t, "pip_before.json"), readTestdata(t, "pip_after.json"))
	if err != nil {
		t.Fatal(err)
	}
	checkDeps(t, ds.Deps, []dep{{"certifi", "2023.7.22", true}, {"charset-normalizer", "3.2.0", true}, {"idna", "3.4", true},
		{"my-project", "1.0", true}, {"pyyaml", "6.0.1", true}, {"requests", "2.31.0", true},
		{"setuptools", "68.0.0", true}, {"urllib3", "2.0.4", true}})

	// Nothing before: everything after counts; a warning line before the JSON is skipped.
	ds, err = PipListDiff(nil, []byte("WARNING: something\n"+`[{"name": "Six", "version": "1.16.0"}]`))
	if err != nil {
		t.Fatal(err)
	}
	checkDeps(t, ds.Deps, []dep{{"six", "1.16.0", true}})

	for _, bad := range []struct{ before, after, msg string }{
		{"", "", "empty output"},
		{"[]", "ERROR: pip failed", "not the JSON of pip list"},
		{"{oops", "[]", "pip list before"},
	} {
		if _, err := PipListDiff([]byte(bad.before), []byte(bad.after)); err == nil || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("%q/%q: err %v, want %q", bad.before, bad.after, err, bad.msg)
		}
	}
}

func TestNpmLs(t *testing.T) {
	// A real npm ls --all --json of a tree with a missing and an extraneous package
	// (npm exited 1 with ELSPROBLEMS).
	ds, err := NpmLs(readTestdata(t, "npm_ls.json"))
	if err != nil {
		t.Fatal(err)
	}
	checkDeps(t, ds.Deps, []dep{{"@scope/util", "2.0.0", true}, {"left-pad", "1.1.0, 1.3.0", false}, {"unused", "1.0.0", true}})
	if _, err := NpmLs([]byte("   ")); err == nil {
		t.Error("empty output: no error")
	}
	if _, err := NpmLs([]byte("npm error code ELSPROBLEMS")); err == nil {
		t.Error("no JSON: no error")
	}
}

func TestMvnDependencyList(t *testing.T) {
	ds, err := MvnDependencyList(readTestdata(t, "mvn_dependency_list.txt"))
	if err != nil {
		t.Fatal(err)
	}
	checkDeps(t, ds.Deps, []dep{
		{"com.fasterxml.jackson.core:jackson-annotations", "2.15.2", true}, {"com.fasterxml.jackson.core:jackson-core", "2.15.2", true},
		{"com.fasterxml.jackson.core:jackson-databind", "2.15.2", true}, {"com.google.code.gson:gson", "2.10.1", true},
		{"org.lwjgl:lwjgl", "3.3.1", true}, {"org.slf4j:slf4j-api", "2.0.7", true}})
	if ds.Deps[4].From != "org.lwjgl:lwjgl:jar:natives-linux:3.3.1:runtime" {
		t.Errorf("classifier coordinate %q", ds.Deps[4].From)
	}
	ds, err = MvnDependencyList(readTestdata(t, "mvn_dependency_list_file.txt"))
	if err != nil {
		t.Fatal(err)
	}
	checkDeps(t, ds.Deps, []dep{{"com.google.code.gson:gson", "2.10.1", true}, {"commons-io:commons-io", "2.13.0", true}, {"log4j:log4j", "1.2.17", true}})
	if _, err := MvnDependencyList(nil); err == nil {
		t.Error("empty output: no error")
	}
}

func TestD2Commands(t *testing.T) {
	custom := "pip3 list --format=json > /evidence/D2.raw.json"
	blank := "  "
	tests := []struct {
		eco           schemas.Ecosystem
		d2            *string
		before, after string // substrings; "" means empty
	}{
		{schemas.EcosystemPython, nil, "pip list --format=json > /evidence/D2.before.json", "pip list --format=json > /evidence/D2.raw.json"},
		{schemas.EcosystemPython, &custom, "D2.before.json", custom},
		{schemas.EcosystemPython, &blank, "D2.before.json", "python3 -m pip list"},
		{schemas.EcosystemJavaScript, nil, "", "npm ls --all --json > /evidence/D2.raw.json 2>/dev/null || true"},
		{schemas.EcosystemJava, nil, "", "dependency:list -DoutputFile=/evidence/D2.raw.txt -DappendOutput=true"},
		{schemas.EcosystemCPP, nil, "", "-name CMakeCache.txt -not -path '*/_deps/*'"},
	}
	for _, tt := range tests {
		b, a := D2Commands(tt.eco, tt.d2)
		if (tt.before == "") != (b == "") || !strings.Contains(b, tt.before) || (tt.after == "") != (a == "") || !strings.Contains(a, tt.after) {
			t.Errorf("%s %v: got %q / %q, want %q / %q", tt.eco, tt.d2, b, a, tt.before, tt.after)
		}
		pb, pa := D2Paths(tt.eco)
		if (pb != "") != (b != "") || pa != "" && !strings.Contains(a+custom, pa) {
			t.Errorf("%s: paths %q %q do not match commands", tt.eco, pb, pa)
		}
	}
}

// TestCMakeInstalled reads the caches collected by the C++ D2 command from a real
// configure in envgap-cpp-eval (testdata/cmake_cache.txt; images' TestCppD2FromConfigure
// runs it): find_package(ZLIB) in module mode, find_package(Foo CONFIG), a
// pkg_check_modules(ZZ zlib), FetchContent of MyLib whose own CMakeLists fetches inner,
// and Threads and PkgConfig (the toolchain, left out).
func TestCMakeInstalled(t *testing.T) {
	ds, ok := CMakeInstalled(readTestdata(t, "cmake_cache.txt"))
	if !ok || ds.Unreadable != "" {
		t.Fatalf("not read: %+v", ds)
	}
	checkDeps(t, ds.Deps, []dep{{"Foo", "", false}, {"ZLIB", "", false}, {"inner", "", false}, {"mylib", "", false}, {"zlib", "", false}})
	if _, ok := CMakeInstalled(nil); ok {
		t.Error("no cache collected: read as measured")
	}
	// A config-mode entry not found, and a _DIR that is not a package configuration.
	ds, _ = CMakeInstalled([]byte("#envgap-cache /work/build/CMakeCache.txt\n//The directory containing a CMake configuration file for fmt.\nfmt_DIR:PATH=fmt_DIR-NOTFOUND\n//Path to a file.\nZLIB_INCLUDE_DIR:PATH=/usr/include\n"))
	if len(ds.Deps) != 0 {
		t.Errorf("deps %+v, want none", ds.Deps)
	}
}

func TestInstalled(t *testing.T) {
	d1 := schemas.DepSet{Deps: []schemas.Dependency{{Name: "OpenSSL"}, {Name: "Tricky"}}}
	// No CMake cache collected: D2 is D1, marked not measured.
	ds, err := Installed(schemas.EcosystemCPP, nil, nil, d1, []string{"tricky"})
	if err != nil {
		t.Fatal(err)
	}
	checkDeps(t, ds.Deps, []dep{{"OpenSSL", "", false}})
	if !strings.Contains(ds.Unreadable, "D2 is taken as D1") {
		t.Errorf("D2 := D1 without saying so: %q", ds.Unreadable)
	}
	ds, err = Installed(schemas.EcosystemCPP, nil, readTestdata(t, "cmake_cache.txt"), d1, []string{"mylib"})
	if err != nil || ds.Unreadable != "" || len(ds.Deps) != 4 {
		t.Errorf("from the cache, without the project itself: %+v, %v", ds, err)
	}
	ds, err = Installed(schemas.EcosystemPython, readTestdata(t, "pip_before.json"), readTestdata(t, "pip_after.json"), d1, []string{"My_Project"})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds.Deps {
		if d.Name == "my-project" {
			t.Error("the project itself is in D2")
		}
	}
	if len(ds.Deps) != 7 {
		t.Errorf("%d deps, want 7", len(ds.Deps))
	}
	if _, err := Installed("go", nil, nil, d1, nil); err == nil {
		t.Error("unknown ecosystem: no error")
	}
}
