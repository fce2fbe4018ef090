package scan

import (
	"math"
	"strings"
)

// The generic-api-key matcher (see the package doc, "Speed"): the rule's regex
// (hotRegexes[hotGeneric]) evaluated in Go with RE2's leftmost-first semantics, for
// the rule's evaluation in Go (direct.go).
//
// The regex, piece by piece (all case-insensitive except the api alternative):
//
//	P [\w.-]{0,50}?          lazy
//	K access|auth|(?-i:[Aa]pi|API)|credential|creds|key|passw(?:or)?d|secret|token
//	G [ \t\w.-]{0,20}        greedy
//	Q [\s'"]{0,3}            greedy
//	O =|>|:{1,3}=|\|\||:|=>|\?=|,
//	R [\x60'"\s=]{0,5}       greedy
//	S ([\w.=-]{10,150}|[a-z0-9][a-z0-9+/]{11,}={0,3})
//	T [\x60'"\s;]|\\[nr]|$
//
// Bytes are matched as ASCII: a chunk holding a rune that case-folds to an ASCII letter
// (ſ, K) takes the exhaustive path, and no other non-ASCII rune is in any class here.

// genericMatch is one match of the regex: [ms, me) and the capture group [gs, ge).
type genericMatch struct{ ms, me, gs, ge int }

func isPClass(c byte) bool { return isWord(c) || c == '.' || c == '-' }
func isGClass(c byte) bool { return isPClass(c) || c == ' ' || c == '\t' }
func isQClass(c byte) bool { return isSpace(c) || c == '\'' || c == '"' }
func isRClass(c byte) bool { return isQClass(c) || c == '`' || c == '=' }
func isS1Class(c byte) bool {
	return isPClass(c) || c == '='
}
func isS2First(c byte) bool { return isAlnum(c) }
func isS2Class(c byte) bool { return isAlnum(c) || c == '+' || c == '/' }

// genericKeyword returns the end of the keyword alternative K matching at s[k:].
func genericKeyword(s string, k int) (int, bool) {
	if k >= len(s) {
		return 0, false
	}
	switch lowerASCII(s[k]) {
	case 'a':
		if hasPrefixLower(s[k:], "access") {
			return k + 6, true
		}
		if hasPrefixLower(s[k:], "auth") {
			return k + 4, true
		}
		if strings.HasPrefix(s[k:], "api") || strings.HasPrefix(s[k:], "Api") || strings.HasPrefix(s[k:], "API") {
			return k + 3, true
		}
	case 'c':
		if hasPrefixLower(s[k:], "credential") {
			return k + 10, true
		}
		if hasPrefixLower(s[k:], "creds") {
			return k + 5, true
		}
	case 'k':
		if hasPrefixLower(s[k:], "key") {
			return k + 3, true
		}
	case 'p':
		if hasPrefixLower(s[k:], "password") {
			return k + 8, true
		}
		if hasPrefixLower(s[k:], "passwd") {
			return k + 6, true
		}
	case 's':
		if hasPrefixLower(s[k:], "secret") {
			return k + 6, true
		}
	case 't':
		if hasPrefixLower(s[k:], "token") {
			return k + 5, true
		}
	}
	return 0, false
}

// genericTail matches T at s[p:] and returns the end of the match.
func genericTail(s string, p int) (int, bool) {
	if p == len(s) {
		return p, true
	}
	c := s[p]
	if isSpace(c) || c == '`' || c == '\'' || c == '"' || c == ';' {
		return p + 1, true
	}
	if c == '\\' && p+1 < len(s) {
		switch s[p+1] {
		case 'n', 'N', 'r', 'R':
			return p + 2, true
		}
	}
	return 0, false
}

