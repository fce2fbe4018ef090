package safeinstall

import (
	"cmp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"

	"github.com/envgap/envgap/schemas/semver"
)

// CompareVersions orders two versions of one OSV ecosystem: -1 if a sorts before b, 0 if
// they are the same version, 1 if a sorts after b.
//
//   - "PyPI": PEP 440 (epochs, release segments padded with zeros, pre-, post- and
//     dev-releases with every spelling PEP 440 normalises, local versions). A string that
//     is not a valid PEP 440 version sorts before every valid one; two such strings are
//     ordered by the legacy setuptools scheme (what OSV's PyPI ecosystem falls back to).
//   - "npm": SemVer 2.0.0 precedence after npm's clean (space, leading "v" and "=").
//     A string that is not SemVer is coerced as OSV does (1.2 reads as 1.2.0) and sorts
//     just before the valid version of equal precedence; one that cannot be coerced sorts
//     before every version, and by its bytes among its kind.
//   - "Maven": Maven 3.9's ComparableVersion; every string is a Maven version.
//   - any other ecosystem: a generic segment-by-segment comparison (numbers numerically,
//     words alphabetically, common pre-release words before the release), which is exact
//     for plain dotted numbers only.
//
// The ecosystem is matched case-insensitively and without an OSV ":suffix"
// ("Maven:https://maven.google.com" orders as "Maven").
func CompareVersions(ecosystem, a, b string) int {
	return orderFor(ecosystem)(a, b)
}

// orderFor returns the version ordering of an OSV ecosystem.
func orderFor(ecosystem string) func(a, b string) int {
	base, _, _ := strings.Cut(ecosystem, ":")
	switch strings.ToLower(strings.TrimSpace(base)) {
	case "pypi":
		return comparePEP440
	case "npm":
		return compareSemVer
	case "maven":
		return compareMaven
	}
	return compareGeneric
}

// sameVersion reports whether a version of an affected package's "versions" list names the
// queried version. OSV compares the strings; PyPI versions that PEP 440 says are equal
// (1.0 and 1.0.0, 1.0-1 and 1.0.post1) and npm versions that differ only in a leading "v"
// or "=" or in build metadata (which npm strips when a version is published) are the same
// version too. Maven versions must match exactly: 1.0 and 1 are different artifacts there.
func sameVersion(ecosystem, listed, v string) bool {
	listed, v = strings.TrimSpace(listed), strings.TrimSpace(v)
	if listed == v {
		return true
	}
	base, _, _ := strings.Cut(ecosystem, ":")
	switch strings.ToLower(strings.TrimSpace(base)) {
	case "pypi":
		x, okx := parsePEP440(listed)
		y, oky := parsePEP440(v)
		return okx && oky && x.compare(y) == 0
	case "npm":
		x, kx := parseSemVer(listed)
		y, ky := parseSemVer(v)
		return kx == semverValid && ky == semverValid && x.Compare(y) == 0
	}
	return false
}

// compareIdentifiers compares two lists of dot-separated identifiers (SemVer
// pre-release fields, PEP 440 local segments) field by field: numbers as numbers, other
// fields in ASCII order, a number before any other field when numericFirst (SemVer) and
// after it otherwise (PEP 440); when one list is a prefix of the other, the shorter sorts
// first.
func compareIdentifiers(a, b []string, numericFirst bool) int {
	for i := 0; i < min(len(a), len(b)); i++ {
		x, y := a[i], b[i]
		xn, yn := semver.IsDigits(x), semver.IsDigits(y)
		var c int
		switch {
		case xn && yn:
			c = semver.CompareDigits(x, y)
		case xn != yn:
			c = cmpBool(xn != numericFirst, yn != numericFirst)
		default:
			c = strings.Compare(x, y)
		}
		if c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

// compareUTF16 orders strings as Java's String.compareTo does: by UTF-16 code units.
func compareUTF16(a, b string) int {
	if isASCII(a) && isASCII(b) {
		return strings.Compare(a, b)
	}
	x, y := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < min(len(x), len(y)); i++ {
		if x[i] != y[i] {
			return cmp.Compare(int(x[i]), int(y[i]))
		}
	}
	return cmp.Compare(len(x), len(y))
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// compareGeneric compares two version strings segment by segment: numbers numerically,
// words alphabetically; a pre-release word (a, b, c, rc, alpha, beta, pre, preview, dev,
// snapshot) sorts before the release it precedes, "post" after it. It is the ordering of
// ecosystems without an exact one here.
func compareGeneric(a, b string) int {
	ta, tb := genericTokens(a), genericTokens(b)
	for i := 0; i < max(len(ta), len(tb)); i++ {
		switch {
		case i >= len(ta):
			if tb[i] == "0" {
				continue // 1.0 == 1.0.0
			}
			return -tailSign(tb[i])
		case i >= len(tb):
			if ta[i] == "0" {
				continue
			}
			return tailSign(ta[i])
		}
		x, y := ta[i], tb[i]
		xn, xerr := strconv.ParseUint(x, 10, 64)
		yn, yerr := strconv.ParseUint(y, 10, 64)
		switch {
		case xerr == nil && yerr == nil:
			if xn != yn {
				if xn < yn {
					return -1
				}
				return 1
			}
		case xerr == nil: // number vs word: the word is a pre-release (or post) tag
			return -tailSign(y)
		case yerr == nil:
			return tailSign(x)
		default:
			if rx, ry := wordRank(x), wordRank(y); rx != ry {
				if rx < ry {
					return -1
				}
				return 1
			}
			if c := strings.Compare(x, y); c != 0 {
				return c
			}
		}
	}
	return 0
}

// tailSign says whether a version that continues with token t sorts after (1) or before
// (-1) the same version without it.
func tailSign(t string) int {
	if _, err := strconv.ParseUint(t, 10, 64); err == nil {
		return 1
	}
	if wordRank(t) < 0 {
		return -1
	}
	return 1
}

func wordRank(w string) int {
	switch w {
	case "dev", "snapshot":
		return -5
	case "a", "alpha":
		return -4
	case "b", "beta":
		return -3
	case "c", "rc", "pre", "preview", "cr", "m", "milestone":
		return -2
	case "post", "final", "ga", "release", "sp":
		return 1
	}
	return 0
}

func genericTokens(v string) []string {
	v = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(v), "v"))
	if i := strings.IndexByte(v, '+'); i >= 0 { // build metadata does not order
		v = v[:i]
	}
	var out []string
	var cur strings.Builder
	kind := 0 // 1 digit, 2 letter
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	for _, r := range v {
		k := 0
		switch {
		case unicode.IsDigit(r):
			k = 1
		case unicode.IsLetter(r):
			k = 2
		}
		if k == 0 {
			flush()
			kind = 0
			continue
		}
		if k != kind {
			flush()
		}
		kind = k
		cur.WriteRune(r)
	}
	flush()
	return out
}
