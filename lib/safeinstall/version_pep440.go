package safeinstall

import (
	"cmp"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/envgap/envgap/schemas/semver"
)

// pep440Re is the grammar of PEP 440's appendix B ("Parsing version strings with regular
// expressions"), which accepts every spelling the normalisation rules allow, matched
// against the ASCII-lowercased, space-trimmed string. Groups: 1 epoch, 2 release, 3 pre
// letter, 4 pre number, 5 implicit post number (1.0-1), 6 post letter, 7 post number,
// 8 dev letter, 9 dev number, 10 local label.
var pep440Re = regexp.MustCompile(`^v?` +
	`(?:([0-9]+)!)?` +
	`([0-9]+(?:\.[0-9]+)*)` +
	`(?:[-_.]?(alpha|a|beta|b|preview|pre|c|rc)[-_.]?([0-9]+)?)?` +
	`(?:-([0-9]+)|[-_.]?(post|rev|r)[-_.]?([0-9]+)?)?` +
	`(?:[-_.]?(dev)[-_.]?([0-9]+)?)?` +
	`(?:\+([a-z0-9]+(?:[-_.][a-z0-9]+)*))?$`)

// pep440Version is a parsed PEP 440 version. Numbers are ASCII digit strings of any size.
type pep440Version struct {
	epoch   string
	release []string
	pre     string // "", "a", "b" or "rc"
	preN    string
	post    bool
	postN   string
	dev     bool
	devN    string
	local   []string // lowercased segments; nil without a local label
}

// parsePEP440 parses a version as PEP 440 does after normalising it: case, a leading "v",
// surrounding space, the separators "-", "_" and ".", alternative spellings (alpha, beta,
// c, pre, preview, rev, r), implicit numbers (1.0a = 1.0a0, 1.0.post = 1.0.post0,
// 1.0.dev = 1.0.dev0) and the implicit post-release 1.0-1 = 1.0.post1.
func parsePEP440(s string) (pep440Version, bool) {
	m := pep440Re.FindStringSubmatch(asciiLower(strings.TrimSpace(s)))
	if m == nil {
		return pep440Version{}, false
	}
	v := pep440Version{epoch: orZero(m[1]), release: strings.Split(m[2], ".")}
	if m[3] != "" {
		v.pre, v.preN = m[3], orZero(m[4])
		switch m[3] {
		case "alpha":
			v.pre = "a"
		case "beta":
			v.pre = "b"
		case "c", "pre", "preview":
			v.pre = "rc"
		}
	}
	switch {
	case m[5] != "":
		v.post, v.postN = true, m[5]
	case m[6] != "":
		v.post, v.postN = true, orZero(m[7])
	}
	if m[8] != "" {
		v.dev, v.devN = true, orZero(m[9])
	}
	if m[10] != "" {
		v.local = strings.FieldsFunc(m[10], func(r rune) bool { return r == '-' || r == '_' || r == '.' })
	}
	return v, true
}

// String returns the normalised form of the version (PEP 440 "Normalization").
func (v pep440Version) String() string {
	var b strings.Builder
	if n := trimZeros(v.epoch); n != "0" {
		b.WriteString(n + "!")
	}
	for i, r := range v.release {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(trimZeros(r))
	}
	if v.pre != "" {
		b.WriteString(v.pre + trimZeros(v.preN))
	}
	if v.post {
		b.WriteString(".post" + trimZeros(v.postN))
	}
	if v.dev {
		b.WriteString(".dev" + trimZeros(v.devN))
	}
	for i, l := range v.local {
		if i == 0 {
			b.WriteByte('+')
		} else {
			b.WriteByte('.')
		}
		if semver.IsDigits(l) {
			l = trimZeros(l)
		}
		b.WriteString(l)
	}
	return b.String()
}

// compare orders two PEP 440 versions: epoch, release (missing segments are zero),
// pre-release (a < b < rc; none sorts after any, except that a dev release of a final
// release, 1.0.dev1, sorts before its pre-releases), post-release (none sorts first),
// dev-release (none sorts last), local label (none sorts first; segments compared in
// turn, numeric ones numerically and above alphanumeric ones, which compare as lowercase
// strings; a longer label that extends a shorter one sorts after it).
func (v pep440Version) compare(w pep440Version) int {
	if c := semver.CompareDigits(v.epoch, w.epoch); c != 0 {
		return c
	}
	for i := 0; i < max(len(v.release), len(w.release)); i++ {
		if c := semver.CompareDigits(segment(v.release, i), segment(w.release, i)); c != 0 {
			return c
		}
	}
	if c := cmp.Compare(v.preRank(), w.preRank()); c != 0 {
		return c
	}
	if v.pre != "" { // both have a pre-release
		if c := strings.Compare(v.pre, w.pre); c != 0 { // "a" < "b" < "rc"
			return c
		}
		if c := semver.CompareDigits(v.preN, w.preN); c != 0 {
			return c
		}
	}
	if c := cmpBool(v.post, w.post); c != 0 {
		return c
	}
	if v.post {
		if c := semver.CompareDigits(v.postN, w.postN); c != 0 {
			return c
		}
	}
	if c := cmpBool(!v.dev, !w.dev); c != 0 { // no dev part sorts last
		return c
	}
	if v.dev {
		if c := semver.CompareDigits(v.devN, w.devN); c != 0 {
			return c
		}
	}
	return compareLocal(v.local, w.local)
}

