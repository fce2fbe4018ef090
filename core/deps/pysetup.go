package deps

import (
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/envgap/envgap/schemas"
)

// Reading setup.py statically. The source is tokenised like Python does (strings with
// prefixes and triple quotes, comments, brackets that join lines, backslash
// continuations), every setup(...) call is found, and its install_requires and
// setup_requires arguments are evaluated only when they are literals: strings (a
// multi-line string is one requirement per line), lists and tuples of strings, "+" of
// those, a name bound exactly once to such a literal and never changed, and keys of a
// literal dict passed as **kwargs. Anything else (a call, a comprehension, a variable
// that code appends to, a file read) is built at run time: the layer is then Unreadable,
// with the reason in words. Nothing is ever executed.

type pyTokKind byte

const (
	pyName pyTokKind = iota
	pyString
	pyFString // an f-string: not a literal
	pyNumber
	pyOp
	pyNewline // end of a logical line
)

type pyTok struct {
	kind   pyTokKind
	text   string // source text (for names, ops, numbers) or decoded value (strings)
	line   int
	depth  int  // bracket depth before the token
	indent int  // indentation of the token's logical line
	first  bool // first token of its logical line
}

var pyOps = []string{"**=", "//=", ">>=", "<<=", "...", "->", ":=", "**", "//", "==", "!=", "<=", ">=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=", "<<", ">>"}

// tokenizePython splits Python source into tokens. It never fails: unknown bytes become
// one-byte operators, an unterminated string runs to the end.
func tokenizePython(src string) []pyTok {
	var toks []pyTok
	depth, line, indent := 0, 1, 0
	atLineStart := true
	i := 0
	emit := func(k pyTokKind, text string, ln int) {
		first := len(toks) == 0 || toks[len(toks)-1].kind == pyNewline
		toks = append(toks, pyTok{kind: k, text: text, line: ln, depth: depth, indent: indent, first: first})
	}
	for i < len(src) {
		if atLineStart && depth == 0 {
			// Measure indentation; skip blank and comment-only lines.
			j, col := i, 0
			for j < len(src) && (src[j] == ' ' || src[j] == '\t' || src[j] == '\f') {
				if src[j] == '\t' {
					col = (col/8 + 1) * 8
				} else {
					col++
				}
				j++
			}
			if j < len(src) && (src[j] == '\n' || src[j] == '\r' || src[j] == '#') {
				for j < len(src) && src[j] != '\n' {
					j++
				}
				if j < len(src) {
					j++
					line++
				}
				i = j
				continue
			}
			indent, i, atLineStart = col, j, false
			continue
		}
		ch := src[i]
		switch {
		case ch == '\n':
			line++
			i++
			if depth == 0 {
				if len(toks) > 0 && toks[len(toks)-1].kind != pyNewline {
					emit(pyNewline, "", line-1)
				}
				atLineStart = true
			}
		case ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f':
			i++
		case ch == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case ch == '\\' && i+1 < len(src) && (src[i+1] == '\n' || src[i+1] == '\r'):
			i += 2
			if src[i-1] == '\r' && i < len(src) && src[i] == '\n' {
				i++
			}
			line++
		case isPyNameStart(ch):
			j := i
			for j < len(src) && isPyNameChar(src[j]) {
				j++
			}
			word := src[i:j]
			if j < len(src) && (src[j] == '\'' || src[j] == '"') && isStrPrefix(word) {
				val, end, nl, fstr := readPyString(src, j, strings.ContainsAny(word, "rR"))
				k := pyString
				if fstr || strings.ContainsAny(word, "fF") {
					k = pyFString
				}
				emit(k, val, line)
				line += nl
				i = end
				continue
			}
			emit(pyName, word, line)
			i = j
		case ch == '\'' || ch == '"':
			val, end, nl, _ := readPyString(src, i, false)
			emit(pyString, val, line)
			line += nl
			i = end
		case ch >= '0' && ch <= '9' || ch == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := i
			for j < len(src) && (isPyNameChar(src[j]) || src[j] == '.' ||
				(src[j] == '+' || src[j] == '-') && (src[j-1] == 'e' || src[j-1] == 'E')) {
				j++
			}
			emit(pyNumber, src[i:j], line)
			i = j
		default:
			op := string(ch)
			for _, o := range pyOps {
				if strings.HasPrefix(src[i:], o) {
					op = o
					break
				}
			}
			switch op {
			case "(", "[", "{":
				emit(pyOp, op, line)
				depth++
			case ")", "]", "}":
				if depth > 0 {
					depth--
				}
				emit(pyOp, op, line)
			default:
				emit(pyOp, op, line)
			}
			i += len(op)
		}
	}
	if len(toks) > 0 && toks[len(toks)-1].kind != pyNewline {
		emit(pyNewline, "", line)
	}
	return toks
}

func isPyNameStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
func isPyNameChar(c byte) bool { return isPyNameStart(c) || c >= '0' && c <= '9' }

func isStrPrefix(w string) bool {
	if len(w) > 2 {
		return false
	}
	for _, r := range strings.ToLower(w) {
		if !strings.ContainsRune("rbuf", r) {
			return false
		}
	}
	return true
}

// readPyString reads the string literal starting at the quote src[i]: its decoded value,
// the index after it and the number of newlines it spans.
func readPyString(src string, i int, raw bool) (string, int, int, bool) {
	q := src[i]
	triple := strings.HasPrefix(src[i:], strings.Repeat(string(q), 3))
	j := i + 1
	if triple {
		j = i + 3
	}
	var b strings.Builder
	nl := 0
	for j < len(src) {
		c := src[j]
		if c == '\n' {
			nl++
			if !triple {
				return b.String(), j, nl - 1, false // unterminated: stop at the line end
			}
		}
		if c == q {
			if !triple {
				return b.String(), j + 1, nl, false
			}
			if strings.HasPrefix(src[j:], strings.Repeat(string(q), 3)) {
				return b.String(), j + 3, nl, false
			}
		}
		if c == '\\' && j+1 < len(src) {
			if raw {
				b.WriteByte(c)
				b.WriteByte(src[j+1])
				if src[j+1] == '\n' {
					nl++
				}
				j += 2
				continue
			}
			n := src[j+1]
			j += 2
			switch n {
			case '\n':
				nl++
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'x', 'u', 'U':
				width := map[byte]int{'x': 2, 'u': 4, 'U': 8}[n]
				if j+width <= len(src) {
					if v, err := strconv.ParseUint(src[j:j+width], 16, 32); err == nil {
						b.WriteRune(rune(v))
						j += width
						continue
					}
				}
				b.WriteByte('\\')
				b.WriteByte(n)
			default:
				b.WriteByte(n)
			}
			continue
		}
		b.WriteByte(c)
		j++
	}
	return b.String(), j, nl, false
}

// pyVal is the static value of an expression.
type pyVal struct {
	kind  byte // 's' string, 'l' list/tuple, 'd' dict, 'n' name, 'x' opaque
	str   string
	list  []pyVal
	dict  map[string]pyVal
	order []string // dict keys in source order
	name  string
	why   string // for opaque values: the source, in short
}

// pyParser evaluates literal expressions over a token slice.
type pyParser struct{ toks []pyTok }

func (p *pyParser) at(i int) pyTok {
	if i < len(p.toks) {
		return p.toks[i]
	}
	return pyTok{kind: pyNewline}
}

func isOp(t pyTok, ops ...string) bool {
	if t.kind != pyOp {
		return false
	}
	for _, o := range ops {
		if t.text == o {
			return true
		}
	}
	return false
}

// isEnd reports whether a token ends an expression at bracket depth d. A closing bracket
// carries the depth of its opening one, so the closer of the enclosing bracket has a
// depth below d.
func isEnd(t pyTok, d int) bool {
	return t.kind == pyNewline || t.depth == d && isOp(t, ",", ":", "=") || t.depth < d
}

// skipExpr returns the index after an expression starting at i, and its source.
func (p *pyParser) skipExpr(i, d int) (int, string) {
	var parts []string
	for ; !isEnd(p.at(i), d); i++ {
		t := p.at(i)
		switch t.kind {
		case pyString, pyFString:
			parts = append(parts, strconv.Quote(t.text))
		default:
			parts = append(parts, t.text)
		}
	}
	src := strings.Join(parts, " ")
	src = strings.NewReplacer(" ( ", "(", " (", "(", "( ", "(", " )", ")", " . ", ".", " [ ", "[", " ]", "]", " ,", ",").Replace(src)
	if len(src) > 80 {
		src = src[:77] + "..."
	}
	return i, src
}

