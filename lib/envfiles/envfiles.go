package envfiles

import (
	"path"
	"strings"

	"github.com/envgap/envgap/schemas"
)

// FileKind is what a path of a project is, as far as the environment is concerned.
type FileKind string

// The kinds of ClassifyPath. The first five are environment files.
const (
	KindManifest FileKind = "manifest" // declares dependencies: setup.py, package.json, pom.xml, CMakeLists.txt
	KindLockfile FileKind = "lockfile" // pins resolved dependencies: poetry.lock, package-lock.json
	KindBuild    FileKind = "build"    // build and setup files: Makefile, *.cmake, gradle wrapper, tsconfig.json
	KindDocker   FileKind = "docker"   // Dockerfiles and compose files
	KindReadme   FileKind = "readme"   // README files
	KindTest     FileKind = "test"     // tests, test fixtures and test configuration
	KindVendored FileKind = "vendored" // copies of dependencies: node_modules/, vendor/, third_party/
	KindSource   FileKind = "source"   // program source
	KindOther    FileKind = "other"    // everything else: docs, CI, changelogs, data, licenses
)

// FileClass is the classification of one path.
type FileClass struct {
	Kind FileKind
	// Ecosystem is the ecosystem a manifest, lockfile or build file belongs to, when the
	// name says so; empty otherwise.
	Ecosystem schemas.Ecosystem
}

// IsEnv reports whether the path is an environment file (manifest, lockfile, build or
// setup file, Dockerfile, README): the only files a Repaired fix may touch.
func (c FileClass) IsEnv() bool {
	switch c.Kind {
	case KindManifest, KindLockfile, KindBuild, KindDocker, KindReadme:
		return true
	}
	return false
}

// IsCoreEnv reports whether the path changes the environment itself (manifest, lockfile,
// build file, Dockerfile), as opposed to only describing it (README).
func (c FileClass) IsCoreEnv() bool { return c.IsEnv() && c.Kind != KindReadme }

const (
	py   = schemas.EcosystemPython
	js   = schemas.EcosystemJavaScript
	java = schemas.EcosystemJava
	cpp  = schemas.EcosystemCPP
)

