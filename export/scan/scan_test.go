package scan

import (
	"context"
	"encoding/base64"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/envgap/envgap/schemas"
	glregexp "github.com/zricethezav/gitleaks/v8/regexp"
)

var (
	testScannerOnce sync.Once
	testScanner     *Scanner
	testScannerErr  error
)

// sharedScanner builds one Scanner for the package's tests (building compiles ~225
// regular expressions).
func sharedScanner(t testing.TB) *Scanner {
	t.Helper()
	testScannerOnce.Do(func() { testScanner, testScannerErr = NewScanner(Options{}) })
	if testScannerErr != nil {
		t.Fatal(testScannerErr)
	}
	return testScanner
}

// scanOne scans texts with the given scanner and returns the findings.
func scanAll(t testing.TB, sc *Scanner, texts ...Text) Result {
	t.Helper()
	in := make(chan Text, len(texts))
	for _, tx := range texts {
		in <- tx
	}
	close(in)
	return sc.ScanTexts(context.Background(), in, 2)
}

func TestNewScannerConfig(t *testing.T) {
	sc := sharedScanner(t)
	if sc.Rules() < 200 {
		t.Fatalf("scanner has %d rules; gitleaks' defaults alone have over 200", sc.Rules())
	}
	cfg, err := buildConfig()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range cfg.Allowlists {
		if len(a.Paths) > 0 {
			t.Errorf("global allowlist %q still skips paths", a.Description)
		}
	}
	for id, r := range cfg.Rules {
		for _, a := range r.Allowlists {
			if len(a.Paths) > 0 {
				t.Errorf("rule %s still has a path allowlist", id)
			}
		}
	}
	// Building twice in one process gives the same rules (no loader state carries over).
	cfg2, err := buildConfig()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg2.Rules) != len(cfg.Rules) || len(cfg2.Allowlists) != len(cfg.Allowlists) {
		t.Fatalf("second build: %d rules, %d allowlists; first: %d, %d", len(cfg2.Rules), len(cfg2.Allowlists), len(cfg.Rules), len(cfg.Allowlists))
	}
}

func TestRealShapedSecrets(t *testing.T) {
	sc := sharedScanner(t)
	f := newFakes(1)
	pem := f.pemKey()
	pemBody := pem[len("-----BEGIN RSA PRIVATE KEY-----\n"):][:64]
	cases := []struct {
		name, text, secret, rule string
	}{
		{"github pat", "export GITHUB_TOKEN=%s\n", f.githubPAT(), "github-pat"},
		{"github fine-grained", "token: %s\n", f.githubFine(), "github-fine-grained-pat"},
		{"aws key id", "aws_access_key_id = %s\n", f.awsKeyID(), "aws-access-token"},
		{"aws secret", "aws_secret_access_key = %s\n", f.awsSecret(), RuleAWSSecretKey},
		{"slack bot", "SLACK = '%s'\n", f.slackBot(), "slack-bot-token"},
		{"stripe live", "stripe.api_key = \"%s\"\n", f.stripeLive(), "stripe-access-token"},
		{"gitlab pat", "git clone https://oauth2:%s@gitlab.com/x/y.git\n", f.gitlabPAT(), "gitlab-pat"},
		{"npm token", "//registry/:_authToken=%s\n", f.npmToken(), "npm-access-token"},
		{"pem key", "key = '''\n%s'''\n", pem, "private-key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text := "line one\n" + strings.Replace(c.text, "%s", c.secret, 1) + "last line\n"
			res := scanAll(t, sc, Text{InstanceID: "envgap__o__r-1", Field: "problem_statement", Content: text})
			var got *Occurrence
			for i := range res.Findings {
				if res.Findings[i].Rule == c.rule {
					got = &res.Findings[i]
				}
			}
			if got == nil {
				t.Fatalf("no %s finding; got %+v", c.rule, res.Findings)
			}
			if got.Tier != schemas.TierLikelyReal {
				t.Errorf("tier %s, want likely_real", got.Tier)
			}
			if want := strings.Count(text[:strings.Index(text, c.secret)], "\n") + 1; got.Line != want {
				t.Errorf("line %d, want %d", got.Line, want)
			}
			secret := text[got.Start:got.End]
			if c.rule == "private-key" {
				if !strings.Contains(secret, pemBody) {
					t.Errorf("private key range does not cover its body")
				}
			} else if secret != c.secret {
				t.Errorf("range %d-%d holds %d bytes, want the %d-byte secret", got.Start, got.End, len(secret), len(c.secret))
			}
			for _, o := range res.Findings {
				if strings.Contains(o.Match, c.secret) || strings.Contains(o.Match, pemBody) || containsPiece(o.Match, c.secret, 8) {
					t.Errorf("match %q shows part of the secret", o.Match)
				}
			}
		})
	}
}

