package deps

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/envgap/envgap/schemas"
)

// Declared is D1: the dependencies a project's manifests declare, and which manifests were
// read to get them.
type Declared struct {
	schemas.DepSet
	// ManifestPath is the main manifest (the card's manifest_path), empty when the project
	// has none.
	ManifestPath string `json:"manifest_path"`
	// ManifestPaths is every manifest read, the main one first, then in reading order
	// (the card's manifest_paths).
	ManifestPaths []string `json:"manifest_paths"`
	// Self names the project's own packages (its distribution, package.json name, Maven
	// modules), so that D2 and D3 can leave the project out of its own dependencies.
	Self []string `json:"self,omitempty"`
	// TestScope names the Java dependencies left out of D1 for their test scope
	// (groupId:artifactId), for a report that counts them as the paper did.
	TestScope []string `json:"test_scope,omitempty"`
	// Notes says what was seen but not followed (an include outside the project, a URL,
	// a local path), in words.
	Notes []string `json:"notes,omitempty"`
}

// ErrUnknownEcosystem is returned for an ecosystem that is not one of the card's.
var ErrUnknownEcosystem = errors.New("unknown ecosystem")

// FindManifests returns the manifests of a project (slash-separated paths inside files),
// the main one first. A project without any returns an empty list. Only the files a
// manifest names (requirements includes, Maven modules, CMake subdirectories) are read
// beyond these; ParseManifests follows them.
//
//   - python: requirements.txt, pyproject.toml, setup.py, setup.cfg at the root, then the
//     other root requirements*.txt and requirements/*.txt that are not for development,
//     tests, documentation or linting (their names say so: dev, test, doc, lint, ...).
//     The main one is the first found in that order.
//   - javascript: package.json.
//   - java: pom.xml.
//   - cpp: CMakeLists.txt.
func FindManifests(eco schemas.Ecosystem, files fs.FS) ([]string, error) {
	var cands []string
	switch eco {
	case schemas.EcosystemPython:
		cands = []string{"requirements.txt", "pyproject.toml", "setup.py", "setup.cfg"}
	case schemas.EcosystemJavaScript:
		cands = []string{"package.json"}
	case schemas.EcosystemJava:
		cands = []string{"pom.xml"}
	case schemas.EcosystemCPP:
		cands = []string{"CMakeLists.txt"}
	default:
		return nil, fmt.Errorf("find manifests: %w %q (want python, javascript, java or cpp)", ErrUnknownEcosystem, eco)
	}
	var out []string
	for _, c := range cands {
		ok, err := IsFile(files, c)
		if err != nil {
			return nil, fmt.Errorf("find manifests: %w", err)
		}
		if ok {
			out = append(out, c)
		}
	}
	if eco == schemas.EcosystemPython {
		extra, err := extraRequirements(files)
		if err != nil {
			return nil, fmt.Errorf("find manifests: %w", err)
		}
		out = append(out, extra...)
	}
	return out, nil
}

// nonRuntimeWords mark requirements files that are not for running the project.
var nonRuntimeWords = []string{"dev", "test", "doc", "lint", "ci", "build", "bench", "example", "style", "typing", "mypy", "format", "release", "coverage", "optional", "extra"}

