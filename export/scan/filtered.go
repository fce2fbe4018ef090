package scan

import (
	"context"
	"fmt"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"sync"

	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/detect/codec"
)

// sepNewlines is the number of newlines on each side of the NUL byte that separates two
// windows in a fragment: more than any cold or hot rule's match can contain, so no match
// joins two windows.
const sepNewlines = 16

// groups are the detectors of the line prefilter: each runs some rules without decoding.
type groups struct {
	pf    *prefilter
	cold  *detect.Detector
	hot   [numHot]*detect.Detector
	whole *detect.Detector
	// decWin (cold and hot rules) and decWhole (whole rules) decode, for chunks with
	// decodable text (scanDecoded). decWinRest is decWin without the rules evaluated in
	// Go (nil when their decoding pass is not evaluated in Go: a depth other than 1).
	decWin, decWhole, decWinRest *detect.Detector
	// pem runs private-key on its windows (pemWindows; nil: it is a whole rule).
	pem  *detect.Detector
	memo windowMemo
	// direct are the hot rules evaluated in Go (direct.go; nil: their windows go to
	// gitleaks).
	direct [numHot]*directRule
}

// maxMemoBytes bounds the text of the remembered windows (maxMemoWindow each at most);
// the memo starts over when it is full.
const (
	maxMemoBytes  = 16 << 20
	maxMemoWindow = 4 << 10
)

// windowMemo remembers the hits of hot-rule windows by their text: the hits of a window
// depend only on its text, on whether it starts or ends its chunk, and on the rule
// (hot rules have no path conditions). Code repeats lines (imports, boilerplate) and
// the hot rules' per-match work in gitleaks dominates the scan, so repeated windows are
// scanned once.
type windowMemo struct {
	mu    sync.Mutex
	m     map[memoKey][]hit // hits with offsets relative to the window
	bytes int               // text of the keys
}

type memoKey struct {
	group       int
	first, last bool
	text        string
}

