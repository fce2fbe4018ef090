package scan

import (
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/zricethezav/gitleaks/v8/detect"
	glregexp "github.com/zricethezav/gitleaks/v8/regexp"
)

// genericPieces are the bytes and words the generic rule's regex cares about.
var genericPieces = []string{
	"api", "Api", "aPi", "API", "key", "KEY", "Key", "token", "TOKEN", "password", "passwd", "PassWord",
	"secret", "auth", "access", "credential", "creds", "cred", "author", "process.env.", "os.environ",
	" ", " ", "\t", "\n", "\r", "=", "=", ":", "::", "::=", ":::=", "::::=", "|", "||", "?=", "?", ",", "=>", ">",
	"'", "\"", "`", ";", `\n`, `\r`, `\N`, `\t`, ".", "-", "_", "+", "/", "==", "===", "é", "(", ")", "{", "}",
}

// genericText returns a random text built from genericPieces and runs of letters and
// digits of various lengths.
func genericText(r *rand.Rand) string {
	var b strings.Builder
	for range 1 + r.Intn(40) {
		switch r.Intn(5) {
		case 1:
			// A likely assignment: keyword, operator, value.
			b.WriteString(genericPieces[r.Intn(20)])
			b.WriteString([]string{"", " ", "_id", "\"", " \t"}[r.Intn(5)])
			b.WriteString([]string{"=", ": ", "::=", "=>", ", '", "= `", "=\n  "}[r.Intn(7)])
		case 0:
			n := 1 + r.Intn(24)
			if r.Intn(20) == 0 {
				n = 140 + r.Intn(30)
			}
			set := alnum
			if r.Intn(3) == 0 {
				set = "abcdef0123456789"
			}
			if r.Intn(4) == 0 {
				set = b64Set
			}
			for range n {
				b.WriteByte(set[r.Intn(len(set))])
			}
		default:
			b.WriteString(genericPieces[r.Intn(len(genericPieces))])
		}
	}
	return b.String()
}

// TestGenericMatcherIsTheRegex compares the Go evaluation of generic-api-key's regex with
// the regex engine gitleaks uses (FindAll with the capture group) on random texts.
func TestGenericMatcherIsTheRegex(t *testing.T) {
	re := glregexp.MustCompile(hotRegexes[hotGeneric])
	r := rand.New(rand.NewSource(5))
	// The standard library's engine (builds without gore2regex) is much slower.
	n, matched := 6000, 0
	if testing.Short() || glregexp.Version == "stdlib" {
		n = 1500
	}
	for i := range n {
		s := genericText(r)
		var want [][]int
		for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
			want = append(want, []int{m[0], m[1], m[2], m[3]})
		}
		var got [][]int
		genericAll(s, func(m genericMatch) bool {
			got = append(got, []int{m.ms, m.me, m.gs, m.ge})
			return true
		})
		matched += len(want)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("text %d %q:\n got %v\nwant %v", i, s, got, want)
		}
	}
	if matched < n/4 {
		t.Fatalf("only %d matches in %d texts: the texts test little", matched, n)
	}
	t.Logf("%d matches in %d texts", matched, n)
}

// TestGenericCheckMatchesGitleaks checks the pre-check against gitleaks itself: a text
// where gitleaks reports a generic-api-key finding passes the check, and a text that
// passes it has such a finding.
func TestGenericCheckMatchesGitleaks(t *testing.T) {
	sc := sharedScanner(t)
	g := sc.groups.generic
	if g == nil {
		t.Fatal("no generic pre-check")
	}
	det := sc.groups.hot[hotGeneric]
	r := rand.New(rand.NewSource(9))
	f := newFakes(10)
	cg := &corpusGen{r: r, f: f}
	n := 3000
	if testing.Short() || glregexp.Version == "stdlib" {
		n = 800
	}
	var texts []string
	for range n {
		texts = append(texts, genericText(r))
	}
	for range n {
		name := cg.secretName(r.Intn(4))
		var v string
		switch r.Intn(6) {
		case 0:
			v = f.pick(alnum, 8+r.Intn(30))
		case 1:
			v = cg.envRef([]string{"py", "js", "go", "java"}[r.Intn(4)])
		case 2:
			v = cg.ident(r.Intn(4))
		case 3:
			v = cg.str()
		case 4:
			v = strings.Repeat(f.pick("abc", 2), 6+r.Intn(6))
		default:
			v = f.pick(lowerNum, 10+r.Intn(20)) + cg.word()
		}
		op := []string{" = ", ": ", "=", " := ", "=>", ", "}[r.Intn(6)]
		q := []string{"", "'", "\"", "`"}[r.Intn(4)]
		texts = append(texts, fmt.Sprintf("%s%s%s%s%s%s\n", cg.word(), name, op, q, v, q))
	}
	reported, passed := 0, 0
	for i, s := range texts {
		fs := det.DetectContext(context.Background(), detect.Fragment{Raw: s, FilePath: "x.py"})
		gl := len(fs) > 0
		ours := g.windowSurvives(s)
		if gl {
			reported++
		}
		if ours {
			passed++
		}
		if gl && !ours {
			t.Errorf("text %d %q: gitleaks reports %q, the pre-check drops it", i, s, fs[0].Secret)
		}
		if ours && !gl && !nearThreshold(g, s) {
			t.Errorf("text %d %q: the pre-check passes it, gitleaks reports nothing", i, s)
		}
	}
	t.Logf("%d of %d texts reported, %d passed", reported, len(texts), passed)
	if reported < len(texts)/20 || reported > len(texts)*19/20 {
		t.Errorf("%d of %d texts reported: the texts test little", reported, len(texts))
	}
}

// nearThreshold reports whether a match of s has a secret whose entropy is the rule's
// threshold up to rounding: gitleaks' sum over a map in random order decides those, so
// the pre-check passes them on.
func nearThreshold(g *genericCheck, s string) bool {
	near := false
	genericAll(s, func(m genericMatch) bool {
		match := strings.Trim(s[m.ms:m.me], "\n")
		if sm, ok := genericNext(match, 0); ok {
			e := shannon(match[sm.gs:sm.ge])
			near = near || e > g.entropy-1e-6 && e < g.entropy+1e-6
		}
		return true
	})
	return near
}
