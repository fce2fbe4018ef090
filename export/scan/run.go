package scan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
)

// DefaultMaxTextBytes is the largest text scanned; larger ones are skipped and recorded.
const DefaultMaxTextBytes = 256 << 20

// RunOptions configure a scan of a store.
type RunOptions struct {
	// Review holds the decisions; ReviewBytes the file's bytes (stored with the record)
	// and ReviewPath its name.
	Review      *Review
	ReviewBytes []byte
	ReviewPath  string
	// SourceReview holds the decisions that come with envgap's own source (the review file
	// embedded with it, DefaultReviewFile of the source tree): they decide the harness
	// findings (field FieldHarness) that Review leaves undecided, wherever the binary
	// runs, and are never listed as stale (they belong to the source, not to Review).
	SourceReview *Review
	// Workers bounds the goroutines that scan (default: the number of CPUs).
	Workers int
	// MaxTextBytes: larger texts are skipped with a recorded reason (default 256 MiB).
	MaxTextBytes int64
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Harness holds the files of the source tree the harness zip carries, as export
	// writes them (export.HarnessSource), each a Text of field FieldHarness named by its
	// entry in the zip. nil scans no harness; export then refuses (CheckReviewed).
	Harness []Text
}

// Text is one text to scan and where it comes from.
type Text struct {
	InstanceID string
	Set        schemas.Source
	Field      string
	Path       string
	Content    string
}

// Run scans every text of the store (tasks, candidates, run logs of verdicts, the crawl's
// cached GitHub answers) and the harness zip's source files (opts.Harness), applies the
// review decisions, stores the Record and points scans/latest at it.
func Run(ctx context.Context, st catalog.Store, sc *Scanner, opts RunOptions) (*Record, schemas.Digest, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Review == nil {
		opts.Review = &Review{Version: 1}
	}
	if opts.MaxTextBytes <= 0 {
		opts.MaxTextBytes = DefaultMaxTextBytes
	}
	rec := &Record{Kind: schemas.KindScan, Engine: EngineName, Rules: sc.Rules(), ReviewPath: opts.ReviewPath,
		ScannedAt: opts.Now().UTC().Format(time.RFC3339), Objects: []Object{}, Findings: []Occurrence{},
		Skipped: []Skip{}, Notes: []Skip{}, StaleDecisions: []string{}}
	if opts.ReviewBytes != nil {
		d, err := st.Put(opts.ReviewBytes)
		if err != nil {
			return nil, schemas.Digest{}, err
		}
		rec.Review = d
	}
	texts := make(chan Text, 16)
	var collectErr error
	go func() {
		defer close(texts)
		collectErr = collect(ctx, st, rec, opts.MaxTextBytes, opts.Harness, texts)
	}()
	res := sc.ScanTexts(ctx, texts, opts.Workers)
	if collectErr != nil {
		return nil, schemas.Digest{}, collectErr
	}
	if err := ctx.Err(); err != nil {
		return nil, schemas.Digest{}, err
	}
	rec.Texts, rec.Bytes = res.Texts, res.Bytes
	rec.Findings = append(rec.Findings, res.Findings...)
	rec.Notes = append(rec.Notes, res.Notes...)
	applyDecisions(rec, opts.Review, opts.SourceReview)
	decideModuleChecksums(rec, opts.Harness)
	sortRecord(rec)
	d, err := st.PutJSON(rec)
	if err != nil {
		return nil, d, err
	}
	if err := st.SetRef(data.RefScanLatest, d); err != nil {
		return nil, d, err
	}
	return rec, d, nil
}

func applyDecisions(rec *Record, rv, source *Review) {
	used := map[string]bool{}
	for i := range rec.Findings {
		o := &rec.Findings[i]
		if d, ok := rv.Lookup(o.Fingerprint); ok {
			dd := d
			o.Decision = &dd
			used[d.Fingerprint] = true
			continue
		}
		if o.Field == FieldHarness && source != nil {
			if d, ok := source.Lookup(o.Fingerprint); ok {
				dd := d
				o.Decision = &dd
				continue
			}
		}
		if o.Tier == schemas.TierPublicExample {
			o.Decision = &Decision{Fingerprint: o.Fingerprint, Decision: DecisionFalsePositive,
				Reason: "known public example: " + o.Example, Card: o.Example,
				InstanceID: o.InstanceID, Field: o.Field, Path: o.Path, Rule: o.Rule,
				By: AutoReviewer, At: rec.ScannedAt}
		}
	}
	for _, d := range rv.Decisions {
		if !used[d.Fingerprint] {
			rec.StaleDecisions = append(rec.StaleDecisions, d.Fingerprint)
		}
	}
}