func extraRequirements(files fs.FS) ([]string, error) {
	var out []string
	for _, pat := range []string{"requirements*.txt", "requirements/*.txt"} {
		m, err := fs.Glob(files, pat)
		if err != nil {
			return nil, err
		}
		sort.Strings(m)
		for _, p := range m {
			if p == "requirements.txt" || nonRuntimeName(p) {
				continue
			}
			if ok, err := IsFile(files, p); err != nil {
				return nil, err
			} else if ok {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

func nonRuntimeName(p string) bool {
	base := strings.ToLower(strings.TrimSuffix(path.Base(p), ".txt"))
	base = strings.TrimPrefix(base, "requirements")
	for _, w := range strings.FieldsFunc(base, func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
		for _, nw := range nonRuntimeWords {
			if strings.HasPrefix(w, nw) {
				return true
			}
		}
	}
	return false
}

// ParseManifests reads the manifests FindManifests finds and returns D1. A manifest that
// cannot be read without running code (a setup.py that builds its list at run time) or
// that is malformed sets Unreadable in words; Deps then holds what could be read, and
// the layer counts as not measured. The error is for unusable input only: an unknown
// ecosystem or a failing file system. A project without a manifest declares nothing:
// an empty set, no paths, no error.
func ParseManifests(eco schemas.Ecosystem, files fs.FS) (Declared, error) {
	paths, err := FindManifests(eco, files)
	if err != nil {
		return Declared{}, err
	}
	return ParseManifestPaths(eco, files, paths)
}

// ParseManifestPaths is ParseManifests for a given list of manifests (a task's
// manifest_paths), the first being the main one. Each path is read with the rules of its
// file name; a path that does not exist is an error.
func ParseManifestPaths(eco schemas.Ecosystem, files fs.FS, paths []string) (Declared, error) {
	c := newCollector(files)
	for _, p := range paths {
		p = path.Clean(strings.TrimPrefix(p, "./"))
		if !fs.ValidPath(p) {
			return Declared{}, fmt.Errorf("parse manifests: path %q is not inside the project", p)
		}
		if ok, err := IsFile(files, p); err != nil {
			return Declared{}, fmt.Errorf("parse manifests: %w", err)
		} else if !ok {
			return Declared{}, fmt.Errorf("parse manifests: manifest %q does not exist in the project", p)
		}
		var err error
		switch eco {
		case schemas.EcosystemPython:
			err = c.python(p)
		case schemas.EcosystemJavaScript:
			err = c.packageJSON(p)
		case schemas.EcosystemJava:
			err = c.pom(p, nil)
		case schemas.EcosystemCPP:
			err = c.cmake(p)
		default:
			return Declared{}, fmt.Errorf("parse manifests: %w %q (want python, javascript, java or cpp)", ErrUnknownEcosystem, eco)
		}
		if err != nil {
			return Declared{}, fmt.Errorf("parse manifests: %w", err)
		}
	}
	return c.result(), nil
}

// collector gathers D1 over several manifests.
type collector struct {
	files      fs.FS
	deps       []schemas.Dependency
	index      map[string]int // key → position in deps
	paths      []string
	read       map[string]bool
	unreadable []string
	notes      []string
	self       []string
	testScope  []string
	// constraints are pip -c specs by normalised name.
	constraints map[string]schemas.Dependency
}

func newCollector(files fs.FS) *collector {
	return &collector{files: files, index: map[string]int{}, read: map[string]bool{}, constraints: map[string]schemas.Dependency{}}
}

// markRead records a manifest as read; false when it already was.
func (c *collector) markRead(p string) bool {
	if c.read[p] {
		return false
	}
	c.read[p] = true
	c.paths = append(c.paths, p)
	return true
}

// add records a dependency; the first declaration of a name wins, later ones only fill
// a missing spec.
func (c *collector) add(d schemas.Dependency) {
	if d.Name == "" {
		return
	}
	if i, ok := c.index[d.Name]; ok {
		if c.deps[i].Spec == "" && d.Spec != "" {
			c.deps[i].Spec, c.deps[i].Pinned = d.Spec, d.Pinned
		}
		return
	}
	c.index[d.Name] = len(c.deps)
	c.deps = append(c.deps, d)
}

func (c *collector) unread(format string, a ...any) {
	c.unreadable = append(c.unreadable, fmt.Sprintf(format, a...))
}

func (c *collector) note(format string, a ...any) {
	c.notes = append(c.notes, fmt.Sprintf(format, a...))
}

func (c *collector) result() Declared {
	for i, d := range c.deps {
		if con, ok := c.constraints[d.Name]; ok && d.Spec == "" {
			c.deps[i].Spec, c.deps[i].Pinned = con.Spec, con.Pinned
		}
	}
	d := Declared{DepSet: schemas.DepSet{Deps: c.deps, Unreadable: strings.Join(c.unreadable, "; ")}}
	if d.Deps == nil {
		d.Deps = []schemas.Dependency{}
	}
	d.ManifestPaths = append([]string{}, c.paths...)
	if len(c.paths) > 0 {
		d.ManifestPath = c.paths[0]
	}
	d.Self = dedupe(c.self)
	d.TestScope = dedupe(c.testScope)
	d.Notes = c.notes
	return d
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if x != "" && !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// IsFile reports whether p is a regular file (or a link to one) in files.
func IsFile(files fs.FS, p string) (bool, error) {
	st, err := fs.Stat(files, p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return !st.IsDir(), nil
}

// inside joins a path named by a manifest to the manifest's directory and reports
// whether the result stays inside the project.
func inside(manifest, rel string) (string, bool) {
	if rel == "" || path.IsAbs(rel) || strings.HasPrefix(rel, "~") || strings.Contains(rel, "://") {
		return "", false
	}
	p := path.Clean(path.Join(path.Dir(manifest), strings.ReplaceAll(rel, `\`, "/")))
	if p == ".." || strings.HasPrefix(p, "../") || !fs.ValidPath(p) {
		return "", false
	}
	return p, true
}
