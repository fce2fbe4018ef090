package deps

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/envgap/envgap/schemas"
)

// NormalizePython returns the PEP 503 normalised form of a Python distribution name:
// lower case, every run of "-", "_" and "." one "-".
func NormalizePython(name string) string {
	return strings.Trim(pySepRe.ReplaceAllString(strings.ToLower(strings.TrimSpace(name)), "-"), "-")
}

var pySepRe = regexp.MustCompile(`[-_.]+`)

// python reads one Python manifest by its file name.
func (c *collector) python(p string) error {
	switch base := path.Base(p); {
	case base == "pyproject.toml":
		return c.pyproject(p)
	case base == "setup.py":
		return c.setupPy(p)
	case base == "setup.cfg":
		return c.setupCfg(p)
	default:
		return c.requirements(p, false)
	}
}

// Requirement is one parsed PEP 508 requirement or requirements-file line.
type Requirement struct {
	Name   string // normalised; empty for a local path
	Spec   string // version specifiers (">=1,<2"), or "@ URL" for a direct reference
	Pinned bool
	Marker string
	Extras []string
}

var (
	reqHeadRe   = regexp.MustCompile(`^([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:\[([^\]]*)\])?\s*(.*)$`)
	specClause  = regexp.MustCompile(`^(===|==|!=|~=|>=|<=|>|<)\s*([^\s,;]+)$`)
	hex40Re     = regexp.MustCompile(`^[0-9a-fA-F]{40}$`)
	eggRe       = regexp.MustCompile(`[#&]egg=([A-Za-z0-9._-]+)`)
	sdistNameRe = regexp.MustCompile(`^(.+?)-v?\d[^/]*\.(?:tar\.gz|tar\.bz2|tar\.xz|zip|tgz)$`)
)

// ParseRequirement parses a PEP 508 requirement ("name[extras] specs ; marker" or
// "name @ URL"), as found in install_requires, [project] dependencies and requirements
// files. Pinned means exactly one version: an "==V" clause without a wildcard, an
// "===V" clause, or a VCS URL at a full commit hash.
func ParseRequirement(s string) (Requirement, error) {
	s = strings.TrimSpace(s)
	m := reqHeadRe.FindStringSubmatch(s)
	if m == nil {
		return Requirement{}, fmt.Errorf("requirement %q does not start with a package name", s)
	}
	r := Requirement{Name: NormalizePython(m[1])}
	for _, e := range strings.Split(m[2], ",") {
		if e = strings.TrimSpace(e); e != "" {
			r.Extras = append(r.Extras, e)
		}
	}
	rest := strings.TrimSpace(m[3])
	if strings.HasPrefix(rest, "@") {
		url := strings.TrimSpace(rest[1:])
		if i := strings.Index(url, " ;"); i >= 0 {
			r.Marker = strings.TrimSpace(url[i+2:])
			url = strings.TrimSpace(url[:i])
		}
		r.Spec = "@ " + url
		r.Pinned = vcsPinned(url)
		return r, nil
	}
	if i := strings.IndexByte(rest, ';'); i >= 0 {
		r.Marker = strings.TrimSpace(rest[i+1:])
		rest = strings.TrimSpace(rest[:i])
	}
	rest = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(rest, "("), ")"))
	if rest == "" {
		return r, nil
	}
	var clauses []string
	for _, cl := range strings.Split(rest, ",") {
		cl = strings.TrimSpace(cl)
		cm := specClause.FindStringSubmatch(cl)
		if cm == nil {
			return Requirement{}, fmt.Errorf("requirement %q: %q is not a version specifier", s, cl)
		}
		clauses = append(clauses, cm[1]+cm[2])
		if cm[1] == "===" || cm[1] == "==" && !strings.Contains(cm[2], "*") {
			r.Pinned = true
		}
	}
	r.Spec = strings.Join(clauses, ",")
	return r, nil
}

// vcsPinned reports whether a VCS URL names a full commit hash (git+URL@<40 hex>).
func vcsPinned(url string) bool {
	u := url
	if i := strings.IndexAny(u, "#"); i >= 0 {
		u = u[:i]
	}
	i := strings.LastIndexByte(u, '@')
	return i >= 0 && strings.Contains(url, "+") && hex40Re.MatchString(u[i+1:])
}

