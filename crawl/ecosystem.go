package crawl

import (
	"path"
	"sort"
	"strings"

	"github.com/envgap/envgap/lib/envfiles"
	"github.com/envgap/envgap/schemas"
)

// Project is what the tree at a commit says about a project's environment.
type Project struct {
	Ecosystem     schemas.Ecosystem
	ManifestPath  string
	ManifestPaths []string
}

// maxManifestDepth is the deepest directory level whose manifests count (0 is the root):
// modules of a Maven build or packages of a workspace, not the whole tree.
const maxManifestDepth = 2

// maxManifests caps manifest_paths.
const maxManifests = 50

// skipManifestDirs are directories whose manifests belong to something other than the
// project itself (documentation, examples, benchmarks).
var skipManifestDirs = map[string]bool{
	"docs": true, "doc": true, "examples": true, "example": true, "samples": true, "sample": true,
	"demo": true, "demos": true, "benchmarks": true, "benchmark": true, "bench": true, "tools": true,
	"scripts": true, "contrib": true, "misc": true, ".github": true,
}

// primaryManifests lists, per ecosystem, the manifest names in the order manifest_path
// prefers them.
var primaryManifests = map[schemas.Ecosystem][]string{
	schemas.EcosystemPython:     {"pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "pipfile", "environment.yml", "environment.yaml", "pixi.toml"},
	schemas.EcosystemJavaScript: {"package.json", "bower.json"},
	schemas.EcosystemJava:       {"pom.xml", "build.gradle.kts", "build.gradle", "ivy.xml", "libs.versions.toml"},
	schemas.EcosystemCPP:        {"cmakelists.txt", "meson.build", "conanfile.txt", "conanfile.py", "vcpkg.json", "configure.ac", "configure.in"},
}

// ecosystemOrder breaks ties between ecosystems.
var ecosystemOrder = []schemas.Ecosystem{schemas.EcosystemPython, schemas.EcosystemJavaScript, schemas.EcosystemJava, schemas.EcosystemCPP}

// languageEcosystem maps GitHub's repository language to an ecosystem.
var languageEcosystem = map[string]schemas.Ecosystem{
	"python": schemas.EcosystemPython, "cython": schemas.EcosystemPython, "jupyter notebook": schemas.EcosystemPython,
	"javascript": schemas.EcosystemJavaScript, "typescript": schemas.EcosystemJavaScript, "vue": schemas.EcosystemJavaScript, "coffeescript": schemas.EcosystemJavaScript, "svelte": schemas.EcosystemJavaScript,
	"java": schemas.EcosystemJava, "kotlin": schemas.EcosystemJava, "groovy": schemas.EcosystemJava, "scala": schemas.EcosystemJava,
	"c": schemas.EcosystemCPP, "c++": schemas.EcosystemCPP, "cuda": schemas.EcosystemCPP, "objective-c": schemas.EcosystemCPP, "objective-c++": schemas.EcosystemCPP, "cmake": schemas.EcosystemCPP, "meson": schemas.EcosystemCPP,
}

// LanguageEcosystem returns the ecosystem of a GitHub repository language, if any.
func LanguageEcosystem(language string) (schemas.Ecosystem, bool) {
	e, ok := languageEcosystem[strings.ToLower(language)]
	return e, ok
}

// FindManifests returns the dependency manifests of a tree (all of its file paths) by
// ecosystem, each list sorted by depth then path. Manifests under test, vendored,
// documentation and example directories, and deeper than two directories, are left out.
func FindManifests(paths []string) map[schemas.Ecosystem][]string {
	out := map[schemas.Ecosystem][]string{}
	for _, p := range paths {
		dir := path.Dir(p)
		depth := 0
		if dir != "." {
			parts := strings.Split(dir, "/")
			depth = len(parts)
			skip := false
			for _, d := range parts {
				if skipManifestDirs[strings.ToLower(d)] {
					skip = true
					break
				}
			}
			if skip {
				continue
			}
		}
		if depth > maxManifestDepth {
			continue
		}
		c := envfiles.ClassifyPath(p)
		if c.Kind != envfiles.KindManifest || c.Ecosystem == "" {
			continue
		}
		out[c.Ecosystem] = append(out[c.Ecosystem], p)
	}
	for e, list := range out {
		sort.Slice(list, func(i, j int) bool {
			di, dj := strings.Count(list[i], "/"), strings.Count(list[j], "/")
			if di != dj {
				return di < dj
			}
			return list[i] < list[j]
		})
		if len(list) > maxManifests {
			list = list[:maxManifests]
		}
		out[e] = list
	}
	return out
}

// ChooseProject picks the project's ecosystem among those whose manifests the tree has,
// preferring the hints in order (the ecosystem an issue's error belongs to, the ones a fix
// changes), then the repository's GitHub language, then one with a manifest at the root,
// then python, javascript, schemas.EcosystemJava, schemas.EcosystemCPP. ok is false when the tree has no manifest of any
// ecosystem. With allowed non-empty, only those ecosystems are considered.
func ChooseProject(manifests map[schemas.Ecosystem][]string, hints []schemas.Ecosystem, language string, allowed ...schemas.Ecosystem) (Project, bool) {
	langEco, _ := LanguageEcosystem(language)
	best, bestScore := schemas.Ecosystem(""), -1
	for i, e := range ecosystemOrder {
		list := manifests[e]
		if len(list) == 0 || (len(allowed) > 0 && !containsEco(allowed, e)) {
			continue
		}
		score := len(ecosystemOrder) - i
		for h, he := range hints {
			if he == e {
				score += 1000 * (len(hints) - h)
				break
			}
		}
		if e == langEco {
			score += 100
		}
		if !strings.Contains(list[0], "/") {
			score += 10
		}
		if score > bestScore {
			best, bestScore = e, score
		}
	}
	if best == "" {
		return Project{}, false
	}
	list := manifests[best]
	return Project{Ecosystem: best, ManifestPath: primaryOf(best, list), ManifestPaths: append([]string(nil), list...)}, true
}

func containsEco(list []schemas.Ecosystem, e schemas.Ecosystem) bool {
	for _, x := range list {
		if x == e {
			return true
		}
	}
	return false
}

// primaryOf picks manifest_path: the shallowest manifest, by the ecosystem's preference
// among equally deep ones.
func primaryOf(e schemas.Ecosystem, list []string) string {
	rank := func(p string) int {
		base := strings.ToLower(path.Base(p))
		for i, n := range primaryManifests[e] {
			if n == base {
				return i
			}
		}
		return len(primaryManifests[e])
	}
	best := list[0]
	for _, p := range list[1:] {
		dp, db := strings.Count(p, "/"), strings.Count(best, "/")
		if dp < db || dp == db && rank(p) < rank(best) {
			best = p
		}
	}
	return best
}

// PipfileDeclaresPackages reports whether a Pipfile lists at least one package under
// [packages], the dependencies the project needs to run; one that lists only
// [dev-packages] (test and build tools) is not the project's manifest.
func PipfileDeclaresPackages(content string) bool {
	in := false
	for _, l := range strings.Split(content, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if strings.HasPrefix(l, "[") {
			in = strings.EqualFold(strings.Trim(l, "[] \t"), "packages")
			continue
		}
		if in && strings.Contains(l, "=") {
			return true
		}
	}
	return false
}
