package deps

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/envgap/envgap/schemas"
)

// dep is a compact expected dependency: name, spec, pinned.
type dep struct {
	name, spec string
	pinned     bool
}

func checkDeps(t *testing.T, got []schemas.Dependency, want []dep) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d deps %+v, want %d %+v", len(got), got, len(want), want)
	}
	for i, w := range want {
		g := got[i]
		if g.Name != w.name || g.Spec != w.spec || g.Pinned != w.pinned {
			t.Errorf("dep %d = {%q %q %v}, want {%q %q %v}", i, g.Name, g.Spec, g.Pinned, w.name, w.spec, w.pinned)
		}
	}
}

func TestParseManifests(t *testing.T) {
	tests := []struct {
		dir        string
		eco        schemas.Ecosystem
		want       []dep
		paths      []string
		unreadable string // substring; "" means measured
		notes      int
		self       []string
	}{
		{
			dir: "py_reqs", eco: schemas.EcosystemPython,
			want: []dep{
				{"pyyaml", ">=5.4", false}, {"six", "==1.16.0", true}, {"requests", ">=2.20,<3", false},
				{"django", "==4.2.7", true}, {"numpy", "==1.*", false}, {"pywin32", "==306", true},
				{"typing-extensions", "===4.8.0", true}, {"flask", "==2.3.3", true},
				{"black", "@ git+https://github.com/psf/black.git@5b4d1e9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e#egg=black", true},
				{"click", "@ git+https://github.com/pallets/click.git@main#egg=click", false},
				{"simplejson", "@ https://files.example.org/packages/simplejson-3.19.1.tar.gz", false},
				{"zope-interface", "@ https://files.example.org/zope.interface-6.1-cp310-cp310-manylinux_2_17_x86_64.whl", false},
			},
			paths: []string{"requirements.txt", "requirements/base.txt", "common.txt", "constraints.txt"},
			notes: 3,
		},
		{
			dir: "py_setup_static", eco: schemas.EcosystemPython,
			want:  []dep{{"numpy", ">=1.20", false}, {"six", "", false}, {"requests", ">=2.0", false}, {"attrs", "==23.1.0", true}, {"cython", "<3.0.0", false}},
			paths: []string{"setup.py"}, self: []string{"pyroaring"},
		},
		{
			dir: "py_setup_runtime", eco: schemas.EcosystemPython, want: []dep{},
			paths: []string{"setup.py"}, unreadable: "install_requires.append(...)", self: []string{"chainer"},
		},
		{
			dir: "py_setup_readfile", eco: schemas.EcosystemPython, want: []dep{{"click", "", false}},
			paths: []string{"requirements.txt", "setup.py"}, unreadable: "f.read().splitlines()", self: []string{"tool"},
		},
		{
			dir: "py_setup_kwargs", eco: schemas.EcosystemPython, want: []dep{{"tqdm", ">=4", false}, {"colorama", "==0.4.6", true}},
			paths: []string{"setup.py"}, self: []string{"kw-project"},
		},
		{
			dir: "py_pyproject", eco: schemas.EcosystemPython,
			want:  []dep{{"httpx", "==0.25.0", true}, {"pydantic", ">=2,<3", false}, {"tomli", "", false}, {"setuptools", ">=61", false}, {"wheel", "", false}},
			paths: []string{"pyproject.toml"}, self: []string{"my-project"},
		},
		{
			dir: "py_poetry", eco: schemas.EcosystemPython,
			want: []dep{{"poetry-core", "", false},
				{"black", "@ git+https://github.com/psf/black.git@5b4d1e9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e", true},
				{"pendulum", "2.1.2", true}, {"requests", "^2.31", false}},
			paths: []string{"pyproject.toml"}, self: []string{"poetry-demo"},
		},
		{
			dir: "py_setupcfg", eco: schemas.EcosystemPython,
			want:  []dep{{"jinja2", ">=3.0", false}, {"markupsafe", "==2.1.3", true}, {"setuptools-scm", "", false}},
			paths: []string{"setup.cfg", "build-reqs.txt"}, self: []string{"cfg-demo"},
		},
		{dir: "py_none", eco: schemas.EcosystemPython, want: []dep{}, paths: []string{}},
		{
			dir: "js_basic", eco: schemas.EcosystemJavaScript,
			want: []dep{{"alias", "npm:string-width@4.2.3", true}, {"any", "*", false}, {"chalk", "=5.3.0", true},
				{"express", "4.18.2", true}, {"left-pad", "latest", false}, {"local-lib", "file:../local-lib", false},
				{"lodash", "^4.17.21", false}, {"my-fork", "github:someone/my-fork#abc", false},
				{"pre", "1.0.0-beta.2", true}, {"react", "v18.2.0", true}},
			paths: []string{"package.json"}, self: []string{"my-app"},
		},
		{
			dir: "java_multi", eco: schemas.EcosystemJava,
			want: []dep{{"com.google.code.gson:gson", "2.10.1", true}, {"org.slf4j:slf4j-api", "2.0.9", true},
				{"com.fasterxml.jackson.core:jackson-databind", "[2.15,2.16)", false}, {"commons-cli:commons-cli", "${missing.prop}", false}},
			paths: []string{"pom.xml", "core/pom.xml", "app/pom.xml"},
			self:  []string{"com.example:parent", "com.example:core", "com.example:app"},
		},
		{
			dir: "cpp_tricky", eco: schemas.EcosystemCPP,
			want: []dep{{"OpenSSL", "", false}, {"ZLIB", "EXACT 1.2.11", true}, {"Boost", "1.74", false}, {"fmt", "EXACT 10.1.1", true},
				{"json", "https://github.com/nlohmann/json/releases/download/v3.11.2/json.tar.xz", true},
				{"spdlog", "v1.12.0", false}, {"googletest", "f8d7d77c06936315286eb55f8de22cd23c188571", true},
				{"PkgConfig", "", false}, {"libcurl", ">=7.80", false}, {"sqlite3", "=3.37.2", true},
				{"WinOnly", "", false}, {"Threads", "", false}, {"CURL", "", false}},
			paths: []string{"CMakeLists.txt", "src/CMakeLists.txt", "cmake/deps.cmake"},
			notes: 1, self: []string{"Tricky"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			d, err := ParseManifests(tt.eco, os.DirFS(filepath.Join("testdata", "d1", tt.dir)))
			if err != nil {
				t.Fatal(err)
			}
			checkDeps(t, d.Deps, tt.want)
			if strings.Join(d.ManifestPaths, ",") != strings.Join(tt.paths, ",") {
				t.Errorf("manifest paths %q, want %q", d.ManifestPaths, tt.paths)
			}
			if len(tt.paths) > 0 && d.ManifestPath != tt.paths[0] {
				t.Errorf("manifest path %q, want %q", d.ManifestPath, tt.paths[0])
			}
			if (tt.unreadable == "") != (d.Unreadable == "") || !strings.Contains(d.Unreadable, tt.unreadable) {
				t.Errorf("unreadable %q, want it to contain %q", d.Unreadable, tt.unreadable)
			}
			if len(d.Notes) != tt.notes {
				t.Errorf("notes %q, want %d", d.Notes, tt.notes)
			}
			if strings.Join(d.Self, ",") != strings.Join(tt.self, ",") {
				t.Errorf("self %q, want %q", d.Self, tt.self)
			}
			for _, dd := range d.Deps {
				if dd.From == "" {
					t.Errorf("%s has no From", dd.Name)
				}
			}
		})
	}
}