// goSumLine is one line of a go.sum file: module, version (or version/go.mod) and the
// module's hash, "h1:" and the base64 of a SHA-256 (43 characters and one "=").
var goSumLine = regexp.MustCompile(`^[^\s]+ v[^\s]+ h1:[A-Za-z0-9+/]{43}=$`)

// decideModuleChecksums decides the undecided findings in envgap's own go.sum whose whole
// line is a Go module checksum: the hash of a published module, which the go command
// checks against the checksum database, not a credential. Every dependency update
// adds such lines, and a rule such as generic-api-key takes some of them for keys; a
// finding on any other line of the file stays for a person to decide.
func decideModuleChecksums(rec *Record, harness []Text) {
	var sum *Text
	for i := range harness {
		if path.Base(harness[i].Path) == "go.sum" && path.Dir(path.Dir(harness[i].Path)) == "." {
			sum = &harness[i]
		}
	}
	if sum == nil {
		return
	}
	for i := range rec.Findings {
		o := &rec.Findings[i]
		if o.Field != FieldHarness || o.Path != sum.Path || o.Decision != nil {
			continue
		}
		if o.Start < 0 || o.End > int64(len(sum.Content)) || o.Start > o.End {
			continue
		}
		lineStart := strings.LastIndexByte(sum.Content[:o.Start], '\n') + 1
		lineEnd := len(sum.Content)
		if j := strings.IndexByte(sum.Content[o.End:], '\n'); j >= 0 {
			lineEnd = int(o.End) + j
		}
		if !goSumLine.MatchString(strings.TrimSuffix(sum.Content[lineStart:lineEnd], "\r")) {
			continue
		}
		o.Decision = &Decision{Fingerprint: o.Fingerprint, Decision: DecisionFalsePositive,
			Reason: "a Go module checksum in envgap's own go.sum (the hash of published module content), not a credential",
			Card:   "a Go module checksum in envgap's go.sum", Field: o.Field, Path: o.Path,
			Rule: o.Rule, By: AutoReviewer, At: rec.ScannedAt}
	}
}

func sortRecord(rec *Record) {
	sort.Slice(rec.Objects, func(i, j int) bool {
		a, b := rec.Objects[i], rec.Objects[j]
		if a.InstanceID != b.InstanceID {
			return a.InstanceID < b.InstanceID
		}
		return a.Kind < b.Kind
	})
	sort.SliceStable(rec.Findings, func(i, j int) bool { return occLess(rec.Findings[i], rec.Findings[j]) })
	skipLess := func(s []Skip) func(i, j int) bool {
		return func(i, j int) bool {
			a, b := s[i], s[j]
			if a.InstanceID != b.InstanceID {
				return a.InstanceID < b.InstanceID
			}
			if a.Field != b.Field {
				return a.Field < b.Field
			}
			if a.Path != b.Path {
				return a.Path < b.Path
			}
			return a.Reason < b.Reason
		}
	}
	sort.Slice(rec.Skipped, skipLess(rec.Skipped))
	sort.Slice(rec.Notes, skipLess(rec.Notes))
	sort.Strings(rec.StaleDecisions)
}

func occLess(a, b Occurrence) bool {
	if a.InstanceID != b.InstanceID {
		return a.InstanceID < b.InstanceID
	}
	if a.Field != b.Field {
		return a.Field < b.Field
	}
	if a.Path != b.Path {
		return a.Path < b.Path
	}
	if a.Text != b.Text {
		return a.Text.Hex() < b.Text.Hex()
	}
	if a.Start != b.Start {
		return a.Start < b.Start
	}
	return a.Rule < b.Rule
}

type textKey struct {
	id, field, path string
	digest          schemas.Digest
}