// containsPiece reports whether s contains any n-byte piece of secret.
func containsPiece(s, secret string, n int) bool {
	for i := 0; i+n <= len(secret); i++ {
		if strings.Contains(s, secret[i:i+n]) {
			return true
		}
	}
	return false
}

func TestKnownFalsePositives(t *testing.T) {
	sc := sharedScanner(t)
	pemCode := `import base64

PEM_BEGIN = "-----BEGIN RSA PRIVATE KEY-----"


def strip_armor(text):
    """Remove the PEM armor lines from a key file and return the body."""
    lines = [line for line in text.splitlines() if line and not line.startswith("-----")]
    return base64.b64decode("".join(lines))


def is_private_key(text):
    return text.strip().startswith(PEM_BEGIN) and text.strip().endswith(PEM_END)


PEM_END = "-----END RSA PRIVATE KEY-----"
`
	cases := []struct {
		name, path, text string
		// wantTier is the tier every finding must have ("" = no finding at all).
		wantTier schemas.Tier
		wantAny  bool
	}{
		{"ghp_import identifier", "setup.py", "install_requires = ['ghp_import>=2.0']\nfrom ghp_import import ghp_import\n", schemas.TierToReview, true},
		{"example bearer header", "README.md", "curl -H \"Authorization: Bearer <your-token>\" https://api.example.com/v1/items\n", schemas.TierPublicExample, true},
		{"example bearer in java", "src/main/java/Client.java", "// Send: Authorization: Bearer YOUR_API_TOKEN\nconn.setRequestProperty(\"Authorization\", \"Bearer \" + token);\n", schemas.TierPublicExample, true},
		{"pem markers far apart", "keys.py", pemCode, schemas.TierPublicExample, true},
		{"aws documentation key", "docs.md", "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\nAWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n", schemas.TierPublicExample, false},
		{"jwt.io sample", "README.md", "token = eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c\n", schemas.TierPublicExample, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := scanAll(t, sc, Text{InstanceID: "envgap__o__r-2", Field: FieldGoldFiles, Path: c.path, Content: c.text})
			if c.wantAny && len(res.Findings) == 0 {
				t.Fatalf("no finding; the card lists this as a hit to review")
			}
			for _, o := range res.Findings {
				if o.Tier != c.wantTier {
					t.Errorf("finding %s line %d: tier %s, want %s", o.Rule, o.Line, o.Tier, c.wantTier)
				}
			}
		})
	}
}

func TestCleanCodeHasNoFindings(t *testing.T) {
	sc := sharedScanner(t)
	var texts []Text
	for p, c := range cleanFiles {
		texts = append(texts, Text{InstanceID: "envgap__clean__x-1", Field: FieldProjectFiles, Path: p, Content: c})
	}
	res := scanAll(t, sc, texts...)
	if res.Texts != len(cleanFiles) {
		t.Fatalf("scanned %d texts, want %d", res.Texts, len(cleanFiles))
	}
	for _, o := range res.Findings {
		t.Errorf("clean file %s line %d: %s finding %q", o.Path, o.Line, o.Rule, o.Match)
	}
}

