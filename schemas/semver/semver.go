// Package semver reads and orders SemVer 2.0.0 versions (semver.org), the version scheme of
// npm. It is the one ordering of the project: verify's registry proxy retargets npm
// dist-tags with it and the registry audit compares npm versions with it. Standard library
// only, so that any stage can use it without importing another.
package semver

import (
	"cmp"
	"strings"
)

// Version is a SemVer 2.0.0 version without its build metadata, which does not order.
// Major, Minor and Patch are decimal strings without leading zeros (of any size); Pre holds
// the pre-release identifiers, empty for a release.
type Version struct {
	Major, Minor, Patch string
	Pre                 []string
}

// Clean removes what npm's semver.clean removes before parsing: surrounding space and
// leading "v" and "=" characters.
func Clean(s string) string {
	return strings.TrimLeft(strings.TrimSpace(s), "=v")
}

// Parse reads Clean(s) by the BNF of semver.org: three numeric identifiers without leading
// zeros, an optional "-" and dot-separated pre-release identifiers ([0-9A-Za-z-]+, numeric
// ones without leading zeros), an optional "+" and dot-separated build identifiers
// ([0-9A-Za-z-]+). ok is false for anything else.
func Parse(s string) (v Version, ok bool) {
	s, build, hasBuild := strings.Cut(Clean(s), "+")
	if hasBuild {
		for _, id := range strings.Split(build, ".") {
			if !isIdent(id) {
				return Version{}, false
			}
		}
	}
	core, pre, hasPre := strings.Cut(s, "-")
	nums := strings.Split(core, ".")
	if len(nums) != 3 {
		return Version{}, false
	}
	for _, n := range nums {
		if !isNumber(n) {
			return Version{}, false
		}
	}
	v = Version{Major: nums[0], Minor: nums[1], Patch: nums[2]}
	if hasPre {
		v.Pre = strings.Split(pre, ".")
		for _, id := range v.Pre {
			if !isIdent(id) || IsDigits(id) && !isNumber(id) {
				return Version{}, false
			}
		}
	}
	return v, true
}

// Prerelease reports whether v is a pre-release.
func (v Version) Prerelease() bool { return len(v.Pre) > 0 }

// Compare orders versions by SemVer 2.0.0 precedence (semver.org, item 11): major, minor
// and patch numerically; a pre-release sorts before its release; pre-release identifiers
// in turn, numeric ones numerically and before alphanumeric ones, which compare in ASCII
// order; a longer list of identifiers sorts after a prefix of it.
func (v Version) Compare(w Version) int {
	if c := cmp.Or(CompareDigits(v.Major, w.Major), CompareDigits(v.Minor, w.Minor), CompareDigits(v.Patch, w.Patch)); c != 0 {
		return c
	}
	switch {
	case len(v.Pre) == 0 && len(w.Pre) == 0:
		return 0
	case len(v.Pre) == 0:
		return 1
	case len(w.Pre) == 0:
		return -1
	}
	for i := 0; i < min(len(v.Pre), len(w.Pre)); i++ {
		x, y := v.Pre[i], w.Pre[i]
		xn, yn := IsDigits(x), IsDigits(y)
		var c int
		switch {
		case xn && yn:
			c = CompareDigits(x, y)
		case xn:
			c = -1
		case yn:
			c = 1
		default:
			c = strings.Compare(x, y)
		}
		if c != 0 {
			return c
		}
	}
	return cmp.Compare(len(v.Pre), len(w.Pre))
}

// CompareDigits compares two strings of ASCII digits as integers of any size.
func CompareDigits(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if c := cmp.Compare(len(a), len(b)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// IsDigits reports whether s is a non-empty string of ASCII digits.
func IsDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isNumber(s string) bool {
	return IsDigits(s) && (s == "0" || s[0] != '0')
}

func isIdent(s string) bool {
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
