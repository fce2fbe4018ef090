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

// TestHarnessTexts: the harness zip's source files are scanned as exported text (field
// harness, no instance); a finding there needs a decision, the card names it, and a scan
// of another source tree (or none) does not cover the export's.
func TestHarnessTexts(t *testing.T) {
	st, err := catalog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tok := newFakes(11).githubPAT()
	harness := []Text{
		{Path: "envgap-source/go.mod", Content: "module example.com/x\n"},
		{Path: "envgap-source/cmd/x/x.go", Content: "package x\n\nconst tok = \"" + tok + "\"\n"},
	}
	run := func(rv *Review, h []Text) *Record {
		t.Helper()
		rec, _, err := Run(context.Background(), st, sharedScanner(t), RunOptions{Review: rv, Workers: 2, Now: fixedNow, Harness: h})
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	rec := run(nil, harness)
	if len(rec.Findings) != 1 || rec.Texts != 2 || len(rec.Objects) != 1 || rec.Objects[0].Kind != "harness" {
		t.Fatalf("record: %d findings, %d texts, objects %+v", len(rec.Findings), rec.Texts, rec.Objects)
	}
	f := rec.Findings[0]
	if f.Field != FieldHarness || f.Path != "envgap-source/cmd/x/x.go" || f.InstanceID != "" || f.Line != 3 || f.Tier != schemas.TierLikelyReal ||
		f.Fingerprint != Fingerprint("", FieldHarness, f.Path, f.Rule, tok) {
		t.Fatalf("finding: %+v", f.Finding)
	}
	var un *UnreviewedError
	if err := CheckReviewed(st, harness); !errors.As(err, &un) || !strings.Contains(err.Error(), "harness envgap-source/cmd/x/x.go line 3") {
		t.Fatalf("CheckReviewed with an undecided harness finding: %v", err)
	}
	rv := &Review{Version: 1}
	if err := rv.Decide(Decision{Fingerprint: f.Fingerprint, Decision: DecisionFalsePositive, Reason: "test", Card: "a test constant", By: "t"}, rec, time.Now()); err != nil {
		t.Fatal(err)
	}
	rec = run(rv, harness)
	if err := CheckReviewed(st, harness); err != nil {
		t.Fatalf("CheckReviewed after the review: %v", err)
	}
	if card := CardSection(rec, nil); !strings.Contains(card, "In envgap's own source in the harness zip (tests left out), the scan matched a test constant;") ||
		strings.Contains(card, "candidates") {
		t.Errorf("card: %s", card)
	}
	other := append([]Text{}, harness...)
	other[0].Content += "\n"
	var stale *StaleError
	if err := CheckReviewed(st, other); !errors.As(err, &stale) || !strings.Contains(err.Error(), "harness zip's source") {
		t.Errorf("CheckReviewed of another source tree: %v", err)
	}
	run(rv, nil)
	if err := CheckReviewed(st, harness); !errors.As(err, &stale) {
		t.Errorf("CheckReviewed after a scan without the harness: %v", err)
	}
}

// TestSourceReviewDecidesHarnessFindings: the decisions that come with envgap's own source
// decide its harness findings when the review file in use has none (the binary run outside
// its checkout, with another review file or none), never a finding of another field, and
// are never listed as stale; the review file's own decision wins.
func TestSourceReviewDecidesHarnessFindings(t *testing.T) {
	st, err := catalog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tok := newFakes(12).githubPAT()
	harness := []Text{{Path: "envgap-source/cmd/x/x.go", Content: "package x\n\nconst tok = \"" + tok + "\"\n"}}
	run := func(rv, source *Review) *Record {
		t.Helper()
		rec, _, err := Run(context.Background(), st, sharedScanner(t), RunOptions{Review: rv, SourceReview: source, Workers: 2, Now: fixedNow, Harness: harness})
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	rec := run(nil, nil)
	if len(rec.Findings) != 1 || rec.Findings[0].Decision != nil {
		t.Fatalf("findings without a review: %+v", rec.Findings)
	}
	fp := rec.Findings[0].Fingerprint
	source := &Review{Version: 1}
	if err := source.Decide(Decision{Fingerprint: fp, Decision: DecisionFalsePositive, Reason: "decided with the source", By: "maintainer"}, rec, fixedNow()); err != nil {
		t.Fatal(err)
	}
	// A decision of the source for a fingerprint that no longer occurs is not stale here.
	source.Decisions = append(source.Decisions, Decision{Fingerprint: strings.Repeat("ab", 32), Decision: DecisionFalsePositive, Reason: "gone", By: "m", At: "2026-01-01"})
	rec = run(&Review{Version: 1}, source)
	if d := rec.Findings[0].Decision; d == nil || d.Reason != "decided with the source" {
		t.Fatalf("harness finding with the source's review: %+v", rec.Findings[0])
	}
	if len(rec.StaleDecisions) != 0 {
		t.Errorf("stale decisions %v: the source's decisions are not the review file's", rec.StaleDecisions)
	}
	if err := CheckReviewed(st, harness); err != nil {
		t.Errorf("CheckReviewed with the source's decision: %v", err)
	}
	own := &Review{Version: 1}
	if err := own.Decide(Decision{Fingerprint: fp, Decision: DecisionFalsePositive, Reason: "the file's own", By: "user"}, rec, fixedNow()); err != nil {
		t.Fatal(err)
	}
	if d := run(own, source).Findings[0].Decision; d == nil || d.Reason != "the file's own" {
		t.Errorf("the review file's decision does not win: %+v", d)
	}
	// The source's decisions concern the source alone: a store text with the same
	// fingerprint would not be decided by them (a finding of field harness only).
	other := &Record{Findings: []Occurrence{{Finding: schemas.Finding{Fingerprint: fp, Field: "problem_statement"}}}}
	applyDecisions(other, &Review{Version: 1}, source)
	if other.Findings[0].Decision != nil {
		t.Errorf("the source's decision applied to a store text: %+v", other.Findings[0].Decision)
	}
}

// TestFsckWalksIntoTheScan: store fsck follows the latest scan record to what it read:
// the harness entry names the binary's source tree, not a stored object, and is not
// reported; the review file's bytes, lost, are missing under scans/latest.
func TestFsckWalksIntoTheScan(t *testing.T) {
	fx := newFixture(t)
	review := []byte(`{"version":1,"decisions":[]}`)
	harness := []Text{{Path: "envgap-source/go.mod", Content: "module example.com/x\n"}}
	if _, _, err := Run(context.Background(), fx.st, sharedScanner(t), RunOptions{Review: &Review{Version: 1}, ReviewBytes: review,
		ReviewPath: "r.json", Workers: 2, Now: fixedNow, Harness: harness}); err != nil {
		t.Fatal(err)
	}
	if rep, err := fx.st.Fsck(context.Background()); err != nil || !rep.Clean() {
		t.Fatalf("fsck after a scan: %+v %v", rep, err)
	}
	d := schemas.Hash(review)
	if err := os.Remove(filepath.Join(fx.st.Dir(), "objects", d.Hex()[:2], d.Hex()[2:])); err != nil {
		t.Fatal(err)
	}
	rep, err := fx.st.Fsck(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Damage) != 1 || rep.Damage[0].Path != "refs/"+data.RefScanLatest || !strings.Contains(rep.Damage[0].Detail, "the review file it read") ||
		!strings.Contains(rep.Damage[0].Detail, "run envgap scan again") {
		t.Errorf("fsck with the scan's review file lost: %+v", rep.Damage)
	}
}

// TestModuleChecksumsDecided: a finding on a go.sum line of envgap's own source that is a
// whole Go module checksum is decided false_positive by the scan itself (dependency
// updates add such lines, and generic-api-key takes some for keys); a credential on
// another line of the same go.sum, or in a go.sum of a subfolder, stays undecided.
func TestModuleChecksumsDecided(t *testing.T) {
	st, err := catalog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sum := "github.com/aws/aws-sdk-go-v2/credentials v1.21.1 h1:4iuMmYSa42WMeClXjzE+HoZIeBud6o/bd00BN6WM9H4=\n" +
		"github.com/aws/aws-sdk-go-v2/credentials v1.21.1/go.mod h1:4iuMmYSa42WMeClXjzE+HoZIeBud6o/bd00BN6WM9H4=\n"
	tok := newFakes(13).githubPAT()
	harness := []Text{
		{Path: "envgap-source/go.sum", Content: sum + "example.com/x v1.0.0 token=" + tok + "\n"},
		{Path: "envgap-source/sub/go.sum", Content: sum},
	}
	rec, _, err := Run(context.Background(), st, sharedScanner(t), RunOptions{Workers: 2, Now: fixedNow, Harness: harness})
	if err != nil {
		t.Fatal(err)
	}
	var decided, top, sub, tokens int
	for _, o := range rec.Findings {
		switch {
		case o.Rule == "github-pat":
			tokens++
			if o.Decision != nil {
				t.Errorf("a token in go.sum was decided: %+v", o.Decision)
			}
		case o.Path == "envgap-source/go.sum":
			top++
			if o.Decision != nil && o.Decision.By == AutoReviewer && o.Decision.Decision == DecisionFalsePositive {
				decided++
			}
		case o.Path == "envgap-source/sub/go.sum":
			sub++
			if o.Decision != nil {
				t.Errorf("a go.sum outside the module root was decided: %+v", o.Decision)
			}
		}
	}
	if tokens != 1 {
		t.Fatalf("token findings %d, want 1: %+v", tokens, rec.Findings)
	}
	if top == 0 || sub == 0 {
		t.Fatalf("the checksum lines gave no finding (top %d, sub %d): the test needs a rule that takes them for keys", top, sub)
	}
	if decided != top {
		t.Errorf("%d of %d checksum findings decided", decided, top)
	}
}
