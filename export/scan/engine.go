package scan

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	glregexp "github.com/zricethezav/gitleaks/v8/regexp"
	"github.com/zricethezav/gitleaks/v8/report"
)

// EngineName names the scanning engine in scan records.
const EngineName = "gitleaks v8.30.1"

// Rule ids of the rules envgap adds to gitleaks' defaults.
const (
	RuleAWSSecretKey     = "envgap-aws-secret-access-key"
	RuleAuthHeader       = "envgap-authorization-header"
	RuleGitHubLookalike  = "envgap-github-token-lookalike"
	defaultChunkSize     = 256 << 10
	defaultChunkOverlap  = 16 << 10
	defaultMaxDecodeDeep = 1
)

// Options configure a Scanner. Zero values take the defaults.
type Options struct {
	// MaxDecodeDepth is how many rounds of base64/hex/percent decoding are scanned again
	// (default 1; gitleaks' library default of 0 turns decoding off). Each round can
	// rescan the whole chunk with every triggered rule.
	MaxDecodeDepth int
	// ChunkSize and ChunkOverlap (bytes) decide how long texts are cut for the workers.
	ChunkSize, ChunkOverlap int

	// reference scans with the reference detector (gitleaks alone, every rule on every
	// chunk, with decoding) instead of the fast one it is tested against.
	reference bool
}

// Scanner finds credentials in text. It is safe for concurrent use.
type Scanner struct {
	det     detector
	chunk   int
	overlap int
	rules   int
}

// detector finds the hits of every rule in one chunk, with offsets into the chunk. There
// are two: gitleaksDetector, gitleaks alone, is the reference; fastDetector, the line
// prefilter (filtered.go), is the one a Scanner uses, and its findings are those of the
// reference hit for hit on every rule (TestFastDetectorEveryRule, TestPrefilterSameFindings).
// After a gitleaks upgrade, a rule the fast detector no longer reads right is named by
// those tests.
type detector interface {
	detect(ctx context.Context, path, chunk string) []hit
}

// gitleaksDetector is the reference detector: one gitleaks detector with every rule.
type gitleaksDetector struct{ det *detect.Detector }

func (g gitleaksDetector) detect(ctx context.Context, path, chunk string) []hit {
	return scanWith(ctx, g.det, path, chunk)
}

// NewScanner builds the gitleaks configuration in code (see the package doc) and returns
// a Scanner.
func NewScanner(opts Options) (*Scanner, error) {
	cfg, err := buildConfig()
	if err != nil {
		return nil, err
	}
	det := detect.NewDetector(cfg)
	det.IgnoreGitleaksAllow = true
	det.MaxDecodeDepth = opts.MaxDecodeDepth
	if det.MaxDecodeDepth <= 0 {
		det.MaxDecodeDepth = defaultMaxDecodeDeep
	}
	det.Redact = 0 // the secret is needed to fingerprint and locate it; it never leaves this package
	s := &Scanner{det: gitleaksDetector{det}, chunk: opts.ChunkSize, overlap: opts.ChunkOverlap, rules: len(cfg.Rules)}
	if !opts.reference {
		g, err := buildGroups(cfg, det.MaxDecodeDepth)
		if err != nil {
			return nil, err
		}
		s.det = &fastDetector{groups: g}
	}
	if s.chunk <= 0 {
		s.chunk = defaultChunkSize
	}
	if s.overlap <= 0 {
		s.overlap = defaultChunkOverlap
	}
	if s.overlap >= s.chunk {
		return nil, fmt.Errorf("scanner: chunk overlap %d must be smaller than the chunk size %d", s.overlap, s.chunk)
	}
	return s, nil
}

// Rules returns the number of rules the scanner applies.
func (s *Scanner) Rules() int { return s.rules }