// gitleaks skips whole paths by default (lockfiles, vendor/, node_modules/); envgap
// publishes those texts too, so a token there must be found.
func TestAllowlistedPathsAreScanned(t *testing.T) {
	sc := sharedScanner(t)
	f := newFakes(2)
	for _, p := range []string{"package-lock.json", "node_modules/left-pad/index.js", "vendor/github.com/x/y/z.go",
		"go.sum", "yarn.lock", "poetry.lock", "venv/lib/python3.10/site-packages/x.py", "gitleaks.toml", "logo.png"} {
		t.Run(p, func(t *testing.T) {
			tok := f.githubPAT()
			res := scanAll(t, sc, Text{InstanceID: "envgap__o__r-3", Field: FieldGoldFiles, Path: p, Content: "\"resolved\": \"x\",\n\"token\": \"" + tok + "\"\n"})
			if !hasRule(res, "github-pat") {
				t.Fatalf("token under %s not found: %+v", p, res.Findings)
			}
		})
	}
}

func hasRule(res Result, rule string) bool {
	for _, o := range res.Findings {
		if o.Rule == rule {
			return true
		}
	}
	return false
}

func TestAllowCommentAndEncodedSecrets(t *testing.T) {
	sc := sharedScanner(t)
	f := newFakes(3)
	tok := f.githubPAT()
	enc := base64.StdEncoding.EncodeToString([]byte("machine config\ntoken = " + tok + "\n"))
	cases := []struct{ name, text string }{
		{"gitleaks:allow comment is ignored", "TOKEN = '" + tok + "' # gitleaks:allow\n"},
		{"base64-encoded token is decoded", "data = '" + enc + "'\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := scanAll(t, sc, Text{InstanceID: "envgap__o__r-4", Field: "patch", Content: c.text})
			if !hasRule(res, "github-pat") {
				t.Fatalf("not found: %+v", res.Findings)
			}
		})
	}
}