// exactNames maps file base names (lower-case) to their class.
var exactNames = map[string]FileClass{
	// Python.
	"setup.py": {KindManifest, py}, "setup.cfg": {KindManifest, py}, "pyproject.toml": {KindManifest, py},
	"pipfile": {KindManifest, py}, "pixi.toml": {KindManifest, py}, "environment.yml": {KindManifest, py},
	"environment.yaml": {KindManifest, py},
	"pipfile.lock":     {KindLockfile, py}, "poetry.lock": {KindLockfile, py}, "pdm.lock": {KindLockfile, py},
	"uv.lock": {KindLockfile, py}, "pixi.lock": {KindLockfile, py}, "conda-lock.yml": {KindLockfile, py},
	"pylock.toml": {KindLockfile, py},
	"tox.ini":     {KindBuild, py}, "manifest.in": {KindBuild, py}, ".python-version": {KindBuild, py},
	"runtime.txt": {KindBuild, py}, "hatch.toml": {KindBuild, py}, "pip.conf": {KindBuild, py},
	"meta.yaml": {KindBuild, py}, "pdm.toml": {KindBuild, py}, "poetry.toml": {KindBuild, py},
	"uv.toml": {KindBuild, py}, ".condarc": {KindBuild, py},
	// JavaScript.
	"package.json":      {KindManifest, js},
	"package-lock.json": {KindLockfile, js}, "npm-shrinkwrap.json": {KindLockfile, js},
	"yarn.lock": {KindLockfile, js}, "pnpm-lock.yaml": {KindLockfile, js}, "bun.lockb": {KindLockfile, js},
	"bun.lock": {KindLockfile, js}, ".pnp.cjs": {KindLockfile, js}, ".pnp.loader.mjs": {KindLockfile, js},
	"pnpm-workspace.yaml": {KindBuild, js}, "lerna.json": {KindBuild, js}, ".npmrc": {KindBuild, js},
	".yarnrc": {KindBuild, js}, ".yarnrc.yml": {KindBuild, js}, ".nvmrc": {KindBuild, js},
	".node-version": {KindBuild, js}, ".pnpmfile.cjs": {KindBuild, js}, "binding.gyp": {KindBuild, js},
	".babelrc": {KindBuild, js}, ".babelrc.json": {KindBuild, js}, ".swcrc": {KindBuild, js},
	"bunfig.toml": {KindBuild, js}, "deno.json": {KindBuild, js}, ".bowerrc": {KindBuild, js},
	"bower.json": {KindManifest, js},
	// Java.
	"pom.xml": {KindManifest, java}, "build.gradle": {KindManifest, java}, "build.gradle.kts": {KindManifest, java},
	"ivy.xml": {KindManifest, java}, "libs.versions.toml": {KindManifest, java},
	"gradle.lockfile": {KindLockfile, java}, "buildscript-gradle.lockfile": {KindLockfile, java},
	"settings.gradle": {KindBuild, java}, "settings.gradle.kts": {KindBuild, java},
	"gradle.properties": {KindBuild, java}, "gradle-wrapper.properties": {KindBuild, java},
	"gradle-wrapper.jar": {KindBuild, java}, "gradlew": {KindBuild, java}, "gradlew.bat": {KindBuild, java},
	"mvnw": {KindBuild, java}, "mvnw.cmd": {KindBuild, java}, "maven-wrapper.properties": {KindBuild, java},
	"maven-wrapper.jar": {KindBuild, java}, "build.xml": {KindBuild, java}, ".sdkmanrc": {KindBuild, java},
	".java-version": {KindBuild, java}, "toolchains.xml": {KindBuild, java},
	// C and C++.
	"cmakelists.txt": {KindManifest, cpp}, "meson.build": {KindManifest, cpp}, "conanfile.txt": {KindManifest, cpp},
	"conanfile.py": {KindManifest, cpp}, "vcpkg.json": {KindManifest, cpp}, "configure.ac": {KindManifest, cpp},
	"configure.in":             {KindManifest, cpp},
	"conan.lock":               {KindLockfile, cpp},
	"vcpkg-configuration.json": {KindBuild, cpp}, "meson_options.txt": {KindBuild, cpp},
	"meson.options": {KindBuild, cpp}, "makefile": {KindBuild, cpp}, "gnumakefile": {KindBuild, cpp},
	"makefile.am": {KindBuild, cpp}, "makefile.in": {KindBuild, cpp}, "configure": {KindBuild, cpp},
	"cmakepresets.json": {KindBuild, cpp}, "cmakeuserpresets.json": {KindBuild, cpp},
	"build": {KindBuild, cpp}, "build.bazel": {KindBuild, cpp}, "workspace": {KindBuild, cpp},
	"workspace.bazel": {KindBuild, cpp}, "module.bazel": {KindBuild, cpp}, "module.bazel.lock": {KindLockfile, cpp},
	".bazelrc": {KindBuild, cpp}, ".bazelversion": {KindBuild, cpp}, "sconstruct": {KindBuild, cpp},
	"sconscript": {KindBuild, cpp}, "premake5.lua": {KindBuild, cpp}, "xmake.lua": {KindBuild, cpp},
	"autogen.sh": {KindBuild, cpp}, "acinclude.m4": {KindBuild, cpp}, "aclocal.m4": {KindBuild, cpp},
	// Any ecosystem: setup scripts.
	"bootstrap.sh": {KindBuild, ""}, "install.sh": {KindBuild, ""}, "setup.sh": {KindBuild, ""},
	"build.sh": {KindBuild, ""}, "install-deps.sh": {KindBuild, ""}, "install_deps.sh": {KindBuild, ""},
	"install-dependencies.sh": {KindBuild, ""}, "install_dependencies.sh": {KindBuild, ""},
	"apt.txt": {KindBuild, ""}, "bindep.txt": {KindBuild, ""}, ".tool-versions": {KindBuild, ""},
	// Containers.
	"dockerfile": {KindDocker, ""}, "containerfile": {KindDocker, ""}, ".dockerignore": {KindDocker, ""},
	"compose.yml": {KindDocker, ""}, "compose.yaml": {KindDocker, ""}, "devcontainer.json": {KindDocker, ""},
}

// testDirs are directory names whose content is tests or test data.
var testDirs = map[string]bool{
	"test": true, "tests": true, "__tests__": true, "testing": true, "spec": true, "specs": true,
	"testdata": true, "test-data": true, "test_data": true, "fixtures": true, "__fixtures__": true,
	"__mocks__": true, "__snapshots__": true, "e2e": true, "unittests": true, "unittest": true,
	"integration-tests": true, "integration_tests": true, "androidtest": true, "jmh": true,
}

// vendorDirs hold copies of dependencies.
var vendorDirs = map[string]bool{
	"node_modules": true, "vendor": true, "vendored": true, "_vendor": true, "third_party": true,
	"third-party": true, "thirdparty": true, "3rdparty": true, "external": true, "extern": true,
	"bower_components": true, "site-packages": true,
}