// buildConfig reads gitleaks' embedded default rules with a private viper instance and
// adjusts them for envgap.
func buildConfig() (config.Config, error) {
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		return config.Config{}, fmt.Errorf("gitleaks default config: %w", err)
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return config.Config{}, fmt.Errorf("gitleaks default config: %w", err)
	}
	if vc.Extend.Path != "" || vc.Extend.URL != "" || vc.Extend.UseDefault {
		return config.Config{}, fmt.Errorf("gitleaks default config extends another config; envgap builds its config from the defaults only")
	}
	cfg, err := vc.Translate()
	if err != nil {
		return config.Config{}, fmt.Errorf("gitleaks default config: %w", err)
	}
	global, err := withoutPathAllowlists(cfg.Allowlists)
	if err != nil {
		return config.Config{}, err
	}
	cfg.Allowlists = global
	for id, r := range cfg.Rules {
		if r.Allowlists, err = withoutPathAllowlists(r.Allowlists); err != nil {
			return config.Config{}, fmt.Errorf("rule %s: %w", id, err)
		}
		cfg.Rules[id] = r
	}
	// The jwt rule's keyword "ey" occurs in almost any text ("key", "they"), so the rule
	// ran everywhere. Every match of its regex contains ".ey" (the dot before the
	// payload), so that keyword selects the same matches and skips most texts.
	if r, ok := cfg.Rules["jwt"]; ok && len(r.Keywords) == 1 && r.Keywords[0] == "ey" && strings.Contains(r.Regex.String(), `\.ey`) {
		r.Keywords = []string{".ey"}
		cfg.Rules["jwt"] = r
		cfg.Keywords[".ey"] = struct{}{}
	}
	for _, r := range envgapRules() {
		if _, dup := cfg.Rules[r.RuleID]; dup {
			return config.Config{}, fmt.Errorf("rule %s already in gitleaks' defaults", r.RuleID)
		}
		if err := r.Validate(); err != nil {
			return config.Config{}, fmt.Errorf("rule %s: %w", r.RuleID, err)
		}
		cfg.Rules[r.RuleID] = r
		cfg.OrderedRules = append(cfg.OrderedRules, r.RuleID)
		for _, k := range r.Keywords {
			cfg.Keywords[k] = struct{}{}
		}
	}
	return cfg, nil
}

// withoutPathAllowlists returns fresh allowlists with every path condition removed: an OR
// allowlist keeps its other conditions (dropped when none is left), an AND allowlist with
// a path is dropped whole.
func withoutPathAllowlists(in []*config.Allowlist) ([]*config.Allowlist, error) {
	var out []*config.Allowlist
	for _, a := range in {
		if len(a.Paths) > 0 && a.MatchCondition == config.AllowlistMatchAnd {
			continue
		}
		n := &config.Allowlist{
			Description:    a.Description,
			MatchCondition: a.MatchCondition,
			Commits:        a.Commits,
			RegexTarget:    a.RegexTarget,
			Regexes:        a.Regexes,
			StopWords:      a.StopWords,
		}
		if len(n.Commits) == 0 && len(n.Regexes) == 0 && len(n.StopWords) == 0 {
			continue
		}
		if err := n.Validate(); err != nil {
			return nil, fmt.Errorf("allowlist %q: %w", a.Description, err)
		}
		out = append(out, n)
	}
	return out, nil
}

func envgapRules() []config.Rule {
	return []config.Rule{
		{
			// The value may follow its name on the same line or the next (not further:
			// the rule stays one the line prefilter runs on keyword lines).
			RuleID:      RuleAWSSecretKey,
			Description: "AWS secret access key next to its variable name",
			Regex:       glregexp.MustCompile(`(?i)aws_?secret_?(?:access_?)?key(?:_?id)?["']?[ \t]*(?:\r?\n[ \t]*)?(?:=|:|=>)[ \t]*(?:\r?\n[ \t]*)?["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+]|$)`),
			SecretGroup: 1,
			Entropy:     3,
			Keywords:    []string{"aws_secret", "awssecret", "aws_secret_access_key", "secretaccesskey"},
			Tags:        []string{},
		},
		{
			RuleID:      RuleAuthHeader,
			Description: "Value of an HTTP Authorization header",
			Regex:       glregexp.MustCompile(`(?i)\bauthorization["']?\s*[:=,]\s*["']?(?:bearer|basic|token|apikey|api-key)[ \t]+([^\s"'\x60\\,;)]{3,400})`),
			SecretGroup: 1,
			Keywords:    []string{"authorization"},
			Tags:        []string{},
		},
		{
			RuleID:      RuleGitHubLookalike,
			Description: "Text that starts like a GitHub token",
			Regex:       glregexp.MustCompile(`\b((?:gh[pousr]_|github_pat_)[A-Za-z0-9_]+)`),
			SecretGroup: 1,
			Keywords:    []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
			Tags:        []string{},
		},
	}
}

// hit is one finding inside one text, before tiers and fingerprints.
type hit struct {
	rule       string
	secret     string
	start, end int // byte range of the secret in the text
	matchStart int // byte range of the whole match
	matchEnd   int
	decoded    bool
}

// scanWith runs one gitleaks detector on text and returns hits with offsets into text.
func scanWith(ctx context.Context, det *detect.Detector, path, chunk string) []hit {
	fs := det.DetectContext(ctx, detect.Fragment{Raw: chunk, FilePath: path})
	if len(fs) == 0 {
		return nil
	}
	nl := newlineIndex(chunk)
	out := make([]hit, 0, len(fs))
	for _, f := range fs {
		h, ok := locate(chunk, nl, f)
		if ok {
			out = append(out, h)
		}
	}
	return out
}