// genericRest matches G Q O R S T after a keyword ending at ke, trying the choices in
// the regex's priority order, and returns the first success.
func genericRest(s string, ke int) (gs, ge, me int, ok bool) {
	n := len(s)
	var s2run [40]int // by p4-ke: the length of S2's run after its first byte
	for i := range s2run {
		s2run[i] = -1
	}
	for b := count(s, ke, 20, isGClass); b >= 0; b-- {
		p1 := ke + b
		for c := count(s, p1, 3, isQClass); c >= 0; c-- {
			p2 := p1 + c
			if p2 >= n {
				continue
			}
			// The operator alternatives, in order: =  >  :{1,3}=  ||  :  =>  ?=  ,
			var ops [8]int
			no := 0
			at := func(i int) byte {
				if i < n {
					return s[i]
				}
				return 0
			}
			switch at(p2) {
			case '=':
				ops[no] = p2 + 1
				no++
				if at(p2+1) == '>' {
					ops[no] = p2 + 2
					no++
				}
			case '>':
				ops[no] = p2 + 1
				no++
			case ':':
				colons := count(s, p2, 3, func(c byte) bool { return c == ':' })
				if at(p2+colons) == '=' {
					ops[no] = p2 + colons + 1
					no++
				}
				ops[no] = p2 + 1
				no++
			case '|':
				if at(p2+1) == '|' {
					ops[no] = p2 + 2
					no++
				}
			case '?':
				if at(p2+1) == '=' {
					ops[no] = p2 + 2
					no++
				}
			case ',':
				ops[no] = p2 + 1
				no++
			}
			for _, p3 := range ops[:no] {
				for d := count(s, p3, 5, isRClass); d >= 0; d-- {
					p4 := p3 + d
					// S's repetitions are greedy and no byte of their classes can
					// start T, so only their longest runs can be followed by T.
					if e := count(s, p4, 150, isS1Class); e >= 10 {
						if end, ok := genericTail(s, p4+e); ok {
							return p4, p4 + e, end, true
						}
					}
					if p4 < n && isS2First(s[p4]) {
						// The run is unbounded: count it once per start (p4-ke is at
						// most 20+3+4+5).
						o := p4 - ke
						if s2run[o] < 0 {
							s2run[o] = count(s, p4+1, n, isS2Class)
						}
						if m := s2run[o]; m >= 11 {
							q := p4 + 1 + m
							z := count(s, q, 3, func(c byte) bool { return c == '=' })
							if end, ok := genericTail(s, q+z); ok {
								return p4, q + z, end, true
							}
						}
					}
				}
			}
		}
	}
	return 0, 0, 0, false
}

// genericNext returns the leftmost-first match of the regex in s starting at or after
// pos (what RE2's FindAll finds next).
func genericNext(s string, pos int) (genericMatch, bool) {
	best, bestK := -1, -1
	var bm genericMatch
	for k := pos; k < len(s); k++ {
		if best >= 0 && k-50 > best {
			break
		}
		if byteClass[s[k]]&clsGenKw == 0 {
			continue
		}
		ke, ok := genericKeyword(s, k)
		if !ok {
			continue
		}
		// The lowest start of a match with this keyword: P's run back from k, at
		// most 50 bytes and not before pos.
		lb := k
		for lb > pos && k-lb < 50 && isPClass(s[lb-1]) {
			lb--
		}
		if best >= 0 && lb >= best {
			// A later keyword only wins with a lower start.
			continue
		}
		if !operatorAfter(s, ke) {
			// Necessary for G Q O (see operatorAfter), and cheaper than genericRest.
			continue
		}
		gs, ge, me, ok := genericRest(s, ke)
		if !ok {
			continue
		}
		best, bestK = lb, k
		bm = genericMatch{ms: lb, me: me, gs: gs, ge: ge}
	}
	if bestK < 0 {
		return genericMatch{}, false
	}
	return bm, true
}

// genericAll returns every match of the regex in s, as FindAll does.
func genericAll(s string, f func(genericMatch) bool) {
	for pos := 0; pos < len(s); {
		m, ok := genericNext(s, pos)
		if !ok {
			return
		}
		if !f(m) {
			return
		}
		pos = m.me
		if m.me == m.ms {
			pos++
		}
	}
}

// entropyMargin absorbs the rounding of gitleaks' entropy, which sums over a map in
// random order: a secret within the margin of the threshold is left to gitleaks.
const entropyMargin = 1e-9

// shannon is gitleaks' shannonEntropy.
func shannon(s string) float64 {
	if s == "" {
		return 0
	}
	var ascii [128]int
	var other map[rune]int
	for _, r := range s {
		if r < 128 {
			ascii[r]++
			continue
		}
		if other == nil {
			other = map[rune]int{}
		}
		other[r]++
	}
	inv := 1.0 / float64(len(s))
	e := 0.0
	add := func(c int) {
		if c > 0 {
			f := float64(c) * inv
			e -= f * math.Log2(f)
		}
	}
	for _, c := range ascii {
		add(c)
	}
	for _, c := range other {
		add(c)
	}
	return e
}
