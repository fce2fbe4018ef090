package scan

import (
	"encoding/base64"
	"fmt"
	"math/rand"
	"regexp/syntax"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/zricethezav/gitleaks/v8/config"
)

// sampleRegex writes to b a random string the regex matches, as far as its syntax tree
// says (word boundaries and line anchors are not checked): ASCII where a class allows,
// repeats a few times past their minimum.
func sampleRegex(r *rand.Rand, re *syntax.Regexp, b *strings.Builder) {
	switch re.Op {
	case syntax.OpLiteral:
		for _, c := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 && r.Intn(2) == 0 {
				c = unicode.ToUpper(c)
			}
			b.WriteRune(c)
		}
	case syntax.OpCharClass:
		b.WriteRune(sampleClass(r, re.Rune))
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte(alnum[r.Intn(len(alnum))])
	case syntax.OpCapture:
		sampleRegex(r, re.Sub[0], b)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := re.Min, re.Max
		switch re.Op {
		case syntax.OpStar:
			lo, hi = 0, 3
		case syntax.OpPlus:
			lo, hi = 1, 4
		case syntax.OpQuest:
			lo, hi = 0, 1
		}
		if hi < 0 || hi > lo+8 {
			hi = lo + 8
		}
		for range lo + r.Intn(hi-lo+1) {
			sampleRegex(r, re.Sub[0], b)
		}
	case syntax.OpConcat:
		for _, s := range re.Sub {
			sampleRegex(r, s, b)
		}
	case syntax.OpAlternate:
		sampleRegex(r, re.Sub[r.Intn(len(re.Sub))], b)
	}
}

// sampleClass picks a rune of a class (pairs of ranges), printable ASCII when it has any.
func sampleClass(r *rand.Rand, ranges []rune) rune {
	var ascii []rune
	for i := 0; i < len(ranges); i += 2 {
		for c := max(ranges[i], 0x21); c <= min(ranges[i+1], 0x7e); c++ {
			ascii = append(ascii, c)
		}
	}
	if len(ascii) > 0 {
		return ascii[r.Intn(len(ascii))]
	}
	for i := 0; i < len(ranges); i += 2 {
		if ranges[i] <= ' ' && ' ' <= ranges[i+1] {
			return ' '
		}
	}
	return ranges[0]
}

func sample(t *testing.T, r *rand.Rand, pattern string) string {
	t.Helper()
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		t.Fatalf("parsing %s: %v", pattern, err)
	}
	var b strings.Builder
	sampleRegex(r, re, &b)
	return b.String()
}

// ruleText is a text made for one rule: samples of its regex (and of the rules it
// requires) in code, in prose, alone on a line and base64-encoded, between lines of clean
// code and prose; its path is a sample of the rule's path regex when it has one.
func ruleText(t *testing.T, r *rand.Rand, cfg config.Config, rule config.Rule, clean []string) Text {
	path := "config/settings.py"
	if rule.Path != nil {
		path = sample(t, r, rule.Path.String())
	}
	var b strings.Builder
	for i := range 12 {
		b.WriteString(clean[r.Intn(len(clean))])
		b.WriteString("\n")
		s := ""
		if rule.Regex != nil {
			s = sample(t, r, rule.Regex.String())
		}
		switch i % 6 {
		case 0:
			fmt.Fprintf(&b, "%s\n", s)
		case 1:
			fmt.Fprintf(&b, "    api_value = \"%s\"\n", s)
		case 2:
			fmt.Fprintf(&b, "export SETTING=%s\n", s)
		case 3:
			fmt.Fprintf(&b, "the log showed %s when the build ran\n", s)
		case 4:
			fmt.Fprintf(&b, "data: %s\n", base64.StdEncoding.EncodeToString([]byte(s)))
		default:
			fmt.Fprintf(&b, "%s: %s\n", strings.Join(rule.Keywords, " "), s)
		}
		for _, req := range rule.RequiredRules {
			if rr, ok := cfg.Rules[req.RuleID]; ok && rr.Regex != nil {
				fmt.Fprintf(&b, "%s\n", sample(t, r, rr.Regex.String()))
			}
		}
	}
	return Text{InstanceID: "envgap__rule__" + rule.RuleID + "-1", Field: FieldProjectFiles, Path: path, Content: b.String()}
}

// TestFastDetectorEveryRule checks the fast detector against the reference (gitleaks
// alone) hit for hit on a text made for each rule of the configuration, and names the
// rules on which they differ: after a gitleaks upgrade, these are the rules the fast
// path no longer reads right. A rule whose text the reference finds nothing in is not
// exercised; most must be.
func TestFastDetectorEveryRule(t *testing.T) {
	fast := sharedScanner(t)
	ref, err := NewScanner(Options{reference: true})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := buildConfig()
	if err != nil {
		t.Fatal(err)
	}
	var clean []string
	for _, c := range cleanFiles {
		clean = append(clean, strings.Split(c, "\n")...)
	}
	sort.Strings(clean)
	for _, l := range prose {
		clean = append(clean, "# "+l+" "+prose[len(l)%len(prose)])
	}
	ids := make([]string, 0, len(cfg.Rules))
	for id := range cfg.Rules {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	r := rand.New(rand.NewSource(7))
	texts := make([]Text, len(ids))
	for i, id := range ids {
		texts[i] = ruleText(t, r, cfg, cfg.Rules[id], clean)
	}
	got := scanAll(t, fast, texts...)
	want := scanAll(t, ref, texts...)
	found := map[string]bool{}
	for _, o := range want.Findings {
		found[o.Rule] = true
	}
	differ := map[string][]string{}
	g, w := occKeys(got.Findings), occKeys(want.Findings)
	ruleOf := map[string]string{}
	for _, o := range got.Findings {
		for k := range occKeys([]Occurrence{o}) {
			ruleOf[k] = o.Rule
		}
	}
	for _, o := range want.Findings {
		for k := range occKeys([]Occurrence{o}) {
			ruleOf[k] = o.Rule
		}
	}
	for k := range w {
		if !g[k] {
			differ[ruleOf[k]] = append(differ[ruleOf[k]], "missing: "+k)
		}
	}
	for k := range g {
		if !w[k] {
			differ[ruleOf[k]] = append(differ[ruleOf[k]], "extra: "+k)
		}
	}
	var names []string
	for id := range differ {
		names = append(names, id)
	}
	sort.Strings(names)
	for _, id := range names {
		sort.Strings(differ[id])
		t.Errorf("rule %s: the fast detector differs from gitleaks:\n  %s", id, strings.Join(differ[id], "\n  "))
	}
	if len(names) > 0 {
		t.Errorf("the fast detector no longer covers %d rules: %s (after a gitleaks upgrade: fix their reading in prefilter.go/filtered.go, or run them as whole rules)", len(names), strings.Join(names, ", "))
	}
	var missed []string
	for _, id := range ids {
		if !found[id] {
			missed = append(missed, id)
		}
	}
	t.Logf("%d rules, %d findings; %d rules exercised; not exercised: %s", len(ids), len(want.Findings), len(ids)-len(missed), strings.Join(missed, ", "))
	if len(missed) > len(ids)/5 {
		t.Errorf("%d of %d rules found nothing in their own text: the texts test little", len(missed), len(ids))
	}
}