// expr parses an expression at i (bracket depth d of its context).
func (p *pyParser) expr(i, d int) (pyVal, int) {
	start := i
	v, j := p.term(i, d)
	if v.kind == 'x' {
		return v, j // term skipped the whole expression
	}
	if isOp(p.at(j), "+") && p.at(j).depth == d {
		return p.sum(start, d)
	}
	if !isEnd(p.at(j), d) {
		end, src := p.skipExpr(start, d)
		return pyVal{kind: 'x', why: src}, end
	}
	return v, j
}

// sum parses "a + b + ..." where some terms are names; it returns a '+' value whose list
// holds the terms, resolved later.
func (p *pyParser) sum(i, d int) (pyVal, int) {
	start := i
	var terms []pyVal
	for {
		v, j := p.term(i, d)
		if v.kind == 'x' {
			end, src := p.skipExpr(start, d)
			return pyVal{kind: 'x', why: src}, end
		}
		terms = append(terms, v)
		i = j
		if !(isOp(p.at(i), "+") && p.at(i).depth == d) {
			break
		}
		i++
	}
	if !isEnd(p.at(i), d) {
		end, src := p.skipExpr(start, d)
		return pyVal{kind: 'x', why: src}, end
	}
	return pyVal{kind: '+', list: terms}, i
}

// term parses one operand.
func (p *pyParser) term(i, d int) (pyVal, int) {
	t := p.at(i)
	switch {
	case t.kind == pyString:
		s := t.text
		i++
		for p.at(i).kind == pyString {
			s += p.at(i).text
			i++
		}
		if p.at(i).kind == pyFString {
			end, src := p.skipExpr(i, d)
			return pyVal{kind: 'x', why: "an f-string " + src}, end
		}
		return pyVal{kind: 's', str: s}, i
	case t.kind == pyFString:
		end, src := p.skipExpr(i, d)
		return pyVal{kind: 'x', why: "an f-string " + src}, end
	case t.kind == pyName && !pyKeywords[t.text]:
		name := t.text
		j := i + 1
		for isOp(p.at(j), ".") && p.at(j+1).kind == pyName {
			name += "." + p.at(j+1).text
			j += 2
		}
		if isOp(p.at(j), "(", "[") {
			end, src := p.skipExpr(i, d)
			what := "a call"
			if p.at(j).text == "[" {
				what = "an index"
			}
			return pyVal{kind: 'x', why: what + " " + src}, end
		}
		if strings.Contains(name, ".") {
			end, src := p.skipExpr(i, d)
			return pyVal{kind: 'x', why: src}, end
		}
		return pyVal{kind: 'n', name: name}, j
	case isOp(t, "[", "("):
		closer := map[string]string{"[": "]", "(": ")"}[t.text]
		inner := d + 1
		if p.comprehension(i) {
			end, src := p.skipExpr(i, d)
			return pyVal{kind: 'x', why: "a comprehension " + src}, end
		}
		var items []pyVal
		j := i + 1
		for !isOp(p.at(j), closer) || p.at(j).depth != d {
			if p.at(j).kind == pyNewline && p.at(j).depth < inner {
				break
			}
			if p.at(j).kind == pyName && p.at(j).text == "for" && p.at(j).depth == inner {
				end, src := p.skipExpr(i, d)
				return pyVal{kind: 'x', why: "a comprehension " + src}, end
			}
			if isOp(p.at(j), "*", "**") {
				end, src := p.skipExpr(i, d)
				return pyVal{kind: 'x', why: src}, end
			}
			v, k := p.expr(j, inner)
			items = append(items, v)
			j = k
			if isOp(p.at(j), ",") && p.at(j).depth == inner {
				j++
				continue
			}
			if !(isOp(p.at(j), closer) && p.at(j).depth == d) {
				end, src := p.skipExpr(i, d)
				return pyVal{kind: 'x', why: src}, end
			}
		}
		j++ // the closer
		if t.text == "(" && len(items) == 1 && !isOp(p.at(j-2), ",") {
			return items[0], j // parenthesised expression
		}
		return pyVal{kind: 'l', list: items}, j
	case isOp(t, "{"):
		inner := d + 1
		if p.comprehension(i) {
			end, src := p.skipExpr(i, d)
			return pyVal{kind: 'x', why: "a comprehension " + src}, end
		}
		v := pyVal{kind: 'd', dict: map[string]pyVal{}}
		j := i + 1
		for !(isOp(p.at(j), "}") && p.at(j).depth == d) {
			if p.at(j).kind == pyNewline {
				break
			}
			k, kj := p.expr(j, inner)
			if k.kind != 's' || !isOp(p.at(kj), ":") {
				end, src := p.skipExpr(i, d)
				return pyVal{kind: 'x', why: src}, end
			}
			val, vj := p.expr(kj+1, inner)
			if _, dup := v.dict[k.str]; !dup {
				v.order = append(v.order, k.str)
			}
			v.dict[k.str] = val
			j = vj
			if isOp(p.at(j), ",") && p.at(j).depth == inner {
				j++
			}
		}
		return v, j + 1
	}
	end, src := p.skipExpr(i, d)
	if end == i {
		end++
	}
	return pyVal{kind: 'x', why: src}, end
}

