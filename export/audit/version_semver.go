package audit

import (
	"cmp"
	"strings"
)

// semVersion is a SemVer 2.0.0 version without its build metadata, which does not order.
type semVersion struct {
	major, minor, patch string
	pre                 []string
}

// semverKind says how a string was read as SemVer.
type semverKind int

const (
	semverInvalid semverKind = iota // not SemVer, even after coercion
	semverCoerced                   // read after OSV's coercion (1.2 -> 1.2.0, 01 -> 1)
	semverValid                     // valid SemVer 2.0.0 (after npm's clean: space, leading v and =)
)

// compareSemVer orders versions by SemVer 2.0.0 precedence (semver.org, item 11): major,
// minor and patch numerically; a pre-release sorts before its release; pre-release
// identifiers in turn, numeric ones numerically and before alphanumeric ones, which
// compare in ASCII order; a longer list of identifiers sorts after a prefix of it; build
// metadata is ignored. Surrounding space and leading "v" and "=" characters are removed
// first, as npm's semver.clean does.
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
		return strings.Compare(cleanSemVer(a), cleanSemVer(b))
	}
	if c := va.compare(vb); c != 0 {
		return c
	}
	return cmp.Compare(ka, kb)
}

// cleanSemVer removes what npm's semver.clean removes before parsing.
func cleanSemVer(s string) string {
	return strings.TrimLeft(strings.TrimSpace(s), "=v")
}

// parseSemVer reads s as SemVer 2.0.0, or else as OSV's coercion of it.
func parseSemVer(s string) (semVersion, semverKind) {
	s = cleanSemVer(s)
	if v, ok := parseSemVerStrict(s); ok {
		return v, semverValid
	}
	if v, ok := parseSemVerStrict(coerceSemVer(s)); ok {
		return v, semverCoerced
	}
	return semVersion{}, semverInvalid
}

// parseSemVerStrict follows the BNF of semver.org: three numeric identifiers without
// leading zeros, an optional "-" and dot-separated pre-release identifiers
// ([0-9A-Za-z-]+, numeric ones without leading zeros), an optional "+" and dot-separated
// build identifiers ([0-9A-Za-z-]+).
func parseSemVerStrict(s string) (semVersion, bool) {
	s, build, hasBuild := strings.Cut(s, "+")
	if hasBuild {
		for _, id := range strings.Split(build, ".") {
			if !isSemVerIdent(id) {
				return semVersion{}, false
			}
		}
	}
	core, pre, hasPre := strings.Cut(s, "-")
	nums := strings.Split(core, ".")
	if len(nums) != 3 {
		return semVersion{}, false
	}
	for _, n := range nums {
		if !isSemVerNumber(n) {
			return semVersion{}, false
		}
	}
	v := semVersion{major: nums[0], minor: nums[1], patch: nums[2]}
	if hasPre {
		v.pre = strings.Split(pre, ".")
		for _, id := range v.pre {
			if !isSemVerIdent(id) || isASCIIDigits(id) && !isSemVerNumber(id) {
				return semVersion{}, false
			}
		}
	}
	return v, true
}

func isSemVerNumber(s string) bool {
	return isASCIIDigits(s) && (s == "0" || s[0] != '0')
}

func isSemVerIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-') {
			return false
		}
	}
	return true
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
			case isASCIIDigits(id):
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

// compare orders two versions by SemVer precedence.
func (v semVersion) compare(w semVersion) int {
	if c := cmpDigits(v.major, w.major); c != 0 {
		return c
	}
	if c := cmpDigits(v.minor, w.minor); c != 0 {
		return c
	}
	if c := cmpDigits(v.patch, w.patch); c != 0 {
		return c
	}
	if len(v.pre) == 0 || len(w.pre) == 0 {
		return cmpBool(len(v.pre) == 0, len(w.pre) == 0) // a pre-release sorts first
	}
	return compareIdentifiers(v.pre, w.pre, true) // numeric sorts before alphanumeric
}
