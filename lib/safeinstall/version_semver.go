package safeinstall

import (
	"cmp"
	"strings"

	"github.com/envgap/envgap/schemas/semver"
)

// semverKind says how a string was read as SemVer.
type semverKind int

const (
	semverInvalid semverKind = iota // not SemVer, even after coercion
	semverCoerced                   // read after OSV's coercion (1.2 -> 1.2.0, 01 -> 1)
	semverValid                     // valid SemVer 2.0.0 (after npm's clean: space, leading v and =)
)

// compareSemVer orders versions by SemVer 2.0.0 precedence (semver.Version.Compare; build
// metadata is ignored) after npm's clean (semver.Clean: surrounding space and leading "v"
// and "=" characters).
//
// Strings that are not SemVer are, deterministically:
//   - coerced as OSV's SemVer index does (a missing minor or patch is 0, leading zeros are
//     dropped, an empty pre-release identifier reads as "-"), then ordered by that
//     precedence; at equal precedence a coerced string sorts just before the valid
//     version, so "1.0" != "1.0.0" (SemVer has no "1.0") and fixed: "1.0" still excludes
//     1.0.0;
//   - when even that fails (no leading number), sorted before every version that
//     could be read, and among themselves by their bytes.
func compareSemVer(a, b string) int {
	va, ka := parseSemVer(a)
	vb, kb := parseSemVer(b)
	if ka == semverInvalid || kb == semverInvalid {
		if ka != kb {
			return cmpBool(ka != semverInvalid, kb != semverInvalid)
		}
		return strings.Compare(semver.Clean(a), semver.Clean(b))
	}
	if c := va.Compare(vb); c != 0 {
		return c
	}
	return cmp.Compare(ka, kb)
}

// parseSemVer reads s as SemVer 2.0.0, or else as OSV's coercion of it.
func parseSemVer(s string) (semver.Version, semverKind) {
	s = semver.Clean(s)
	if v, ok := semver.Parse(s); ok {
		return v, semverValid
	}
	if v, ok := semver.Parse(coerceSemVer(s)); ok {
		return v, semverCoerced
	}
	return semver.Version{}, semverInvalid
}

// coerceSemVer rewrites a non-SemVer string as OSV's SemVer index does before parsing:
// a leading number, then up to two ".number" parts (missing ones become ".0"), leading
// zeros removed; in the rest, pre-release identifiers lose leading zeros and empty pre-
// release or build identifiers become "-". A string without a leading number is returned
// unchanged.
func coerceSemVer(s string) string {
	var nums []string
	i := 0
	for len(nums) < 3 {
		j := i
		if len(nums) > 0 {
			if j >= len(s) || s[j] != '.' {
				break
			}
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k == j {
			break
		}
		nums = append(nums, trimZeros(s[j:k]))
		i = k
	}
	if len(nums) == 0 {
		return s
	}
	for len(nums) < 3 {
		nums = append(nums, "0")
	}
	rest := s[i:]
	var pre, build string
	if strings.HasPrefix(rest, "-") {
		end := strings.IndexByte(rest, '+')
		if end < 0 {
			end = len(rest)
		}
		ids := strings.Split(rest[1:end], ".")
		for k, id := range ids {
			switch {
			case id == "":
				ids[k] = "-"
			case semver.IsDigits(id):
				ids[k] = trimZeros(id)
			}
		}
		pre, rest = "-"+strings.Join(ids, "."), rest[end:]
	}
	if strings.HasPrefix(rest, "+") {
		ids := strings.Split(rest[1:], ".")
		for k, id := range ids {
			if id == "" {
				ids[k] = "-"
			}
		}
		build, rest = "+"+strings.Join(ids, "."), ""
	}
	return strings.Join(nums, ".") + pre + build + rest
}
