package scan

import (
	"math"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect/codec"
)

// Direct rules (see the package doc, "Speed"): the hot rules whose windows hold many
// matches (generic-api-key, the Authorization rule) are evaluated in Go, as gitleaks'
// detectRule evaluates a plain fragment, so that their windows need not go to gitleaks.

// directRule is one rule evaluated in Go.
type directRule struct {
	id string
	// findAll calls f with every match [ms, me) of the rule's regex in s, in order,
	// until f returns false (FindAllStringIndex).
	findAll func(s string, f func(ms, me int) bool)
	// submatch returns the capture groups of the regex's first match in s, the whole
	// match first (FindStringSubmatch), or nil.
	submatch    func(s string) []string
	secretGroup int
	entropy     float64
	allowlists  []*config.Allowlist // the global ones, then the rule's
	keywords    []string            // lower case

	memoMu sync.Mutex
	memo   map[allowKey]bool
}

// newDirectGeneric evaluates generic-api-key with the hand-written matcher (generic.go).
func newDirectGeneric(r config.Rule, global []*config.Allowlist) *directRule {
	return &directRule{
		id: r.RuleID,
		findAll: func(s string, f func(ms, me int) bool) {
			genericAll(s, func(m genericMatch) bool { return f(m.ms, m.me) })
		},
		submatch: func(s string) []string {
			m, ok := genericNext(s, 0)
			if !ok {
				return nil
			}
			return []string{s[m.ms:m.me], s[m.gs:m.ge]}
		},
		secretGroup: r.SecretGroup,
		entropy:     r.Entropy,
		allowlists:  append(append([]*config.Allowlist{}, global...), r.Allowlists...),
		keywords:    lowerAll(r.Keywords),
	}
}

func lowerAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.ToLower(s)
	}
	return out
}

// hits returns the findings gitleaks' detectRule would report for the rule on the plain
// fragment s, as hits with offsets into s. ok is false when one of them cannot be
// decided here: a secret whose entropy is the rule's threshold up to rounding
// (gitleaks sums over a map, in random order), or s is not asciiMatchable.
// matchable says that s is known to be asciiMatchable.
func (d *directRule) hits(s string, matchable bool) (out []hit, ok bool) {
	if !matchable && !asciiMatchable(s) {
		return nil, false
	}
	var lm lineMemo
	ok = true
	d.findAll(s, func(ms, me int) bool {
		// detectRule: the match trimmed of newlines, its end moved to the trimmed length.
		match := strings.Trim(s[ms:me], "\n")
		me = ms + len(match)
		sp := gitleaksSpan(s, ms, me)
		secret, keep, sure := d.finding(match, s[sp.lineStart:sp.lineEnd], &lm)
		if !sure {
			ok = false
			return false
		}
		if keep {
			if h, found := locateAt(s, d.id, secret, false, ms, sp.end); found {
				out = append(out, h)
			}
		}
		return true
	})
	return out, ok
}

// span is what gitleaks' location and locate make of a match: the end locate gives back
// and the line detectRule reads for the allowlists.
type span struct{ end, lineStart, lineEnd int }

// gitleaksSpan is gitleaksLocation followed by locate for the match [start, end) of s,
// read from the newlines around the match instead of an index of all of them. Its
// quirks are gitleaks': a match that runs from a line with a newline after it past
// the last newline of s is located as ending where it starts, and a match on a last
// line without a newline reads as its line everything from the start of s.
func gitleaksSpan(s string, start, end int) span {
	prev := strings.LastIndexByte(s[:start+1], '\n')
	next := strings.IndexByte(s[start+1:], '\n')
	var sp span
	switch {
	case next >= 0: // the start line ends with a newline
		sp.lineStart, sp.lineEnd = max(prev, 0), start+1+next
		if j := strings.IndexByte(s[end:], '\n'); j >= 0 {
			sp.end, sp.lineEnd = end, end+j
		} else {
			sp.end = start // gitleaks leaves the end column at zero
		}
	case strings.IndexByte(s, '\n') < 0: // no newline at all: one line, the whole of s
		sp.end, sp.lineStart, sp.lineEnd = end, 0, len(s)
	default: // the last line, without a newline
		i := 0
		for end+i < len(s) && s[end+i] != '\n' && s[end+i] != '\r' {
			i++
		}
		sp.end, sp.lineStart, sp.lineEnd = end, 0, end+i
	}
	sp.lineEnd = max(sp.lineEnd, end)
	return sp
}

// asciiMatchable reports whether the matchers here match s as RE2 does: s is valid
// UTF-8 (RE2 and the matchers may count invalid bytes differently) without a rune that
// case-folds to an ASCII letter (the matchers match letters as ASCII).
func asciiMatchable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, fb := range foldBytes {
		if strings.Contains(s, fb) {
			return false
		}
	}
	return true
}

