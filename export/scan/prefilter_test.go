package scan

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand"
	"net/url"
	"reflect"
	"regexp/syntax"
	"sort"
	"strings"
	"testing"

	"github.com/zricethezav/gitleaks/v8/detect/codec"
	glregexp "github.com/zricethezav/gitleaks/v8/regexp"
)

// secretLines returns lines (some multi-line) holding real-shaped fake secrets of many
// providers in the shapes code, configs, logs and prose use: plain ones, and ones that
// gitleaks' decoder decodes or that hold a rune lower-casing to ASCII (both make the
// prefilter scan the chunk exhaustively).
func secretLines(f *fakeSecrets, r *rand.Rand) (plain, special []string) {
	b64 := base64.StdEncoding.EncodeToString
	jwtPart := func(s string) string { return strings.TrimRight(base64.URLEncoding.EncodeToString([]byte(s)), "=") }
	jwt := jwtPart(`{"alg":"HS256","typ":"JWT"}`) + "." + jwtPart(fmt.Sprintf(`{"sub":"%d","name":"%s"}`, r.Intn(1e6), f.pick(alnum, 8))) + "." + f.pick(alnum+"_-", 43)
	pem := f.pemKey()
	special = []string{
		"Authorization: Basic " + b64([]byte("user:"+f.pick(alnum, 12))),
		"Bearer " + jwt,
		"jwt = \"" + jwt + "\"",
		"data = '" + b64([]byte("machine config\ntoken = "+f.githubPAT()+"\n")) + "'",
		"tls.key: " + b64([]byte(pem)),
		"secret_b64: " + b64([]byte("password="+f.pick(alnum, 24))),
		"hexcfg = " + hex.EncodeToString([]byte("api_key = "+f.stripeLive())),
		"url = https://example.com/?t=" + url.QueryEscape("token="+f.githubPAT()+"&x=1"),
		"The café's K\u212aey: " + f.pick(alnum, 30), // a Kelvin sign: lower-cases to k
	}
	plain = []string{
		"export GITHUB_TOKEN=" + f.githubPAT(),
		"token: " + f.githubFine(),
		"aws_access_key_id = " + f.awsKeyID() + "\naws_secret_access_key = " + f.awsSecret(),
		"AWS_SECRET_ACCESS_KEY: \"" + f.awsSecret() + "\"",
		"SLACK = '" + f.slackBot() + "'",
		"stripe.api_key = \"" + f.stripeLive() + "\"",
		"git clone https://oauth2:" + f.gitlabPAT() + "@gitlab.com/x/y.git",
		"//registry/:_authToken=" + f.npmToken(),
		"key = '''\n" + pem + "'''",
		"PRIVATE = \"" + strings.ReplaceAll(pem, "\n", `\n`) + "\"",
		"password = \"" + f.pick(alnum, 20) + "\"",
		"db_password: " + f.pick(alnum+"!@#", 18),
		"api_key:\n    " + f.pick(alnum, 32),
		"client_secret =\n  '" + f.pick(alnum, 40) + "'",
		"\"apiToken\": \"" + f.pick(lowerNum, 32) + "\",",
		"curl -H \"Authorization: Bearer " + f.bearerValue() + "\" https://api.example.com/v1",
		"Authorization:\n    Bearer " + f.bearerValue(),
		"headers = {'Authorization': 'token " + f.pick(alnum, 30) + "'}",
		"VAULT_TOKEN=s." + f.pick(alnum, 24),
		"vault login hvs." + f.pick(alnum+"_-", 95),
		"OCTOPUS_API_KEY=API-" + f.pick("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 26),
		"Authorization: Bearer <your-token>",
		"ghp_import and ghs_helper are identifiers",
		"AKIAIOSFODNN7EXAMPLE",
		"curl -u admin:" + f.pick(alnum, 16) + " https://example.com",
		"sk_test_" + f.pick(alnum, 24) + " in a sentence about Stripe.",
		"xoxp-" + f.pick(digits, 11) + "-" + f.pick(digits, 11) + "-" + f.pick(digits, 12) + "-" + f.pick("abcdef0123456789", 32),
		"https://hooks.slack.com/services/T" + f.pick(alnum, 10) + "/B" + f.pick(alnum, 10) + "/" + f.pick(alnum, 24),
		"sgp_" + f.pick("abcdef0123456789", 40),
		"TWILIO_API_KEY=SK" + f.pick("abcdef0123456789", 32),
		"databricks token dapi" + f.pick("abcdef0123456789", 32) + " expires",
		"AUTHRESS_KEY='sc_" + f.pick(lowerNum, 12) + "." + f.pick(lowerNum, 5) + ".acc_" + f.pick(lowerNum, 20) + "." + f.pick(alnum+"+/", 48) + "'",
		"naïve ünïcode prose with a token = " + f.pick(alnum, 28),
		"const GITLAB = 'glpat-" + f.pick(alnum, 20) + "'; // TODO rotate",
		"heroku_api_key = '" + strings.ToLower(fmt.Sprintf("%s-%s-%s-%s-%s", f.pick("abcdef0123456789", 8), f.pick("abcdef0123456789", 4), f.pick("abcdef0123456789", 4), f.pick("abcdef0123456789", 4), f.pick("abcdef0123456789", 12))) + "'",
	}
	return plain, special
}

// foldLines returns secret lines with runes that fold to ASCII letters (ſ, K, İ)
// inside keywords, operators' neighbours and values.
func foldLines(f *fakeSecrets) []string {
	return []string{
		"\u017fecret_key = '" + f.pick(alnum, 32) + "'",
		"to\u212aen: " + f.githubPAT(),
		"API_\u212aEY=" + f.pick(alnum, 24),
		"AP\u0130_KEY=" + f.pick(alnum, 24),
		"Authorization: Ba\u017fic " + f.pick(alnum, 20),
		"AUTHORIZATION = 'Bearer " + f.pick(alnum, 12) + "\u212a" + f.pick(alnum, 12) + "'",
		"aws_\u017fecret_access_key = " + f.awsSecret(),
		"VAULT_TOKEN=s." + f.pick(alnum, 10) + "\u017f" + f.pick(alnum, 13),
		"pa\u017f\u017fword: " + f.pick(alnum, 20) + " and password: " + f.pick(alnum, 20),
	}
}

// equivCorpus mixes the benchmark's code, prose and logs with the secret lines.
func equivCorpus(n int, seed int64) []Text {
	r := rand.New(rand.NewSource(seed))
	f := newFakes(seed + 1)
	var files []string
	for _, c := range cleanFiles {
		files = append(files, c)
	}
	sort.Strings(files)
	var out []Text
	for i := range n {
		secrets, special := secretLines(f, r)
		if i%4 == 0 {
			secrets = append(append(secrets, special...), foldLines(f)...)
		}
		var b strings.Builder
		target := 1<<10 + r.Intn(24<<10)
		if i%40 == 7 {
			target = 300 << 10 // more than one chunk
		}
		for b.Len() < target {
			switch r.Intn(5) {
			case 0:
				b.WriteString(files[r.Intn(len(files))])
			case 1:
				for range 8 + r.Intn(30) {
					b.WriteString(prose[r.Intn(len(prose))])
					b.WriteByte(' ')
				}
				b.WriteString(".\n\n")
			case 2:
				fmt.Fprintf(&b, "Collecting package-%d==%d.%d\nERROR: Could not build wheels for pkg%d\n", r.Intn(999), r.Intn(9), r.Intn(30), r.Intn(99))
			default:
				// A secret, alone on its lines or inside a line of code or prose.
				s := secrets[r.Intn(len(secrets))]
				switch r.Intn(3) {
				case 0:
					b.WriteString(s + "\n")
				case 1:
					b.WriteString("    " + s + "  # from the issue\n")
				default:
					b.WriteString("See " + s + " in the log.\n")
				}
			}
		}
		content := b.String()
		if i%9 == 0 {
			content = strings.TrimRight(content, "\n") // no final newline
		}
		out = append(out, Text{InstanceID: fmt.Sprintf("envgap__eq__r-%d", i), Field: FieldProjectFiles, Path: fmt.Sprintf("f%d.txt", i), Content: content})
	}
	return out
}

// TestPrefilterSameFindings compares the prefiltered scan with the exhaustive one (every
// rule on every chunk, with decoding) on texts full of secrets and on the benchmarks'
// corpora.
func TestPrefilterSameFindings(t *testing.T) {
	fast := sharedScanner(t)
	slow, err := NewScanner(Options{reference: true})
	if err != nil {
		t.Fatal(err)
	}
	small, err := NewScanner(Options{ChunkSize: 8192, ChunkOverlap: 2048})
	if err != nil {
		t.Fatal(err)
	}
	smallSlow, err := NewScanner(Options{ChunkSize: 8192, ChunkOverlap: 2048, reference: true})
	if err != nil {
		t.Fatal(err)
	}
	// The standard library's regexp engine is about 30x slower: a smaller corpus there.
	n, benchMB, variedMB := 120, 2<<20, 2<<20
	if testing.Short() || glregexp.Version == "stdlib" {
		n, benchMB, variedMB = 16, 256<<10, 160<<10
	}
	var clean []Text
	for p, c := range cleanFiles {
		clean = append(clean, Text{InstanceID: "envgap__clean__x-1", Field: FieldProjectFiles, Path: p, Content: c})
	}
	cases := []struct {
		name       string
		texts      []Text
		fast, slow *Scanner
	}{
		{"secrets in code and prose", equivCorpus(n, 11), fast, slow},
		{"secrets, small chunks", equivCorpus(n/4, 12), small, smallSlow},
		{"benchmark corpus", benchCorpus(benchMB), fast, slow},
		{"varied code, logs and prose", variedCorpus(variedMB, 3, 6), fast, slow},
		{"varied, small chunks", variedCorpus(variedMB/4, 4, 6), small, smallSlow},
		{"clean files", clean, fast, slow},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := scanAll(t, c.fast, c.texts...)
			want := scanAll(t, c.slow, c.texts...)
			if len(want.Findings) == 0 && c.name != "clean files" {
				t.Fatal("the reference scan found nothing: the corpus is broken")
			}
			rules := map[string]int{}
			for _, o := range want.Findings {
				rules[o.Rule]++
			}
			folded := 0
			for _, tx := range c.texts {
				if c.fast.det.(*fastDetector).groups.pf.plan(tx.Path, tx.Content, newChunkLines(tx.Content)).folded {
					folded++
				}
			}
			t.Logf("%d findings of %d rules; %d of %d texts hold a rune folding to ASCII", len(want.Findings), len(rules), folded, len(c.texts))
			if strings.HasPrefix(c.name, "secrets") && folded == 0 {
				t.Errorf("no text holds a rune folding to ASCII: the comparison tests little")
			}
			if !reflect.DeepEqual(got.Notes, want.Notes) {
				t.Errorf("notes differ")
			}
			g, w := occKeys(got.Findings), occKeys(want.Findings)
			for k := range w {
				if !g[k] {
					t.Errorf("missing: %s", k)
				}
			}
			for k := range g {
				if !w[k] {
					t.Errorf("extra: %s", k)
				}
			}
			if len(got.Findings) != len(want.Findings) {
				t.Errorf("%d findings, want %d", len(got.Findings), len(want.Findings))
			}
		})
	}
}