func TestChunkBoundaries(t *testing.T) {
	sc, err := NewScanner(Options{ChunkSize: 4096, ChunkOverlap: 512})
	if err != nil {
		t.Fatal(err)
	}
	f := newFakes(4)
	cases := []struct {
		name string
		sep  string
	}{
		{"many lines", "\n"},
		{"one long line", " "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			var toks []string
			for i := range 40 {
				b.WriteString(strings.Repeat("value_"+string(rune('a'+i%26))+" = compute(x)"+c.sep, 7))
				tok := f.githubPAT()
				toks = append(toks, tok)
				b.WriteString("tok = " + tok + c.sep)
			}
			text := b.String()
			res := scanAll(t, sc, Text{InstanceID: "envgap__o__r-5", Field: "problem_statement", Content: text})
			n := 0
			for _, o := range res.Findings {
				if o.Rule != "github-pat" {
					continue
				}
				n++
				if got := text[o.Start:o.End]; got != toks[n-1] {
					t.Errorf("finding %d: range holds the wrong text", n)
				}
				if want := strings.Count(text[:o.Start], "\n") + 1; o.Line != want {
					t.Errorf("finding %d: line %d, want %d", n, o.Line, want)
				}
			}
			if n != len(toks) {
				t.Fatalf("found %d tokens, want %d (once each)", n, len(toks))
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	sc := sharedScanner(t)
	f := newFakes(5)
	tok := f.githubPAT()
	// The card's sizes (a 50 MB file, a 10 MB line) with the fast regex engine the
	// Makefile builds with; a tenth of them with the standard library's (about 30x slower),
	// which runs the same code paths (chunking, cut lines).
	bigMB, longMB := 50, 10
	if glregexp.Version == "stdlib" {
		bigMB, longMB = 5, 1
	}
	big := strings.Repeat("x = compute(1, 2)  # a line of ordinary code\n", bigMB<<20/45)
	long := strings.Repeat("k=v; ", longMB<<20/5)
	cases := []struct {
		name     string
		text     string
		wantNote string
		wantTok  bool
	}{
		{"binary", "\x00\x01\x02ELF\x00" + "tok=" + tok + "\x00\xff\xfe", "binary content", true},
		{"invalid utf-8", "caf\xe9 \xff\xfe token = " + tok + "\n", "invalid UTF-8", true},
		{"big file", big + "token = " + tok + "\n", "", true},
		{"long line", long + "token=" + tok + " " + long, "a line longer than the chunk size", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if testing.Short() && len(c.text) > 1<<20 {
				t.Skip("large input: skipped with -short")
			}
			res := scanAll(t, sc, Text{InstanceID: "envgap__o__r-6", Field: FieldProjectFiles, Path: "blob.bin", Content: c.text})
			if res.Texts != 1 || res.Bytes != int64(len(c.text)) {
				t.Fatalf("scanned %d texts, %d bytes; want 1, %d", res.Texts, res.Bytes, len(c.text))
			}
			if c.wantTok && !hasRule(res, "github-pat") {
				t.Errorf("token not found: %+v", res.Findings)
			}
			found := c.wantNote == ""
			for _, n := range res.Notes {
				if strings.Contains(n.Reason, c.wantNote) && c.wantNote != "" {
					found = true
				}
			}
			if !found {
				t.Errorf("no note %q; notes: %+v", c.wantNote, res.Notes)
			}
		})
	}
}

// TestDedupeAndContextAreTheSimpleOnes compares dedupe and redactedContext, which read
// only the hits near each one, with their quadratic definitions on random hits.
func TestDedupeAndContextAreTheSimpleOnes(t *testing.T) {
	r := rand.New(rand.NewSource(31))
	rules := []string{RuleGitHubLookalike, "github-pat", "generic-api-key", RuleGitHubLookalike}
	for range 300 {
		var b strings.Builder
		for range 1 + r.Intn(30) {
			b.WriteString(strings.Repeat("x", r.Intn(60)))
			if r.Intn(3) == 0 {
				b.WriteByte('\n')
			}
		}
		text := b.String()
		if text == "" {
			continue
		}
		var hs []hit
		for range r.Intn(25) {
			s := r.Intn(len(text))
			e := min(len(text), s+1+r.Intn(50))
			hs = append(hs, hit{rule: rules[r.Intn(len(rules))], secret: text[s:e], start: s, end: e})
		}
		want := simpleDedupe(append([]hit(nil), hs...))
		got := dedupe(append([]hit(nil), hs...))
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("dedupe(%v) = %v, want %v", hs, got, want)
		}
		maxLen := 0
		for _, h := range got {
			maxLen = max(maxLen, h.end-h.start)
		}
		for _, h := range got {
			if g, w := redactedContext(text, h, got, maxLen), simpleContext(text, h, got); g != w {
				t.Fatalf("redactedContext(%q, %v) = %q, want %q", text, h, g, w)
			}
		}
	}
}

// simpleDedupe is dedupe with a lookalike hit covered when any other rule's hit holds it.
func simpleDedupe(hs []hit) []hit {
	sort.Slice(hs, func(i, j int) bool {
		if hs[i].start != hs[j].start {
			return hs[i].start < hs[j].start
		}
		if hs[i].end != hs[j].end {
			return hs[i].end < hs[j].end
		}
		return hs[i].rule < hs[j].rule
	})
	var out []hit
	for i, h := range hs {
		if i > 0 && h.start == hs[i-1].start && h.end == hs[i-1].end && h.rule == hs[i-1].rule {
			continue
		}
		out = append(out, h)
	}
	final := []hit{}
	for _, h := range out {
		covered := false
		for _, o := range out {
			covered = covered || h.rule == RuleGitHubLookalike && o.rule != h.rule && o.start <= h.start && h.end <= o.end
		}
		if !covered {
			final = append(final, h)
		}
	}
	return final
}

// simpleContext is redactedContext reading the whole line and every hit.
func simpleContext(text string, h hit, all []hit) string {
	ls := strings.LastIndexByte(text[:h.start], '\n') + 1
	le := len(text)
	if i := strings.IndexByte(text[h.end:], '\n'); i >= 0 {
		le = h.end + i
	}
	ws, we := max(ls, h.start-40), min(le, h.end+40)
	var b strings.Builder
	pos := ws
	for _, o := range all {
		if o.end <= ws || o.start >= we || o.start < pos && o.end <= pos {
			continue
		}
		if o.start > pos {
			b.WriteString(text[pos:o.start])
		}
		b.WriteString("[REDACTED]")
		pos = max(pos, o.end)
	}
	if pos < we {
		b.WriteString(text[pos:we])
	}
	out := strings.ToValidUTF8(b.String(), "\uFFFD")
	out = strings.Map(func(r rune) rune {
		if r == 0 || r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, out)
	return strings.TrimSpace(out)
}
