package scan

import (
	"regexp/syntax"
	"strings"
	"unicode"
)

// Rule analysis for the line prefilter (see the package doc, "Speed").

const (
	maxExactSet = 256 // largest set of exact strings tracked for one node
	unbounded   = 1 << 20
)

// exactSet returns the lower-cased strings re can match when that set is small and
// finite. Zero-width assertions match the empty string.
func exactSet(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return []string{""}, true
	case syntax.OpLiteral:
		var b strings.Builder
		for _, r := range re.Rune {
			b.WriteRune(unicode.ToLower(r))
		}
		return []string{b.String()}, true
	case syntax.OpCharClass:
		seen := map[rune]bool{}
		var out []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i+1]-re.Rune[i] > 8 {
				return nil, false
			}
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				l := unicode.ToLower(r)
				if !seen[l] {
					seen[l] = true
					out = append(out, string(l))
				}
			}
		}
		if len(out) == 0 || len(out) > 8 {
			return nil, false
		}
		return out, true
	case syntax.OpCapture:
		return exactSet(re.Sub[0])
	case syntax.OpQuest:
		s, ok := exactSet(re.Sub[0])
		if !ok {
			return nil, false
		}
		return append(s, ""), true
	case syntax.OpAlternate:
		var out []string
		for _, sub := range re.Sub {
			s, ok := exactSet(sub)
			if !ok {
				return nil, false
			}
			out = append(out, s...)
			if len(out) > maxExactSet {
				return nil, false
			}
		}
		return out, true
	case syntax.OpConcat:
		return concatSets(re.Sub)
	}
	return nil, false
}

func concatSets(subs []*syntax.Regexp) ([]string, bool) {
	out := []string{""}
	for _, sub := range subs {
		s, ok := exactSet(sub)
		if !ok {
			return nil, false
		}
		if len(out)*len(s) > maxExactSet {
			return nil, false
		}
		next := make([]string, 0, len(out)*len(s))
		for _, a := range out {
			for _, b := range s {
				next = append(next, a+b)
			}
		}
		out = next
	}
	return out, true
}

// prefixSet returns lower-cased strings one of which starts every match of re: the
// exact set when there is one, and otherwise what its leading parts fix (the empty
// string when nothing is fixed).
func prefixSet(re *syntax.Regexp) []string {
	if s, ok := exactSet(re); ok {
		return s
	}
	switch re.Op {
	case syntax.OpCapture:
		return prefixSet(re.Sub[0])
	case syntax.OpPlus:
		return prefixSet(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return prefixSet(re.Sub[0])
		}
	case syntax.OpAlternate:
		var out []string
		for _, sub := range re.Sub {
			out = append(out, prefixSet(sub)...)
			if len(out) > maxExactSet {
				return []string{""}
			}
		}
		return out
	case syntax.OpConcat:
		return concatPrefixes(re.Sub)
	}
	return []string{""}
}

// concatPrefixes is prefixSet of the concatenation of subs: the exact sets of its
// leading parts joined, then the prefixes of the first part without one.
func concatPrefixes(subs []*syntax.Regexp) []string {
	out := []string{""}
	for _, sub := range subs {
		s, exact := exactSet(sub)
		if !exact {
			s = prefixSet(sub)
		}
		if len(out)*len(s) > maxExactSet {
			return out
		}
		next := make([]string, 0, len(out)*len(s))
		for _, a := range out {
			for _, b := range s {
				next = append(next, a+b)
			}
		}
		out = next
		if !exact {
			break
		}
	}
	return out
}

// maxNewlines returns the largest number of '\n' a match of re can contain (unbounded
// when a repetition without an upper bound can match one).
func maxNewlines(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		n := 0
		for _, r := range re.Rune {
			if r == '\n' {
				n++
			}
		}
		return n
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i] <= '\n' && '\n' <= re.Rune[i+1] {
				return 1
			}
		}
		return 0
	case syntax.OpAnyChar:
		return 1
	case syntax.OpAnyCharNotNL:
		return 0
	case syntax.OpCapture, syntax.OpQuest:
		return maxNewlines(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		if maxNewlines(re.Sub[0]) > 0 {
			return unbounded
		}
		return 0
	case syntax.OpRepeat:
		n := maxNewlines(re.Sub[0])
		if n == 0 {
			return 0
		}
		if re.Max < 0 {
			return unbounded
		}
		return min(unbounded, n*re.Max)
	case syntax.OpConcat:
		t := 0
		for _, sub := range re.Sub {
			t = min(unbounded, t+maxNewlines(sub))
		}
		return t
	case syntax.OpAlternate:
		m := 0
		for _, sub := range re.Sub {
			m = max(m, maxNewlines(sub))
		}
		return m
	}
	return 0
}

// anchor is where a keyword must occur in every match of a regex: at most before
// newlines of the match precede it and at most after newlines follow it.
type anchor struct {
	ok            bool
	before, after int
}

func (a anchor) better(b anchor) anchor {
	if !a.ok || b.ok && b.before+b.after < a.before+a.after {
		return b
	}
	return a
}

