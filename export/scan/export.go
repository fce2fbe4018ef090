package scan

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
)

// UnreviewedError lists findings that have no decision yet.
type UnreviewedError struct {
	Findings []schemas.Finding
}

func (e *UnreviewedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d credential finding(s) not reviewed; decide each in %s (envgap scan decide FINGERPRINT ...), then run envgap scan again:", len(e.Findings), DefaultReviewFile)
	for _, f := range e.Findings {
		fmt.Fprintf(&b, "\n  %s %s", describe(f), f.Fingerprint)
	}
	return b.String()
}

// describe names a finding's place: task, field, path, line, rule and tier.
func describe(f schemas.Finding) string {
	where := f.Field
	if f.InstanceID == "" {
		return fmt.Sprintf("%s %s line %d: %s (%s)", f.Field, f.Path, f.Line, f.Rule, f.Tier)
	}
	if f.Path != "" {
		where += " " + f.Path
	}
	return fmt.Sprintf("%s %s line %d: %s (%s)", f.InstanceID, where, f.Line, f.Rule, f.Tier)
}

// StaleError says the latest scan does not cover what the store holds now.
type StaleError struct {
	Problems []string
}

func (e *StaleError) Error() string {
	return "the latest credential scan does not cover the store's current text; run envgap scan again:\n  " + strings.Join(e.Problems, "\n  ")
}

// CheckReviewed refuses (with *StaleError or *UnreviewedError) unless the latest scan
// covers every task, candidate and verdict the store holds now and the harness source
// files export is about to write (harness, as RunOptions.Harness takes them; nil when
// no harness zip is written), skipped no exported text, and every finding has a
// decision. A harness finding decided redact is refused too: the zip carries the source
// as the binary was built, so the secret must leave the source (or be decided
// false_positive).
func CheckReviewed(st catalog.Store, harness []Text) error {
	rec, _, err := Latest(st)
	if err != nil {
		return err
	}
	scanned := map[Object]bool{}
	for _, o := range rec.Objects {
		scanned[o] = true
	}
	var stale []string
	if harness != nil && !scanned[Object{Kind: "harness", Digest: HarnessDigest(harness)}] {
		stale = append(stale, "the harness zip's source (envgap's own, as this binary embeds it) was not scanned or has changed since: run envgap scan with this binary")
	}
	taskRefs, err := st.Refs(data.RefTasks)
	if err != nil {
		return err
	}
	for _, r := range taskRefs {
		id := strings.TrimPrefix(r.Name, data.RefTasks)
		if !scanned[Object{"task", id, r.Digest}] {
			stale = append(stale, "task "+id+" changed or was admitted after the scan")
		}
	}
	cands, err := st.Candidates()
	if err != nil {
		return err
	}
	for _, c := range cands {
		if !scanned[Object{"candidate", c.InstanceID, c.Digest}] {
			stale = append(stale, "candidate "+c.InstanceID+" was added after the scan")
		}
	}
	vrefs, err := st.Refs(data.RefVerdicts)
	if err != nil {
		return err
	}
	for _, r := range vrefs {
		id := strings.TrimPrefix(r.Name, data.RefVerdicts)
		if !scanned[Object{"verdict", id, r.Digest}] {
			stale = append(stale, "verdict of "+id+" changed after the scan")
		}
	}
	for _, s := range rec.Skipped {
		if published(s.Field) {
			stale = append(stale, fmt.Sprintf("%s %s %s was not scanned: %s", s.InstanceID, s.Field, s.Path, s.Reason))
		}
	}
	if len(stale) > 0 {
		return &StaleError{Problems: stale}
	}
	var redacted []string
	for _, o := range rec.Findings {
		if o.Field == FieldHarness && o.Decision != nil && o.Decision.Decision == DecisionRedact {
			redacted = append(redacted, fmt.Sprintf("%s line %d (%s, %s) is decided redact, but the harness zip carries envgap's source unchanged: remove the secret from the source and rebuild envgap, or decide false_positive if it is not a credential", o.Path, o.Line, o.Rule, o.Fingerprint))
		}
	}
	if len(redacted) > 0 {
		return fmt.Errorf("credential scan: %s", strings.Join(redacted, "; "))
	}
	if un := rec.Unreviewed(); len(un) > 0 {
		e := &UnreviewedError{}
		for _, o := range un {
			e.Findings = append(e.Findings, o.Finding)
		}
		return e
	}
	return nil
}

// Redaction is one secret to replace in exported text: the text (by digest) of an
// instance's field and path, and the byte range of the secret in it.
type Redaction struct {
	InstanceID  string         `json:"instance_id"`
	Field       string         `json:"field"`
	Path        string         `json:"path,omitempty"`
	Rule        string         `json:"rule"`
	Fingerprint string         `json:"fingerprint"`
	Text        schemas.Digest `json:"text"`
	Start       int64          `json:"start"`
	End         int64          `json:"end"`
}

