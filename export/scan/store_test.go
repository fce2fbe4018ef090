package scan

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
)

var fixedNow = func() time.Time { return time.Date(2026, 9, 28, 12, 0, 0, 0, time.UTC) }

type fixture struct {
	st      *catalog.Catalog
	secrets []string // every fake secret put in the store
	tok     string   // the GitHub token in the task's gold file (to redact)
}

func sp(s string) *string { return &s }

// newFixture stores two candidates (one a task), a verdict with a run log, and fake
// secrets of several kinds in their texts.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	st, err := catalog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := newFakes(7)
	fx := &fixture{st: st, tok: f.githubPAT()}
	slack, npm := f.slackBot(), f.npmToken()
	fx.secrets = []string{fx.tok, slack, npm}
	task := schemas.Candidate{
		Ident: schemas.Ident{InstanceID: "envgap__PyCQA__isort-2077"},
		Set:   schemas.SourceRepaired,
		Spec: schemas.Spec{
			Repo:      "PyCQA/isort",
			CreatedAt: "2023-01-01T00:00:00Z", RegistryDate: "2023-01-02T00:00:00Z", Ecosystem: schemas.EcosystemPython,
			ProblemStatement: "Docs build fails\n\nmkdocs gh-deploy needs ghp_import:\n```\nModuleNotFoundError: No module named 'ghp_import'\n```\n",
			Patch:            "diff --git a/requirements.txt b/requirements.txt\n+ghp-import==2.1.0\n",
			GoldFiles: []schemas.File{
				{Path: "requirements.txt", Content: sp("mkdocs==1.4.2\nghp-import==2.1.0\n")},
				{Path: "ci/deploy.sh", Content: sp("#!/bin/sh\nexport GITHUB_TOKEN=" + fx.tok + "\nmkdocs gh-deploy\n")},
			},
		},
		Origin: schemas.Origin{IssueNumber: 2077},
	}
	lite := schemas.Candidate{
		Ident: schemas.Ident{InstanceID: "envgap__claude-code__java-t9-99"},
		Set:   schemas.SourceLite,
		Spec: schemas.Spec{
			Repo:      "claude-code/java-t9",
			CreatedAt: "2025-01-01T00:00:00Z", RegistryDate: "2025-01-02T00:00:00Z", Ecosystem: schemas.EcosystemJava,
			ProjectFiles: []schemas.File{
				{Path: "README.md", Content: sp("Call the API with:\n\n    curl -H \"Authorization: Bearer <your-token>\" https://api.example.com/v1\n")},
				{Path: "src/main/java/Notify.java", Content: sp("class Notify { static final String HOOK = \"" + slack + "\"; }\n")},
			},
		},
		Origin:  schemas.Origin{IssueNumber: 99},
		Outcome: schemas.OutcomeCodeFix,
		Reason:  "repair changed source",
	}
	if _, err := st.AddCandidateSet("test", "test", []schemas.Candidate{task, lite}, nil); err != nil {
		t.Fatal(err)
	}
	row := task.ToTask()
	d, err := st.PutJSON(&row)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetRef(data.RefTasks+row.InstanceID, d); err != nil {
		t.Fatal(err)
	}
	logD, err := st.Put([]byte("Collecting mkdocs\nnpm notice token " + npm + " used\nERROR: failed\n"))
	if err != nil {
		t.Fatal(err)
	}
	run := schemas.Run{Kind: "run", InstanceID: row.InstanceID, Side: "before",
		Steps: []schemas.StepRecord{{Name: "resolve", Output: logD, FullOutput: schemas.Hash([]byte("not stored"))}}}
	rd, err := st.PutJSON(&run)
	if err != nil {
		t.Fatal(err)
	}
	v := schemas.Verdict{Kind: "verdict", InstanceID: row.InstanceID, Outcome: schemas.OutcomeVerified, Before: []schemas.Digest{rd}}
	vd, err := st.PutJSON(&v)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetRef(data.RefVerdicts+row.InstanceID, vd); err != nil {
		t.Fatal(err)
	}
	return fx
}

