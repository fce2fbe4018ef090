package crawl_test

import (
	"testing"

	"github.com/envgap/envgap/crawl"
	"github.com/envgap/envgap/schemas"
)

func TestClassifyPath(t *testing.T) {
	const (
		py   = schemas.EcosystemPython
		js   = schemas.EcosystemJavaScript
		java = schemas.EcosystemJava
		cpp  = schemas.EcosystemCPP
	)
	type c = crawl.FileClass
	for _, tc := range []struct {
		path string
		want crawl.FileClass
	}{
		// Python manifests, lockfiles and setup files.
		{"setup.py", c{crawl.KindManifest, py}},
		{"setup.cfg", c{crawl.KindManifest, py}},
		{"pyproject.toml", c{crawl.KindManifest, py}},
		{"requirements.txt", c{crawl.KindManifest, py}},
		{"requirements-dev.txt", c{crawl.KindManifest, py}},
		{"requirements_test.txt", c{crawl.KindManifest, py}},
		{"dev-requirements.txt", c{crawl.KindManifest, py}},
		{"requirements/base.txt", c{crawl.KindManifest, py}},
		{"requirements/dev.in", c{crawl.KindManifest, py}},
		{"ci/requirements/py310.txt", c{crawl.KindManifest, py}},
		{"docs/requirements.txt", c{crawl.KindManifest, py}},
		{"constraints.txt", c{crawl.KindManifest, py}},
		{"tests/requirements.txt", c{crawl.KindManifest, py}},
		{"Pipfile", c{crawl.KindManifest, py}},
		{"Pipfile.lock", c{crawl.KindLockfile, py}},
		{"poetry.lock", c{crawl.KindLockfile, py}},
		{"uv.lock", c{crawl.KindLockfile, py}},
		{"pdm.lock", c{crawl.KindLockfile, py}},
		{"environment.yml", c{crawl.KindManifest, py}},
		{"ci/environment-py311.yml", c{crawl.KindManifest, py}},
		{"conda/environment.yaml", c{crawl.KindManifest, py}},
		{"tox.ini", c{crawl.KindBuild, py}},
		{"MANIFEST.in", c{crawl.KindBuild, py}},
		{".python-version", c{crawl.KindBuild, py}},
		{"conda-recipe/meta.yaml", c{crawl.KindBuild, py}},
		{"packages/core/pyproject.toml", c{crawl.KindManifest, py}},
		// Python source and tests.
		{"src/pkg/__init__.py", c{Kind: crawl.KindSource}},
		{"pkg/_version.py", c{Kind: crawl.KindSource}},
		{"pyroaring/abstract_bitmap.pxi", c{Kind: crawl.KindSource}},
		{"pyroaring/bitmap.pyx", c{Kind: crawl.KindSource}},
		{"pyroaring/croaring_version.pxi", c{Kind: crawl.KindSource}},
		{"tests/test_core.py", c{Kind: crawl.KindTest}},
		{"test/unit/test_x.py", c{Kind: crawl.KindTest}},
		{"pkg/tests/test_api.py", c{Kind: crawl.KindTest}},
		{"pkg/test_utils.py", c{Kind: crawl.KindTest}},
		{"pkg/utils_test.py", c{Kind: crawl.KindTest}},
		{"conftest.py", c{Kind: crawl.KindTest}},
		{"noxfile.py", c{Kind: crawl.KindTest}},
		{"pytest.ini", c{Kind: crawl.KindTest}},
		{"tests/fixtures/setup.py", c{Kind: crawl.KindTest}},
		{"tests/data/requirements.txt", c{Kind: crawl.KindTest}},
		// JavaScript.
		{"package.json", c{crawl.KindManifest, js}},
		{"packages/core/package.json", c{crawl.KindManifest, js}},
		{"package-lock.json", c{crawl.KindLockfile, js}},
		{"npm-shrinkwrap.json", c{crawl.KindLockfile, js}},
		{"yarn.lock", c{crawl.KindLockfile, js}},
		{"pnpm-lock.yaml", c{crawl.KindLockfile, js}},
		{"bun.lockb", c{crawl.KindLockfile, js}},
		{"pnpm-workspace.yaml", c{crawl.KindBuild, js}},
		{".npmrc", c{crawl.KindBuild, js}},
		{".nvmrc", c{crawl.KindBuild, js}},
		{".yarnrc.yml", c{crawl.KindBuild, js}},
		{".yarn/releases/yarn-3.6.1.cjs", c{crawl.KindBuild, js}},
		{"binding.gyp", c{crawl.KindBuild, js}},
		{"tsconfig.json", c{crawl.KindBuild, js}},
		{"tsconfig.build.json", c{crawl.KindBuild, js}},
		{"webpack.config.js", c{crawl.KindBuild, js}},
		{"vite.config.ts", c{crawl.KindBuild, js}},
		{"babel.config.js", c{crawl.KindBuild, js}},
		{".babelrc", c{crawl.KindBuild, js}},
		{"lerna.json", c{crawl.KindBuild, js}},
		{"src/index.js", c{Kind: crawl.KindSource}},
		{"lib/server.mjs", c{Kind: crawl.KindSource}},
		{"src/components/App.tsx", c{Kind: crawl.KindSource}},
		{"src/App.vue", c{Kind: crawl.KindSource}},
		{"src/app.test.js", c{Kind: crawl.KindTest}},
		{"src/app.spec.ts", c{Kind: crawl.KindTest}},
		{"__tests__/app.js", c{Kind: crawl.KindTest}},
		{"jest.config.js", c{Kind: crawl.KindTest}},
		{"vitest.config.ts", c{Kind: crawl.KindTest}},
		{".mocharc.yml", c{Kind: crawl.KindTest}},
		{"test/fixtures/package.json", c{Kind: crawl.KindTest}},
		{"node_modules/left-pad/package.json", c{Kind: crawl.KindVendored}},
		// Java.
		{"pom.xml", c{crawl.KindManifest, java}},
		{"core/pom.xml", c{crawl.KindManifest, java}},
		{"build.gradle", c{crawl.KindManifest, java}},
		{"app/build.gradle.kts", c{crawl.KindManifest, java}},
		{"settings.gradle", c{crawl.KindBuild, java}},
		{"settings.gradle.kts", c{crawl.KindBuild, java}},
		{"gradle.properties", c{crawl.KindBuild, java}},
		{"gradle/wrapper/gradle-wrapper.properties", c{crawl.KindBuild, java}},
		{"gradle/wrapper/gradle-wrapper.jar", c{crawl.KindBuild, java}},
		{"gradle/libs.versions.toml", c{crawl.KindManifest, java}},
		{"gradle/dependencies.gradle", c{crawl.KindBuild, java}},
		{"gradle/verification-metadata.xml", c{Kind: crawl.KindOther}},
		{"gradlew", c{crawl.KindBuild, java}},
		{"gradlew.bat", c{crawl.KindBuild, java}},
		{"mvnw", c{crawl.KindBuild, java}},
		{".mvn/wrapper/maven-wrapper.properties", c{crawl.KindBuild, java}},
		{".mvn/extensions.xml", c{crawl.KindBuild, java}},
		{"buildSrc/src/main/kotlin/Deps.kt", c{crawl.KindBuild, java}},
		{"build.xml", c{crawl.KindBuild, java}},
		{"ivy.xml", c{crawl.KindManifest, java}},
		{"src/main/java/com/acme/App.java", c{Kind: crawl.KindSource}},
		{"src/main/java/com/acme/Latest.java", c{Kind: crawl.KindSource}},
		{"src/main/java/com/acme/Unit.java", c{Kind: crawl.KindSource}},
		{"src/main/kotlin/App.kt", c{Kind: crawl.KindSource}},
		{"src/main/resources/application.properties", c{Kind: crawl.KindOther}},
		{"src/test/java/com/acme/AppTest.java", c{Kind: crawl.KindTest}},
		{"src/it/java/com/acme/AppIT.java", c{Kind: crawl.KindTest}},
		{"src/integrationTest/java/X.java", c{Kind: crawl.KindTest}},
		{"core/src/test/resources/pom.xml", c{Kind: crawl.KindTest}},
		{"lib/FooTest.java", c{Kind: crawl.KindTest}},
		// C and C++.
		{"CMakeLists.txt", c{crawl.KindManifest, cpp}},
		{"src/CMakeLists.txt", c{crawl.KindManifest, cpp}},
		{"cmake/FindFoo.cmake", c{crawl.KindBuild, cpp}},
		{"cmake/config.h.in", c{crawl.KindBuild, cpp}},
		{"cmake/fooConfig.cmake.in", c{crawl.KindBuild, cpp}},
		{"CMakePresets.json", c{crawl.KindBuild, cpp}},
		{"meson.build", c{crawl.KindManifest, cpp}},
		{"meson_options.txt", c{crawl.KindBuild, cpp}},
		{"conanfile.txt", c{crawl.KindManifest, cpp}},
		{"conanfile.py", c{crawl.KindManifest, cpp}},
		{"vcpkg.json", c{crawl.KindManifest, cpp}},
		{"configure.ac", c{crawl.KindManifest, cpp}},
		{"Makefile", c{crawl.KindBuild, cpp}},
		{"Makefile.am", c{crawl.KindBuild, cpp}},
		{"src/Makefile.in", c{crawl.KindBuild, cpp}},
		{"GNUmakefile", c{crawl.KindBuild, cpp}},
		{"m4/ax_cxx_compile_stdcxx.m4", c{crawl.KindBuild, cpp}},
		{"BUILD.bazel", c{crawl.KindBuild, cpp}},
		{"WORKSPACE", c{crawl.KindBuild, cpp}},
		{"MODULE.bazel", c{crawl.KindBuild, cpp}},
		{"third_party/BUILD", c{Kind: crawl.KindVendored}},
		{"autogen.sh", c{crawl.KindBuild, cpp}},
		{"foo.pc.in", c{crawl.KindBuild, cpp}},
		{"src/main.cpp", c{Kind: crawl.KindSource}},
		{"include/foo/bar.hpp", c{Kind: crawl.KindSource}},
		{"src/util.h", c{Kind: crawl.KindSource}},
		{"tests/test_main.cpp", c{Kind: crawl.KindTest}},
		{"test/CMakeLists.txt", c{Kind: crawl.KindTest}},
		{"src/foo_test.cc", c{Kind: crawl.KindTest}},
		{"third_party/googletest/CMakeLists.txt", c{Kind: crawl.KindVendored}},
		{"vendor/github.com/x/y/go.mod", c{Kind: crawl.KindVendored}},
		{"extern/pybind11/setup.py", c{Kind: crawl.KindVendored}},
		// Containers and setup scripts.
		{"Dockerfile", c{Kind: crawl.KindDocker}},
		{"docker/Dockerfile.dev", c{Kind: crawl.KindDocker}},
		{"ci/build.Dockerfile", c{Kind: crawl.KindDocker}},
		{"docker-compose.yml", c{Kind: crawl.KindDocker}},
		{"compose.yaml", c{Kind: crawl.KindDocker}},
		{".dockerignore", c{Kind: crawl.KindDocker}},
		{".devcontainer/devcontainer.json", c{Kind: crawl.KindDocker}},
		{".devcontainer/post-create.sh", c{Kind: crawl.KindDocker}},
		{"install.sh", c{Kind: crawl.KindBuild}},
		{"scripts/setup.sh", c{Kind: crawl.KindBuild}},
		{"scripts/release.sh", c{Kind: crawl.KindSource}},
		// READMEs.
		{"README.md", c{Kind: crawl.KindReadme}},
		{"README.rst", c{Kind: crawl.KindReadme}},
		{"README", c{Kind: crawl.KindReadme}},
		{"docs/README.txt", c{Kind: crawl.KindReadme}},
		{"packages/ui/readme.md", c{Kind: crawl.KindReadme}},
		{"tests/README.md", c{Kind: crawl.KindTest}},
		// Neither environment nor source.
		{"CHANGELOG.md", c{Kind: crawl.KindOther}},
		{"docs/install.rst", c{Kind: crawl.KindOther}},
		{"INSTALL.md", c{Kind: crawl.KindOther}},
		{"LICENSE", c{Kind: crawl.KindOther}},
		{".gitignore", c{Kind: crawl.KindOther}},
		{".gitmodules", c{Kind: crawl.KindOther}},
		{".github/workflows/ci.yml", c{Kind: crawl.KindOther}},
		{".travis.yml", c{Kind: crawl.KindOther}},
		{".pre-commit-config.yaml", c{Kind: crawl.KindOther}},
		{"renovate.json", c{Kind: crawl.KindOther}},
		{"data/sample.csv", c{Kind: crawl.KindOther}},
		// Path shapes: clean-up, case.
		{"./setup.py", c{crawl.KindManifest, py}},
		{"SETUP.PY", c{crawl.KindManifest, py}},
		{"Tests/Setup.py", c{Kind: crawl.KindTest}},
	} {
		if got := crawl.ClassifyPath(tc.path); got != tc.want {
			t.Errorf("ClassifyPath(%q) = %+v, want %+v", tc.path, got, tc.want)
		}
	}
}

func TestFileClassIsEnv(t *testing.T) {
	for _, tc := range []struct {
		kind      crawl.FileKind
		env, core bool
	}{
		{crawl.KindManifest, true, true}, {crawl.KindLockfile, true, true}, {crawl.KindBuild, true, true},
		{crawl.KindDocker, true, true}, {crawl.KindReadme, true, false}, {crawl.KindTest, false, false},
		{crawl.KindSource, false, false}, {crawl.KindVendored, false, false}, {crawl.KindOther, false, false},
	} {
		fc := crawl.FileClass{Kind: tc.kind}
		if fc.IsEnv() != tc.env || fc.IsCoreEnv() != tc.core {
			t.Errorf("%s: IsEnv %v IsCoreEnv %v", tc.kind, fc.IsEnv(), fc.IsCoreEnv())
		}
	}
}

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