// collect sends every text of the store once (a candidate's text that its task repeats is
// sent once) and records objects and skipped texts in rec.
func collect(ctx context.Context, st catalog.Store, rec *Record, max int64, harness []Text, out chan<- Text) error {
	seen := map[textKey]bool{}
	send := func(t Text) error {
		if int64(len(t.Content)) > max {
			rec.Skipped = append(rec.Skipped, Skip{t.InstanceID, t.Field, t.Path, int64(len(t.Content)),
				fmt.Sprintf("larger than the scan limit of %d bytes", max)})
			return nil
		}
		k := textKey{t.InstanceID, t.Field, t.Path, schemas.Hash([]byte(t.Content))}
		if seen[k] {
			return nil
		}
		seen[k] = true
		select {
		case out <- t:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	taskRefs, err := st.Refs(data.RefTasks)
	if err != nil {
		return err
	}
	sets := map[string]schemas.Source{}
	for _, r := range taskRefs {
		var t schemas.Task
		if err := st.GetJSON(r.Digest, &t); err != nil {
			return fmt.Errorf("scan: task %s: %w", r.Name, err)
		}
		sets[t.InstanceID] = t.Source
		rec.Objects = append(rec.Objects, Object{"task", t.InstanceID, r.Digest})
		for _, tx := range TaskTexts(&t) {
			if err := send(tx); err != nil {
				return err
			}
		}
	}
	cands, err := st.Candidates()
	if err != nil {
		return err
	}
	for _, c := range cands {
		sets[c.InstanceID] = c.Set
		rec.Objects = append(rec.Objects, Object{"candidate", c.InstanceID, c.Digest})
		for _, tx := range CandidateTexts(&c.Candidate) {
			if err := send(tx); err != nil {
				return err
			}
		}
	}
	// Verdicts and reproductions (a reproduced failure without a fix) hold run logs alike.
	vrefs, err := st.Refs(data.RefVerdicts)
	if err != nil {
		return err
	}
	rrefs, err := st.Refs(data.RefReproductions)
	if err != nil {
		return err
	}
	for _, r := range append(vrefs, rrefs...) {
		var v schemas.Verdict
		if err := st.GetJSON(r.Digest, &v); err != nil {
			return fmt.Errorf("scan: verdict %s: %w", r.Name, err)
		}
		rec.Objects = append(rec.Objects, Object{"verdict", v.InstanceID, r.Digest})
		runs := append(append([]schemas.Digest{}, v.Before...), v.After...)
		for _, rd := range runs {
			var run schemas.Run
			if err := st.GetJSON(rd, &run); err != nil {
				rec.Skipped = append(rec.Skipped, Skip{v.InstanceID, FieldRunLog, "run " + rd.Short(), 0,
					fmt.Sprintf("run record unreadable: %v", err)})
				continue
			}
			for _, s := range run.Steps {
				path := run.Side + "/" + s.Name
				for _, od := range outputsOf(s) {
					b, err := readCapped(st, od, max)
					if err != nil {
						rec.Skipped = append(rec.Skipped, Skip{v.InstanceID, FieldRunLog, path, int64(len(b)), err.Error()})
						continue
					}
					if err := send(Text{InstanceID: v.InstanceID, Set: sets[v.InstanceID], Field: FieldRunLog, Path: path, Content: string(b)}); err != nil {
						return err
					}
				}
			}
		}
	}
	if err := collectCrawlCache(st, rec, max, send); err != nil {
		return err
	}
	if harness != nil {
		rec.Objects = append(rec.Objects, Object{Kind: "harness", Digest: HarnessDigest(harness)})
		for _, tx := range harness {
			tx.InstanceID, tx.Set, tx.Field = "", "", FieldHarness
			if err := send(tx); err != nil {
				return err
			}
		}
	}
	return nil
}

// HarnessDigest names a harness source tree: the SHA-256 of each file's path and content
// digest, one line per file in the given order. CheckReviewed compares it with the
// tree export is about to write.
func HarnessDigest(files []Text) schemas.Digest {
	var b bytes.Buffer
	for _, f := range files {
		fmt.Fprintf(&b, "%s\x00%s\n", f.Path, schemas.Hash([]byte(f.Content)).Hex())
	}
	return schemas.Hash(b.Bytes())
}

// cachedAnswer is the part of a cached GitHub answer (crawl/ghhttp's record) the scan reads.
type cachedAnswer struct {
	Method string         `json:"method"`
	URL    string         `json:"url"`
	Body   schemas.Digest `json:"body"`
}

// collectCrawlCache sends the bodies of the crawl's cached GitHub answers: a server may
// have echoed a credential into one (not published, but stored).
func collectCrawlCache(st data.Backend, rec *Record, max int64, send func(Text) error) error {
	seen := map[schemas.Digest]bool{}
	for _, stage := range []string{data.MemoGitHubHTTP, data.MemoGitHubCrawl} {
		results, err := st.MemoResults(stage)
		if err != nil {
			return err
		}
		for _, d := range results {
			if seen[d] {
				continue
			}
			seen[d] = true
			var a cachedAnswer
			if err := st.GetJSON(d, &a); err != nil || a.Body.IsZero() {
				rec.Skipped = append(rec.Skipped, Skip{"", FieldCrawlCache, d.Short(), 0, fmt.Sprintf("not a cached answer: %v", err)})
				continue
			}
			rec.Objects = append(rec.Objects, Object{"github_response", "", d})
			path := a.Method + " " + a.URL
			b, err := readCapped(st, a.Body, max)
			if err != nil {
				rec.Skipped = append(rec.Skipped, Skip{"", FieldCrawlCache, path, int64(len(b)), err.Error()})
				continue
			}
			if err := send(Text{Field: FieldCrawlCache, Path: path, Content: string(b)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// outputsOf returns the step's captured output and, when stored apart, its full output.
func outputsOf(s schemas.StepRecord) []schemas.Digest {
	var out []schemas.Digest
	if !s.Output.IsZero() {
		out = append(out, s.Output)
	}
	if !s.FullOutput.IsZero() && s.FullOutput != s.Output {
		out = append(out, s.FullOutput)
	}
	return out
}

// errNotStored marks a full output whose digest is recorded but whose bytes were not kept.
var errNotStored = errors.New("not stored")

func readCapped(st data.ObjectReader, d schemas.Digest, max int64) ([]byte, error) {
	rc, err := st.OpenObject(d)
	if err != nil {
		if errors.Is(err, data.ErrNotFound) {
			return nil, fmt.Errorf("output %s %w in the store: nothing to scan", d.Short(), errNotStored)
		}
		return nil, fmt.Errorf("output %s unreadable: %w", d.Short(), err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, max+1))
	if err != nil {
		return nil, fmt.Errorf("output %s unreadable: %w", d.Short(), err)
	}
	if int64(len(b)) > max {
		return b[:0], fmt.Errorf("output %s is larger than the scan limit of %d bytes", d.Short(), max)
	}
	return b, nil
}

func strp(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// TaskTexts lists the text fields of a task row that the scan covers.
func TaskTexts(t *schemas.Task) []Text {
	return rowTexts(t.InstanceID, t.Source, map[string]string{
		"problem_statement": t.ProblemStatement, "patch": t.Patch,
		"bootstrap_command": t.BootstrapCommand, "resolve_command": t.ResolveCommand,
		"repro_command": t.ReproCommand, "run_command": t.RunCommand, "d2_command": strp(t.D2Command),
		"failure_signature": t.FailureSignature, "expected_failure_regex": t.ExpectedFailureRegex,
	}, t.GoldFiles, t.ProjectFiles)
}

// CandidateTexts lists the text fields of a candidate that the scan covers.
func CandidateTexts(c *schemas.Candidate) []Text {
	return rowTexts(c.InstanceID, c.Set, map[string]string{
		"problem_statement": c.ProblemStatement, "patch": c.Patch, "reason": c.Reason,
		"bootstrap_command": c.BootstrapCommand, "resolve_command": c.ResolveCommand,
		"repro_command": c.ReproCommand, "run_command": c.RunCommand, "d2_command": strp(c.D2Command),
		"failure_signature": c.FailureSignature, "expected_failure_regex": c.ExpectedFailureRegex,
	}, c.GoldFiles, c.ProjectFiles)
}

func rowTexts(id string, set schemas.Source, fields map[string]string, gold, project []schemas.File) []Text {
	var out []Text
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if fields[k] != "" {
			out = append(out, Text{InstanceID: id, Set: set, Field: k, Content: fields[k]})
		}
	}
	for _, f := range gold {
		if f.Content != nil && *f.Content != "" {
			out = append(out, Text{InstanceID: id, Set: set, Field: FieldGoldFiles, Path: f.Path, Content: *f.Content})
		}
	}
	for _, f := range project {
		if f.Content != nil && *f.Content != "" {
			out = append(out, Text{InstanceID: id, Set: set, Field: FieldProjectFiles, Path: f.Path, Content: *f.Content})
		}
	}
	return out
}

// Result is what ScanTexts found.
type Result struct {
	Texts    int
	Bytes    int64
	Findings []Occurrence // without decisions
	Notes    []Skip
}

type job struct {
	t    *textState
	span chunkSpan
}

type textState struct {
	Text
	mu      sync.Mutex
	pending int
	hits    []hit
	cut     bool
}

// ScanTexts scans every text received from in with a bounded pool of workers (default:
// the number of CPUs) and returns the findings in a deterministic order.
func (s *Scanner) ScanTexts(ctx context.Context, in <-chan Text, workers int) Result {
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	jobs := make(chan job, 2*workers)
	done := make(chan *textState, 2*workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				var hs []hit
				if ctx.Err() == nil {
					hs = s.det.detect(ctx, j.t.Path, j.t.Content[j.span.start:j.span.end])
				}
				j.t.mu.Lock()
				for _, h := range hs {
					h.start += j.span.start
					h.end += j.span.start
					h.matchStart += j.span.start
					h.matchEnd += j.span.start
					j.t.hits = append(j.t.hits, h)
				}
				j.t.cut = j.t.cut || j.span.cut
				j.t.pending--
				last := j.t.pending == 0
				j.t.mu.Unlock()
				if last {
					done <- j.t
				}
			}
		}()
	}
	go func() {
		defer func() {
			close(jobs)
			wg.Wait()
			close(done)
		}()
		for t := range in {
			if t.Content == "" {
				continue
			}
			spans := chunks(t.Content, s.chunk, s.overlap)
			ts := &textState{Text: t, pending: len(spans)}
			for _, sp := range spans {
				jobs <- job{ts, sp}
			}
		}
	}()
	var res Result
	for t := range done {
		res.Texts++
		res.Bytes += int64(len(t.Content))
		res.Findings = append(res.Findings, s.finish(t)...)
		res.Notes = append(res.Notes, notesFor(t)...)
	}
	sort.SliceStable(res.Findings, func(i, j int) bool { return occLess(res.Findings[i], res.Findings[j]) })
	return res
}

func notesFor(t *textState) []Skip {
	var out []Skip
	n := func(reason string) {
		out = append(out, Skip{t.InstanceID, t.Field, t.Path, int64(len(t.Content)), reason})
	}
	head := t.Content
	if len(head) > 8192 {
		head = head[:8192]
	}
	if strings.IndexByte(head, 0) >= 0 {
		n("binary content (NUL bytes): scanned as bytes")
	} else if !utf8.ValidString(t.Content) {
		n("invalid UTF-8: scanned as bytes")
	}
	if t.cut {
		n("a line longer than the chunk size: scanned in overlapping pieces")
	}
	return out
}

// finish turns a text's hits into findings: tiers, lines, fingerprints, redacted matches.
func (s *Scanner) finish(t *textState) []Occurrence {
	hs := dedupe(t.hits)
	if len(hs) == 0 {
		return nil
	}
	digest := schemas.Hash([]byte(t.Content))
	out := make([]Occurrence, 0, len(hs))
	maxLen := 0
	for _, h := range hs {
		maxLen = max(maxLen, h.end-h.start)
	}
	line, pos := 1, 0
	for _, h := range hs {
		line += strings.Count(t.Content[pos:h.start], "\n")
		pos = h.start
		tier, example := classify(h, t.Content)
		out = append(out, Occurrence{
			Finding: schemas.Finding{
				InstanceID: t.InstanceID, Field: t.Field, Path: t.Path, Line: line, Rule: h.rule,
				Match: redactedContext(t.Content, h, hs, maxLen), Tier: tier,
				Fingerprint: Fingerprint(t.InstanceID, t.Field, t.Path, h.rule, h.secret),
			},
			Set: t.Set, Text: digest, Start: int64(h.start), End: int64(h.end), Example: example,
		})
	}
	return out
}

// Fingerprint is the stable name of a finding: the SHA-256 of instance, field, path, rule
// and secret. It reveals nothing of the secret beyond letting someone who guesses the
// secret confirm the guess.
func Fingerprint(instanceID, field, path, rule, secret string) string {
	var b bytes.Buffer
	for _, p := range []string{"envgap-scan-v1", instanceID, field, path, rule, secret} {
		b.WriteString(p)
		b.WriteByte(0)
	}
	return schemas.Hash(b.Bytes()).Hex()
}

// redactedContext returns up to 40 bytes either side of the secret on its line, with
// every hit in that window replaced by [REDACTED]. all is sorted by start (dedupe) and
// no hit of it is longer than maxLen: only the hits that can reach the window are read,
// and only the 40 bytes around the secret are searched for line ends (a text of one
// long line full of hits stays linear).
func redactedContext(text string, h hit, all []hit, maxLen int) string {
	ws, we := max(0, h.start-40), min(len(text), h.end+40)
	if i := strings.LastIndexByte(text[ws:h.start], '\n'); i >= 0 {
		ws += i + 1
	}
	if i := strings.IndexByte(text[h.end:we], '\n'); i >= 0 {
		we = h.end + i
	}
	lo := sort.Search(len(all), func(i int) bool { return all[i].start >= ws-maxLen })
	hi := sort.Search(len(all), func(i int) bool { return all[i].start >= we })
	var b strings.Builder
	pos := ws
	for _, o := range all[lo:max(lo, hi)] {
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
