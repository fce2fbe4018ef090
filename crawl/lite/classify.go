package lite

import (
	"path"
	"sort"
	"strings"

	"github.com/envgap/envgap/schemas"
)

// manifestNames are the dependency manifests of each ecosystem, main one first.
var manifestNames = map[schemas.Ecosystem][]string{
	schemas.EcosystemPython:     {"requirements.txt", "pyproject.toml", "setup.py", "setup.cfg", "Pipfile"},
	schemas.EcosystemJavaScript: {"package.json"},
	schemas.EcosystemJava:       {"pom.xml", "build.gradle", "build.gradle.kts"},
	schemas.EcosystemCPP:        {"CMakeLists.txt", "Makefile", "makefile", "GNUmakefile", "meson.build"},
}

// envNames are the base names of environment files in any ecosystem: manifests,
// lockfiles, build and setup files, container files.
var envNames = map[string]bool{
	// Python
	"requirements.txt": true, "constraints.txt": true, "pyproject.toml": true, "setup.py": true,
	"setup.cfg": true, "Pipfile": true, "Pipfile.lock": true, "poetry.lock": true, "uv.lock": true,
	"environment.yml": true, "environment.yaml": true, "tox.ini": true, "MANIFEST.in": true,
	".python-version": true, "runtime.txt": true,
	// JavaScript
	"package.json": true, "package-lock.json": true, "npm-shrinkwrap.json": true, "yarn.lock": true,
	"pnpm-lock.yaml": true, ".npmrc": true, ".nvmrc": true, ".yarnrc": true, ".yarnrc.yml": true,
	// Java
	"pom.xml": true, "build.gradle": true, "build.gradle.kts": true, "settings.gradle": true,
	"settings.gradle.kts": true, "gradle.properties": true, "mvnw": true, "mvnw.cmd": true,
	// C++
	"CMakeLists.txt": true, "CMakePresets.json": true, "Makefile": true, "makefile": true,
	"GNUmakefile": true, "meson.build": true, "meson_options.txt": true, "conanfile.txt": true,
	"conanfile.py": true, "vcpkg.json": true, "configure.ac": true, "Makefile.am": true,
	// any
	"Dockerfile": true, "docker-compose.yml": true, "docker-compose.yaml": true, ".dockerignore": true,
	".gitignore": true, ".tool-versions": true,
}

// IsEnvironmentFile reports whether a project path is an environment file (a manifest,
// lockfile, build or setup file, container file, shell script or README) rather than
// source, tests or data. Only environment files may be part of a Lite fix, apart from
// the unchanged copy of a Java source under src/main/java.
func IsEnvironmentFile(p string) bool {
	base := path.Base(p)
	switch {
	case envNames[base]:
		return true
	case strings.HasPrefix(base, "requirements") && strings.HasSuffix(base, ".txt"),
		strings.HasPrefix(base, "constraints") && strings.HasSuffix(base, ".txt"):
		return true
	case strings.HasSuffix(base, ".cmake"), strings.HasSuffix(base, ".cmake.in"),
		strings.HasSuffix(base, ".sh"), strings.HasPrefix(base, "Dockerfile"):
		return true
	case strings.HasPrefix(strings.ToUpper(base), "README"):
		return true
	case strings.HasPrefix(p, ".mvn/"), strings.HasPrefix(p, "gradle/wrapper/"):
		return true
	}
	return false
}

// Manifests returns the manifest paths of a project for an ecosystem: the main one (the
// shallowest file with the ecosystem's first-ranked name) and all of them, sorted.
func Manifests(eco schemas.Ecosystem, files []schemas.File) (main string, all []string) {
	names := manifestNames[eco]
	rank := func(p string) (int, bool) {
		for i, n := range names {
			if path.Base(p) == n {
				return i, true
			}
		}
		return 0, false
	}
	for _, f := range files {
		if _, ok := rank(f.Path); ok {
			all = append(all, f.Path)
		}
	}
	sort.Strings(all)
	best, bestRank, bestDepth := "", 0, 0
	for _, p := range all {
		r, _ := rank(p)
		d := strings.Count(p, "/")
		if best == "" || d < bestDepth || (d == bestDepth && r < bestRank) {
			best, bestRank, bestDepth = p, r, d
		}
	}
	return best, all
}

// mavenSourceRoot is where Maven compiles Java sources from.
const mavenSourceRoot = "src/main/java/"

func underMavenSources(p string) bool {
	return strings.HasPrefix(p, mavenSourceRoot) || strings.Contains(p, "/"+mavenSourceRoot)
}
