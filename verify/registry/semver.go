package registry

import (
	"cmp"
	"strconv"
	"strings"
)

// semver is a parsed npm version (SemVer 2.0.0; a leading "v" or "=" is tolerated).
type semver struct {
	major, minor, patch uint64
	pre                 []string // prerelease identifiers; empty for a stable version
}

func parseSemver(s string) (semver, bool) {
	s = strings.TrimSpace(s)
	s = strings.TrimLeft(s, "=v")
	if i := strings.IndexByte(s, '+'); i >= 0 {
		s = s[:i]
	}
	core, pre, hasPre := strings.Cut(s, "-")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return semver{}, false
	}
	var n [3]uint64
	for i, p := range parts {
		if p == "" || (len(p) > 1 && p[0] == '0') {
			return semver{}, false
		}
		v, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return semver{}, false
		}
		n[i] = v
	}
	v := semver{major: n[0], minor: n[1], patch: n[2]}
	if hasPre {
		if pre == "" {
			return semver{}, false
		}
		v.pre = strings.Split(pre, ".")
		for _, id := range v.pre {
			if id == "" {
				return semver{}, false
			}
		}
	}
	return v, true
}

func (v semver) prerelease() bool { return len(v.pre) > 0 }

func isNumeric(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// compare orders versions by SemVer precedence.
func (v semver) compare(w semver) int {
	if c := cmp.Or(cmp.Compare(v.major, w.major), cmp.Compare(v.minor, w.minor), cmp.Compare(v.patch, w.patch)); c != 0 {
		return c
	}
	switch {
	case len(v.pre) == 0 && len(w.pre) == 0:
		return 0
	case len(v.pre) == 0:
		return 1
	case len(w.pre) == 0:
		return -1
	}
	for i := 0; i < len(v.pre) && i < len(w.pre); i++ {
		a, b := v.pre[i], w.pre[i]
		an, bn := isNumeric(a), isNumeric(b)
		switch {
		case an && bn:
			if c := cmp.Compare(len(strings.TrimLeft(a, "0")), len(strings.TrimLeft(b, "0"))); c != 0 {
				return c
			}
			if c := strings.Compare(strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")); c != 0 {
				return c
			}
		case an:
			return -1
		case bn:
			return 1
		default:
			if c := strings.Compare(a, b); c != 0 {
				return c
			}
		}
	}
	return cmp.Compare(len(v.pre), len(w.pre))
}

// retargetTags computes the dist-tags served at a cut-off. kept is the set of versions that
// remain. A tag whose version remains stays; otherwise it moves to the highest remaining
// version at or below its old target, and a tag whose target is stable never moves to a
// prerelease; a tag with no such version is dropped. "latest" is always present when any
// version remains: failing the rule above it goes to the highest remaining stable version,
// and only a package with nothing but prereleases gets a prerelease "latest".
func retargetTags(tags map[string]string, kept []string) map[string]string {
	out := map[string]string{}
	if len(kept) == 0 {
		return out
	}
	keptSet := make(map[string]bool, len(kept))
	type pv struct {
		s string
		v semver
	}
	var parsed []pv
	for _, k := range kept {
		keptSet[k] = true
		if v, ok := parseSemver(k); ok {
			parsed = append(parsed, pv{k, v})
		}
	}
	highest := func(limit *semver, allowPre bool) string {
		best := -1
		for i, p := range parsed {
			if p.v.prerelease() && !allowPre {
				continue
			}
			if limit != nil && p.v.compare(*limit) > 0 {
				continue
			}
			if best < 0 || p.v.compare(parsed[best].v) > 0 {
				best = i
			}
		}
		if best < 0 {
			return ""
		}
		return parsed[best].s
	}
	for tag, target := range tags {
		if keptSet[target] {
			out[tag] = target
			continue
		}
		tv, ok := parseSemver(target)
		if !ok {
			continue
		}
		if h := highest(&tv, tv.prerelease()); h != "" {
			out[tag] = h
		}
	}
	if _, ok := out["latest"]; !ok {
		if h := highest(nil, false); h != "" {
			out["latest"] = h
		} else if h := highest(nil, true); h != "" {
			out["latest"] = h
		} else {
			out["latest"] = kept[len(kept)-1]
		}
	}
	return out
}
