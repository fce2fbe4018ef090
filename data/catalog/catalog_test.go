package catalog

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/envgap/envgap/schemas"
)

func newCatalog(t testing.TB) *Catalog {
	t.Helper()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func testCandidate(id int64) schemas.Candidate {
	url := "https://github.com/o/r/issues/1"
	return schemas.Candidate{
		Ident: schemas.Ident{InstanceID: schemas.InstanceID("o/r", id)},
		Set:   schemas.SourceReported,
		Spec: schemas.Spec{
			Repo:       "o/r",
			BaseCommit: strings.Repeat("a", 40), CreatedAt: "2024-01-01T00:00:00Z", RegistryDate: "2024-01-01T00:00:00Z",
			Ecosystem: schemas.EcosystemPython,
		},
		Origin: schemas.Origin{IssueNumber: id, IssueURL: &url},
	}
}

func TestAddCandidateSet(t *testing.T) {
	s := newCatalog(t)
	cands := []schemas.Candidate{testCandidate(2), testCandidate(1)}
	res, err := s.AddCandidateSet("add", "add x.jsonl", cands, nil)
	if err != nil || res.Unchanged || res.Count != 2 || res.New != 2 {
		t.Fatalf("first add: %+v %v", res, err)
	}
	again, err := s.AddCandidateSet("add", "add y.jsonl", []schemas.Candidate{testCandidate(1), testCandidate(2)}, nil)
	if err != nil || !again.Unchanged || again.Ref != res.Ref {
		t.Fatalf("second add: %+v %v", again, err)
	}
	changed := testCandidate(1)
	changed.ProblemStatement = "different"
	before, _ := s.Fsck(context.Background())
	var conflict *ConflictError
	if _, err := s.AddCandidateSet("add", "add z.jsonl", []schemas.Candidate{changed, testCandidate(3)}, nil); !errors.As(err, &conflict) {
		t.Fatalf("conflict not refused: %v", err)
	}
	after, _ := s.Fsck(context.Background())
	if before.Objects != after.Objects || before.Refs != after.Refs {
		t.Errorf("a refused add wrote to the store: %d->%d objects", before.Objects, after.Objects)
	}
	all, err := s.Candidates()
	if err != nil || len(all) != 2 || all[0].InstanceID != "envgap__o__r-1" {
		t.Fatalf("candidates: %v %v", all, err)
	}
	st, _ := s.CurrentOutcome(all[0].Candidate)
	if st.Outcome != schemas.OutcomeNotChecked {
		t.Errorf("outcome %s", st.Outcome)
	}
	f, err := s.ComputeFunnel()
	if err != nil || f.Candidates[schemas.SourceReported][schemas.OutcomeNotChecked] != 2 {
		t.Errorf("funnel: %+v %v", f, err)
	}
}
