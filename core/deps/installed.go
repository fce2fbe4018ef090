package deps

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/envgap/envgap/schemas"
)

// Where the D2 commands write inside the container (the card's d2_command writes the
// "after" listing to D2AfterPath).
const (
	EvidenceDir  = "/evidence"
	D2BeforePath = "/evidence/D2.before.json"
	D2AfterPath  = "/evidence/D2.raw.json"
	// D2MavenPath is where the Maven listing goes (text, not JSON).
	D2MavenPath = "/evidence/D2.raw.txt"
)

// D2Commands returns the commands that list installed packages inside the container:
// before runs ahead of the resolve step, after once it is done (both empty when the
// ecosystem has no such listing). A task's d2_command, when given (non-nil, not blank),
// replaces after; it must write where D2Paths says.
//
//   - python: pip list --format=json before and after; D2 is the difference (the paper's
//     "diff of pip list before vs. after pip install").
//   - javascript: npm ls --all --json after (the whole node_modules tree). npm exits
//     non-zero when the tree has problems; the listing is still read, so the command
//     ends with "|| true".
//   - java: mvn dependency:list into a file, appended over the modules of a multi-module
//     build.
//   - cpp: the CMake caches of the project's build trees (CMakeInstalled reads what the
//     configure found and fetched; the paper's "CMake configure log").
func D2Commands(eco schemas.Ecosystem, d2Command *string) (before, after string) {
	switch eco {
	case schemas.EcosystemPython:
		before = "mkdir -p " + EvidenceDir + " && python3 -m pip list --format=json > " + D2BeforePath
		after = "mkdir -p " + EvidenceDir + " && python3 -m pip list --format=json > " + D2AfterPath
	case schemas.EcosystemJavaScript:
		after = "mkdir -p " + EvidenceDir + " && (npm ls --all --json > " + D2AfterPath + " 2>/dev/null || true)"
	case schemas.EcosystemJava:
		after = "mkdir -p " + EvidenceDir + " && rm -f " + D2MavenPath + " && mvn -B -q dependency:list -DoutputFile=" + D2MavenPath + " -DappendOutput=true"
	case schemas.EcosystemCPP:
		after = d2CMakeCommand
	}
	if d2Command != nil && strings.TrimSpace(*d2Command) != "" {
		after = *d2Command
	}
	return before, after
}

// D2Paths returns the files D2Commands write (empty when not used).
func D2Paths(eco schemas.Ecosystem) (before, after string) {
	switch eco {
	case schemas.EcosystemPython:
		return D2BeforePath, D2AfterPath
	case schemas.EcosystemJavaScript:
		return "", D2AfterPath
	case schemas.EcosystemJava:
		return "", D2MavenPath
	case schemas.EcosystemCPP:
		return "", D2CMakePath
	}
	return "", ""
}

// Installed reads D2 from the listings D2Commands wrote: PipListDiff, NpmLs or
// MvnDependencyList by ecosystem; for cpp CMakeInstalled, or where no CMake cache was
// collected D1 with Unreadable saying so (the paper's D2 := D1). Names of the project
// itself (self, see Declared.Self) are left out.
func Installed(eco schemas.Ecosystem, before, after []byte, d1 schemas.DepSet, self []string) (schemas.DepSet, error) {
	var ds schemas.DepSet
	var err error
	switch eco {
	case schemas.EcosystemPython:
		ds, err = PipListDiff(before, after)
	case schemas.EcosystemJavaScript:
		ds, err = NpmLs(after)
	case schemas.EcosystemJava:
		ds, err = MvnDependencyList(after)
	case schemas.EcosystemCPP:
		var ok bool
		if ds, ok = CMakeInstalled(after); !ok {
			// Not configured with CMake where it can be read: the paper's D2 := D1,
			// marked as not measured so that a report can say so.
			why := "no CMakeCache.txt under /work to read what CMake configured: D2 is taken as D1"
			if d1.Unreadable != "" {
				why += " (" + d1.Unreadable + ")"
			}
			ds = schemas.DepSet{Deps: append([]schemas.Dependency{}, d1.Deps...), Unreadable: why}
		}
	default:
		return schemas.DepSet{}, fmt.Errorf("installed: %w %q", ErrUnknownEcosystem, eco)
	}
	if err != nil {
		return schemas.DepSet{}, err
	}
	return Without(eco, ds, self...), nil
}

// Without returns ds without the named packages (compared by Key).
func Without(eco schemas.Ecosystem, ds schemas.DepSet, names ...string) schemas.DepSet {
	drop := map[string]bool{}
	for _, n := range names {
		drop[Key(eco, n)] = true
	}
	out := schemas.DepSet{Deps: []schemas.Dependency{}, Unreadable: ds.Unreadable}
	for _, d := range ds.Deps {
		if !drop[Key(eco, d.Name)] {
			out.Deps = append(out.Deps, d)
		}
	}
	return out
}

type pipEntry struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// jsonStart skips anything before the first "[" or "{" (a warning some tools print to
// stdout first).
func jsonStart(b []byte, open byte) []byte {
	if i := bytes.IndexByte(b, open); i >= 0 {
		return b[i:]
	}
	return b
}

func parsePipList(b []byte, which string) (map[string]pipEntry, error) {
	out := map[string]pipEntry{}
	if len(bytes.TrimSpace(b)) == 0 {
		return out, nil
	}
	var list []pipEntry
	dec := json.NewDecoder(bytes.NewReader(jsonStart(b, '[')))
	if err := dec.Decode(&list); err != nil {
		return nil, fmt.Errorf("pip list %s: not the JSON of pip list --format=json: %w", which, err)
	}
	for _, e := range list {
		if e.Name != "" {
			out[NormalizePython(e.Name)] = e
		}
	}
	return out, nil
}

