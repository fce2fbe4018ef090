package deps

import (
	"encoding/json"
	"io/fs"
	"regexp"
	"sort"
	"strings"

	"github.com/envgap/envgap/schemas"
)

// packageJSONFile is the part of package.json D1 reads.
type packageJSONFile struct {
	Name         string            `json:"name"`
	Main         string            `json:"main"`
	Scripts      map[string]string `json:"scripts"`
	Dependencies map[string]string `json:"dependencies"`
}

// exactSemverRe is one exact version: "1.2.3", "=1.2.3", "v1.2.3", with prerelease and
// build parts.
var exactSemverRe = regexp.MustCompile(`^(?:=|v|=v)?\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$`)

// NpmPinned reports whether a package.json version is pinned: an exact semver, also
// behind an npm: alias ("npm:pkg@1.2.3"). Ranges, tags, URLs, git, file: and "*" are
// not pinned.
func NpmPinned(spec string) bool {
	spec = strings.TrimSpace(spec)
	if strings.HasPrefix(spec, "npm:") {
		if i := strings.LastIndexByte(spec, '@'); i > len("npm:") {
			spec = spec[i+1:]
		}
	}
	return exactSemverRe.MatchString(spec)
}

// packageJSON reads the keys of "dependencies". devDependencies, peerDependencies and
// optionalDependencies are left out of D1, as in the paper: build and test tools are
// outside the runtime supply chain.
func (c *collector) packageJSON(p string) error {
	if !c.markRead(p) {
		return nil
	}
	data, err := fs.ReadFile(c.files, p)
	if err != nil {
		return err
	}
	var pj packageJSONFile
	if err := json.Unmarshal(data, &pj); err != nil {
		c.unread("%s is not valid JSON (npm cannot read it either): %v", p, err)
		return nil
	}
	c.self = append(c.self, pj.Name)
	names := make([]string, 0, len(pj.Dependencies))
	for n := range pj.Dependencies {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		spec := pj.Dependencies[n]
		c.add(schemas.Dependency{Name: n, Spec: spec, Pinned: NpmPinned(spec), From: p})
	}
	return nil
}