// sourceExts are extensions of program source.
var sourceExts = map[string]bool{
	".py": true, ".pyx": true, ".pxd": true, ".pxi": true, ".pyi": true, ".js": true, ".mjs": true, ".cjs": true,
	".jsx": true, ".ts": true, ".tsx": true, ".mts": true, ".cts": true, ".vue": true, ".svelte": true,
	".java": true, ".kt": true, ".kts": true, ".scala": true, ".groovy": true, ".c": true, ".h": true,
	".cc": true, ".cpp": true, ".cxx": true, ".c++": true, ".hh": true, ".hpp": true, ".hxx": true,
	".h++": true, ".ipp": true, ".inl": true, ".tcc": true, ".cu": true, ".cuh": true, ".m": true, ".mm": true,
	".s": true, ".asm": true, ".f": true, ".f90": true, ".rs": true, ".go": true, ".rb": true, ".php": true,
	".swift": true, ".cs": true, ".lua": true, ".pl": true, ".sh": true, ".bash": true, ".zsh": true,
	".ps1": true, ".bat": true, ".cmd": true, ".sql": true, ".proto": true, ".thrift": true,
	".css": true, ".scss": true, ".less": true, ".html": true, ".htm": true, ".wasm": true, ".r": true,
	".jl": true, ".dart": true, ".ex": true, ".exs": true, ".erl": true, ".hs": true, ".ml": true,
}

// buildConfigPrefixes are base-name prefixes of JavaScript build tool configuration
// ("webpack.config.js", "vite.config.ts", "tsconfig.build.json").
var buildConfigPrefixes = []string{
	"webpack.config.", "rollup.config.", "vite.config.", "babel.config.", "esbuild.config.",
	"tsup.config.", "snowpack.config.", "parcel.config.", "swc.config.", "gulpfile.", "gruntfile.",
	"tsconfig.", "jsconfig.", "next.config.", "nuxt.config.", "svelte.config.", "metro.config.",
}

// testConfigPrefixes are base-name prefixes of test runner configuration.
var testConfigPrefixes = []string{
	"jest.config.", "jest.setup.", "vitest.config.", "karma.conf.", "playwright.config.",
	"cypress.config.", ".mocharc", "protractor.conf.", "pytest.ini", "conftest.py", "noxfile.py",
	".coveragerc", "codecov.", ".nycrc",
}