func containsKeyword(ss []string, kws []string) bool {
	for _, s := range ss {
		found := false
		for _, k := range kws {
			if strings.Contains(s, k) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// keywordAnchor reports whether every match of re contains one of kws (lower-cased,
// ASCII matching), and how many newlines can surround that keyword in the match.
func keywordAnchor(re *syntax.Regexp, kws []string) anchor {
	if s, ok := exactSet(re); ok && containsKeyword(s, kws) {
		n := maxNewlines(re)
		return anchor{true, n, n}
	}
	switch re.Op {
	case syntax.OpCapture:
		return keywordAnchor(re.Sub[0], kws)
	case syntax.OpPlus:
		a := keywordAnchor(re.Sub[0], kws)
		if !a.ok {
			return a
		}
		if n := maxNewlines(re); n > 0 {
			return anchor{n < unbounded, n, n}
		}
		return a
	case syntax.OpRepeat:
		if re.Min < 1 {
			return anchor{}
		}
		a := keywordAnchor(re.Sub[0], kws)
		if !a.ok {
			return a
		}
		if n := maxNewlines(re); n > 0 {
			return anchor{n < unbounded, n, n}
		}
		return a
	case syntax.OpAlternate:
		out := anchor{ok: true}
		for _, sub := range re.Sub {
			a := keywordAnchor(sub, kws)
			if !a.ok {
				return anchor{}
			}
			out.before, out.after = max(out.before, a.before), max(out.after, a.after)
		}
		return out
	case syntax.OpConcat:
		nl := make([]int, len(re.Sub))
		for i, sub := range re.Sub {
			nl[i] = maxNewlines(sub)
		}
		sum := func(a, b int) int {
			t := 0
			for _, n := range nl[a:b] {
				t = min(unbounded, t+n)
			}
			return t
		}
		var best anchor
		for i, sub := range re.Sub {
			if a := keywordAnchor(sub, kws); a.ok {
				best = best.better(anchor{true, min(unbounded, sum(0, i)+a.before), min(unbounded, a.after+sum(i+1, len(nl)))})
			}
			for j := i + 2; j <= len(re.Sub); j++ {
				s, ok := concatSets(re.Sub[i:j])
				if !ok {
					// Every match of the part still starts with one of these.
					s = concatPrefixes(re.Sub[i:j])
				}
				if containsKeyword(s, kws) {
					in := sum(i, j)
					best = best.better(anchor{true, min(unbounded, sum(0, i)+in), min(unbounded, in+sum(j, len(nl)))})
					break
				}
				if !ok {
					break
				}
			}
		}
		if best.ok && (best.before >= unbounded || best.after >= unbounded) {
			return anchor{}
		}
		return best
	}
	return anchor{}
}

// semiGenericHeads and semiGenericTail surround the identifiers of the regexes gitleaks
// builds with GenerateSemiGenericRegex.
var semiGenericHeads = []string{`(?i)[\w.-]{0,50}?(?:`, `[\w.-]{0,50}?(?i:`}

const semiGenericTail = `)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)`

// semiGeneric reports whether every match of the regex re holds an identifier ending
// with one of kws directly followed by [ \t\w.-]{0,20} [\s'"]{0,3} and an operator:
// re is a semi-generic regex whose identifiers are plain words, each ending with a
// keyword.
func semiGeneric(re string, kws []string) bool {
	for _, head := range semiGenericHeads {
		rest, ok := strings.CutPrefix(re, head)
		if !ok {
			continue
		}
		i := strings.Index(rest, semiGenericTail)
		if i <= 0 {
			return false
		}
		for _, id := range strings.Split(rest[:i], "|") {
			if id == "" || strings.Trim(strings.ToLower(id), "abcdefghijklmnopqrstuvwxyz0123456789_-") != "" {
				return false
			}
			ends := false
			for _, k := range kws {
				ends = ends || strings.HasSuffix(strings.ToLower(id), k)
			}
			if !ends {
				return false
			}
		}
		return true
	}
	return false
}

// Rule classes of the prefilter.
const (
	classCold  = iota // anchored on a keyword with bounded newlines: runs on keyword lines
	classHot          // anchored, with a Go pre-check that selects candidate lines
	classWhole        // runs on the whole chunk whenever gitleaks would run it
)

// Hot rules: their keywords occur in almost every text, so a Go pre-check (a necessary
// condition for a match at a keyword occurrence) picks the lines they run on.
const (
	hotGeneric = iota
	hotVault
	hotOctopus
	hotAuth
	hotTwilio
	hotAuthress
	hotDatabricks
	numHot
)

var hotRuleIDs = [numHot]string{"generic-api-key", "vault-service-token", "octopus-deploy-api-key", RuleAuthHeader,
	"twilio-api-key", "authress-service-client-access-key", "databricks-api-token"}

// hotRegexes are the regexes the pre-checks were written for; a different regex (a new
// gitleaks version) makes the rule an ordinary one.
var hotRegexes = [numHot]string{
	`(?i)[\w.-]{0,50}?(?:access|auth|(?-i:[Aa]pi|API)|credential|creds|key|passw(?:or)?d|secret|token)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([\w.=-]{10,150}|[a-z0-9][a-z0-9+/]{11,}={0,3})(?:[\x60'"\s;]|\\[nr]|$)`,
	`\b((?:hvs\.[\w-]{90,120}|s\.(?i:[a-z0-9]{24})))(?:[\x60'"\s;]|\\[nr]|$)`,
	`\b(API-[A-Z0-9]{26})(?:[\x60'"\s;]|\\[nr]|$)`,
	`(?i)\bauthorization["']?\s*[:=,]\s*["']?(?:bearer|basic|token|apikey|api-key)[ \t]+([^\s"'\x60\\,;)]{3,400})`,
	`SK[0-9a-fA-F]{32}`,
	`\b((?:sc|ext|scauth|authress)_(?i)[a-z0-9]{5,30}\.[a-z0-9]{4,6}\.(?-i:acc)[_-][a-z0-9-]{10,32}\.[a-z0-9+/_=-]{30,120})(?:[\x60'"\s;]|\\[nr]|$)`,
	`\b(dapi[a-f0-9]{32}(?:-\d)?)(?:[\x60'"\s;]|\\[nr]|$)`,
}

// kwInfo is one keyword (lower case) and what an occurrence of it means.
type kwInfo struct {
	text string
	cold bool // a cold rule uses it: the lines around it are scanned
	// coldBefore/coldAfter are the lines of context its cold rules need around it.
	coldBefore, coldAfter int
	// coldAny: one of its cold rules needs every occurrence; otherwise they are all
	// semi-generic rules (semiGeneric) and only occurrences followed by an operator
	// (operatorAfter) can be in a match.
	coldAny bool
	hot     [numHot]bool
	whole   []int // indices into prefilter.whole
	lines   []int // indices into prefilter.lineRules
	pem     bool  // the private-key rule's keyword
}

// wholeRule is a rule of the whole-chunk class, with what triggers it.
type wholeRule struct {
	id       string
	always   bool     // no keywords
	windowed bool     // private-key on its own windows (pemWindows)
	regex    bool     // has a regex (else it is a path-only rule)
	kws      []string // lower case
	pathOnly func(string) bool
}

// prefilter picks, per chunk, the lines each group of rules runs on.
type prefilter struct {
	pair []uint16 // first two bytes (any case) -> 1 + index into lists, or 0
	// tri has a bit for the triHash of each three bytes that can start a keyword
	// (32 KB): most bytes of a text are rejected with it alone.
	tri [1 << 12]uint64
	// pairSet has a bit for each pair of bytes that starts a keyword (pair != 0): small
	// enough to stay in the L1 cache.
	pairSet [1 << 10]uint64
	// third has, per list, a bit for each byte that can follow the pair in one of its
	// keywords (every byte when a keyword is the pair alone).
	third     [][4]uint64
	lists     [][]int // keyword indices
	kws       []kwInfo
	hotOn     [numHot]bool
	whole     []wholeRule
	lineRules []lineRule
	sep       string
}

// foldBytes are UTF-8 encodings of the runes that lower-case or case-fold to ASCII
// letters (ſ, K, İ): gitleaks lower-cases K to k and İ to i (and a combining dot)
// before it looks for keywords, and case-insensitive regexes match ſ as s and K as k.
// A chunk holding one is planned on a copy with each replaced by its ASCII letter
// (foldReplacer): its lines are the same, and every keyword and pre-check that holds
// for the chunk holds for the copy.
var foldBytes = []string{"\u017f", "\u212a", "\u0130"}

var foldReplacer = strings.NewReplacer("\u017f", "s", "\u212a", "k", "\u0130", "i")

func lowerASCII(c byte) byte { return lowerTable[c] }

// triHash hashes three bytes to 18 bits.
func triHash(a, b, c byte) uint32 {
	return (uint32(a)<<16 | uint32(b)<<8 | uint32(c)) * 0x9E3779B1 >> 14
}

// lowerTable maps each byte to its ASCII lower case (read only).
var lowerTable = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			t[i] = byte(i + 'a' - 'A')
		}
	}
	return t
}()

// Byte classes (read only): bit sets indexed by byte.
const (
	clsWord  = 1 << iota // \w
	clsHex               // [0-9A-Fa-f]
	clsB64               // [\w\/+-], the decoder's base64 class
	clsSpace             // RE2's \s
	clsGenKw             // a first byte of a keyword of generic-api-key's regex
)

var byteClass = func() (t [256]uint8) {
	for i := range t {
		c := byte(i)
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' {
			t[i] |= clsWord | clsB64
		}
		if '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' {
			t[i] |= clsHex
		}
		if c == '/' || c == '+' || c == '-' {
			t[i] |= clsB64
		}
		if c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' {
			t[i] |= clsSpace
		}
		if strings.IndexByte("ackpstACKPST", c) >= 0 {
			t[i] |= clsGenKw
		}
	}
	return t
}()

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
