package safeinstall

import (
	"strings"

	"github.com/envgap/envgap/schemas/semver"
)

// mavenKind is the kind of an item of a parsed Maven version.
type mavenKind int

const (
	mavenNumber mavenKind = iota
	mavenQualifier
	mavenList
)

// mavenItem is one item of a Maven version as ComparableVersion parses it: a number, a
// qualifier, or a list of items (the part after a "-", or after a transition between
// letters and digits).
type mavenItem struct {
	kind  mavenKind
	num   string // decimal digits without leading zeros ("0" for zero)
	qual  string // lowercase qualifier after aliasing ("" for ga, final and release)
	items []*mavenItem
}

// compareMaven orders Maven versions as maven-artifact's ComparableVersion (Maven 3.9) does,
// the order the POM reference's "Version Order Specification" describes:
//
//   - The lowercased version is split at ".", at "-" and at transitions between digits and
//     other characters; a "-" or a transition opens a nested list, and a qualifier that
//     ends the version or is followed by a digit after a "." opens one too (1.0.0.RC1 reads
//     as 1-RC-1). An empty part is 0.
//   - "a", "b" and "m" directly followed by a digit mean alpha, beta and milestone; "cr"
//     means "rc"; "ga", "final" and "release" mean the release itself ("").
//   - Each list, innermost first, drops its trailing "null" items (0, "", empty lists),
//     looking past nested lists: 1.0.0 = 1, 1-ga = 1, 1.0-1 = 1-1.
//   - Items compare as numbers (by value), qualifiers (alpha < beta < milestone < rc <
//     snapshot < "" < sp < any other qualifier, others in lexical order) and lists (item by
//     item, a missing item being null). Across kinds: a number sorts after a list, which
//     sorts after a qualifier; against a missing item a number sorts after unless it is
//     0, a qualifier by its place relative to "", a list by its first non-null item.
//
// Every string is a Maven version, so there is no fallback. Two deliberate choices, both
// following the specification's text: digits are ASCII digits only (other Unicode digits
// are qualifier letters), and numbers compare by value however many leading zeros they
// have. The specification's newest example 1_0 = 1 describes the resolver's
// GenericVersion, where "_" separates; ComparableVersion reads "_" as a qualifier letter,
// and so does this ordering.
func compareMaven(a, b string) int {
	return parseMaven(a).compare(parseMaven(b))
}

// parseMaven parses a version into its item list.
func parseMaven(version string) *mavenItem {
	s := strings.ToLower(version)
	root := &mavenItem{kind: mavenList}
	list := root
	stack := []*mavenItem{root}
	open := func() {
		l := &mavenItem{kind: mavenList}
		list.items = append(list.items, l)
		list, stack = l, append(stack, l)
	}
	add := func(it *mavenItem) { list.items = append(list.items, it) }
	digit := false
	start := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.' || c == '-':
			if i == start {
				add(&mavenItem{kind: mavenNumber, num: "0"})
			} else {
				add(mavenToken(digit, s[start:i]))
			}
			start = i + 1
			if c == '-' {
				open()
			}
		case c >= '0' && c <= '9':
			if !digit && i > start {
				// a qualifier followed by a digit: 1.0.0.X1 reads as 1.0.0-X-1
				if len(list.items) > 0 {
					open()
				}
				add(mavenQualifierItem(s[start:i], true))
				start = i
				open()
			}
			digit = true
		default:
			if digit && i > start {
				add(mavenToken(true, s[start:i]))
				start = i
				open()
			}
			digit = false
		}
	}
	if len(s) > start {
		if !digit && len(list.items) > 0 { // treat a final .X as -X
			open()
		}
		add(mavenToken(digit, s[start:]))
	}
	for i := len(stack) - 1; i >= 0; i-- {
		stack[i].normalize()
	}
	return root
}

func mavenToken(digit bool, s string) *mavenItem {
	if digit {
		return &mavenItem{kind: mavenNumber, num: trimZeros(s)}
	}
	return mavenQualifierItem(s, false)
}

func mavenQualifierItem(s string, followedByDigit bool) *mavenItem {
	if followedByDigit {
		switch s {
		case "a":
			s = "alpha"
		case "b":
			s = "beta"
		case "m":
			s = "milestone"
		}
	}
	switch s {
	case "ga", "final", "release":
		s = ""
	case "cr":
		s = "rc"
	}
	return &mavenItem{kind: mavenQualifier, qual: s}
}

// normalize drops trailing null items, looking past nested lists.
func (it *mavenItem) normalize() {
	for i := len(it.items) - 1; i >= 0; i-- {
		last := it.items[i]
		if last.isNull() {
			it.items = append(it.items[:i], it.items[i+1:]...)
		} else if last.kind != mavenList {
			break
		}
	}
}

func (it *mavenItem) isNull() bool {
	switch it.kind {
	case mavenNumber:
		return it.num == "0"
	case mavenQualifier:
		return it.qual == ""
	}
	return len(it.items) == 0
}

// qualifierKey is ComparableVersion's comparable form of a qualifier, compared as a
// string: the index of a known qualifier in alpha, beta, milestone, rc, snapshot, ""
// (the release), sp; or "7-" and any other qualifier, which therefore sort after sp and
// among themselves lexically.
func qualifierKey(q string) string {
	switch q {
	case "alpha":
		return "0"
	case "beta":
		return "1"
	case "milestone":
		return "2"
	case "rc":
		return "3"
	case "snapshot":
		return "4"
	case "":
		return releaseKey
	case "sp":
		return "6"
	}
	return "7-" + q
}

// releaseKey is the key of the release itself (the empty qualifier).
const releaseKey = "5"

// compare orders item it against o; o == nil is a missing item.
func (it *mavenItem) compare(o *mavenItem) int {
	switch it.kind {
	case mavenNumber:
		switch {
		case o == nil:
			return cmpBool(it.num != "0", false) // 1.0 == 1, 1.1 > 1
		case o.kind == mavenNumber:
			return semver.CompareDigits(it.num, o.num)
		}
		return 1 // 1.1 > 1-sp, 1.1 > 1-1
	case mavenQualifier:
		switch {
		case o == nil:
			return compareUTF16(qualifierKey(it.qual), releaseKey) // 1-rc < 1, 1-sp > 1
		case o.kind == mavenQualifier:
			return compareUTF16(qualifierKey(it.qual), qualifierKey(o.qual))
		}
		return -1 // 1.any < 1.1, 1.any < 1-1
	}
	switch {
	case o == nil:
		for _, x := range it.items {
			if c := x.compare(nil); c != 0 {
				return c
			}
		}
		return 0
	case o.kind == mavenNumber:
		return -1 // 1-1 < 1.0.x
	case o.kind == mavenQualifier:
		return 1 // 1-1 > 1-sp
	}
	for i := 0; i < max(len(it.items), len(o.items)); i++ {
		var c int
		switch {
		case i >= len(it.items):
			c = -o.items[i].compare(nil)
		case i >= len(o.items):
			c = it.items[i].compare(nil)
		default:
			c = it.items[i].compare(o.items[i])
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// String is ComparableVersion's canonical form: items joined by ".", a nested list by "-".
func (it *mavenItem) String() string {
	switch it.kind {
	case mavenNumber:
		return it.num
	case mavenQualifier:
		return it.qual
	}
	var b strings.Builder
	for _, x := range it.items {
		if b.Len() > 0 {
			if x.kind == mavenList {
				b.WriteByte('-')
			} else {
				b.WriteByte('.')
			}
		}
		b.WriteString(x.String())
	}
	return b.String()
}