// preRank places the pre-release part: -1 for a bare dev release of a final release
// (1.0.dev0 < 1.0a1), 0 for a pre-release, 1 for none.
func (v pep440Version) preRank() int {
	switch {
	case v.pre != "":
		return 0
	case v.dev && !v.post:
		return -1
	}
	return 1
}

func compareLocal(a, b []string) int {
	if a == nil || b == nil {
		return cmpBool(a != nil, b != nil)
	}
	return compareIdentifiers(a, b, false) // a numeric segment sorts after an alphanumeric one
}

// comparePEP440 orders PyPI versions. Valid PEP 440 versions follow PEP 440. A string that
// is not one sorts before every valid version (as packaging's LegacyVersion did, and as
// OSV's PyPI ecosystem still does); two such strings follow the legacy setuptools order.
func comparePEP440(a, b string) int {
	va, oka := parsePEP440(a)
	vb, okb := parsePEP440(b)
	switch {
	case oka && okb:
		return va.compare(vb)
	case oka != okb:
		return cmpBool(oka, okb)
	}
	return compareLegacyPython(a, b)
}

// compareLegacyPython orders two strings by the scheme setuptools used before PEP 440
// (packaging's LegacyVersion): the lowercased string is split into runs of digits, runs
// of a-z, "." and "-", and the text between them; "pre", "preview" and "rc" read as "c",
// "dev" as "@" and "-" as "final-"; numbers are zero-padded to 8 digits and every other
// part is prefixed with "*"; a "*final" part closes the list. Before a part that sorts
// below "*final" (a pre-release word) any "*final-" parts are dropped, and before every
// word the trailing "00000000" parts are dropped. The part lists are compared in order.
func compareLegacyPython(a, b string) int {
	ka, kb := legacyPythonKey(a), legacyPythonKey(b)
	for i := 0; i < min(len(ka), len(kb)); i++ {
		if c := strings.Compare(ka[i], kb[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(ka), len(kb))
}

func legacyPythonKey(s string) []string {
	var parts []string
	for _, p := range legacyPythonParts(strings.ToLower(s)) {
		if strings.HasPrefix(p, "*") {
			if p < "*final" {
				for len(parts) > 0 && parts[len(parts)-1] == "*final-" {
					parts = parts[:len(parts)-1]
				}
			}
			for len(parts) > 0 && parts[len(parts)-1] == "00000000" {
				parts = parts[:len(parts)-1]
			}
		}
		parts = append(parts, p)
	}
	return parts
}

// legacyPythonParts splits and rewrites a lowercased string into the legacy parts.
func legacyPythonParts(s string) []string {
	var out []string
	emit := func(p string) {
		switch p {
		case "pre", "preview", "rc":
			p = "c"
		case "-":
			p = "final-"
		case "dev":
			p = "@"
		}
		switch {
		case p == "" || p == ".":
		case p[0] >= '0' && p[0] <= '9':
			if n := utf8.RuneCountInString(p); n < 8 {
				p = strings.Repeat("0", 8-n) + p
			}
			out = append(out, p)
		default:
			out = append(out, "*"+p)
		}
	}
	other := 0 // start of the text between matched runs
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		j := i + size
		switch {
		case unicode.IsDigit(r):
			for j < len(s) {
				r2, n := utf8.DecodeRuneInString(s[j:])
				if !unicode.IsDigit(r2) {
					break
				}
				j += n
			}
		case r >= 'a' && r <= 'z':
			for j < len(s) && s[j] >= 'a' && s[j] <= 'z' {
				j++
			}
		case r == '.' || r == '-':
		default:
			i = j
			continue
		}
		emit(s[other:i])
		emit(s[i:j])
		i, other = j, j
	}
	emit(s[other:])
	return append(out, "*final")
}

func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + ('a' - 'A')
		}
		return r
	}, s)
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

func trimZeros(s string) string {
	if t := strings.TrimLeft(s, "0"); t != "" {
		return t
	}
	return "0"
}

func segment(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "0"
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