func TestFindManifests(t *testing.T) {
	files := fstest.MapFS{
		"requirements.txt":          {Data: []byte("a\n")},
		"requirements-dev.txt":      {Data: []byte("pytest\n")},
		"requirements_test.txt":     {Data: []byte("pytest\n")},
		"requirements-prod.txt":     {Data: []byte("gunicorn\n")},
		"requirements/docs.txt":     {Data: []byte("sphinx\n")},
		"requirements/base.txt":     {Data: []byte("b\n")},
		"setup.py":                  {Data: []byte("from setuptools import setup\nsetup()\n")},
		"package.json":              {Data: []byte("{}")},
		"sub/requirements.txt":      {Data: []byte("c\n")},
		"requirements-ci-extra.txt": {Data: []byte("tox\n")},
	}
	tests := []struct {
		eco  schemas.Ecosystem
		want string
	}{
		{schemas.EcosystemPython, "requirements.txt,setup.py,requirements-prod.txt,requirements/base.txt"},
		{schemas.EcosystemJavaScript, "package.json"},
		{schemas.EcosystemJava, ""},
	}
	for _, tt := range tests {
		got, err := FindManifests(tt.eco, files)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, ",") != tt.want {
			t.Errorf("%s: got %q, want %q", tt.eco, got, tt.want)
		}
	}
	if _, err := FindManifests("rust", files); !errors.Is(err, ErrUnknownEcosystem) {
		t.Errorf("unknown ecosystem: err %v", err)
	}
}