// occKeys names each finding by everything but the secret.
func occKeys(os []Occurrence) map[string]bool {
	out := map[string]bool{}
	for _, o := range os {
		out[fmt.Sprintf("%s %s line %d %s %d-%d %s %s %q", o.InstanceID, o.Path, o.Line, o.Rule, o.Start, o.End, o.Tier, o.Fingerprint[:12], o.Match)] = true
	}
	return out
}

func TestKeywordAnchor(t *testing.T) {
	cases := []struct {
		re            string
		kws           []string
		ok            bool
		before, after int
	}{
		{`\b(ghp_[A-Za-z0-9]{36})\b`, []string{"ghp_"}, true, 0, 0},
		{`\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b`, []string{"akia"}, false, 0, 0},
		{`\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b`, []string{"a3t", "akia", "asia", "abia", "acca"}, true, 0, 0},
		{`xox[pe](?:-[0-9]{10,13}){3}-[a-zA-Z0-9-]{28,34}`, []string{"xoxp-", "xoxe-"}, true, 0, 0},
		{`xox[pe](?:-[0-9]{10,13}){0,3}-[a-z]{28,34}`, []string{"xoxp-", "xoxe-"}, false, 0, 0},
		{`(?:A3T[A-Z0-9]|AK[A-Z]+)[A-Z2-7]{16}`, []string{"a3t", "akia"}, false, 0, 0},
		{`(?i)[\w.-]{0,50}?(?:key|token)[\s'"]{0,3}=[\s]{0,5}([\w]{10,})`, []string{"key", "token"}, true, 0, 8},
		{`(?i)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY-----[\s\S-]{64,}?KEY-----`, []string{"-----begin"}, false, 0, 0},
		{`(?i)\bauthorization\s*:\s*bearer\s+(\S+)`, []string{"authorization"}, false, 0, 0},
		{`[a-z]{5}token`, []string{"token"}, true, 0, 0},
		{`x?token`, []string{"token"}, true, 0, 0},
		{`(?:foo|token)`, []string{"token"}, false, 0, 0},
		{`(?i)(?:[Aa]pi|API)_KEY=(\w+)`, []string{"api"}, true, 0, 0},
		{`s\.(?i:[a-z0-9]{24})`, []string{"s."}, true, 0, 0},
	}
	for _, c := range cases {
		re, err := syntax.Parse(c.re, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		a := keywordAnchor(re, c.kws)
		if a.ok != c.ok || c.ok && (a.before != c.before || a.after != c.after) {
			t.Errorf("%s: got %+v, want ok=%v before=%d after=%d", c.re, a, c.ok, c.before, c.after)
		}
	}
}

func TestHotRulesUseTheirPreChecks(t *testing.T) {
	sc := sharedScanner(t)
	for h := range numHot {
		if !sc.det.(*fastDetector).groups.pf.hotOn[h] {
			t.Errorf("rule %s has a pre-check but its regex changed: update hotRegexes and hotCheck", hotRuleIDs[h])
		}
	}
}

// decodeCandidateRef is the previous, line-scanning-four-times decodeCandidate.
func decodeCandidateRef(l string) bool {
	for i := 0; ; i++ {
		j := strings.IndexByte(l[i:], '%')
		if j < 0 {
			break
		}
		i += j
		if i+2 < len(l) && isHex(l[i+1]) && isHex(l[i+2]) {
			return true
		}
	}
	for i := 0; ; i++ {
		// \u1234 or \\u1234 (case-insensitive).
		j := strings.IndexByte(l[i:], '\\')
		if j < 0 {
			break
		}
		i += j
		if i+1 < len(l) && (l[i+1] == 'u' || l[i+1] == 'U') && countClass(l, i+2, 4, clsHex) == 4 {
			return true
		}
	}
	for i := 0; ; i++ {
		// U+1234.
		j := strings.Index(l[i:], "U+")
		if j < 0 {
			break
		}
		i += j
		if countClass(l, i+2, 4, clsHex) == 4 {
			return true
		}
	}
	for i := 0; i < len(l); {
		if !isB64Class(l[i]) {
			i++
			continue
		}
		n := countClass(l, i, len(l), clsB64)
		if n >= 16 {
			h := countClass(l, i, n, clsHex)
			if h >= 32 {
				if hexDecodes(l[i : i+h]) {
					return true
				}
				if n-h >= 16 && b64Decodes(l[i+h:i+n]+l[i+n:i+n+count(l, i+n, 2, isEq)]) {
					return true
				}
			} else if b64Decodes(l[i : i+n+count(l, i+n, 2, isEq)]) {
				return true
			}
		}
		i += n
	}
	return false
}

// TestDecodeCandidateIsNecessary checks that every line on which gitleaks' decoder
// decodes something passes decodeCandidate, on the corpora's lines and on random lines
// of base64, hex, percent and unicode characters.
func TestDecodeCandidateIsNecessary(t *testing.T) {
	var lines []string
	for _, tx := range append(equivCorpus(24, 5), variedCorpus(256<<10, 9, 3)...) {
		lines = append(lines, strings.Split(tx.Content, "\n")...)
	}
	r := rand.New(rand.NewSource(7))
	alphabets := []string{
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_- .:\"'",
		"0123456789abcdefABCDEF0123456789abcdef_x ",
		"%0123456789abcdefABCDEF\\uU+ gx",
		"ABCDabcd0123_-+/=",
	}
	for range 20000 {
		a := alphabets[r.Intn(len(alphabets))]
		b := make([]byte, 8+r.Intn(80))
		for i := range b {
			b[i] = a[r.Intn(len(a))]
		}
		lines = append(lines, string(b))
	}
	for _, s := range []string{"hello world, this is plain text", "token=" + strings.Repeat("ab", 20)} {
		lines = append(lines, base64.StdEncoding.EncodeToString([]byte(s)), base64.RawURLEncoding.EncodeToString([]byte(s)),
			hex.EncodeToString([]byte(s)), url.QueryEscape(s+"&x=1"), "x = "+hex.EncodeToString([]byte(s))+"zz"+base64.StdEncoding.EncodeToString([]byte(s)))
	}
	decodes, passed := 0, 0
	for _, l := range lines {
		_, segs := codec.NewDecoder().Decode(l, nil)
		cand := decodeCandidate(l)
		if ref := decodeCandidateRef(l); ref != cand {
			t.Errorf("decodeCandidate(%q) = %v, the four-pass version says %v", l, cand, ref)
		}
		if !strings.Contains(l, "U+") && decodeCandidateU(l, false) != cand {
			t.Errorf("decodeCandidateU(%q, false) = %v, decodeCandidate says %v", l, !cand, cand)
		}
		if cand {
			passed++
		}
		if len(segs) > 0 {
			decodes++
			if !cand {
				t.Errorf("the decoder decodes %q but decodeCandidate rejects it", l)
			}
		}
	}
	t.Logf("%d lines, %d decoded, %d candidates", len(lines), decodes, passed)
	if decodes < 100 {
		t.Errorf("only %d lines decode: the test lines are broken", decodes)
	}
}

func TestSemiGeneric(t *testing.T) {
	cases := []struct {
		re   string
		kws  []string
		want bool
	}{
		{`(?i)[\w.-]{0,50}?(?:plaid)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([a-z0-9]{24})(?:[\x60'"\s;]|\\[nr]|$)`, []string{"plaid"}, true},
		{`[\w.-]{0,50}?(?i:new-relic|newrelic|new_relic)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}(NRAK-[a-z0-9]{27})`, []string{"new-relic", "newrelic", "new_relic"}, true},
		{`(?i)[\w.-]{0,50}?(?:gocardless)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}(live_[a-z0-9\-_=]{40})`, []string{"live_", "gocardless"}, true},
		{`(?i)[\w.-]{0,50}?(?:gocardless)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}(live_[a-z0-9\-_=]{40})`, []string{"live_"}, false},
		{`(?i)[\w.-]{0,50}?(?:new.relic)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)x`, []string{"relic"}, false},
		{`(?i)[\w.-]{0,50}?(?:plaid)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|:)x`, []string{"plaid"}, false},
		{`\b(ghp_[A-Za-z0-9]{36})\b`, []string{"ghp_"}, false},
	}
	for _, c := range cases {
		if got := semiGeneric(c.re, c.kws); got != c.want {
			t.Errorf("semiGeneric(%s, %v) = %v, want %v", c.re, c.kws, got, c.want)
		}
	}
}

// TestWindowedRulesSameFindings compares the prefiltered scan with the exhaustive one on
// texts made for the rules that run on their own windows (linerules.go): PEM headers
// with and without end markers near and far, long headers, KEY BLOCK markers, several
// keys in a chunk; hex words and webhook-like URLs far from the rules' keywords.
func TestWindowedRulesSameFindings(t *testing.T) {
	fast := sharedScanner(t)
	slow, err := NewScanner(Options{reference: true})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(21))
	f := newFakes(22)
	body := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(f.pick(b64Set, 64) + "\n")
		}
		return b.String()
	}
	filler := func() string {
		var b strings.Builder
		for range r.Intn(40) {
			b.WriteString(prose[r.Intn(len(prose))] + " ")
			if r.Intn(6) == 0 {
				b.WriteString("\n")
			}
		}
		return b.String()
	}
	pieces := []func() string{
		func() string {
			return "-----BEGIN RSA PRIVATE KEY-----\n" + body(1+r.Intn(8)) + "-----END RSA PRIVATE KEY-----\n"
		},
		func() string {
			return "-----BEGIN PRIVATE KEY BLOCK-----\n" + body(2) + "-----END PRIVATE KEY BLOCK-----\n"
		},
		func() string { return `pem = "-----BEGIN EC PRIVATE KEY-----"` + "\n" },
		func() string { return "-----END EC PRIVATE KEY-----\n" },
		func() string { return "x = 'KEY-----' # " + f.pick(alnum, r.Intn(80)) + "\n" },
		func() string {
			return "-----BEGIN " + strings.Repeat("A", 60+r.Intn(40)) + " PRIVATE KEY-----" + f.pick(b64Set, 20+r.Intn(120)) + "KEY-----\n"
		},
		func() string {
			return "-----begin openssh private key-----\n" + body(1) + "-----end openssh private key-----\n"
		},
		// Decoded values: a whole key, and a body line that decodes to text.
		func() string {
			return "tls.key: " + base64.StdEncoding.EncodeToString([]byte("-----BEGIN RSA PRIVATE KEY-----\n"+body(2)+"-----END RSA PRIVATE KEY-----\n")) + "\n"
		},
		func() string {
			return "-----BEGIN RSA PRIVATE KEY-----\n" + body(1) + base64.StdEncoding.EncodeToString([]byte("password = "+f.pick(alnum, 20)+" KEY-----")) + "\n" + body(1) + "-----END RSA PRIVATE KEY-----\n"
		},
		func() string { return "commit " + f.pick("0123456789abcdef", 40) + "\n" },
		func() string { return "sourcegraph token sgp_" + f.pick("0123456789abcdef", 40) + "\n" },
		func() string { return "see the Sourcegraph docs\n" },
		func() string {
			return "url = https://hooks.slack.com/services/T" + f.pick(alnum, 10) + "/B" + f.pick(alnum, 10) + "/" + f.pick(alnum, 24) + "\n"
		},
		func() string { return "hooksXslackYcom/services/" + f.pick(alnum, 50) + "\n" },
		func() string { return "webhooks run on hooks.slack.com\n" },
		filler,
	}
	var texts []Text
	for i := range 150 {
		var b strings.Builder
		for range 5 + r.Intn(30) {
			b.WriteString(pieces[r.Intn(len(pieces))]())
			b.WriteString(filler())
			b.WriteString("\n")
		}
		texts = append(texts, Text{InstanceID: fmt.Sprintf("envgap__win__r-%d", i), Field: FieldProjectFiles, Path: fmt.Sprintf("f%d.txt", i), Content: b.String()})
	}
	got := scanAll(t, fast, texts...)
	want := scanAll(t, slow, texts...)
	rules := map[string]int{}
	for _, o := range want.Findings {
		rules[o.Rule]++
	}
	t.Logf("%d findings: %v", len(want.Findings), rules)
	for _, id := range []string{"private-key", "sourcegraph-access-token", "slack-webhook-url"} {
		if rules[id] == 0 {
			t.Errorf("no %s finding: the texts test little", id)
		}
	}
	g, w := occKeys(got.Findings), occKeys(want.Findings)
	for k := range w {
		if !g[k] {
			t.Errorf("missing: %s", k)
		}
	}
	for k := range g {
		if !w[k] {
			t.Errorf("extra: %s", k)
		}
	}
}