// PipListDiff returns the packages of after (pip list --format=json once the project is
// installed) that are not in before, or that have another version there. Names are PEP
// 503 normalised; Spec is the installed version. An empty before means nothing was
// installed before.
func PipListDiff(before, after []byte) (schemas.DepSet, error) {
	b, err := parsePipList(before, "before")
	if err != nil {
		return schemas.DepSet{}, err
	}
	if len(bytes.TrimSpace(after)) == 0 {
		return schemas.DepSet{}, fmt.Errorf("pip list after: empty output (did the listing run?)")
	}
	a, err := parsePipList(after, "after")
	if err != nil {
		return schemas.DepSet{}, err
	}
	ds := schemas.DepSet{Deps: []schemas.Dependency{}}
	for name, e := range a {
		if old, ok := b[name]; ok && old.Version == e.Version {
			continue
		}
		ds.Deps = append(ds.Deps, schemas.Dependency{Name: name, Spec: e.Version, Pinned: e.Version != ""})
	}
	sortDeps(ds.Deps)
	return ds, nil
}

// npmNode is one node of npm ls --json.
type npmNode struct {
	Name         string              `json:"name"`
	Version      string              `json:"version"`
	Missing      bool                `json:"missing"`
	Dependencies map[string]*npmNode `json:"dependencies"`
}

// NpmLs returns every package of npm ls --all --json: the whole tree, each name once
// (Spec lists its installed versions, comma-separated, when there are several). Missing
// packages (declared, not installed) are left out; the root project is not a
// dependency. npm exits non-zero when the tree has problems (missing, invalid,
// extraneous) and still prints the tree, which is read as it is.
func NpmLs(out []byte) (schemas.DepSet, error) {
	if len(bytes.TrimSpace(out)) == 0 {
		return schemas.DepSet{}, fmt.Errorf("npm ls: empty output (did the listing run?)")
	}
	var root npmNode
	if err := json.NewDecoder(bytes.NewReader(jsonStart(out, '{'))).Decode(&root); err != nil {
		return schemas.DepSet{}, fmt.Errorf("npm ls: not the JSON of npm ls --json: %w", err)
	}
	versions := map[string]map[string]bool{}
	var walk func(n *npmNode, depth int)
	walk = func(n *npmNode, depth int) {
		if depth > 200 {
			return
		}
		for name, c := range n.Dependencies {
			if c == nil || c.Missing || c.Version == "" {
				continue
			}
			if versions[name] == nil {
				versions[name] = map[string]bool{}
			}
			versions[name][c.Version] = true
			walk(c, depth+1)
		}
	}
	walk(&root, 0)
	ds := schemas.DepSet{Deps: []schemas.Dependency{}}
	for name, vs := range versions {
		list := make([]string, 0, len(vs))
		for v := range vs {
			list = append(list, v)
		}
		sort.Strings(list)
		ds.Deps = append(ds.Deps, schemas.Dependency{Name: name, Spec: strings.Join(list, ", "), Pinned: len(list) == 1})
	}
	sortDeps(ds.Deps)
	return ds, nil
}

var mavenScopes = map[string]bool{"compile": true, "provided": true, "runtime": true, "test": true, "system": true, "import": true}

// MvnDependencyList reads the output of mvn dependency:list (the console, with [INFO]
// prefixes, or the -DoutputFile file): lines
// groupId:artifactId:type[:classifier]:version:scope, with the "-- module ..." suffix of
// newer plugin versions and " (optional)" marks. Name is groupId:artifactId, Spec the
// version, From the whole coordinate. test-scoped artifacts are left out, as in D1.
// Several modules' lists are merged; each artifact is listed once.
func MvnDependencyList(out []byte) (schemas.DepSet, error) {
	ds := schemas.DepSet{Deps: []schemas.Dependency{}}
	seen := map[string]bool{}
	sawHeader := false
	for _, line := range strings.Split(string(out), "\n") {
		line = ansiEscapeRe.ReplaceAllString(line, "")
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "[INFO]"))
		if strings.Contains(line, "The following files have been resolved") {
			sawHeader = true
			continue
		}
		if i := strings.Index(line, " -- "); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(line), "(optional)"))
		if strings.ContainsAny(line, " \t") {
			continue
		}
		parts := strings.Split(line, ":")
		if len(parts) != 5 && len(parts) != 6 {
			continue
		}
		scope := parts[len(parts)-1]
		if !mavenScopes[scope] {
			continue
		}
		if scope == "test" {
			continue
		}
		name := parts[0] + ":" + parts[1]
		version := parts[len(parts)-2]
		if name == ":" || version == "" || seen[name] {
			continue
		}
		seen[name] = true
		ds.Deps = append(ds.Deps, schemas.Dependency{Name: name, Spec: version, Pinned: MavenPinned(version), From: line})
	}
	if len(ds.Deps) == 0 && !sawHeader && len(bytes.TrimSpace(out)) == 0 {
		return schemas.DepSet{}, fmt.Errorf("mvn dependency:list: empty output (did the listing run?)")
	}
	sortDeps(ds.Deps)
	return ds, nil
}

func sortDeps(d []schemas.Dependency) {
	sort.Slice(d, func(i, j int) bool { return d[i].Name < d[j].Name })
}