// finding applies detectRule's checks to a match (trimmed of newlines) whose line is
// line (the allowlists' "line" target): the secret group, entropy and allowlists, and
// returns the secret. keep is false when gitleaks would drop the finding; sure is false
// when that cannot be decided here (see hits).
func (d *directRule) finding(match, line string, lm *lineMemo) (secret string, keep, sure bool) {
	secret = match
	if g := d.submatch(match); len(g) >= 2 {
		if d.secretGroup > 0 {
			if len(g) <= d.secretGroup {
				return "", false, true
			}
			secret = g[d.secretGroup]
		} else {
			for _, x := range g[1:] {
				if x != "" {
					secret = x
					break
				}
			}
		}
	}
	if d.entropy != 0 {
		e := shannon(secret)
		if math.Abs(e-d.entropy) <= entropyMargin && !exactEntropy(secret) {
			return "", false, false
		}
		if e <= d.entropy {
			return "", false, true
		}
	}
	// Any allowlist that allows the finding drops it. Stop words are cheap and regexes
	// are calls into gitleaks' engine: stop words first.
	for _, a := range d.allowlists {
		if a.MatchCondition != config.AllowlistMatchAnd {
			if stop, _ := a.ContainsStopWord(secret); stop {
				return "", false, true
			}
		}
	}
	for _, a := range d.allowlists {
		if d.allowedFinding(a, secret, match, line, lm) {
			return "", false, true
		}
	}
	return secret, true, true
}

// decodedHits returns the hits of gitleaks' decoding pass (depth 1) for the rule on the
// plain fragment raw, whose decoded text is dec with the segments segs: the matches in
// dec that overlap a decoded segment, located in raw as gitleaks locates them. ok is
// false when they cannot be decided here (see hits; also a decoded text holding a rune
// that case-folds to an ASCII letter, which the matchers treat as ASCII).
func (d *directRule) decodedHits(raw, dec string, segs []*codec.EncodedSegment) (out []hit, ok bool) {
	if !asciiMatchable(dec) {
		return nil, false
	}
	// The rule runs in the decoding pass when one of its keywords is in the decoded
	// text, lower-cased.
	low := strings.ToLower(dec)
	if !containsAny(low, d.keywords) {
		return nil, true
	}
	var lm lineMemo
	ok = true
	d.findAll(dec, func(ms, me int) bool {
		match := strings.Trim(dec[ms:me], "\n")
		over := codec.SegmentsWithDecodedOverlap(segs, ms, me)
		if len(over) == 0 {
			return true
		}
		// The match's place in raw; gitleaks reads the line there only when the
		// decoded one is empty.
		mi := codec.AdjustMatchIndex(over, []int{ms, me})
		sp := gitleaksSpan(raw, mi[0], mi[1])
		line := codec.CurrentLine(over, dec)
		if line == "" {
			line = raw[sp.lineStart:sp.lineEnd]
		}
		secret, keep, sure := d.finding(match, line, &lm)
		if !sure {
			ok = false
			return false
		}
		if keep {
			if h, found := locateAt(raw, d.id, secret, true, mi[0], sp.end); found {
				out = append(out, h)
			}
		}
		return true
	})
	return out, ok
}

// exactEntropy reports whether the Shannon entropy of s is computed without rounding
// in any order of its terms: its length and the count of each of its runes are powers
// of two, so every term and every partial sum is a small dyadic number.
func exactEntropy(s string) bool {
	pow2 := func(n int) bool { return n > 0 && n&(n-1) == 0 }
	if !pow2(len(s)) {
		return false
	}
	counts := map[rune]int{}
	for _, r := range s {
		counts[r]++
	}
	for _, c := range counts {
		if !pow2(c) {
			return false
		}
	}
	return true
}

// allowedFinding is gitleaks' checkFindingAllowed for one allowlist, a finding without a
// commit or path (path conditions were removed from the config) and its line.
func (d *directRule) allowedFinding(a *config.Allowlist, secret, match, line string, lm *lineMemo) bool {
	target := secret
	switch a.RegexTarget {
	case "match":
		target = match
	case "line":
		target = line
	}
	stop, _ := a.ContainsStopWord(secret)
	if a.MatchCondition == config.AllowlistMatchAnd {
		if len(a.Commits) > 0 || len(a.Paths) > 0 || len(a.StopWords) > 0 && !stop {
			return false
		}
		return len(a.Regexes) == 0 || d.regexAllowed(a, target, lm)
	}
	return stop || d.regexAllowed(a, target, lm)
}

// maxAllowMemo bounds the remembered answers of an allowlist's regexes (targets of at
// most 256 bytes: 4 MB of text at most); the memo starts over when it is full.
const maxAllowMemo = 1 << 14

type allowKey struct {
	a      *config.Allowlist
	target string
}