func (fx *fixture) scan(t *testing.T, rv *Review) *Record {
	t.Helper()
	b, err := rv.Encode()
	if err != nil {
		t.Fatal(err)
	}
	rec, _, err := Run(context.Background(), fx.st, sharedScanner(t), RunOptions{Review: rv, ReviewBytes: b, ReviewPath: "scan-review.json", Workers: 2, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func findRule(rec *Record, rule string) *Occurrence {
	for i := range rec.Findings {
		if rec.Findings[i].Rule == rule {
			return &rec.Findings[i]
		}
	}
	return nil
}

func TestRunReviewExport(t *testing.T) {
	fx := newFixture(t)
	rv := &Review{Version: 1}
	rec := fx.scan(t, rv)

	for _, want := range []struct {
		rule, field string
		tier        schemas.Tier
	}{
		{"github-pat", FieldGoldFiles, schemas.TierLikelyReal},
		{"slack-bot-token", FieldProjectFiles, schemas.TierLikelyReal},
		{"npm-access-token", FieldRunLog, schemas.TierLikelyReal},
		{RuleGitHubLookalike, "problem_statement", schemas.TierToReview},
		{RuleAuthHeader, FieldProjectFiles, schemas.TierPublicExample},
	} {
		o := findRule(rec, want.rule)
		if o == nil {
			t.Errorf("no %s finding", want.rule)
			continue
		}
		if o.Field != want.field || o.Tier != want.tier {
			t.Errorf("%s: field %s tier %s, want %s %s", want.rule, o.Field, o.Tier, want.field, want.tier)
		}
	}
	if o := findRule(rec, RuleAuthHeader); o != nil && (o.Decision == nil || o.Decision.By != AutoReviewer) {
		t.Errorf("public example not decided automatically: %+v", o.Decision)
	}
	if len(rec.Skipped) != 1 || !strings.Contains(rec.Skipped[0].Reason, "not stored") {
		t.Errorf("skipped = %+v, want the full output that was not stored", rec.Skipped)
	}

	// Export refuses while findings are unreviewed, naming them.
	err := CheckReviewed(fx.st, nil)
	var un *UnreviewedError
	if !errors.As(err, &un) {
		t.Fatalf("CheckReviewed = %v, want *UnreviewedError", err)
	}
	fps := map[string]bool{}
	for _, f := range un.Findings {
		fps[f.Fingerprint] = true
	}
	if len(fps) != 4 || len(un.Findings) != 5 {
		t.Errorf("%d unreviewed fingerprints in %d places, want 4 (github, slack, npm, lookalike) in 5: %v", len(fps), len(un.Findings), err)
	}
	if !strings.Contains(err.Error(), "envgap__PyCQA__isort-2077 gold_files ci/deploy.sh line 2: github-pat") {
		t.Errorf("error does not name the place: %v", err)
	}

	// Decide every finding, re-scan, and export passes.
	decide := func(rule, decision, reason, card string) {
		o := findRule(rec, rule)
		if err := rv.Decide(Decision{Fingerprint: o.Fingerprint, Decision: decision, Reason: reason, Card: card, By: "tester"}, rec, fixedNow()); err != nil {
			t.Fatal(err)
		}
	}
	decide("github-pat", DecisionRedact, "a real-looking token in a deploy script", "")
	decide("slack-bot-token", DecisionRedact, "", "")
	decide("npm-access-token", DecisionRedact, "", "")
	decide(RuleGitHubLookalike, DecisionFalsePositive, "ghp_import is the ghp-import package", "ghp_import")
	rec = fx.scan(t, rv)
	if err := CheckReviewed(fx.st, nil); err != nil {
		t.Fatalf("CheckReviewed after review: %v", err)
	}

	// Redactions apply to the task row.
	reds, err := Redactions(fx.st)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := fx.st.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	row := tasks[0]
	n, err := ApplyRedactions(&row, reds)
	if err != nil || n != 1 {
		t.Fatalf("ApplyRedactions = %d, %v; want 1", n, err)
	}
	if got := *row.GoldFiles[1].Content; strings.Contains(got, fx.tok) || !strings.Contains(got, "GITHUB_TOKEN=[REDACTED:github-pat]\n") {
		t.Errorf("redacted file = %q", got)
	}
	liteEntry, err := fx.st.CandidateByID("envgap__claude-code__java-t9-99")
	if err != nil {
		t.Fatal(err)
	}
	lite := liteEntry.Candidate
	if n, err := ApplyCandidateRedactions(&lite, reds); err != nil || n != 1 || strings.Contains(*lite.ProjectFiles[1].Content, fx.secrets[1]) {
		t.Errorf("candidate redaction: %d, %v", n, err)
	}
	// A task whose text changed since the scan is refused.
	changed := tasks[0]
	changed.GoldFiles = append([]schemas.File{}, changed.GoldFiles...)
	changed.GoldFiles[1].Content = sp(*changed.GoldFiles[1].Content + "echo done\n")
	if _, err := ApplyRedactions(&changed, reds); err == nil || !strings.Contains(err.Error(), "changed since") {
		t.Errorf("changed text: err = %v", err)
	}

	// The card section.
	card := CardSection(rec, []string{"envgap__PyCQA__isort-2077"})
	for _, want := range []string{
		"All text was scanned for credentials before export",
		"one credential was replaced in the published text by [REDACTED:<rule>] (a credential (github-pat) in envgap__PyCQA__isort-2077",
		"ghp_import in envgap__PyCQA__isort-2077",
		"In the projects coding agents wrote, the scan also matched an example Authorization header",
	} {
		if !strings.Contains(card, want) {
			t.Errorf("card section lacks %q:\n%s", want, card)
		}
	}

	// A task admitted after the scan makes the scan stale.
	other := tasks[0]
	other.InstanceID = "envgap__o__new-1"
	d, _ := fx.st.PutJSON(&other)
	if err := fx.st.SetRef(data.RefTasks+other.InstanceID, d); err != nil {
		t.Fatal(err)
	}
	var stale *StaleError
	if err := CheckReviewed(fx.st, nil); !errors.As(err, &stale) {
		t.Errorf("CheckReviewed after a new task = %v, want *StaleError", err)
	}
}

// The scan's outputs (record, review file, error messages, card) never hold a secret or
// any 8-byte piece of one.
func TestNoSecretInOutputs(t *testing.T) {
	fx := newFixture(t)
	rv := &Review{Version: 1}
	rec := fx.scan(t, rv)
	for _, o := range rec.Findings {
		if o.Tier != schemas.TierPublicExample {
			rv.Decide(Decision{Fingerprint: o.Fingerprint, Decision: DecisionRedact, By: "tester"}, rec, fixedNow())
		}
	}
	rec = fx.scan(t, rv)
	d, err := fx.st.Ref(data.RefScanLatest)
	if err != nil {
		t.Fatal(err)
	}
	recBytes, _ := fx.st.Get(d)
	reviewBytes, _ := rv.Encode()
	outputs := map[string]string{
		"record":      string(recBytes),
		"review file": string(reviewBytes),
		"card":        CardSection(rec, []string{"envgap__PyCQA__isort-2077"}),
		"unreviewed":  (&UnreviewedError{Findings: []schemas.Finding{rec.Findings[0].Finding}}).Error(),
	}
	// Every object the scan wrote: everything reachable from scans/latest that is not a
	// candidate, task, run or log the fixture stored itself.
	for name, text := range outputs {
		for _, s := range fx.secrets {
			if containsPiece(text, s, 8) {
				t.Errorf("%s contains part of a secret", name)
			}
		}
	}
	// The refs log and memo never hold content either.
	err = filepath.WalkDir(filepath.Join(fx.st.Dir(), "refs"), func(p string, de os.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		for _, s := range fx.secrets {
			if containsPiece(string(b), s, 8) {
				t.Errorf("ref %s contains part of a secret", p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestReviewFile(t *testing.T) {
	fp := strings.Repeat("a", 64)
	cases := []struct {
		name, json, wantErr string
	}{
		{"ok", `{"version":1,"decisions":[{"fingerprint":"` + fp + `","decision":"redact","by":"x","at":"2026-09-28"}]}`, ""},
		{"empty", `{"version":1,"decisions":[]}`, ""},
		{"bad version", `{"version":2,"decisions":[]}`, "version 2"},
		{"bad decision", `{"version":1,"decisions":[{"fingerprint":"` + fp + `","decision":"ignore","by":"x","at":"y"}]}`, `decision "ignore"`},
		{"fp without reason", `{"version":1,"decisions":[{"fingerprint":"` + fp + `","decision":"false_positive","by":"x","at":"y"}]}`, "needs a reason"},
		{"short fingerprint", `{"version":1,"decisions":[{"fingerprint":"abc","decision":"redact","by":"x","at":"y"}]}`, "64 lower-case hex"},
		{"duplicate", `{"version":1,"decisions":[{"fingerprint":"` + fp + `","decision":"redact","by":"x","at":"y"},{"fingerprint":"` + fp + `","decision":"redact","by":"x","at":"y"}]}`, "also decided"},
		{"no by", `{"version":1,"decisions":[{"fingerprint":"` + fp + `","decision":"redact","at":"y"}]}`, "by and at"},
		{"unknown field", `{"version":1,"decisions":[],"extra":1}`, "unknown field"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseReview("r.json", []byte(c.json))
			if c.wantErr == "" && err != nil {
				t.Fatalf("err = %v", err)
			}
			if c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("err = %v, want %q", err, c.wantErr)
			}
		})
	}
	// The committed file parses.
	if _, _, err := LoadReview(filepath.Join("..", "..", DefaultReviewFile)); err != nil {
		t.Errorf("committed review file: %v", err)
	}
}
