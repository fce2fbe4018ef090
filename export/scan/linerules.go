package scan

import (
	"sort"
	"strings"
)

// Whole rules with their own windows (see the package doc, "Speed"). Their matches do
// not hold a keyword, or hold unbounded text, so the keyword lines do not bound them;
// a Go reading of the rule's regex finds the lines that can hold a match instead.

// lineRule is a rule whose matches lie on lines a Go predicate finds, give or take one
// line: it runs with the cold rules, on those lines and on the first line holding one
// of its keywords (so that gitleaks runs it on the fragment, as on the chunk).
type lineRule struct {
	id    string
	regex string // the regex the predicate was written for
	// lines calls add with the index of each line of text that can hold the start of
	// a match.
	lines func(text string, lines chunkLines, add func(line int))
}

var lineRules = []lineRule{
	{
		// A word of 40 hex digits, or sgp_ and hex digits; the tail may take one
		// newline.
		id:    "sourcegraph-access-token",
		regex: `(?i)\b(\b(sgp_(?:[a-fA-F0-9]{16}|local)_[a-fA-F0-9]{40}|sgp_[a-fA-F0-9]{40}|[a-fA-F0-9]{40})\b)(?:[\x60'"\s;]|\\[nr]|$)`,
		lines: func(text string, lines chunkLines, add func(int)) {
			eachFold(text, "sgp_", func(i int) { add(lines.lineOf(i)) })
			for i := 0; i < len(text); {
				if !isHex(text[i]) {
					i++
					continue
				}
				n := countClass(text, i, len(text), clsHex)
				if n >= 40 {
					add(lines.lineOf(i))
				}
				i += n
			}
		},
	},
	{
		// "hooks", then a byte, "slack", a byte, "com/" (no newline in a match).
		id:    "slack-webhook-url",
		regex: `(?:https?://)?hooks.slack.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{43,56}`,
		lines: func(text string, lines chunkLines, add func(int)) {
			for i := 0; ; i++ {
				j := strings.Index(text[i:], "hooks")
				if j < 0 {
					return
				}
				i += j
				add(lines.lineOf(i))
			}
		},
	},
}

// eachFold calls f with the start of each occurrence of the lower-case ASCII word w in
// text, in any case.
func eachFold(text, w string, f func(int)) {
	for i := 0; i+len(w) <= len(text); i++ {
		if lowerASCII(text[i]) == w[0] && hasPrefixLower(text[i:], w) {
			f(i)
		}
	}
}

// The private-key rule, whose matches run from a "-----BEGIN" header to the first
// "KEY-----" or "KEY BLOCK-----" at least 64 characters after it, across any number
// of lines.
const (
	pemRuleID = "private-key"
	pemRegex  = `(?i)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S-]{64,}?KEY(?: BLOCK)?-----`
	// pemMinEnd: no end marker can start fewer bytes than this after "-----BEGIN"
	// ("-----BEGIN", "PRIVATE KEY", "-----", then 64 characters of at least a byte).
	pemMinEnd = 10 + 11 + 5 + 64
	// pemSureEnd: an end marker this many bytes or more after "-----BEGIN" is at least
	// 64 characters after any header the regex can match (a header of at most 122
	// characters, and at most four bytes per character): the match ends there or
	// before.
	pemSureEnd = 4 * (122 + 64 + 64)
)

// pemWindows returns, merged, the line ranges holding every match of the private-key
// rule in text: for each "-----begin" at a position in begins, from its line to the
// line after the first end marker pemSureEnd bytes or more after it (or after the last
// end marker, when all are nearer). A header without an end marker pemMinEnd bytes or
// more after it starts no match. Each window is contiguous text of the chunk, to be
// scanned alone: the rule's [\s\S-] crosses any separator.
func pemWindows(text string, lines chunkLines, begins []int) []lineRange {
	var ends []int // the end of each end marker, in order
	eachFold(text, "key", func(i int) {
		j := i + 3
		if hasPrefixLower(text[j:], " block") {
			j += 6
		}
		if strings.HasPrefix(text[j:], "-----") {
			ends = append(ends, j+5)
		}
	})
	last := len(lines.starts) - 1
	var rs []lineRange
	for _, b := range begins {
		// The first marker that can end a match starts at b+pemMinEnd or later.
		k := sort.Search(len(ends), func(k int) bool { return ends[k] >= b+pemMinEnd+8 })
		if k == len(ends) {
			continue
		}
		s := sort.Search(len(ends), func(k int) bool { return ends[k] >= b+pemSureEnd+14 })
		end := ends[len(ends)-1]
		if s < len(ends) {
			end = ends[s]
		}
		rs = append(rs, lineRange{lines.lineOf(b), min(last, lines.lineOf(end-1)+1)})
	}
	return mergeRanges(rs)
}

// linesInRanges reports whether one of the (increasing) lines ls is in one of the
// (sorted, disjoint) ranges rs.
func linesInRanges(ls []int, rs []lineRange) bool {
	j := 0
	for _, l := range ls {
		for j < len(rs) && rs[j].b < l {
			j++
		}
		if j < len(rs) && rs[j].a <= l {
			return true
		}
	}
	return false
}

// mergeRanges sorts line ranges and merges the ones that overlap or touch.
func mergeRanges(rs []lineRange) []lineRange {
	if len(rs) < 2 {
		return rs
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].a < rs[j].a })
	out := rs[:1]
	for _, r := range rs[1:] {
		if n := len(out); r.a <= out[n-1].b+1 {
			out[n-1].b = max(out[n-1].b, r.b)
			continue
		}
		out = append(out, r)
	}
	return out
}