// ClassifyPath classifies a project-relative path (forward slashes) by its name and
// directories alone. Tests and test data win over every other kind: a package.json under
// tests/fixtures/ is test data, not a manifest. Python requirement files directly under a
// top-level test/ or tests/ directory are the exception: they declare the test
// environment. Vendored copies of dependencies are never environment files.
func ClassifyPath(p string) FileClass {
	p = strings.TrimPrefix(path.Clean("/"+p), "/")
	base := path.Base(p)
	lower := strings.ToLower(base)
	dirs := strings.Split(path.Dir(p), "/")
	if dirs[0] == "." {
		dirs = nil
	}
	ldirs := make([]string, len(dirs))
	for i, d := range dirs {
		ldirs[i] = strings.ToLower(d)
	}
	for _, d := range ldirs {
		if vendorDirs[d] {
			return FileClass{Kind: KindVendored}
		}
	}
	if inTestDir(ldirs) {
		if len(ldirs) == 1 && (ldirs[0] == "test" || ldirs[0] == "tests") && isRequirementsName(lower) {
			return FileClass{KindManifest, py}
		}
		return FileClass{Kind: KindTest}
	}
	if isTestFileName(base) {
		return FileClass{Kind: KindTest}
	}
	// Whole directories of build logic and wrappers.
	if len(ldirs) > 0 {
		switch ldirs[0] {
		case "buildsrc", ".mvn":
			return FileClass{KindBuild, java}
		case ".yarn":
			if len(ldirs) > 1 && (ldirs[1] == "releases" || ldirs[1] == "plugins" || ldirs[1] == "patches" || ldirs[1] == "sdks") {
				return FileClass{KindBuild, js}
			}
		case ".devcontainer":
			return FileClass{Kind: KindDocker}
		}
	}
	if c, ok := exactNames[lower]; ok {
		return c
	}
	ext := strings.ToLower(path.Ext(base))
	switch {
	case strings.HasPrefix(lower, "readme"):
		return FileClass{Kind: KindReadme}
	case isRequirementsName(lower):
		return FileClass{KindManifest, py}
	case len(ldirs) > 0 && ldirs[len(ldirs)-1] == "requirements" && (ext == ".txt" || ext == ".in"):
		return FileClass{KindManifest, py}
	case strings.HasPrefix(lower, "environment") && (ext == ".yml" || ext == ".yaml"),
		strings.HasPrefix(lower, "conda") && (ext == ".yml" || ext == ".yaml"):
		return FileClass{KindManifest, py}
	case strings.HasPrefix(lower, "pylock.") && ext == ".toml":
		return FileClass{KindLockfile, py}
	case strings.HasPrefix(lower, "dockerfile") || ext == ".dockerfile" || strings.HasPrefix(lower, "containerfile"):
		return FileClass{Kind: KindDocker}
	case (strings.HasPrefix(lower, "docker-compose") || strings.HasPrefix(lower, "compose.")) && (ext == ".yml" || ext == ".yaml"):
		return FileClass{Kind: KindDocker}
	case ext == ".cmake" || strings.HasSuffix(lower, ".cmake.in") || strings.HasSuffix(lower, ".pc.in"):
		return FileClass{KindBuild, cpp}
	case len(ldirs) > 0 && ldirs[len(ldirs)-1] == "cmake" && (ext == ".in" || ext == ".txt"):
		return FileClass{KindBuild, cpp}
	case ext == ".m4" || ext == ".mk" || ext == ".bzl" || ext == ".mak":
		return FileClass{KindBuild, cpp}
	case strings.HasPrefix(lower, "makefile") || strings.HasPrefix(lower, "cmakelists"):
		return FileClass{KindBuild, cpp}
	case ext == ".gradle" || strings.HasSuffix(lower, ".gradle.kts"):
		return FileClass{KindBuild, java}
	case ext == ".lockfile" && len(ldirs) > 0 && ldirs[0] == "gradle":
		return FileClass{KindLockfile, java}
	case len(ldirs) > 0 && ldirs[0] == "gradle" && ext == ".toml":
		return FileClass{KindManifest, java}
	case len(ldirs) > 1 && ldirs[len(ldirs)-1] == "wrapper" && ldirs[len(ldirs)-2] == "gradle":
		return FileClass{KindBuild, java}
	}
	for _, pre := range testConfigPrefixes {
		if strings.HasPrefix(lower, pre) {
			return FileClass{Kind: KindTest}
		}
	}
	for _, pre := range buildConfigPrefixes {
		if strings.HasPrefix(lower, pre) {
			return FileClass{KindBuild, js}
		}
	}
	if strings.HasPrefix(lower, "requirements") && (ext == ".in" || ext == ".pip") {
		return FileClass{KindManifest, py}
	}
	if strings.HasPrefix(lower, "constraints") && ext == ".txt" {
		return FileClass{KindManifest, py}
	}
	if sourceExts[ext] {
		return FileClass{Kind: KindSource}
	}
	return FileClass{Kind: KindOther}
}

func isRequirementsName(lower string) bool {
	return strings.HasPrefix(lower, "requirements") && strings.HasSuffix(lower, ".txt") ||
		strings.HasSuffix(lower, "-requirements.txt") || strings.HasSuffix(lower, "_requirements.txt") ||
		strings.HasPrefix(lower, "constraints") && strings.HasSuffix(lower, ".txt")
}

func inTestDir(ldirs []string) bool {
	for i, d := range ldirs {
		if testDirs[d] {
			return true
		}
		// Maven and Gradle layouts: src/test/..., src/it/..., src/integrationTest/...
		if d == "src" && i+1 < len(ldirs) {
			n := ldirs[i+1]
			if n == "it" || strings.HasSuffix(n, "test") || strings.HasSuffix(n, "tests") {
				return true
			}
		}
	}
	return false
}

func isTestFileName(base string) bool {
	ext := strings.ToLower(path.Ext(base))
	if !sourceExts[ext] {
		return false
	}
	stem := strings.TrimSuffix(base, path.Ext(base))
	lower := strings.ToLower(stem)
	if strings.HasPrefix(lower, "test_") || strings.HasSuffix(lower, "_test") || strings.HasSuffix(lower, "_tests") ||
		strings.HasSuffix(lower, ".test") || strings.HasSuffix(lower, ".spec") || strings.HasSuffix(lower, "-test") ||
		strings.HasSuffix(lower, "_spec") {
		return true
	}
	switch ext {
	case ".java", ".kt", ".scala", ".groovy":
		// JUnit and failsafe conventions are case-sensitive: FooTest, FooTests, FooIT, TestFoo.
		return strings.HasSuffix(stem, "Test") || strings.HasSuffix(stem, "Tests") || strings.HasSuffix(stem, "TestCase") ||
			strings.HasSuffix(stem, "IT") || strings.HasSuffix(stem, "ITCase") ||
			len(stem) > 4 && strings.HasPrefix(stem, "Test") && stem[4] >= 'A' && stem[4] <= 'Z'
	}
	return false
}
