package registry

import (
	"github.com/envgap/envgap/schemas/semver"
)

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
		v semver.Version
	}
	var parsed []pv
	for _, k := range kept {
		keptSet[k] = true
		if v, ok := semver.Parse(k); ok {
			parsed = append(parsed, pv{k, v})
		}
	}
	highest := func(limit *semver.Version, allowPre bool) string {
		best := -1
		for i, p := range parsed {
			if p.v.Prerelease() && !allowPre {
				continue
			}
			if limit != nil && p.v.Compare(*limit) > 0 {
				continue
			}
			if best < 0 || p.v.Compare(parsed[best].v) > 0 {
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
		tv, ok := semver.Parse(target)
		if !ok {
			continue
		}
		if h := highest(&tv, tv.Prerelease()); h != "" {
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