// comprehension reports whether the bracket opening at i holds a "for" of its own.
func (p *pyParser) comprehension(i int) bool {
	open := p.at(i)
	for j := i + 1; j < len(p.toks); j++ {
		t := p.toks[j]
		if t.depth <= open.depth {
			return false // the closer
		}
		if t.depth == open.depth+1 && t.kind == pyName && t.text == "for" {
			return true
		}
	}
	return false
}

var pyKeywords = map[string]bool{"None": true, "True": true, "False": true, "lambda": true, "not": true, "if": true, "else": true, "for": true, "in": true, "and": true, "or": true, "await": true}

// binding is what a module does with a name: its assignments and its changes.
type binding struct {
	values  []pyVal
	changes []string // how the code changes it
}

// setupScan is the static reading of one setup.py.
type setupScan struct {
	p        *pyParser
	bindings map[string]*binding
	calls    []int // token index of each setup( call's "("
}

var pyMutators = map[string]bool{"append": true, "extend": true, "insert": true, "remove": true, "pop": true, "clear": true, "update": true, "setdefault": true}

func scanSetupPy(src string) *setupScan {
	s := &setupScan{p: &pyParser{toks: tokenizePython(src)}, bindings: map[string]*binding{}}
	toks := s.p.toks
	bind := func(name string) *binding {
		b := s.bindings[name]
		if b == nil {
			b = &binding{}
			s.bindings[name] = b
		}
		return b
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.kind != pyName {
			continue
		}
		next := s.p.at(i + 1)
		prev := pyTok{kind: pyNewline}
		if i > 0 {
			prev = toks[i-1]
		}
		switch {
		case t.text == "setup" && isOp(next, "(") && !(prev.kind == pyName && prev.text == "def"):
			s.calls = append(s.calls, i+1)
		case t.first && t.depth == 0 && isOp(next, "="):
			v, _ := s.p.expr(i+2, 0)
			b := bind(t.text)
			b.values = append(b.values, v)
		case t.first && t.depth == 0 && isOp(next, ":") && s.p.at(i+2).kind == pyName:
			// Annotated assignment: NAME: type = value.
			for j := i + 2; s.p.at(j).kind != pyNewline; j++ {
				if isOp(s.p.at(j), "=") && s.p.at(j).depth == 0 {
					v, _ := s.p.expr(j+1, 0)
					bind(t.text).values = append(bind(t.text).values, v)
					break
				}
			}
		case isOp(next, "+=", "-=", "*=", "|=", "&="):
			if !(prev.kind == pyOp && prev.text == ".") {
				bind(t.text).changes = append(bind(t.text).changes, t.text+" "+next.text+" ...")
			}
		case isOp(next, ".") && s.p.at(i+2).kind == pyName && pyMutators[s.p.at(i+2).text] && isOp(s.p.at(i+3), "("):
			if !(prev.kind == pyOp && prev.text == ".") {
				bind(t.text).changes = append(bind(t.text).changes, t.text+"."+s.p.at(i+2).text+"(...)")
			}
		case isOp(next, "[") && !(prev.kind == pyOp && prev.text == "."):
			// NAME[...] = value changes NAME.
			for j := i + 2; j < len(toks) && toks[j].kind != pyNewline; j++ {
				if isOp(toks[j], "]") && toks[j].depth == next.depth {
					if isOp(s.p.at(j+1), "=") {
						bind(t.text).changes = append(bind(t.text).changes, t.text+"[...] = ...")
					}
					break
				}
			}
		case prev.kind == pyName && (prev.text == "as" || prev.text == "for" || prev.text == "global" || prev.text == "del" || prev.text == "def" || prev.text == "import"):
			b := bind(t.text)
			b.values = append(b.values, pyVal{kind: 'x', why: prev.text + " " + t.text})
		case t.first && t.depth == 0 && isOp(next, ","):
			// Tuple assignment: a, b = ...
			for j := i; s.p.at(j).kind != pyNewline; j++ {
				if isOp(s.p.at(j), "=") && s.p.at(j).depth == 0 {
					b := bind(t.text)
					b.values = append(b.values, pyVal{kind: 'x', why: "a tuple assignment"})
					break
				}
			}
		}
	}
	return s
}