// Placeholder is the text that replaces a redacted secret.
func Placeholder(rule string) string { return "[REDACTED:" + rule + "]" }

// Redactions returns every occurrence the latest scan's decisions redact, sorted.
func Redactions(st catalog.Store) ([]Redaction, error) {
	rec, _, err := Latest(st)
	if err != nil {
		return nil, err
	}
	return rec.Redactions(), nil
}

// Redactions returns the record's redact decisions as byte ranges.
func (r *Record) Redactions() []Redaction {
	var out []Redaction
	for _, o := range r.Findings {
		if o.Decision != nil && o.Decision.Decision == DecisionRedact {
			out = append(out, Redaction{o.InstanceID, o.Field, o.Path, o.Rule, o.Fingerprint, o.Text, o.Start, o.End})
		}
	}
	return out
}

// ApplyRedactions replaces the redacted secrets in a task row's texts with
// Placeholder(rule) and returns how many it replaced. A redaction of this task whose text
// has changed since the scan is an error (run envgap scan again); redactions of other
// instances, and of texts a task does not carry (run logs), are ignored.
func ApplyRedactions(t *schemas.Task, reds []Redaction) (int, error) {
	return applyRow(t.InstanceID, reds, rowFields{
		"problem_statement": &t.ProblemStatement, "patch": &t.Patch,
		"bootstrap_command": &t.BootstrapCommand, "resolve_command": &t.ResolveCommand,
		"repro_command": &t.ReproCommand, "run_command": &t.RunCommand, "d2_command": t.D2Command,
		"failure_signature": &t.FailureSignature, "expected_failure_regex": &t.ExpectedFailureRegex,
	}, t.GoldFiles, t.ProjectFiles)
}

// ApplyCandidateRedactions is ApplyRedactions for a candidate row.
func ApplyCandidateRedactions(c *schemas.Candidate, reds []Redaction) (int, error) {
	return applyRow(c.InstanceID, reds, rowFields{
		"problem_statement": &c.ProblemStatement, "patch": &c.Patch, "reason": &c.Reason,
		"bootstrap_command": &c.BootstrapCommand, "resolve_command": &c.ResolveCommand,
		"repro_command": &c.ReproCommand, "run_command": &c.RunCommand, "d2_command": c.D2Command,
		"failure_signature": &c.FailureSignature, "expected_failure_regex": &c.ExpectedFailureRegex,
	}, c.GoldFiles, c.ProjectFiles)
}

type rowFields map[string]*string

func applyRow(id string, reds []Redaction, fields rowFields, gold, project []schemas.File) (int, error) {
	type target struct{ field, path string }
	byTarget := map[target][]Redaction{}
	for _, r := range reds {
		if r.InstanceID == id {
			byTarget[target{r.Field, r.Path}] = append(byTarget[target{r.Field, r.Path}], r)
		}
	}
	if len(byTarget) == 0 {
		return 0, nil
	}
	n := 0
	var errs []error
	do := func(field, path string, p *string) {
		rs := byTarget[target{field, path}]
		if p == nil || len(rs) == 0 {
			return
		}
		out, k, err := redactText(*p, rs)
		if err != nil {
			where := field
			if path != "" {
				where += " " + path
			}
			errs = append(errs, fmt.Errorf("%s %s: %w", id, where, err))
			return
		}
		*p = out
		n += k
	}
	for name, p := range fields {
		do(name, "", p)
	}
	for i := range gold {
		do(FieldGoldFiles, gold[i].Path, gold[i].Content)
	}
	for i := range project {
		do(FieldProjectFiles, project[i].Path, project[i].Content)
	}
	return n, errors.Join(errs...)
}

// redactText replaces the ranges of the redactions that belong to text (by digest). The
// redactions may name several versions of the text (a candidate's and a task's); when
// none names this one, the text changed since the scan.
func redactText(text string, rs []Redaction) (string, int, error) {
	d := schemas.Hash([]byte(text))
	var mine []Redaction
	for _, r := range rs {
		if r.Text == d {
			mine = append(mine, r)
		}
	}
	if len(mine) == 0 {
		return text, 0, fmt.Errorf("text changed since the credential scan (scanned %s, now %s): run envgap scan again", rs[0].Text.Short(), d.Short())
	}
	sort.Slice(mine, func(i, j int) bool { return mine[i].Start < mine[j].Start })
	var b strings.Builder
	pos := int64(0)
	n := 0
	for _, r := range mine {
		if r.Start < 0 || r.End > int64(len(text)) || r.End <= r.Start {
			return text, 0, fmt.Errorf("redaction %s: range %d-%d outside the text", r.Fingerprint[:12], r.Start, r.End)
		}
		if r.Start < pos { // overlaps the previous one
			if r.End > pos {
				pos = r.End
			}
			continue
		}
		b.WriteString(text[pos:r.Start])
		b.WriteString(Placeholder(r.Rule))
		pos = r.End
		n++
	}
	b.WriteString(text[pos:])
	return b.String(), n, nil
}