// buildGroups classifies the rules of cfg (see the package doc, "Speed") and builds one
// detector per group.
func buildGroups(cfg config.Config, decodeDepth int) (*groups, error) {
	ids := append([]string(nil), cfg.OrderedRules...)
	if len(ids) != len(cfg.Rules) {
		ids = ids[:0]
		for id := range cfg.Rules {
			ids = append(ids, id)
		}
		sort.Strings(ids)
	}
	// Rules with required (multi-part) rules look them up in their detector's config:
	// they and their parts run on the whole chunk together.
	forceWhole := map[string]bool{}
	for _, id := range ids {
		r := cfg.Rules[id]
		if len(r.RequiredRules) > 0 {
			forceWhole[id] = true
			for _, q := range r.RequiredRules {
				forceWhole[q.RuleID] = true
			}
		}
	}
	pf := &prefilter{pair: make([]uint16, 1<<16)}
	kwIndex := map[string]int{}
	addKw := func(k string) *kwInfo {
		i, ok := kwIndex[k]
		if !ok {
			i = len(pf.kws)
			kwIndex[k] = i
			pf.kws = append(pf.kws, kwInfo{text: k})
		}
		return &pf.kws[i]
	}
	sub := func() config.Config {
		return config.Config{Rules: map[string]config.Rule{}, Keywords: map[string]struct{}{}, Allowlists: cfg.Allowlists}
	}
	// wholeCfg holds every whole rule (their decoding pass, decWhole); plainCfg those
	// that run on the whole chunk without decoding (all but private-key, which runs
	// on its own windows when its regex is the one pemWindows reads).
	coldCfg, wholeCfg, plainCfg, winCfg := sub(), sub(), sub(), sub()
	var pemCfg config.Config
	var hotCfg [numHot]config.Config
	add := func(c *config.Config, r config.Rule) {
		c.Rules[r.RuleID] = r
		c.OrderedRules = append(c.OrderedRules, r.RuleID)
		for _, k := range r.Keywords {
			c.Keywords[strings.ToLower(k)] = struct{}{}
		}
	}
	for _, id := range ids {
		r := cfg.Rules[id]
		kws := make([]string, 0, len(r.Keywords))
		usable := true
		for _, k := range r.Keywords {
			k = strings.ToLower(k)
			if len(k) < 2 || !isASCII(k) {
				usable = false
			}
			kws = append(kws, k)
		}
		plain := usable && r.Regex != nil && len(kws) > 0 && r.Path == nil && !r.SkipReport && !forceWhole[id]
		hot := -1
		for h := range numHot {
			if id == hotRuleIDs[h] && plain && r.Regex.String() == hotRegexes[h] {
				hot = h
			}
		}
		line := -1
		for i, lr := range lineRules {
			if id == lr.id && plain && r.Regex.String() == lr.regex {
				line = i
			}
		}
		var a anchor
		if plain && hot < 0 && line < 0 {
			re, err := syntax.Parse(r.Regex.String(), syntax.Perl)
			if err == nil {
				a = keywordAnchor(re, kws)
			}
		}
		switch {
		case hot >= 0:
			if hotCfg[hot].Rules == nil {
				hotCfg[hot] = sub()
			}
			add(&hotCfg[hot], r)
			add(&winCfg, r)
			pf.hotOn[hot] = true
			for _, k := range kws {
				addKw(k).hot[hot] = true
			}
		case line >= 0:
			add(&coldCfg, r)
			add(&winCfg, r)
			li := len(pf.lineRules)
			pf.lineRules = append(pf.lineRules, lineRules[line])
			for _, k := range kws {
				kw := addKw(k)
				kw.lines = append(kw.lines, li)
			}
		case a.ok && a.before < sepNewlines-2 && a.after < sepNewlines-2:
			add(&coldCfg, r)
			add(&winCfg, r)
			op := semiGeneric(r.Regex.String(), kws)
			for _, k := range kws {
				kw := addKw(k)
				kw.cold = true
				kw.coldBefore, kw.coldAfter = max(kw.coldBefore, a.before+1), max(kw.coldAfter, a.after+1)
				kw.coldAny = kw.coldAny || !op
			}
		default:
			add(&wholeCfg, r)
			w := wholeRule{id: id, always: len(kws) == 0, regex: r.Regex != nil, kws: kws}
			if id == pemRuleID && plain && r.Regex.String() == pemRegex {
				w.windowed = true
				pemCfg = sub()
				add(&pemCfg, r)
			} else {
				add(&plainCfg, r)
			}
			if r.Path != nil {
				// Go's engine (RE2 syntax and semantics): on a short path it answers
				// far faster than a call into gitleaks' engine.
				re, err := regexp.Compile(r.Path.String())
				if err != nil {
					return nil, fmt.Errorf("rule %s: path: %w", id, err)
				}
				w.pathOnly = re.MatchString
			}
			wi := len(pf.whole)
			pf.whole = append(pf.whole, w)
			for _, k := range kws {
				kw := addKw(k)
				kw.whole = append(kw.whole, wi)
				kw.pem = kw.pem || w.windowed
			}
		}
	}
	for i, kw := range pf.kws {
		p := int(kw.text[0])<<8 | int(kw.text[1])
		if pf.pair[p] == 0 {
			pf.lists = append(pf.lists, nil)
			pf.pair[p] = uint16(len(pf.lists))
		}
		pf.lists[pf.pair[p]-1] = append(pf.lists[pf.pair[p]-1], i)
	}
	pf.third = make([][4]uint64, len(pf.lists))
	for li, l := range pf.lists {
		for _, ki := range l {
			k := pf.kws[ki].text
			for c := range 256 {
				if len(k) == 2 || lowerASCII(byte(c)) == k[2] {
					pf.third[li][c>>6] |= 1 << (c & 63)
				}
			}
		}
	}
	if len(pf.lists) >= 1<<16-1 {
		return nil, fmt.Errorf("prefilter: too many keyword prefixes")
	}
	// The table is read with the text's bytes as they are: fill in every case variant.
	for a := range 256 {
		for b := range 256 {
			if v := pf.pair[int(lowerASCII(byte(a)))<<8|int(lowerASCII(byte(b)))]; v != 0 {
				pf.pair[a<<8|b] = v
				pf.pairSet[(a<<8|b)>>6] |= 1 << ((a<<8 | b) & 63)
			}
		}
	}
	// The trigram set, with every case variant: a keyword's first three bytes, or its
	// two bytes and any third.
	variants := func(c byte) []byte {
		if 'a' <= c && c <= 'z' {
			return []byte{c, c - 'a' + 'A'}
		}
		return []byte{c}
	}
	for _, kw := range pf.kws {
		k := kw.text
		thirds := []byte{}
		if len(k) >= 3 {
			thirds = variants(k[2])
		} else {
			for c := range 256 {
				thirds = append(thirds, byte(c))
			}
		}
		for _, a := range variants(k[0]) {
			for _, b := range variants(k[1]) {
				for _, c := range thirds {
					h := triHash(a, b, c)
					pf.tri[h>>6] |= 1 << (h & 63)
				}
			}
		}
	}
	pf.sep = strings.Repeat("\n", sepNewlines) + "\x00" + strings.Repeat("\n", sepNewlines)
	g := &groups{pf: pf, cold: newGroupDetector(coldCfg), whole: newGroupDetector(plainCfg),
		decWin: newGroupDetector(winCfg), decWhole: newGroupDetector(wholeCfg)}
	g.decWin.MaxDecodeDepth, g.decWhole.MaxDecodeDepth = decodeDepth, decodeDepth
	if r, ok := hotCfg[hotGeneric].Rules[hotRuleIDs[hotGeneric]]; ok && r.SecretGroup <= 1 && len(r.RequiredRules) == 0 {
		g.direct[hotGeneric] = newDirectGeneric(r, cfg.Allowlists)
	}
	if r, ok := hotCfg[hotAuth].Rules[hotRuleIDs[hotAuth]]; ok && len(r.RequiredRules) == 0 {
		g.direct[hotAuth] = newDirectAuth(r, cfg.Allowlists)
	}
	for h := range numHot {
		if pf.hotOn[h] {
			g.hot[h] = newGroupDetector(hotCfg[h])
		}
	}
	if pemCfg.Rules != nil {
		g.pem = newGroupDetector(pemCfg)
	}
	if decodeDepth == 1 {
		rest := sub()
		for _, id := range winCfg.OrderedRules {
			if !g.isDirect(id) {
				add(&rest, winCfg.Rules[id])
			}
		}
		g.decWinRest = newGroupDetector(rest)
		g.decWinRest.MaxDecodeDepth = 1
	}
	return g, nil
}

