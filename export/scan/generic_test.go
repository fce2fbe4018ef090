package scan

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/detect/codec"
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

// sameAsRegex compares a Go evaluation of a rule's regex (ours: each match's start and
// end and its first capture group's) with the regex engine gitleaks uses (FindAll with
// the capture group) on random texts, and fails when fewer than one text in minPer
// holds a match.
func sameAsRegex(t *testing.T, pattern string, seed int64, minPer int, text func(*rand.Rand) string, ours func(s string) [][]int) {
	t.Helper()
	re := glregexp.MustCompile(pattern)
	r := rand.New(rand.NewSource(seed))
	// The standard library's engine (builds without gore2regex) is much slower.
	n, matched := 6000, 0
	if testing.Short() || glregexp.Version == "stdlib" {
		n = 1500
	}
	for i := range n {
		s := text(r)
		var want [][]int
		for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
			want = append(want, []int{m[0], m[1], m[2], m[3]})
		}
		matched += len(want)
		if got := ours(s); !reflect.DeepEqual(got, want) {
			t.Fatalf("text %d %q:\n got %v\nwant %v", i, s, got, want)
		}
	}
	if matched < n/minPer {
		t.Fatalf("only %d matches in %d texts: the texts test little", matched, n)
	}
	t.Logf("%d matches in %d texts", matched, n)
}

// TestGenericMatcherIsTheRegex checks generic-api-key's matcher against the regex.
func TestGenericMatcherIsTheRegex(t *testing.T) {
	sameAsRegex(t, hotRegexes[hotGeneric], 5, 4, genericText, func(s string) [][]int {
		var got [][]int
		genericAll(s, func(m genericMatch) bool {
			got = append(got, []int{m.ms, m.me, m.gs, m.ge})
			return true
		})
		return got
	})
}

// authPieces are the bytes and words the Authorization rule's regex cares about.
var authPieces = []string{
	"authorization", "Authorization", "AUTHORIZATION", "xauthorization", "_authorization", "-authorization",
	"bearer", "Bearer", "basic", "token", "TOKEN", "apikey", "api-key", "ApiKey", "api_key",
	" ", " ", "\t", "\t", "\n", "\r", "\f", "\v", ":", "=", ",", "\"", "'", "`", "\\", ";", ")", "(", "é", "日本", "€",
}

// TestAuthMatcherIsTheRegex checks the Authorization rule's matcher against the regex.
func TestAuthMatcherIsTheRegex(t *testing.T) {
	sameAsRegex(t, hotRegexes[hotAuth], 6, 10, authText, func(s string) [][]int {
		var got [][]int
		authAll(s, func(ms, me int) bool {
			got = append(got, []int{ms, me, authGroup(s, ms, me), me})
			return true
		})
		return got
	})
}

// authText returns a random text of authPieces, runs of letters and digits, and
// likely headers with each part sometimes off.
func authText(r *rand.Rand) string {
	var b strings.Builder
	pick := func(xs ...string) string { return xs[r.Intn(len(xs))] }
	for range 1 + r.Intn(30) {
		if r.Intn(3) == 0 {
			b.WriteString(pick("authorization", "Authorization", "xAuthorization", " AUTHORIZATION", "authorizatio"))
			b.WriteString(pick("", "", "\"", "'", "`", "\"'"))
			b.WriteString(pick("", " ", "\n ", "\t", "\v"))
			b.WriteString(pick(":", "=", ",", ";", ""))
			b.WriteString(pick("", " ", "  ", "\r\n"))
			b.WriteString(pick("", "\"", "'", "''"))
			b.WriteString(pick("Bearer", "basic", "TOKEN", "apikey", "api-key", "api_key", "Digest"))
			b.WriteString(pick(" ", "\t", " \t ", "", "\n"))
			continue
		}
		if r.Intn(3) == 0 {
			m := 1 + r.Intn(12)
			if r.Intn(15) == 0 {
				m = 390 + r.Intn(20)
			}
			for range m {
				b.WriteByte(alnum[r.Intn(len(alnum))])
			}
			continue
		}
		b.WriteString(authPieces[r.Intn(len(authPieces))])
	}
	return b.String()
}

