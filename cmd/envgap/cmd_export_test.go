package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/envgap/envgap"
	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/export"
	"github.com/envgap/envgap/lib/release"
	"github.com/envgap/envgap/schemas"
)

// verifiedStore makes a store with the export package's fixture candidates and verdicts.
func verifiedStore(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	st, err := catalog.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddCandidatesFile("../../export/testdata/candidates.jsonl"); err != nil {
		t.Fatal(err)
	}
	for id, o := range map[string]schemas.Outcome{
		"envgap__Ezibenroc__PyRoaringBitMap-93": schemas.OutcomeVerified,
		"envgap__PyCQA__isort-2077":             schemas.OutcomeVerified,
		"envgap__chainer__chainer-679":          schemas.OutcomeAlreadyWorks,
	} {
		c, err := st.CandidateByID(id)
		if err != nil {
			t.Fatal(err)
		}
		v := schemas.Verdict{Kind: "verdict", InstanceID: id, Candidate: c.Digest, Outcome: o, Reason: "test",
			Recipe: schemas.Recipe{Ecosystem: c.Ecosystem, Image: c.Ecosystem.Image(), ResolveCommand: "make", ReproCommand: "make", RunCommand: "make run"}}
		d, err := st.PutJSON(&v)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.SetRef(data.RefVerdicts+id, d); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func exportStore(t testing.TB, storeDir string) string {
	t.Helper()
	st, err := catalog.Open(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "release")
	if _, err := export.Export(st, export.Options{Out: out, Reviewer: passReviewer{}, NoAudit: true, Source: envgap.Source()}); err != nil {
		t.Fatal(err)
	}
	return out
}

// passReviewer is a review with nothing to decide and nothing to redact.
type passReviewer struct{}

func (passReviewer) Check(catalog.Store) error                                      { return nil }
func (passReviewer) RedactTask(catalog.Store, *schemas.Task) (int, error)           { return 0, nil }
func (passReviewer) RedactCandidate(catalog.Store, *schemas.Candidate) (int, error) { return 0, nil }
func (passReviewer) CardSection(catalog.Store, []string) (string, error)            { return "", nil }

func TestAdmitExcludeCorpusIDAndHubCheck(t *testing.T) {
	store := verifiedStore(t)
	out, err := runCLI(t, "--store", store, "admit")
	if err != nil || !strings.Contains(out, "3 admitted, 0 updated, 0 unchanged, 0 refused") {
		t.Fatalf("admit: %q, %v", out, err)
	}
	if out, err = runCLI(t, "--store", store, "admit"); err != nil || !strings.Contains(out, "0 admitted, 0 updated, 3 unchanged") {
		t.Fatalf("admit again: %q, %v", out, err)
	}
	a := exportStore(t, store)
	storeID, err := runCLI(t, "--store", store, "corpus-id")
	if err != nil {
		t.Fatal(err)
	}
	folderID, err := runCLI(t, "corpus-id", a)
	if err != nil || folderID != storeID || len(strings.TrimSpace(folderID)) != 12 {
		t.Fatalf("corpus-id of the folder %q (%v), of the store %q", folderID, err, storeID)
	}
	if out, err := runCLI(t, "hub", "check", "--release", a, "--against", a); err != nil || !strings.Contains(out, "same task set") {
		t.Fatalf("hub check of a folder against itself: %q, %v", out, err)
	}

	if _, err := runCLI(t, "--store", store, "exclude", "envgap__chainer__chainer-679", "--kind", "bogus", "--reason", "x"); exitCode(err) != exitUsage {
		t.Errorf("exclude --kind bogus: exit %d, want %d", exitCode(err), exitUsage)
	}
	out, err = runCLI(t, "--store", store, "exclude", "envgap__chainer__chainer-679", "--reason", "setup.py builds its dependency list at run time.")
	if err != nil || !strings.Contains(out, "excluded envgap__chainer__chainer-679 (control)") {
		t.Fatalf("exclude: %q, %v", out, err)
	}
	b := exportStore(t, store)
	out, err = runCLI(t, "hub", "check", "--release", b, "--against", a)
	if exitCode(err) != exitDamage {
		t.Fatalf("hub check of different releases: exit %d (%v), want %d", exitCode(err), err, exitDamage)
	}
	if !strings.Contains(out, "changed  envgap__chainer__chainer-679: excluded_from_scoring, exclusion_reason, excluded_since") {
		t.Errorf("hub check output lacks the changed columns:\n%s", out)
	}

	// The harness zip: its copy of the tasks is its own folder's, not the other release's.
	zipA := filepath.Join(a, release.HarnessPath)
	if out, err := runCLI(t, "hf", "check", "--release", zipA); err != nil || !strings.Contains(out, "has the release's corpus id "+strings.TrimSpace(storeID)) {
		t.Fatalf("hf check of a folder's own zip: %q, %v", out, err)
	}
	if out, err := runCLI(t, "hub", "check", "--release", zipA, "--corpus-id", strings.TrimSpace(storeID)); err != nil {
		t.Fatalf("hub check --corpus-id of the zip's own id: %q, %v", out, err)
	}
	out, err = runCLI(t, "hf", "check", "--release", zipA, "--against", b)
	if exitCode(err) != exitDamage || !regexp.MustCompile(`(?m)^changed +envgap__chainer__chainer-679: excluded_from_scoring, exclusion_reason, excluded_since$`).MatchString(out) {
		t.Fatalf("hf check of a zip against another release: exit %d (%v), want %d, with the changed columns:\n%s", exitCode(err), err, exitDamage, out)
	}
	if _, err := runCLI(t, "hf", "check", "--release", filepath.Join(t.TempDir(), "loose.zip")); exitCode(err) != exitUsage {
		t.Errorf("hf check of a zip outside a folder without --corpus-id: exit %d (%v), want %d", exitCode(err), err, exitUsage)
	}
}

func TestHubPublishNeedsARepo(t *testing.T) {
	if _, err := runCLI(t, "hub", "publish", t.TempDir(), "--repo", "no-slash"); exitCode(err) != exitUsage {
		t.Errorf("exit %d (%v), want %d", exitCode(err), err, exitUsage)
	}
}

func TestExportReleaseConfigAndFlags(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "release.yaml")
	bib := filepath.Join(dir, "cite.bib")
	if err := os.WriteFile(cfg, []byte("leaderboard: https://example.org/lb\npaper: https://arxiv.org/abs/1\nevaluation_framework: harbor\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bib, []byte("@misc{x, title = {X}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	meta, err := releaseMeta(&exportOptions{ReleaseConfig: cfg, CitationFile: bib, Meta: export.ReleaseConfig{Paper: "https://arxiv.org/abs/2"}})
	if err != nil {
		t.Fatal(err)
	}
	want := export.ReleaseConfig{Leaderboard: "https://example.org/lb", Paper: "https://arxiv.org/abs/2", Citation: "@misc{x, title = {X}}\n", EvaluationFramework: "harbor"}
	if meta != want {
		t.Errorf("meta = %+v, want %+v", meta, want)
	}
	if err := os.WriteFile(cfg, []byte("leaderbord: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "store")
	if _, err := runCLI(t, "--store", store, "export", "--out", filepath.Join(dir, "out"), "--release-config", cfg); exitCode(err) != exitUsage || !strings.Contains(err.Error(), "leaderbord") {
		t.Errorf("export with a misspelt release config key: exit %d (%v), want %d", exitCode(err), err, exitUsage)
	}
}
