package scan

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

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