// TestDirectRulesMatchGitleaks checks the rules evaluated in Go against gitleaks
// itself: on each text, the hits of the Go evaluation are gitleaks' hits, or the text
// is left to gitleaks (a secret at the entropy threshold).
func TestDirectRulesMatchGitleaks(t *testing.T) {
	sc := sharedScanner(t)
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
	for range n {
		var b strings.Builder
		for range 1 + r.Intn(3) {
			b.WriteString([]string{"", "  ", "\n", "x = {"}[r.Intn(4)])
			b.WriteString([]string{"Authorization", "authorization", "AUTHORIZATION", "'Authorization'", "\"authorization\""}[r.Intn(5)])
			b.WriteString([]string{": ", "=", ", ", " :\n ", ":", " = '"}[r.Intn(6)])
			b.WriteString([]string{"Bearer ", "bearer\t", "Basic ", "token ", "ApiKey ", "api-key  ", "Bearer", "Digest "}[r.Intn(8)])
			switch r.Intn(5) {
			case 0:
				b.WriteString(f.pick(alnum, 2+r.Intn(40)))
			case 1:
				b.WriteString("${" + cg.secretName(1) + "}")
			case 2:
				b.WriteString("<your-token>")
			case 3:
				b.WriteString(cg.envRef([]string{"py", "js", "go", "java"}[r.Intn(4)]))
			default:
				b.WriteString("xxxxxxxx")
			}
			b.WriteString([]string{"\n", "\"", "'", ")", "", " ;\n"}[r.Intn(6)])
		}
		texts = append(texts, b.String())
	}
	// The allowlists' line target and gitleaks' reading of a line: a last line without a
	// newline reads as everything from the start of the text.
	for range n / 10 {
		v := f.pick(alnum, 12+r.Intn(20))
		imp := []string{"import { Foo } from 'bar'", "RUN --mount=type=secret,id=x make", "plain words"}[r.Intn(3)]
		hdr := []string{"api_key = '" + v + "'", "Authorization: Bearer " + v}[r.Intn(2)]
		sep := []string{"\n", "\n\n", " ; "}[r.Intn(3)]
		texts = append(texts, imp+sep+hdr, hdr+sep+imp, imp+sep+hdr+"\n")
	}
	for _, h := range []int{hotGeneric, hotAuth} {
		d := sc.det.(*fastDetector).groups.direct[h]
		if d == nil {
			t.Fatalf("rule %s is not evaluated in Go", hotRuleIDs[h])
		}
		det := sc.det.(*fastDetector).groups.hot[h]
		reported, left := 0, 0
		for i, s := range texts {
			want := scanWith(context.Background(), det, "x.py", s)
			got, ok := d.hits(s, false)
			if !ok {
				left++
				continue
			}
			if len(want) > 0 {
				reported++
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s, text %d %q:\n got %+v\nwant %+v", d.id, i, s, got, want)
			}
		}
		t.Logf("%s: %d of %d texts reported, %d left to gitleaks", d.id, reported, len(texts), left)
		if reported < len(texts)/20 || reported > len(texts)*19/20 {
			t.Errorf("%s: %d of %d texts reported: the texts test little", d.id, reported, len(texts))
		}
	}
}

// TestDirectDecodingPassMatchesGitleaks checks the decoding pass of the rules evaluated
// in Go against gitleaks' own decoding pass (depth 1) on texts with encoded values.
func TestDirectDecodingPassMatchesGitleaks(t *testing.T) {
	sc := sharedScanner(t)
	r := rand.New(rand.NewSource(12))
	f := newFakes(13)
	cg := &corpusGen{r: r, f: f}
	b64 := base64.StdEncoding.EncodeToString
	n := 1500
	if testing.Short() || glregexp.Version == "stdlib" {
		n = 300
	}
	var texts []string
	for range n {
		var inner string
		switch r.Intn(4) {
		case 0:
			inner = fmt.Sprintf("%s = %q", cg.secretName(r.Intn(4)), f.pick(alnum, 10+r.Intn(30)))
		case 1:
			inner = "Authorization: Bearer " + f.pick(alnum, 3+r.Intn(40))
		case 2:
			inner = genericText(r)
		default:
			inner = "machine config\ntoken = " + f.pick(lowerNum, 20) + "\npassword: " + f.pick(alnum+"=", 16)
		}
		var enc string
		switch r.Intn(4) {
		case 0:
			enc = b64([]byte(inner))
		case 1:
			enc = hex.EncodeToString([]byte(inner))
		case 2:
			enc = url.QueryEscape(inner)
		default:
			enc = base64.RawURLEncoding.EncodeToString([]byte(inner))
		}
		pre := []string{"", "data = '", "api_key: ", "Authorization: Basic ", "secret=", "x "}[r.Intn(6)]
		post := []string{"", "'", "\n", " trailing words", "\";"}[r.Intn(5)]
		ctx := []string{"", "password = hunter2hunter2hunter\n", "Authorization:\n", "token:\n  "}[r.Intn(4)]
		texts = append(texts, ctx+pre+enc+post+"\n"+genericText(r))
	}
	for _, h := range []int{hotGeneric, hotAuth} {
		d := sc.det.(*fastDetector).groups.direct[h]
		rule := sc.det.(*fastDetector).groups.hot[h].Config.Rules[d.id]
		cfg := config.Config{Rules: map[string]config.Rule{d.id: rule}, OrderedRules: []string{d.id},
			Keywords: map[string]struct{}{}, Allowlists: sc.det.(*fastDetector).groups.hot[h].Config.Allowlists}
		for _, k := range rule.Keywords {
			cfg.Keywords[strings.ToLower(k)] = struct{}{}
		}
		det := newGroupDetector(cfg)
		det.MaxDecodeDepth = 1
		reported, left := 0, 0
		for i, s := range texts {
			// gitleaks' decoding-pass findings, located as the scan locates them.
			var want []hit
			nl := newlineIndex(s)
			for _, f := range det.DetectContext(context.Background(), detect.Fragment{Raw: s, FilePath: "x.py"}) {
				if h, ok := locate(s, nl, f); ok && decodedTag(f.Tags) {
					want = append(want, h)
				}
			}
			dec, segs := codec.NewDecoder().Decode(s, nil)
			got, ok := d.decodedHits(s, dec, segs)
			if !ok {
				left++
				continue
			}
			if len(want) > 0 {
				reported++
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s, text %d %q:\n got %+v\nwant %+v", d.id, i, s, got, want)
			}
		}
		t.Logf("%s: %d of %d texts with decoded findings, %d left to gitleaks", d.id, reported, len(texts), left)
		if reported < len(texts)/50 {
			t.Errorf("%s: only %d texts with decoded findings: the texts test little", d.id, reported)
		}
	}
}
