package crawl_test

import (
	"testing"

	"github.com/envgap/envgap/crawl"
	"github.com/envgap/envgap/schemas"
)

func TestChooseProject(t *testing.T) {
	const (
		py   = schemas.EcosystemPython
		js   = schemas.EcosystemJavaScript
		java = schemas.EcosystemJava
		cpp  = schemas.EcosystemCPP
	)
	for _, tc := range []struct {
		name      string
		paths     []string
		hints     []schemas.Ecosystem
		language  string
		eco       schemas.Ecosystem
		manifest  string
		manifests []string
	}{
		{"python setup.py", []string{"setup.py", "README.md", "pkg/__init__.py"}, nil, "Python", py, "setup.py", []string{"setup.py"}},
		{"pyproject preferred", []string{"setup.py", "pyproject.toml", "requirements.txt", "requirements/dev.txt"}, nil, "", py,
			"pyproject.toml", []string{"pyproject.toml", "requirements.txt", "setup.py", "requirements/dev.txt"}},
		{"maven modules", []string{"pom.xml", "core/pom.xml", "core/src/test/resources/pom.xml", "a/b/c/pom.xml"}, nil, "Java", java,
			"pom.xml", []string{"pom.xml", "core/pom.xml"}},
		{"npm workspace", []string{"package.json", "packages/a/package.json", "examples/x/package.json", "node_modules/y/package.json"}, nil, "TypeScript", js,
			"package.json", []string{"package.json", "packages/a/package.json"}},
		{"python with native part: language decides", []string{"setup.py", "CMakeLists.txt", "src/CMakeLists.txt"}, nil, "C++", cpp,
			"CMakeLists.txt", []string{"CMakeLists.txt", "src/CMakeLists.txt"}},
		{"hint beats language", []string{"setup.py", "CMakeLists.txt"}, []schemas.Ecosystem{py}, "C++", py, "setup.py", []string{"setup.py"}},
		{"root manifest beats nested", []string{"docs-site/package.json", "pyproject.toml"}, nil, "", py, "pyproject.toml", []string{"pyproject.toml"}},
		{"nested only", []string{"python/setup.py", "python/requirements.txt"}, nil, "", py, "python/setup.py", []string{"python/requirements.txt", "python/setup.py"}},
		{"gradle", []string{"settings.gradle", "build.gradle", "app/build.gradle"}, nil, "Kotlin", java, "build.gradle", []string{"build.gradle", "app/build.gradle"}},
		{"docs requirements do not count", []string{"docs/requirements.txt", "CMakeLists.txt"}, nil, "", cpp, "CMakeLists.txt", []string{"CMakeLists.txt"}},
	} {
		proj, ok := crawl.ChooseProject(crawl.FindManifests(tc.paths), tc.hints, tc.language)
		if !ok || proj.Ecosystem != tc.eco || proj.ManifestPath != tc.manifest || !equal(proj.ManifestPaths, tc.manifests) {
			t.Errorf("%s: %+v %v; want %s %s %v", tc.name, proj, ok, tc.eco, tc.manifest, tc.manifests)
		}
	}
	if _, ok := crawl.ChooseProject(crawl.FindManifests([]string{"README.md", "main.go", "go.mod", "tests/setup.py"}), nil, "Go"); ok {
		t.Error("a project with no manifest of the four ecosystems got one")
	}
	if p, ok := crawl.ChooseProject(crawl.FindManifests([]string{"setup.py", "package.json"}), nil, "", js); !ok || p.Ecosystem != js {
		t.Errorf("allowed ecosystems ignored: %+v", p)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestIssueSignature(t *testing.T) {
	for _, tc := range []struct {
		name string
		eco  schemas.Ecosystem
		text string
		want string // empty: no signature
	}{
		{"pip resolution", "python", "pip fails\n```\nERROR: Could not find a version that satisfies the requirement torch==1.2 (from versions: none)\nERROR: No matching distribution found for torch==1.2\n```",
			"ERROR: Could not find a version that satisfies the requirement torch==1.2 (from versions: none)"},
		// python -m build without isolation (PyRoaringBitMap#134 quotes this).
		{"python -m build missing dependencies", "python", "```\n$ python -m build --no-isolation\n* Getting build dependencies for sdist...\n\nERROR Missing dependencies:\n\tcython<3.0.0\n```",
			"ERROR Missing dependencies:"},
		{"import error", "python", "Traceback:\n  File \"x.py\", line 1\nModuleNotFoundError: No module named 'numpy'", "ModuleNotFoundError: No module named 'numpy'"},
		{"template comment only", "python", "<!-- paste the error, e.g. ModuleNotFoundError: No module named 'x' -->\nPlease add dark mode.", ""},
		{"generic pip error only", "python", "ERROR: something went wrong", ""},
		{"generic cmake error only", "cpp", "CMake Error at CMakeLists.txt:10 (message):\n  please set FOO", ""},
		{"cmake missing package", "cpp", "CMake Error at CMakeLists.txt:10 (find_package):\n  Could NOT find Boost (missing: system)", "Could NOT find Boost (missing: system)"},
		{"maven generic goal", "java", "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.8.1:compile (default-compile) on project x: Compilation failure", ""},
		{"maven resolution", "java", "[ERROR] Failed to execute goal on project app: Could not resolve dependencies for project com.acme:app:jar:1.0: Could not find artifact com.acme:lib:jar:2.0",
			"[ERROR] Failed to execute goal on project app: Could not resolve dependencies for project com.acme:app:jar:1.0: Could not find artifact com.acme:lib:jar:2.0"},
		{"javac symbol is code, not environment", "java", "[ERROR] /src/Foo.java:[3,8] cannot find symbol", ""},
		{"npm in a python project", "python", "npm ERR! code E404", ""},
		{"npm", "javascript", "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree", "npm ERR! code ERESOLVE"},
		{"any ecosystem", "", "fatal error: zlib.h: No such file or directory", "fatal error: zlib.h: No such file or directory"},
		{"no error", "", "How do I configure the widget colour?", ""},
	} {
		line, re, ok := crawl.IssueSignature(tc.eco, crawl.IssueText("title", tc.text))
		if line != tc.want || ok != (tc.want != "") {
			t.Errorf("%s: got %q %v, want %q", tc.name, line, ok, tc.want)
			continue
		}
		if ok {
			rx, err := schemas.CompileFailureRegex(re)
			if err != nil || !rx.MatchString(line) {
				t.Errorf("%s: regex %q does not find %q", tc.name, re, line)
			}
		}
	}
}

func TestIssueFailurePrefersTheBody(t *testing.T) {
	const body = "```\nnode:internal/modules/cjs/loader:1210\n  throw err;\n\nError: Cannot find module 'left-pad'\nRequire stack:\n```\n"
	for _, tc := range []struct {
		name, title, body, want string
	}{
		{"the title quotes the error in words of its own", "Crash on start: Cannot find module 'left-pad'", body, "Error: Cannot find module 'left-pad'"},
		{"only the title has it", "Error: Cannot find module 'left-pad'", "It crashes, see the title.", "Error: Cannot find module 'left-pad'"},
		{"neither", "Crash on start", "It crashes.", ""},
	} {
		line, re, ok := crawl.IssueFailure(schemas.EcosystemJavaScript, tc.title, tc.body)
		if line != tc.want || ok != (tc.want != "") {
			t.Errorf("%s: got %q %v, want %q", tc.name, line, ok, tc.want)
			continue
		}
		if rx, err := schemas.CompileFailureRegex(re); ok && (err != nil || !rx.MatchString(body)) {
			t.Errorf("%s: regex %q does not find the error in the output (%v)", tc.name, re, err)
		}
	}
}

func TestPipfileDeclaresPackages(t *testing.T) {
	tests := []struct {
		name, content string
		want          bool
	}{
		// PyRoaringBitMap's Pipfile at the card's example base commit.
		{"dev-packages only", "[[source]]\nurl = \"https://pypi.org/simple\"\nverify_ssl = true\nname = \"pypi\"\n\n[packages]\n\n[dev-packages]\nCython = \">=0.21\"\nhypothesis = \"<3.60\"\n\n[requires]\npython_version = \"3.6\"\n", false},
		{"packages", "[packages]\nrequests = \"*\"\n\n[dev-packages]\npytest = \"*\"\n", true},
		{"packages with a comment only", "[packages]\n# none yet\n[dev-packages]\npytest = \"*\"\n", false},
		{"table entry", "[ packages ]\ndjango = {version = \">=4\"}\n", true},
		{"empty", "", false},
	}
	for _, tt := range tests {
		if got := crawl.PipfileDeclaresPackages(tt.content); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}