// setupArgs reads the keyword arguments of one setup( call.
func (s *setupScan) setupArgs(open int) (map[string]pyVal, []string) {
	kw := map[string]pyVal{}
	var opaque []string // **kwargs that are not literal dicts
	d := s.p.at(open).depth + 1
	i := open + 1
	for !(isOp(s.p.at(i), ")") && s.p.at(i).depth == d-1) && s.p.at(i).kind != pyNewline {
		t := s.p.at(i)
		switch {
		case isOp(t, "**"):
			v, j := s.p.expr(i+1, d)
			dict, why := s.resolveDict(v, 0)
			if why != "" {
				opaque = append(opaque, why)
			}
			for _, k := range dict.order {
				if _, set := kw[k]; !set {
					kw[k] = dict.dict[k]
				}
			}
			i = j
		case t.kind == pyName && isOp(s.p.at(i+1), "=") && s.p.at(i+1).depth == d:
			v, j := s.p.expr(i+2, d)
			kw[t.text] = v
			i = j
		default:
			j, _ := s.p.skipExpr(i, d)
			if j == i {
				j++
			}
			i = j
		}
		if isOp(s.p.at(i), ",") && s.p.at(i).depth == d {
			i++
		}
	}
	return kw, opaque
}

func (s *setupScan) resolveDict(v pyVal, depth int) (pyVal, string) {
	switch v.kind {
	case 'd':
		return v, ""
	case 'n':
		if depth > 10 {
			return pyVal{}, "**" + v.name + " refers to itself"
		}
		b := s.bindings[v.name]
		if b == nil || len(b.values) != 1 || len(b.changes) > 0 {
			return pyVal{}, "setup() takes arguments from **" + v.name + ", which is built at run time"
		}
		if b.values[0].kind == 'x' {
			return pyVal{}, "setup() takes arguments from **" + v.name + ", which is built at run time (" + b.values[0].why + ")"
		}
		return s.resolveDict(b.values[0], depth+1)
	}
	return pyVal{}, "setup() takes arguments from **" + v.why + ", which is built at run time"
}

// resolveList returns the requirement strings of a value, or why it is not static.
func (s *setupScan) resolveList(v pyVal, arg string, depth int) ([]string, string) {
	if depth > 10 {
		return nil, arg + " refers to itself"
	}
	switch v.kind {
	case 's':
		var out []string
		for _, l := range strings.Split(v.str, "\n") {
			if l = stripReqComment(l); l != "" {
				out = append(out, l)
			}
		}
		return out, ""
	case '+':
		if str, why := s.resolveStr(v, arg, depth); why == "" {
			return s.resolveList(pyVal{kind: 's', str: str}, arg, depth+1)
		}
		var out []string
		for _, e := range v.list {
			got, why := s.resolveList(e, arg, depth+1)
			if why != "" {
				return nil, why
			}
			out = append(out, got...)
		}
		return out, ""
	case 'l':
		var out []string
		for _, e := range v.list {
			str, why := s.resolveStr(e, arg, depth+1)
			if why != "" {
				return nil, why
			}
			out = append(out, str)
		}
		return out, ""
	case 'n':
		return s.resolveName(v.name, arg, depth)
	}
	return nil, fmt.Sprintf("%s is built at run time (%s)", arg, describe(v))
}