// requirements reads a pip requirements file, following -r and -c inside the project.
func (c *collector) requirements(p string, constraint bool) error {
	if !c.markRead(p) {
		return nil
	}
	data, err := fs.ReadFile(c.files, p)
	if err != nil {
		return err
	}
	for _, ln := range joinContinuations(string(data)) {
		line := stripReqComment(ln.text)
		if line == "" {
			continue
		}
		where := fmt.Sprintf("%s:%d", p, ln.no)
		if strings.HasPrefix(line, "-") {
			if err := c.reqOption(p, where, line, constraint); err != nil {
				return err
			}
			continue
		}
		// Per-requirement options (--hash, --global-option, ...) start at the first
		// blank-separated token that starts with "-", as pip splits them.
		if f := strings.Fields(line); len(f) > 1 {
			for i, tok := range f[1:] {
				if strings.HasPrefix(tok, "-") {
					line = strings.Join(f[:i+1], " ")
					break
				}
			}
		}
		c.reqLine(p, where, line, constraint)
	}
	return nil
}

type numberedLine struct {
	no   int
	text string
}

// joinContinuations joins lines ending in a backslash with the next one, numbering each
// logical line by its first physical line.
func joinContinuations(s string) []numberedLine {
	var out []numberedLine
	var cur strings.Builder
	start := 0
	for i, l := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		if cur.Len() == 0 {
			start = i + 1
		}
		if strings.HasSuffix(l, `\`) {
			cur.WriteString(strings.TrimSuffix(l, `\`))
			cur.WriteString(" ")
			continue
		}
		cur.WriteString(l)
		out = append(out, numberedLine{start, cur.String()})
		cur.Reset()
	}
	if cur.Len() > 0 {
		out = append(out, numberedLine{start, cur.String()})
	}
	return out
}

// stripReqComment drops a comment: "#" at the start of a line or after a blank.
func stripReqComment(l string) string {
	l = strings.TrimSpace(l)
	if strings.HasPrefix(l, "#") {
		return ""
	}
	for i := 1; i < len(l); i++ {
		if l[i] == '#' && (l[i-1] == ' ' || l[i-1] == '\t') {
			return strings.TrimSpace(l[:i])
		}
	}
	return l
}

// reqOption handles an option line of a requirements file.
func (c *collector) reqOption(p, where, line string, constraint bool) error {
	name, val := line, ""
	if i := strings.IndexAny(line, " \t="); i >= 0 {
		name, val = line[:i], strings.TrimSpace(strings.TrimLeft(line[i:], " \t="))
	} else if len(line) > 2 && line[1] != '-' {
		name, val = line[:2], line[2:] // "-rfile"
	}
	switch name {
	case "-r", "--requirement", "-c", "--constraint":
		isCon := constraint || name == "-c" || name == "--constraint"
		target, ok := inside(p, val)
		if !ok {
			c.note("%s: %s %s is outside the project or a URL, not followed", where, name, val)
			return nil
		}
		exists, err := IsFile(c.files, target)
		if err != nil {
			return err
		}
		if !exists {
			c.unread("%s includes %s, which does not exist in the project", where, target)
			return nil
		}
		return c.requirements(target, isCon)
	case "-e", "--editable":
		c.reqLine(p, where, val, constraint)
	}
	// Index, find-links, binary and hash options do not declare dependencies.
	return nil
}

// reqLine handles one requirement of a requirements file: PEP 508, a URL, a VCS URL or a
// local path.
func (c *collector) reqLine(p, where, line string, constraint bool) {
	line = strings.TrimSpace(line)
	var d schemas.Dependency
	switch {
	case line == "":
		return
	case isLocalPath(line):
		c.note("%s: local path %s is the project or a part of it, not a dependency", where, line)
		return
	case strings.Contains(line, "://") && !strings.Contains(line, " @ ") && !strings.Contains(line, "@ "):
		name := nameFromURL(line)
		if name == "" {
			c.unread("%s: the URL %s names no package (add #egg=NAME)", where, line)
			return
		}
		d = schemas.Dependency{Name: name, Spec: "@ " + line, Pinned: vcsPinned(line), From: p}
	default:
		r, err := ParseRequirement(line)
		if err != nil {
			c.unread("%s: %v", where, err)
			return
		}
		d = schemas.Dependency{Name: r.Name, Spec: r.Spec, Pinned: r.Pinned, From: p}
	}
	if constraint {
		if _, ok := c.constraints[d.Name]; !ok {
			c.constraints[d.Name] = d
		}
		return
	}
	c.add(d)
}

func isLocalPath(s string) bool {
	return s == "." || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") || strings.HasPrefix(s, "/") ||
		strings.HasPrefix(s, "~") || strings.HasPrefix(s, "file:") ||
		(strings.Contains(s, "/") && !strings.Contains(s, "://") && !strings.Contains(s, "@"))
}

// nameFromURL reads a package name from #egg=, a wheel or an sdist file name.
func nameFromURL(u string) string {
	if m := eggRe.FindStringSubmatch(u); m != nil {
		return NormalizePython(m[1])
	}
	base := u
	if i := strings.IndexAny(base, "#?"); i >= 0 {
		base = base[:i]
	}
	base = path.Base(base)
	if strings.HasSuffix(base, ".whl") {
		return NormalizePython(strings.SplitN(base, "-", 2)[0])
	}
	if m := sdistNameRe.FindStringSubmatch(base); m != nil {
		return NormalizePython(m[1])
	}
	return ""
}

// pyprojectFile is the part of pyproject.toml D1 reads.
type pyprojectFile struct {
	Project *struct {
		Name         string   `toml:"name"`
		Dependencies []string `toml:"dependencies"`
		Dynamic      []string `toml:"dynamic"`
	} `toml:"project"`
	BuildSystem *struct {
		Requires []string `toml:"requires"`
	} `toml:"build-system"`
	Tool struct {
		Poetry *struct {
			Name         string         `toml:"name"`
			Dependencies map[string]any `toml:"dependencies"`
		} `toml:"poetry"`
		Setuptools struct {
			Dynamic struct {
				Dependencies *struct {
					File any `toml:"file"`
				} `toml:"dependencies"`
			} `toml:"dynamic"`
		} `toml:"setuptools"`
	} `toml:"tool"`
}

// pyproject reads PEP 621 [project] dependencies (optional-dependencies are extras, not
// declared runtime dependencies, and are left out), [build-system] requires, the files
// [tool.setuptools.dynamic] dependencies names, and Poetry's [tool.poetry.dependencies]
// without python and without optional (extra) entries.
func (c *collector) pyproject(p string) error {
	if !c.markRead(p) {
		return nil
	}
	data, err := fs.ReadFile(c.files, p)
	if err != nil {
		return err
	}
	var pp pyprojectFile
	if _, err := toml.Decode(string(data), &pp); err != nil {
		c.unread("%s is not valid TOML: %v", p, err)
		return nil
	}
	addAll := func(list []string, what string) {
		for _, s := range list {
			r, err := ParseRequirement(s)
			if err != nil {
				c.unread("%s %s: %v", p, what, err)
				continue
			}
			c.add(schemas.Dependency{Name: r.Name, Spec: r.Spec, Pinned: r.Pinned, From: p})
		}
	}
	if pp.Project != nil {
		c.self = append(c.self, NormalizePython(pp.Project.Name))
		addAll(pp.Project.Dependencies, "[project] dependencies")
		if dyn := pp.Tool.Setuptools.Dynamic.Dependencies; dyn != nil {
			var files []string
			switch f := dyn.File.(type) {
			case string:
				files = []string{f}
			case []any:
				for _, x := range f {
					if s, ok := x.(string); ok {
						files = append(files, s)
					}
				}
			}
			for _, f := range files {
				target, ok := inside(p, f)
				if !ok {
					c.unread("%s: [tool.setuptools.dynamic] dependencies file %s is outside the project", p, f)
					continue
				}
				if exists, err := IsFile(c.files, target); err != nil {
					return err
				} else if !exists {
					c.unread("%s: [tool.setuptools.dynamic] dependencies file %s does not exist", p, target)
					continue
				}
				if err := c.requirements(target, false); err != nil {
					return err
				}
			}
		}
	}
	if pp.BuildSystem != nil {
		addAll(pp.BuildSystem.Requires, "[build-system] requires")
	}
	if po := pp.Tool.Poetry; po != nil {
		c.self = append(c.self, NormalizePython(po.Name))
		names := make([]string, 0, len(po.Dependencies))
		for n := range po.Dependencies {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if strings.EqualFold(n, "python") {
				continue
			}
			spec, optional := poetrySpec(po.Dependencies[n])
			if optional {
				continue
			}
			c.add(schemas.Dependency{Name: NormalizePython(n), Spec: spec, Pinned: poetryPinned(spec), From: p})
		}
	}
	return nil
}

// poetrySpec returns the version constraint of a Poetry dependency value and whether it
// is optional.
func poetrySpec(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, false
	case map[string]any:
		opt, _ := x["optional"].(bool)
		if s, ok := x["version"].(string); ok {
			return s, opt
		}
		for _, k := range []string{"git", "url", "path"} {
			if s, ok := x[k].(string); ok {
				ref := ""
				for _, rk := range []string{"rev", "tag", "branch"} {
					if r, ok := x[rk].(string); ok {
						ref = "@" + r
						break
					}
				}
				return "@ " + k + "+" + s + ref, opt
			}
		}
		return "", opt
	case []any:
		// Multiple constraints by marker: list them; never pinned as one.
		var parts []string
		for _, e := range x {
			if s, _ := poetrySpec(e); s != "" {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, " | "), false
	}
	return "", false
}

var poetryExactRe = regexp.MustCompile(`^(?:==?)?\s*v?\d+(?:\.\d+)*(?:[A-Za-z0-9.+-]*)$`)

// poetryPinned: in Poetry a bare version ("1.2.3") or "==1.2.3" is exact.
func poetryPinned(spec string) bool {
	if strings.HasPrefix(spec, "@ git+") {
		i := strings.LastIndexByte(spec, '@')
		return i > 0 && hex40Re.MatchString(spec[i+1:])
	}
	return poetryExactRe.MatchString(strings.TrimSpace(spec)) && !strings.Contains(spec, "*")
}

// setupCfg reads [options] install_requires and setup_requires of setup.cfg; a "file:"
// value is followed like a -r include. [options.extras_require] is left out.
func (c *collector) setupCfg(p string) error {
	if !c.markRead(p) {
		return nil
	}
	data, err := fs.ReadFile(c.files, p)
	if err != nil {
		return err
	}
	sections := parseINI(string(data))
	if md, ok := sections["metadata"]; ok {
		if n := strings.TrimSpace(md["name"]); n != "" {
			c.self = append(c.self, NormalizePython(n))
		}
	}
	opts := sections["options"]
	for _, key := range []string{"install_requires", "setup_requires"} {
		val, ok := opts[key]
		if !ok {
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(val), "file:") {
			for _, f := range strings.Split(strings.TrimPrefix(strings.TrimSpace(val), "file:"), ",") {
				target, ok := inside(p, strings.TrimSpace(f))
				if !ok {
					c.unread("%s: %s file %s is outside the project", p, key, f)
					continue
				}
				if exists, err := IsFile(c.files, target); err != nil {
					return err
				} else if !exists {
					c.unread("%s: %s file %s does not exist", p, key, target)
					continue
				}
				if err := c.requirements(target, false); err != nil {
					return err
				}
			}
			continue
		}
		for _, l := range strings.Split(val, "\n") {
			l = stripReqComment(l)
			if l == "" {
				continue
			}
			r, err := ParseRequirement(l)
			if err != nil {
				c.unread("%s [options] %s: %v", p, key, err)
				continue
			}
			c.add(schemas.Dependency{Name: r.Name, Spec: r.Spec, Pinned: r.Pinned, From: p})
		}
	}
	return nil
}

// parseINI is the part of configparser setup.cfg needs: sections, "key = value" or
// "key: value", indented continuation lines, "#" and ";" comment lines.
func parseINI(s string) map[string]map[string]string {
	out := map[string]map[string]string{}
	sec, key := "", ""
	for _, l := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, ";") {
			continue
		}
		if (l[0] == ' ' || l[0] == '\t') && key != "" {
			out[sec][key] += "\n" + t
			continue
		}
		if strings.HasPrefix(t, "[") && strings.HasSuffix(t, "]") {
			sec, key = strings.TrimSpace(t[1:len(t)-1]), ""
			if out[sec] == nil {
				out[sec] = map[string]string{}
			}
			continue
		}
		i := strings.IndexAny(t, "=:")
		if i < 0 || sec == "" {
			key = ""
			continue
		}
		key = strings.ToLower(strings.TrimSpace(t[:i]))
		out[sec][key] = strings.TrimSpace(t[i+1:])
	}
	return out
}