func TestParseManifestPaths(t *testing.T) {
	files := fstest.MapFS{
		"reqs/run.txt": {Data: []byte("Flask==2.0.0\n-r ../shared.txt\n")},
		"shared.txt":   {Data: []byte("itsdangerous\n")},
	}
	d, err := ParseManifestPaths(schemas.EcosystemPython, files, []string{"./reqs/run.txt"})
	if err != nil {
		t.Fatal(err)
	}
	checkDeps(t, d.Deps, []dep{{"flask", "==2.0.0", true}, {"itsdangerous", "", false}})
	if d.ManifestPath != "reqs/run.txt" {
		t.Errorf("main %q", d.ManifestPath)
	}
	for _, bad := range []struct {
		eco   schemas.Ecosystem
		paths []string
		msg   string
	}{
		{schemas.EcosystemPython, []string{"missing.txt"}, "does not exist"},
		{schemas.EcosystemPython, []string{"../etc/passwd"}, "not inside the project"},
		{"go", []string{"shared.txt"}, "unknown ecosystem"},
	} {
		if _, err := ParseManifestPaths(bad.eco, files, bad.paths); err == nil || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("%v: err %v, want %q", bad.paths, err, bad.msg)
		}
	}
}

func TestRequirementsEdgeCases(t *testing.T) {
	tests := []struct {
		name, text string
		want       []dep
		unreadable string
	}{
		{"include loop", "-r requirements.txt\nsix\n", []dep{{"six", "", false}}, ""},
		{"missing include", "-r nothere.txt\n", []dep{}, "does not exist"},
		{"attached short option", "-rother.txt\n", []dep{{"other", "", false}}, ""},
		{"long option with =", "--requirement=other.txt\n", []dep{{"other", "", false}}, ""},
		{"editable vcs", "-e git+https://example.org/x/y.git@0123456789abcdef0123456789abcdef01234567#egg=y_pkg\n", []dep{{"y-pkg", "@ git+https://example.org/x/y.git@0123456789abcdef0123456789abcdef01234567#egg=y_pkg", true}}, ""},
		{"url without name", "https://example.org/download\n", []dep{}, "names no package"},
		{"bad specifier", "foo >> 1\n", []dep{}, "not a version specifier"},
		{"hash after marker", `bar==1.0 ; python_version >= "3.8" --hash=sha256:abc` + "\n", []dep{{"bar", "==1.0", true}}, ""},
		{"hash in URL fragment is not a comment", "baz @ https://example.org/baz-1.0.tar.gz#sha256=abc\n", []dep{{"baz", "@ https://example.org/baz-1.0.tar.gz#sha256=abc", false}}, ""},
		{"first declaration wins", "dup>=1\nDUP==2\n", []dep{{"dup", ">=1", false}}, ""},
		{"crlf", "a==1\r\nb\r\n", []dep{{"a", "==1", true}, {"b", "", false}}, ""},
		{"parenthesised spec", "c (>=1.0)\n", []dep{{"c", ">=1.0", false}}, ""},
		{"wildcard not pinned", "d==1.2.*\n", []dep{{"d", "==1.2.*", false}}, ""},
		{"not-equal not pinned", "e!=1.0\n", []dep{{"e", "!=1.0", false}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := fstest.MapFS{"requirements.txt": {Data: []byte(tt.text)}, "other.txt": {Data: []byte("other\n")}}
			d, err := ParseManifestPaths(schemas.EcosystemPython, files, []string{"requirements.txt"})
			if err != nil {
				t.Fatal(err)
			}
			checkDeps(t, d.Deps, tt.want)
			if (tt.unreadable == "") != (d.Unreadable == "") || !strings.Contains(d.Unreadable, tt.unreadable) {
				t.Errorf("unreadable %q, want %q", d.Unreadable, tt.unreadable)
			}
		})
	}
}

func TestNormalizePython(t *testing.T) {
	for in, want := range map[string]string{"Django": "django", "typing_extensions": "typing-extensions", "zope.interface": "zope-interface", "A__B--C..d": "a-b-c-d", "  PyYAML ": "pyyaml"} {
		if got := NormalizePython(in); got != want {
			t.Errorf("NormalizePython(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPinnedRules(t *testing.T) {
	npm := map[string]bool{"1.2.3": true, "=1.2.3": true, "v1.2.3": true, "1.2.3-rc.1+build.5": true, "^1.2.3": false, "~1.2.3": false,
		"1.2": false, "1.x": false, "*": false, "latest": false, ">=1.0.0 <2.0.0": false, "git+https://x/y.git": false, "npm:foo@^1.0.0": false}
	for s, want := range npm {
		if got := NpmPinned(s); got != want {
			t.Errorf("NpmPinned(%q) = %v, want %v", s, got, want)
		}
	}
	mvn := map[string]bool{"2.10.1": true, "1.0.Final": true, "": false, "[1.0,2.0)": false, "1.0-SNAPSHOT": false, "LATEST": false, "${v}": false}
	for s, want := range mvn {
		if got := MavenPinned(s); got != want {
			t.Errorf("MavenPinned(%q) = %v, want %v", s, got, want)
		}
	}
}