// resolveStr returns the string an element of a list evaluates to.
func (s *setupScan) resolveStr(v pyVal, arg string, depth int) (string, string) {
	if depth > 10 {
		return "", arg + " refers to itself"
	}
	switch v.kind {
	case 's':
		return v.str, ""
	case 'n':
		b := s.bindings[v.name]
		switch {
		case b == nil || len(b.values) == 0:
			return "", fmt.Sprintf("%s uses %s, which is not assigned in setup.py (imported or built at run time)", arg, v.name)
		case len(b.changes) > 0 || len(b.values) > 1:
			return "", fmt.Sprintf("%s uses %s, which the code changes at run time", arg, v.name)
		}
		return s.resolveStr(b.values[0], arg, depth+1)
	case '+':
		var sb strings.Builder
		for _, e := range v.list {
			str, why := s.resolveStr(e, arg, depth+1)
			if why != "" {
				return "", why
			}
			sb.WriteString(str)
		}
		return sb.String(), ""
	}
	return "", fmt.Sprintf("%s holds an element built at run time (%s)", arg, describe(v))
}

func (s *setupScan) resolveName(name, arg string, depth int) ([]string, string) {
	b := s.bindings[name]
	switch {
	case b == nil || len(b.values) == 0:
		return nil, fmt.Sprintf("%s comes from %s, which is not assigned in setup.py (imported or built at run time)", arg, name)
	case len(b.changes) > 0:
		return nil, fmt.Sprintf("%s comes from %s, which the code changes at run time (%s)", arg, name, b.changes[0])
	case len(b.values) > 1:
		return nil, fmt.Sprintf("%s comes from %s, which is assigned %d times", arg, name, len(b.values))
	case b.values[0].kind == 'x':
		return nil, fmt.Sprintf("%s comes from %s, which is built at run time (%s)", arg, name, b.values[0].why)
	}
	return s.resolveList(b.values[0], arg, depth+1)
}

func describe(v pyVal) string {
	switch v.kind {
	case 'x':
		return v.why
	case 'd':
		return "a dict"
	case 'n':
		return v.name
	}
	return "an expression"
}

// setupPy reads install_requires and setup_requires of setup.py statically.
func (c *collector) setupPy(p string) error {
	if !c.markRead(p) {
		return nil
	}
	data, err := fs.ReadFile(c.files, p)
	if err != nil {
		return err
	}
	s := scanSetupPy(string(data))
	if len(s.calls) == 0 {
		c.unread("%s has no setup() call, so its dependencies cannot be read without running it", p)
		return nil
	}
	var first []schemas.Dependency
	for n, open := range s.calls {
		kw, opaque := s.setupArgs(open)
		if nv, ok := kw["name"]; ok && nv.kind == 's' {
			c.self = append(c.self, NormalizePython(nv.str))
		}
		var got []schemas.Dependency
		found := false
		for _, arg := range []string{"install_requires", "setup_requires"} {
			v, ok := kw[arg]
			if !ok {
				continue
			}
			found = true
			reqs, why := s.resolveList(v, arg, 0)
			if why != "" {
				c.unread("%s builds its dependency list at run time: %s; the declared dependencies cannot be read without executing it", p, why)
				return nil
			}
			for _, rq := range reqs {
				r, err := ParseRequirement(rq)
				if err != nil {
					c.unread("%s %s: %v", p, arg, err)
					continue
				}
				got = append(got, schemas.Dependency{Name: r.Name, Spec: r.Spec, Pinned: r.Pinned, From: p})
			}
		}
		if !found && len(opaque) > 0 {
			c.unread("%s: %s; the declared dependencies cannot be read without executing it", p, opaque[0])
			return nil
		}
		if n == 0 {
			first = got
		} else if !sameDeps(first, got) {
			c.unread("%s calls setup() %d times with different dependencies; which one runs is decided at run time", p, len(s.calls))
			return nil
		}
	}
	for _, d := range first {
		c.add(d)
	}
	return nil
}

func sameDeps(a, b []schemas.Dependency) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Spec != b[i].Spec {
			return false
		}
	}
	return true
}
