package envfiles_test

import (
	"testing"

	"github.com/envgap/envgap/lib/envfiles"
	"github.com/envgap/envgap/schemas"
)

func TestClassifyPath(t *testing.T) {
	const (
		py   = schemas.EcosystemPython
		js   = schemas.EcosystemJavaScript
		java = schemas.EcosystemJava
		cpp  = schemas.EcosystemCPP
	)
	type c = envfiles.FileClass
	for _, tc := range []struct {
		path string
		want envfiles.FileClass
	}{
		// Python manifests, lockfiles and setup files.
		{"setup.py", c{envfiles.KindManifest, py}},
		{"setup.cfg", c{envfiles.KindManifest, py}},
		{"pyproject.toml", c{envfiles.KindManifest, py}},
		{"requirements.txt", c{envfiles.KindManifest, py}},
		{"requirements-dev.txt", c{envfiles.KindManifest, py}},
		{"requirements_test.txt", c{envfiles.KindManifest, py}},
		{"dev-requirements.txt", c{envfiles.KindManifest, py}},
		{"requirements/base.txt", c{envfiles.KindManifest, py}},
		{"requirements/dev.in", c{envfiles.KindManifest, py}},
		{"ci/requirements/py310.txt", c{envfiles.KindManifest, py}},
		{"docs/requirements.txt", c{envfiles.KindManifest, py}},
		{"constraints.txt", c{envfiles.KindManifest, py}},
		{"tests/requirements.txt", c{envfiles.KindManifest, py}},
		{"Pipfile", c{envfiles.KindManifest, py}},
		{"Pipfile.lock", c{envfiles.KindLockfile, py}},
		{"poetry.lock", c{envfiles.KindLockfile, py}},
		{"uv.lock", c{envfiles.KindLockfile, py}},
		{"pdm.lock", c{envfiles.KindLockfile, py}},
		{"environment.yml", c{envfiles.KindManifest, py}},
		{"ci/environment-py311.yml", c{envfiles.KindManifest, py}},
		{"conda/environment.yaml", c{envfiles.KindManifest, py}},
		{"tox.ini", c{envfiles.KindBuild, py}},
		{"MANIFEST.in", c{envfiles.KindBuild, py}},
		{".python-version", c{envfiles.KindBuild, py}},
		{"conda-recipe/meta.yaml", c{envfiles.KindBuild, py}},
		{"packages/core/pyproject.toml", c{envfiles.KindManifest, py}},
		// Python source and tests.
		{"src/pkg/__init__.py", c{Kind: envfiles.KindSource}},
		{"pkg/_version.py", c{Kind: envfiles.KindSource}},
		{"pyroaring/abstract_bitmap.pxi", c{Kind: envfiles.KindSource}},
		{"pyroaring/bitmap.pyx", c{Kind: envfiles.KindSource}},
		{"pyroaring/croaring_version.pxi", c{Kind: envfiles.KindSource}},
		{"tests/test_core.py", c{Kind: envfiles.KindTest}},
		{"test/unit/test_x.py", c{Kind: envfiles.KindTest}},
		{"pkg/tests/test_api.py", c{Kind: envfiles.KindTest}},
		{"pkg/test_utils.py", c{Kind: envfiles.KindTest}},
		{"pkg/utils_test.py", c{Kind: envfiles.KindTest}},
		{"conftest.py", c{Kind: envfiles.KindTest}},
		{"noxfile.py", c{Kind: envfiles.KindTest}},
		{"pytest.ini", c{Kind: envfiles.KindTest}},
		{"tests/fixtures/setup.py", c{Kind: envfiles.KindTest}},
		{"tests/data/requirements.txt", c{Kind: envfiles.KindTest}},
		// JavaScript.
		{"package.json", c{envfiles.KindManifest, js}},
		{"packages/core/package.json", c{envfiles.KindManifest, js}},
		{"package-lock.json", c{envfiles.KindLockfile, js}},
		{"npm-shrinkwrap.json", c{envfiles.KindLockfile, js}},
		{"yarn.lock", c{envfiles.KindLockfile, js}},
		{"pnpm-lock.yaml", c{envfiles.KindLockfile, js}},
		{"bun.lockb", c{envfiles.KindLockfile, js}},
		{"pnpm-workspace.yaml", c{envfiles.KindBuild, js}},
		{".npmrc", c{envfiles.KindBuild, js}},
		{".nvmrc", c{envfiles.KindBuild, js}},
		{".yarnrc.yml", c{envfiles.KindBuild, js}},
		{".yarn/releases/yarn-3.6.1.cjs", c{envfiles.KindBuild, js}},
		{"binding.gyp", c{envfiles.KindBuild, js}},
		{"tsconfig.json", c{envfiles.KindBuild, js}},
		{"tsconfig.build.json", c{envfiles.KindBuild, js}},
		{"webpack.config.js", c{envfiles.KindBuild, js}},
		{"vite.config.ts", c{envfiles.KindBuild, js}},
		{"babel.config.js", c{envfiles.KindBuild, js}},
		{".babelrc", c{envfiles.KindBuild, js}},
		{"lerna.json", c{envfiles.KindBuild, js}},
		{"src/index.js", c{Kind: envfiles.KindSource}},
		{"lib/server.mjs", c{Kind: envfiles.KindSource}},
		{"src/components/App.tsx", c{Kind: envfiles.KindSource}},
		{"src/App.vue", c{Kind: envfiles.KindSource}},
		{"src/app.test.js", c{Kind: envfiles.KindTest}},
		{"src/app.spec.ts", c{Kind: envfiles.KindTest}},
		{"__tests__/app.js", c{Kind: envfiles.KindTest}},
		{"jest.config.js", c{Kind: envfiles.KindTest}},
		{"vitest.config.ts", c{Kind: envfiles.KindTest}},
		{".mocharc.yml", c{Kind: envfiles.KindTest}},
		{"test/fixtures/package.json", c{Kind: envfiles.KindTest}},
		{"node_modules/left-pad/package.json", c{Kind: envfiles.KindVendored}},
		// Java.
		{"pom.xml", c{envfiles.KindManifest, java}},
		{"core/pom.xml", c{envfiles.KindManifest, java}},
		{"build.gradle", c{envfiles.KindManifest, java}},
		{"app/build.gradle.kts", c{envfiles.KindManifest, java}},
		{"settings.gradle", c{envfiles.KindBuild, java}},
		{"settings.gradle.kts", c{envfiles.KindBuild, java}},
		{"gradle.properties", c{envfiles.KindBuild, java}},
		{"gradle/wrapper/gradle-wrapper.properties", c{envfiles.KindBuild, java}},
		{"gradle/wrapper/gradle-wrapper.jar", c{envfiles.KindBuild, java}},
		{"gradle/libs.versions.toml", c{envfiles.KindManifest, java}},
		{"gradle/dependencies.gradle", c{envfiles.KindBuild, java}},
		{"gradle/verification-metadata.xml", c{Kind: envfiles.KindOther}},
		{"gradlew", c{envfiles.KindBuild, java}},
		{"gradlew.bat", c{envfiles.KindBuild, java}},
		{"mvnw", c{envfiles.KindBuild, java}},
		{".mvn/wrapper/maven-wrapper.properties", c{envfiles.KindBuild, java}},
		{".mvn/extensions.xml", c{envfiles.KindBuild, java}},
		{"buildSrc/src/main/kotlin/Deps.kt", c{envfiles.KindBuild, java}},
		{"build.xml", c{envfiles.KindBuild, java}},
		{"ivy.xml", c{envfiles.KindManifest, java}},
		{"src/main/java/com/acme/App.java", c{Kind: envfiles.KindSource}},
		{"src/main/java/com/acme/Latest.java", c{Kind: envfiles.KindSource}},
		{"src/main/java/com/acme/Unit.java", c{Kind: envfiles.KindSource}},
		{"src/main/kotlin/App.kt", c{Kind: envfiles.KindSource}},
		{"src/main/resources/application.properties", c{Kind: envfiles.KindOther}},
		{"src/test/java/com/acme/AppTest.java", c{Kind: envfiles.KindTest}},
		{"src/it/java/com/acme/AppIT.java", c{Kind: envfiles.KindTest}},
		{"src/integrationTest/java/X.java", c{Kind: envfiles.KindTest}},
		{"core/src/test/resources/pom.xml", c{Kind: envfiles.KindTest}},
		{"lib/FooTest.java", c{Kind: envfiles.KindTest}},
		// C and C++.
		{"CMakeLists.txt", c{envfiles.KindManifest, cpp}},
		{"src/CMakeLists.txt", c{envfiles.KindManifest, cpp}},
		{"cmake/FindFoo.cmake", c{envfiles.KindBuild, cpp}},
		{"cmake/config.h.in", c{envfiles.KindBuild, cpp}},
		{"cmake/fooConfig.cmake.in", c{envfiles.KindBuild, cpp}},
		{"CMakePresets.json", c{envfiles.KindBuild, cpp}},
		{"meson.build", c{envfiles.KindManifest, cpp}},
		{"meson_options.txt", c{envfiles.KindBuild, cpp}},
		{"conanfile.txt", c{envfiles.KindManifest, cpp}},
		{"conanfile.py", c{envfiles.KindManifest, cpp}},
		{"vcpkg.json", c{envfiles.KindManifest, cpp}},
		{"configure.ac", c{envfiles.KindManifest, cpp}},
		{"Makefile", c{envfiles.KindBuild, cpp}},
		{"Makefile.am", c{envfiles.KindBuild, cpp}},
		{"src/Makefile.in", c{envfiles.KindBuild, cpp}},
		{"GNUmakefile", c{envfiles.KindBuild, cpp}},
		{"m4/ax_cxx_compile_stdcxx.m4", c{envfiles.KindBuild, cpp}},
		{"BUILD.bazel", c{envfiles.KindBuild, cpp}},
		{"WORKSPACE", c{envfiles.KindBuild, cpp}},
		{"MODULE.bazel", c{envfiles.KindBuild, cpp}},
		{"third_party/BUILD", c{Kind: envfiles.KindVendored}},
		{"autogen.sh", c{envfiles.KindBuild, cpp}},
		{"foo.pc.in", c{envfiles.KindBuild, cpp}},
		{"src/main.cpp", c{Kind: envfiles.KindSource}},
		{"include/foo/bar.hpp", c{Kind: envfiles.KindSource}},
		{"src/util.h", c{Kind: envfiles.KindSource}},
		{"tests/test_main.cpp", c{Kind: envfiles.KindTest}},
		{"test/CMakeLists.txt", c{Kind: envfiles.KindTest}},
		{"src/foo_test.cc", c{Kind: envfiles.KindTest}},
		{"third_party/googletest/CMakeLists.txt", c{Kind: envfiles.KindVendored}},
		{"vendor/github.com/x/y/go.mod", c{Kind: envfiles.KindVendored}},
		{"extern/pybind11/setup.py", c{Kind: envfiles.KindVendored}},
		// Containers and setup scripts.
		{"Dockerfile", c{Kind: envfiles.KindDocker}},
		{"docker/Dockerfile.dev", c{Kind: envfiles.KindDocker}},
		{"ci/build.Dockerfile", c{Kind: envfiles.KindDocker}},
		{"docker-compose.yml", c{Kind: envfiles.KindDocker}},
		{"compose.yaml", c{Kind: envfiles.KindDocker}},
		{".dockerignore", c{Kind: envfiles.KindDocker}},
		{".devcontainer/devcontainer.json", c{Kind: envfiles.KindDocker}},
		{".devcontainer/post-create.sh", c{Kind: envfiles.KindDocker}},
		{"install.sh", c{Kind: envfiles.KindBuild}},
		{"scripts/setup.sh", c{Kind: envfiles.KindBuild}},
		{"scripts/release.sh", c{Kind: envfiles.KindSource}},
		// READMEs.
		{"README.md", c{Kind: envfiles.KindReadme}},
		{"README.rst", c{Kind: envfiles.KindReadme}},
		{"README", c{Kind: envfiles.KindReadme}},
		{"docs/README.txt", c{Kind: envfiles.KindReadme}},
		{"packages/ui/readme.md", c{Kind: envfiles.KindReadme}},
		{"tests/README.md", c{Kind: envfiles.KindTest}},
		// Neither environment nor source.
		{"CHANGELOG.md", c{Kind: envfiles.KindOther}},
		{"docs/install.rst", c{Kind: envfiles.KindOther}},
		{"INSTALL.md", c{Kind: envfiles.KindOther}},
		{"LICENSE", c{Kind: envfiles.KindOther}},
		{".gitignore", c{Kind: envfiles.KindOther}},
		{".gitmodules", c{Kind: envfiles.KindOther}},
		{".github/workflows/ci.yml", c{Kind: envfiles.KindOther}},
		{".travis.yml", c{Kind: envfiles.KindOther}},
		{".pre-commit-config.yaml", c{Kind: envfiles.KindOther}},
		{"renovate.json", c{Kind: envfiles.KindOther}},
		{"data/sample.csv", c{Kind: envfiles.KindOther}},
		// Path shapes: clean-up, case.
		{"./setup.py", c{envfiles.KindManifest, py}},
		{"SETUP.PY", c{envfiles.KindManifest, py}},
		{"Tests/Setup.py", c{Kind: envfiles.KindTest}},
	} {
		if got := envfiles.ClassifyPath(tc.path); got != tc.want {
			t.Errorf("ClassifyPath(%q) = %+v, want %+v", tc.path, got, tc.want)
		}
	}
}

func TestFileClassIsEnv(t *testing.T) {
	for _, tc := range []struct {
		kind      envfiles.FileKind
		env, core bool
	}{
		{envfiles.KindManifest, true, true}, {envfiles.KindLockfile, true, true}, {envfiles.KindBuild, true, true},
		{envfiles.KindDocker, true, true}, {envfiles.KindReadme, true, false}, {envfiles.KindTest, false, false},
		{envfiles.KindSource, false, false}, {envfiles.KindVendored, false, false}, {envfiles.KindOther, false, false},
	} {
		fc := envfiles.FileClass{Kind: tc.kind}
		if fc.IsEnv() != tc.env || fc.IsCoreEnv() != tc.core {
			t.Errorf("%s: IsEnv %v IsCoreEnv %v", tc.kind, fc.IsEnv(), fc.IsCoreEnv())
		}
	}
}