func (g *groups) isDirect(id string) bool {
	for _, d := range g.direct {
		if d != nil && d.id == id {
			return true
		}
	}
	return false
}

func newGroupDetector(cfg config.Config) *detect.Detector {
	d := detect.NewDetector(cfg)
	d.IgnoreGitleaksAllow = true
	d.MaxDecodeDepth = 0
	d.Redact = 0
	return d
}

// lineRange is an inclusive range of line indices.
type lineRange struct{ a, b int }

// chunkLines holds the line starts of a chunk.
type chunkLines struct {
	starts []int
	n      int // len(text)
}

func newChunkLines(text string) chunkLines {
	starts := []int{0}
	for i := 0; i < len(text); {
		j := strings.IndexByte(text[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		if i < len(text) {
			starts = append(starts, i)
		}
	}
	return chunkLines{starts, len(text)}
}

func (l chunkLines) lineOf(pos int) int {
	return sort.Search(len(l.starts), func(i int) bool { return l.starts[i] > pos }) - 1
}

func (l chunkLines) end(k int) int {
	if k+1 < len(l.starts) {
		return l.starts[k+1]
	}
	return l.n
}

// plan is what the prefilter decided for one chunk.
type plan struct {
	// folded: the chunk holds a rune in foldBytes and was planned on its ASCII copy.
	folded bool
	// decode: gitleaks' decoder decodes something in the chunk; decodeLines are the
	// lines that can hold an encoded value, for the decoding pass (scanDecoded).
	decode      bool
	decodeLines []int
	// decodeWhole: the whole rules' decoding pass can find something (a whole rule
	// runs on the chunk, or one of their keywords is in the decoded text).
	decodeWhole bool
	cold        []lineRange
	hot         [numHot][]lineRange
	whole       bool
	// pem are the windows of private-key (pemWindows), each scanned alone.
	pem []lineRange
}

// addRange adds the lines a..b (clipped to 0..last) to rs, which stays sorted and
// merged when ranges are added in the order of their keyword lines.
func (pf *prefilter) addRange(rs []lineRange, a, b, last int) []lineRange {
	a, b = max(a, 0), min(b, last)
	for n := len(rs); n > 0 && a <= rs[n-1].b+1; n-- {
		a, b = min(a, rs[n-1].a), max(b, rs[n-1].b)
		rs = rs[:n-1]
	}
	return append(rs, lineRange{a, b})
}

// plan reads the chunk once for keywords and candidate encodings.
func (pf *prefilter) plan(path, text string, lines chunkLines) plan {
	var p plan
	var decoded string
	p.decode, p.decodeLines, decoded = hasDecodable(text, lines)
	for _, fb := range foldBytes {
		if strings.Contains(text, fb) {
			p.folded = true
			text = foldReplacer.Replace(text)
			lines = newChunkLines(text)
			break
		}
	}
	last := len(lines.starts) - 1
	trig := make([]bool, len(pf.whole))
	for i, w := range pf.whole {
		if w.always {
			trig[i] = true
		}
	}
	// lineFirst is, per line rule, the first line with one of its keywords.
	lineFirst := make([]int, len(pf.lineRules))
	for i := range lineFirst {
		lineFirst[i] = -1
	}
	var pemAt []int
	line := 0
	n := len(text)
	for i := 0; i+1 < n; i++ {
		if i+2 < n {
			if h := triHash(text[i], text[i+1], text[i+2]); pf.tri[h>>6]&(1<<(h&63)) == 0 {
				continue
			}
		}
		pi := int(text[i])<<8 | int(text[i+1])
		if pf.pairSet[pi>>6]&(1<<(pi&63)) == 0 {
			continue
		}
		li := pf.pair[pi]
		if i+2 < n {
			if c := text[i+2]; pf.third[li-1][c>>6]&(1<<(c&63)) == 0 {
				continue
			}
		}
		for line+1 < len(lines.starts) && lines.starts[line+1] <= i {
			line++
		}
		for _, ki := range pf.lists[li-1] {
			kw := &pf.kws[ki]
			if !hasPrefixLower(text[i:], kw.text) {
				continue
			}
			if kw.cold && (kw.coldAny || operatorAfter(text, i+len(kw.text))) {
				p.cold = pf.addRange(p.cold, line-kw.coldBefore, line+kw.coldAfter, last)
			}
			for _, wi := range kw.whole {
				trig[wi] = true
			}
			if kw.pem {
				pemAt = append(pemAt, i)
			}
			for _, li := range kw.lines {
				if lineFirst[li] < 0 {
					lineFirst[li] = line
				}
			}

			for h := range numHot {
				if !kw.hot[h] {
					continue
				}
				if endPos, ok := hotCheck(h, text, i, i+len(kw.text)); ok {
					p.hot[h] = pf.addRange(p.hot[h], line-1, lines.lineOf(endPos)+1, last)
				}
			}
		}
	}
	pemOn := false
	for i, w := range pf.whole {
		if trig[i] && (w.pathOnly == nil || w.pathOnly(path)) {
			if w.windowed {
				pemOn = true
			} else {
				p.whole = true
			}
		}
	}
	if pemOn {
		p.pem = pemWindows(text, lines, pemAt)
	}
	var extra []lineRange
	for li, lf := range lineFirst {
		if lf < 0 {
			continue
		}
		add := func(l int) { extra = append(extra, lineRange{max(0, l-1), min(last, l+1)}) }
		add(lf)
		pf.lineRules[li].lines(text, lines, add)
	}
	if len(extra) > 0 {
		p.cold = mergeRanges(append(p.cold, extra...))
	}
	if p.decode && !p.whole {
		// gitleaks' decoding pass looks for the whole rules' keywords in the decoded
		// text (lower-cased as gitleaks does).
		low := strings.ToLower(decoded)
		for _, w := range pf.whole {
			if (w.always && w.regex || containsAny(low, w.kws)) && (w.pathOnly == nil || w.pathOnly(path)) {
				p.decodeWhole = true
			}
		}
	}
	// private-key's decoding pass can only find a match overlapping a decoded value
	// when one lies in a window of the rule (or its keyword is in the decoded text,
	// above): elsewhere the decoded text is the chunk's, and so are the matches.
	p.decodeWhole = p.decodeWhole || p.decode && (p.whole || pemOn && linesInRanges(p.decodeLines, p.pem))
	return p
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

func hasPrefixLower(s, lowerPrefix string) bool {
	if len(s) < len(lowerPrefix) {
		return false
	}
	for j := 0; j < len(lowerPrefix); j++ {
		if lowerASCII(s[j]) != lowerPrefix[j] {
			return false
		}
	}
	return true
}

func isWord(c byte) bool { return byteClass[c]&clsWord != 0 }

func isAlnum(c byte) bool { return isWord(c) && c != '_' }

// isSpace is RE2's \s.
func isSpace(c byte) bool { return byteClass[c]&clsSpace != 0 }

// operatorAfter reports whether an assignment operator of gitleaks' semi-generic
// rules can follow an identifier ending at ke: [ \t\w.-]{0,20} [\s'"]{0,3} then
// one of = > : | ? , (the first bytes of the operator alternatives).
func operatorAfter(text string, ke int) bool {
	n := len(text)
	cnt := 0
	for ke+cnt < n && cnt < 20 {
		c := text[ke+cnt]
		if !(isWord(c) || c == ' ' || c == '\t' || c == '.' || c == '-') {
			break
		}
		cnt++
	}
	for j := 0; j <= cnt; j++ {
		for m, q := 0, ke+j; m <= 3 && q+m < n; m++ {
			switch c := text[q+m]; {
			case c == '=' || c == '>' || c == ':' || c == '|' || c == '?' || c == ',':
				return true
			case isSpace(c) || c == '\'' || c == '"':
				continue
			}
			break
		}
	}
	return false
}

// hotCheck is a necessary condition for a match of hot rule h that uses the keyword
// occurrence text[ks:ke]. It returns a position up to which such a match may reach.
func hotCheck(h int, text string, ks, ke int) (int, bool) {
	n := len(text)
	switch h {
	case hotGeneric:
		// A match's keyword alternative starts at a keyword occurrence and decides the
		// rest of the match (generic.go): the rest must match, and the match ends there.
		k, ok := genericKeyword(text, ks)
		if !ok || !operatorAfter(text, k) {
			return 0, false
		}
		if _, _, me, ok := genericRest(text, k); ok {
			return min(n-1, me), true
		}
		return 0, false
	case hotVault:
		if text[ks] != 's' || text[ks+1] != '.' {
			return 0, false
		}
		if count(text, ke, 24, isAlnum) >= 24 {
			return ks, true
		}
		if ks >= 2 && text[ks-2:ks] == "hv" && count(text, ke, 90, func(c byte) bool { return isWord(c) || c == '-' }) >= 90 {
			return ks, true
		}
		return 0, false
	case hotOctopus:
		if text[ks:ke] != "API-" {
			return 0, false
		}
		up := func(c byte) bool { return 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' }
		return ks, count(text, ke, 26, up) >= 26
	case hotAuth:
		p := ke
		for p < n && (isSpace(text[p]) || strings.IndexByte(`"':=,`, text[p]) >= 0) {
			p++
		}
		for _, s := range []string{"bearer", "basic", "token", "apikey", "api-key"} {
			if hasPrefixLower(text[p:], s) {
				return p, true
			}
		}
		return 0, false
	case hotTwilio:
		// "SK" (case-sensitive) and 32 hex digits.
		return ks, text[ks:ke] == "SK" && count(text, ke, 32, isHex) == 32
	case hotAuthress:
		// The prefix (case-sensitive, one of the keywords), [a-z0-9]{5,30} "."
		// [a-z0-9]{4,6} ".acc" and '_' or '-'; the letters are case-insensitive.
		if text[ks:ke] != strings.ToLower(text[ks:ke]) {
			return 0, false
		}
		a := count(text, ke, 31, isAlnum)
		if a < 5 || a > 30 || ke+a >= n || text[ke+a] != '.' {
			return 0, false
		}
		q := ke + a + 1
		b := count(text, q, 7, isAlnum)
		q += b
		if b < 4 || b > 6 || !strings.HasPrefix(text[q:], ".acc") || q+4 >= n || text[q+4] != '_' && text[q+4] != '-' {
			return 0, false
		}
		return ks, true
	case hotDatabricks:
		// "dapi" (case-sensitive) and 32 lower-case hex digits.
		lowHex := func(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }
		return ks, text[ks:ke] == "dapi" && count(text, ke, 32, lowHex) == 32
	}
	return 0, false
}

// countClass returns how many of the (at most max) bytes from text[i:] are in class
// cls in a row.
func countClass(text string, i, max int, cls uint8) int {
	if i >= len(text) {
		return 0
	}
	s := text[i:]
	if max < len(s) {
		s = s[:max]
	}
	for j := 0; j < len(s); j++ {
		if byteClass[s[j]]&cls == 0 {
			return j
		}
	}
	return len(s)
}

// count returns how many of the (at most max) bytes from text[i:] satisfy ok in a row.
func count(text string, i, max int, ok func(byte) bool) int {
	c := 0
	for i+c < len(text) && c < max && ok(text[i+c]) {
		c++
	}
	return c
}

// hasDecodable reports whether gitleaks' decoder would decode anything in text. It
// decodes the lines that could hold an encoded value (decodeCandidate), joined as in
// the text when adjacent and across a NUL byte otherwise, and returns them with their
// decoded text: a keyword that is in the text only once it is decoded is in there.
func hasDecodable(text string, lines chunkLines) (bool, []int, string) {
	var b strings.Builder
	var cand []int
	prev := -2
	// "U+" is rare: looked for once in the whole text.
	unicodePlus := strings.Contains(text, "U+")
	for k := range lines.starts {
		s, e := lines.starts[k], lines.end(k)
		if !decodeCandidateU(text[s:e], unicodePlus) {
			continue
		}
		if prev >= 0 && prev != k-1 {
			b.WriteString("\n\x00\n")
		}
		b.WriteString(text[s:e])
		prev = k
		cand = append(cand, k)
	}
	if b.Len() == 0 {
		return false, nil, ""
	}
	decoded, segs := codec.NewDecoder().Decode(b.String(), nil)
	if len(segs) == 0 {
		return false, nil, ""
	}
	return true, cand, decoded
}

// piece maps a window of a fragment back to the chunk.
type piece struct{ frag, chunk, n int }

// fragment joins the line ranges of text into one string, windows separated by sep.
func fragment(text string, lines chunkLines, rs []lineRange, sep string) (string, []piece) {
	var b strings.Builder
	var ps []piece
	for _, r := range rs {
		s, e := lines.starts[r.a], lines.end(r.b)
		if s > 0 || b.Len() > 0 {
			b.WriteString(sep)
		}
		ps = append(ps, piece{b.Len(), s, e - s})
		b.WriteString(text[s:e])
	}
	return b.String(), ps
}

// fastDetector is the line prefilter over gitleaks (see the package documentation,
// "Speed"): the detector a Scanner uses.
type fastDetector struct{ groups *groups }

// detect scans a chunk group by group.
func (s *fastDetector) detect(ctx context.Context, path, chunk string) []hit {
	lines := newChunkLines(chunk)
	p := s.groups.pf.plan(path, chunk, lines)
	var out []hit
	run := func(d *detect.Detector, rs []lineRange) {
		if len(rs) == 0 {
			return
		}
		frag, ps := fragment(chunk, lines, rs, s.groups.pf.sep)
		for _, h := range scanWith(ctx, d, path, frag) {
			i := sort.Search(len(ps), func(i int) bool { return ps[i].frag > h.start }) - 1
			if i < 0 || h.end > ps[i].frag+ps[i].n {
				continue
			}
			d := ps[i].chunk - ps[i].frag
			lo, hi := ps[i].chunk, ps[i].chunk+ps[i].n
			h.start, h.end = h.start+d, h.end+d
			h.matchStart, h.matchEnd = clamp(h.matchStart+d, lo, hi), clamp(h.matchEnd+d, lo, hi)
			out = append(out, h)
		}
	}
	run(s.groups.cold, p.cold)
	for h := range numHot {
		rs := p.hot[h]
		if d := s.groups.direct[h]; d != nil {
			var hs []hit
			hs, rs = s.runDirect(d, chunk, lines, rs)
			out = append(out, hs...)
		}
		out = append(out, s.runMemo(ctx, h, path, chunk, lines, rs)...)
	}
	switch {
	case p.decode:
		out = append(out, s.scanDecoded(ctx, path, chunk, lines, p)...)
	case p.whole:
		out = append(out, scanWith(ctx, s.groups.whole, path, chunk)...)
	}
	if !p.decodeWhole {
		// (decWhole, when it runs, has private-key among its rules.)
		for _, r := range p.pem {
			st := lines.starts[r.a]
			for _, h := range scanWith(ctx, s.groups.pem, path, chunk[st:lines.end(r.b)]) {
				h.start, h.end, h.matchStart, h.matchEnd = h.start+st, h.end+st, h.matchStart+st, h.matchEnd+st
				out = append(out, h)
			}
		}
	}
	return filterGeneric(chunk, out)
}

// runDirect evaluates rule d on each window of rs in Go, as gitleaks would scan it:
// with the separator before it (unless it starts the chunk) and after it (unless it
// ends the chunk), as in runMemo. It returns the hits and the windows left to gitleaks.
func (s *fastDetector) runDirect(d *directRule, chunk string, lines chunkLines, rs []lineRange) ([]hit, []lineRange) {
	sep := s.groups.pf.sep
	last := len(lines.starts) - 1
	var out []hit
	var rest []lineRange
	// The separator is ASCII: every window of a matchable chunk is matchable.
	matchable := len(rs) > 0 && asciiMatchable(chunk)
	for _, r := range rs {
		st, en := lines.starts[r.a], lines.end(r.b)
		pre, post := "", ""
		if r.a > 0 {
			pre = sep
		}
		if r.b < last {
			post = sep
		}
		lo, hi := len(pre), len(pre)+en-st
		hs, ok := d.hits(pre+chunk[st:en]+post, matchable)
		if !ok {
			rest = append(rest, r)
			continue
		}
		for _, x := range hs {
			if x.start < lo || x.end > hi {
				continue
			}
			x.matchStart, x.matchEnd = clamp(x.matchStart, lo, hi), clamp(x.matchEnd, lo, hi)
			x.start, x.end, x.matchStart, x.matchEnd = x.start-lo+st, x.end-lo+st, x.matchStart-lo+st, x.matchEnd-lo+st
			out = append(out, x)
		}
	}
	return out, rest
}

// runMemo scans the windows rs of a chunk with hot group h, taking the hits of windows
// seen before from the memo and scanning the others together in one fragment.
func (s *fastDetector) runMemo(ctx context.Context, h int, path, chunk string, lines chunkLines, rs []lineRange) []hit {
	if len(rs) == 0 {
		return nil
	}
	g := s.groups
	last := len(lines.starts) - 1
	key := func(r lineRange) memoKey {
		return memoKey{h, r.a == 0, r.b == last, chunk[lines.starts[r.a]:lines.end(r.b)]}
	}
	var out []hit
	var todo []lineRange
	g.memo.mu.Lock()
	for _, r := range rs {
		k := key(r)
		if hs, ok := g.memo.m[k]; ok && len(k.text) <= maxMemoWindow {
			base := lines.starts[r.a]
			for _, x := range hs {
				x.start, x.end, x.matchStart, x.matchEnd = x.start+base, x.end+base, x.matchStart+base, x.matchEnd+base
				out = append(out, x)
			}
			continue
		}
		todo = append(todo, r)
	}
	g.memo.mu.Unlock()
	if len(todo) == 0 {
		return out
	}
	// Each window gets separators on both sides (none at the chunk's ends), so its hits
	// are the same wherever it is scanned.
	var b strings.Builder
	var ps []piece
	for _, r := range todo {
		st, en := lines.starts[r.a], lines.end(r.b)
		if r.a > 0 || b.Len() > 0 {
			b.WriteString(g.pf.sep)
		}
		ps = append(ps, piece{b.Len(), st, en - st})
		b.WriteString(chunk[st:en])
		if r.b < last {
			b.WriteString(g.pf.sep)
		}
	}
	frag := b.String()
	per := make([][]hit, len(todo))
	for _, x := range scanWith(ctx, g.hot[h], path, frag) {
		i := sort.Search(len(ps), func(i int) bool { return ps[i].frag > x.start }) - 1
		if i < 0 || x.end > ps[i].frag+ps[i].n {
			continue
		}
		lo, hi := ps[i].frag, ps[i].frag+ps[i].n
		x.start, x.end = x.start-lo, x.end-lo
		x.matchStart, x.matchEnd = clamp(x.matchStart, lo, hi)-lo, clamp(x.matchEnd, lo, hi)-lo
		per[i] = append(per[i], x)
	}
	if ctx.Err() != nil {
		return out
	}
	g.memo.mu.Lock()
	for i, r := range todo {
		k := key(r)
		if len(k.text) <= maxMemoWindow {
			if g.memo.m == nil || g.memo.bytes+len(k.text) > maxMemoBytes {
				g.memo.m, g.memo.bytes = make(map[memoKey][]hit), 0
			}
			k.text = strings.Clone(k.text)
			g.memo.m[k] = append([]hit{}, per[i]...)
			g.memo.bytes += len(k.text)
		}
		base := ps[i].chunk
		for _, x := range per[i] {
			x.start, x.end, x.matchStart, x.matchEnd = x.start+base, x.end+base, x.matchStart+base, x.matchEnd+base
			out = append(out, x)
		}
	}
	g.memo.mu.Unlock()
	return out
}

// filterGeneric drops a generic rule's hit when a specific rule's secret on the same line
// contains its secret, as gitleaks does within one fragment (a line counted as gitleaks'
// StartLine: from the byte after the match's start). The specific secrets of each line
// are joined once, so a line full of hits costs one search per generic hit.
func filterGeneric(chunk string, hs []hit) []hit {
	if len(hs) < 2 {
		return hs
	}
	generic := make([]bool, len(hs))
	anyGeneric, anyOther := false, false
	for i, h := range hs {
		generic[i] = strings.Contains(strings.ToLower(h.rule), "generic")
		anyGeneric, anyOther = anyGeneric || generic[i], anyOther || !generic[i]
	}
	if !anyGeneric || !anyOther {
		return hs
	}
	// The line of each hit, counted once over the chunk in the order of positions.
	order := make([]int, len(hs))
	for i := range order {
		order[i] = i
	}
	at := func(i int) int { return min(len(chunk), hs[i].matchStart+1) }
	sort.Slice(order, func(a, b int) bool { return at(order[a]) < at(order[b]) })
	line := make([]int, len(hs))
	n, pos := 0, 0
	for _, i := range order {
		n += strings.Count(chunk[pos:at(i)], "\n")
		pos = at(i)
		line[i] = n
	}
	specific := map[int][]string{}
	for i, h := range hs {
		if !generic[i] {
			specific[line[i]] = append(specific[line[i]], h.secret)
		}
	}
	joined := map[int]string{}
	for l, ss := range specific {
		joined[l] = "\x00" + strings.Join(ss, "\x00") + "\x00"
	}
	out := hs[:0:0]
	for i, h := range hs {
		if generic[i] {
			if j, ok := joined[line[i]]; ok {
				if strings.IndexByte(h.secret, 0) < 0 {
					if strings.Contains(j, h.secret) {
						continue
					}
				} else if containedIn(h.secret, specific[line[i]]) {
					continue
				}
			}
		}
		out = append(out, h)
	}
	return out
}

func containedIn(s string, in []string) bool {
	for _, x := range in {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}

// scanDecoded returns the hits of gitleaks' decoding pass on a chunk with decodable
// text, and those of the whole rules' plain pass. The whole rules run, with decoding,
// on the whole chunk, unless none of them runs on the chunk and none of their keywords
// is in the decoded text (then neither pass can find anything). The cold and hot rules run, with decoding, on the lines that can
// hold an encoded value and sepNewlines lines around them, joined into one fragment
// (windows separated, and followed when they do not end the chunk, by the separator):
// a match of those rules overlapping a decoded value holds one of the rules' keywords
// and fewer newlines than that on each side. Of their hits only those of the decoding
// pass (tagged "decoded:") are kept, mapped back to the chunk; their plain pass is the
// prefiltered scan of the chunk itself.
func (s *fastDetector) scanDecoded(ctx context.Context, path, chunk string, lines chunkLines, p plan) []hit {
	var out []hit
	if p.decodeWhole {
		out = scanWith(ctx, s.groups.decWhole, path, chunk)
	}
	last := len(lines.starts) - 1
	var rs []lineRange
	for _, k := range p.decodeLines {
		rs = s.groups.pf.addRange(rs, k-sepNewlines, k+sepNewlines, last)
	}
	if len(rs) == 0 {
		return out
	}
	frag, ps := fragment(chunk, lines, rs, s.groups.pf.sep)
	if lines.end(rs[len(rs)-1].b) < len(chunk) {
		frag += s.groups.pf.sep
	}
	// toChunk maps a hit of the fragment back to the chunk.
	toChunk := func(h hit) {
		i := sort.Search(len(ps), func(i int) bool { return ps[i].frag > h.start }) - 1
		if i < 0 {
			return
		}
		d := ps[i].chunk - ps[i].frag
		h.start, h.end = clamp(h.start+d, 0, len(chunk)), clamp(h.end+d, 0, len(chunk))
		h.matchStart, h.matchEnd = clamp(h.matchStart+d, 0, len(chunk)), clamp(h.matchEnd+d, 0, len(chunk))
		out = append(out, h)
	}
	det := s.groups.decWin
	var direct []hit
	if s.groups.decWinRest != nil {
		// The rules evaluated in Go take their decoding pass here (direct.go); the others
		// go to gitleaks. When one of theirs cannot be decided here, gitleaks runs all.
		det = s.groups.decWinRest
		dec, segs := codec.NewDecoder().Decode(frag, nil)
		for _, d := range s.groups.direct {
			if d == nil {
				continue
			}
			hs, ok := d.decodedHits(frag, dec, segs)
			if !ok {
				det, direct = s.groups.decWin, nil
				break
			}
			direct = append(direct, hs...)
		}
	}
	var nl []int
	for _, f := range det.DetectContext(ctx, detect.Fragment{Raw: frag, FilePath: path}) {
		if !decodedTag(f.Tags) {
			continue
		}
		if nl == nil {
			nl = newlineIndex(frag)
		}
		if h, ok := locate(frag, nl, f); ok {
			toChunk(h)
		}
	}
	for _, h := range direct {
		toChunk(h)
	}
	return out
}

func decodedTag(tags []string) bool {
	for _, t := range tags {
		if strings.HasPrefix(t, "decoded:") {
			return true
		}
	}
	return false
}