// newlineIndex returns the offsets of every '\n' in s.
func newlineIndex(s string) []int {
	var out []int
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			break
		}
		out = append(out, i+j)
		i += j + 1
	}
	return out
}

// locate turns gitleaks' line and column numbers back into byte offsets. gitleaks counts
// lines from 0 and columns from the previous newline's offset (or 0 on the first line).
func locate(chunk string, nl []int, f report.Finding) (hit, bool) {
	prev := func(line int) int {
		if line <= 0 || len(nl) == 0 {
			return 0
		}
		if line-1 < len(nl) {
			return nl[line-1]
		}
		return nl[len(nl)-1]
	}
	decoded := false
	for _, t := range f.Tags {
		if strings.HasPrefix(t, "decoded:") {
			decoded = true
		}
	}
	return locateAt(chunk, f.RuleID, f.Secret, decoded, prev(f.StartLine)+f.StartColumn-1, prev(f.EndLine)+f.EndColumn)
}

// locateAt finds the secret of a finding whose match gitleaks located at [ms, me).
func locateAt(chunk, rule, secret string, decoded bool, ms, me int) (hit, bool) {
	ms = clamp(ms, 0, len(chunk))
	me = clamp(me, ms, len(chunk))
	h := hit{rule: rule, secret: secret, matchStart: ms, matchEnd: me}
	if secret == "" {
		return h, false
	}
	if !decoded {
		// Search a little around the reported match for the secret itself.
		ws, we := clamp(ms-2, 0, len(chunk)), clamp(me+2, 0, len(chunk))
		if i := strings.Index(chunk[ws:we], secret); i >= 0 {
			h.start, h.end = ws+i, ws+i+len(secret)
			return h, true
		}
		if i := strings.Index(chunk[ws:], secret); i >= 0 && i < 4096 {
			h.start, h.end = ws+i, ws+i+len(secret)
			return h, true
		}
	}
	// Decoded (or not found literally): the secret is the encoded text at the match.
	h.decoded = true
	h.start, h.end = ms, me
	if h.end <= h.start {
		return h, false
	}
	return h, true
}

func clamp(v, lo, hi int) int {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}

// chunkSpan is one piece of a text: [start, end) with the line number of its first byte.
type chunkSpan struct {
	start, end int
	cut        bool // ends inside a line (no line break found near the end)
}

// chunks cuts text into spans of about size bytes that overlap by overlap bytes, ending at
// line breaks when one is in the last quarter of the span.
func chunks(text string, size, overlap int) []chunkSpan {
	if len(text) <= size {
		return []chunkSpan{{0, len(text), false}}
	}
	var out []chunkSpan
	for start := 0; start < len(text); {
		end := start + size
		if end >= len(text) {
			out = append(out, chunkSpan{start, len(text), false})
			break
		}
		cut := false
		if i := strings.LastIndexByte(text[end-size/4:end], '\n'); i >= 0 {
			end = end - size/4 + i + 1
		} else {
			cut = true
		}
		out = append(out, chunkSpan{start, end, cut})
		next := end - overlap
		if next <= start {
			next = end
		}
		start = next
	}
	return out
}

// dedupe merges hits found twice in overlapping chunks and drops lookalike hits that lie
// inside a real token's hit.
func dedupe(hs []hit) []hit {
	sort.Slice(hs, func(i, j int) bool {
		if hs[i].start != hs[j].start {
			return hs[i].start < hs[j].start
		}
		if hs[i].end != hs[j].end {
			return hs[i].end < hs[j].end
		}
		return hs[i].rule < hs[j].rule
	})
	out := hs[:0]
	for i, h := range hs {
		if i > 0 && h.start == hs[i-1].start && h.end == hs[i-1].end && h.rule == hs[i-1].rule {
			continue
		}
		out = append(out, h)
	}
	// A lookalike hit is covered when another rule's hit starting at or before it ends at
	// or after it: the largest end of the other rules' hits up to each start, in one pass.
	final := make([]hit, 0, len(out))
	maxEnd := -1 // of the other rules' hits that start before the current group
	for i := 0; i < len(out); {
		j := i
		groupEnd := maxEnd
		for j < len(out) && out[j].start == out[i].start {
			if out[j].rule != RuleGitHubLookalike {
				groupEnd = max(groupEnd, out[j].end)
			}
			j++
		}
		for _, h := range out[i:j] {
			if h.rule == RuleGitHubLookalike && groupEnd >= h.end {
				continue
			}
			final = append(final, h)
		}
		maxEnd, i = groupEnd, j
	}
	return final
}