// lineMemo remembers, within one evaluation of a text, the answers of allowlists whose
// target is the line: matches on one line share it, and a line can be a whole chunk.
type lineMemo struct {
	line string
	ans  map[*config.Allowlist]bool
}

// regexAllowed is a.RegexAllowed(target), remembered: placeholders and variable
// references (${TOKEN}, {self.api_key}, <your-token>) recur, and each answer is a
// call into gitleaks' regex engine. A "line" target is remembered in lm, for the text
// being evaluated.
func (d *directRule) regexAllowed(a *config.Allowlist, target string, lm *lineMemo) bool {
	if len(a.Regexes) == 0 {
		return false
	}
	if a.RegexTarget == "line" {
		if lm.ans == nil || lm.line != target {
			lm.line, lm.ans = target, map[*config.Allowlist]bool{}
		}
		v, ok := lm.ans[a]
		if !ok {
			v = a.RegexAllowed(target)
			lm.ans[a] = v
		}
		return v
	}
	k := allowKey{a, target}
	d.memoMu.Lock()
	v, ok := d.memo[k]
	d.memoMu.Unlock()
	if ok {
		return v
	}
	v = a.RegexAllowed(target)
	if len(target) <= 256 {
		d.memoMu.Lock()
		if d.memo == nil || len(d.memo) >= maxAllowMemo {
			d.memo = make(map[allowKey]bool)
		}
		d.memo[allowKey{a, strings.Clone(target)}] = v
		d.memoMu.Unlock()
	}
	return v
}

// newDirectAuth evaluates the Authorization rule with a hand-written matcher (authAll).
func newDirectAuth(r config.Rule, global []*config.Allowlist) *directRule {
	return &directRule{
		id:      r.RuleID,
		findAll: authAll,
		submatch: func(s string) []string {
			var g []string
			authAll(s, func(ms, me int) bool {
				g = []string{s[ms:me], s[authGroup(s, ms, me):me]}
				return false
			})
			return g
		},
		secretGroup: r.SecretGroup,
		entropy:     r.Entropy,
		allowlists:  append(append([]*config.Allowlist{}, global...), r.Allowlists...),
		keywords:    lowerAll(r.Keywords),
	}
}

// authAll calls f with every match [ms, me) of the Authorization rule's regex
// (hotRegexes[hotAuth]) in s, as FindAll finds them, until f returns false:
//
//	(?i)\bauthorization["']?\s*[:=,]\s*["']?(?:bearer|basic|token|apikey|api-key)[ \t]+([^\s"'\x60\\,;)]{3,400})
//
// Each part after the word can match in one way only (greedy runs that the next part
// cannot start), so a match is decided at each occurrence of the word. s must be valid
// UTF-8 without a rune that case-folds to an ASCII letter (the group counts runes).
func authAll(s string, f func(ms, me int) bool) {
	const word = "authorization"
	for k := 0; k+len(word) <= len(s); k++ {
		if s[k]|0x20 != 'a' || !hasPrefixLower(s[k:], word) || k > 0 && isWord(s[k-1]) {
			continue
		}
		me, ok := authAt(s, k+len(word))
		if !ok {
			continue
		}
		if !f(k, me) {
			return
		}
		k = me - 1
	}
}

// authAt matches the rule's regex after the word, from p, and returns the match's end.
func authAt(s string, p int) (int, bool) {
	n := len(s)
	quote := func() {
		if p < n && (s[p] == '"' || s[p] == '\'') {
			p++
		}
	}
	spaces := func() {
		for p < n && isSpace(s[p]) {
			p++
		}
	}
	quote()
	spaces()
	if p >= n || s[p] != ':' && s[p] != '=' && s[p] != ',' {
		return 0, false
	}
	p++
	spaces()
	quote()
	found := false
	for _, w := range [...]string{"bearer", "basic", "token", "apikey", "api-key"} {
		if hasPrefixLower(s[p:], w) {
			p += len(w)
			found = true
			break
		}
	}
	if !found {
		return 0, false
	}
	t := p
	for p < n && (s[p] == ' ' || s[p] == '\t') {
		p++
	}
	if p == t {
		return 0, false
	}
	runes := 0
	for p < n && runes < 400 {
		c := s[p]
		if c < utf8.RuneSelf {
			if isSpace(c) || strings.IndexByte("\"'`\\,;)", c) >= 0 {
				break
			}
			p++
		} else {
			_, size := utf8.DecodeRuneInString(s[p:])
			p += size
		}
		runes++
	}
	if runes < 3 {
		return 0, false
	}
	return p, true
}

// authGroup returns the start of the capture group of the match [ms, me): the run
// after the last space or tab before me.
func authGroup(s string, ms, me int) int {
	g := me
	for g > ms && s[g-1] != ' ' && s[g-1] != '\t' {
		g--
	}
	return g
}
