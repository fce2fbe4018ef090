package catalog

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/envgap/envgap/data"
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

// TestCurrentOutcomeOfRefusedProposals: a reproduced Reported candidate whose only
// proposed fix was refused (it changed a source file) says so, and why, instead of
// "waiting for one"; a proposal not refused and not yet checked waits for its check; a
// refused proposal beside a failed check is named after it.
func TestCurrentOutcomeOfRefusedProposals(t *testing.T) {
	s := newCatalog(t)
	c := testCandidate(1)
	if _, err := s.AddCandidateSet("add", "add x.jsonl", []schemas.Candidate{c}, nil); err != nil {
		t.Fatal(err)
	}
	repro, err := s.PutJSON(map[string]string{"kind": "reproduction"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetRef(data.RefReproductions+c.InstanceID, repro); err != nil {
		t.Fatal(err)
	}
	reason := func() string {
		t.Helper()
		st, err := s.CurrentOutcome(c)
		if err != nil || st.Outcome != schemas.OutcomeNotChecked {
			t.Fatalf("current outcome: %+v, %v", st, err)
		}
		return st.Reason
	}
	if got := reason(); got != ReasonReproducedNoFix {
		t.Fatalf("before any proposal: %q", got)
	}
	propose := func(at, refused string) schemas.Digest {
		t.Helper()
		d, err := s.PutJSON(&schemas.Proposal{Kind: "proposal", InstanceID: c.InstanceID, Agent: "sh agent.sh", Refused: refused, ProposedAt: at})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SetRef(data.RefProposals+c.InstanceID+"/"+d.Short(), d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	src := propose("2026-01-01T00:00:00Z", "changes source file index.js")
	if got := reason(); !strings.Contains(got, "the 1 proposed fix(es) (envgap propose) were refused before any check") ||
		!strings.Contains(got, "(proposal "+src.Short()+"): changes source file index.js") || strings.Contains(got, "waiting for one") {
		t.Errorf("with a refused proposal: %q", got)
	}
	pending := propose("2026-01-02T00:00:00Z", "")
	if got := reason(); !strings.Contains(got, "1 proposed fix(es) (envgap propose) wait for their clean-container check") {
		t.Errorf("with a proposal not yet checked: %q", got)
	}
	check, err := s.PutJSON(&schemas.Verdict{Kind: "verdict", InstanceID: c.InstanceID, Outcome: schemas.OutcomeNotReproduced,
		Reason: "the fix did not make the project run", Proposal: pending, DecidedAt: "2026-01-03T00:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetRef(data.RefProposalChecks+c.InstanceID+"/"+pending.Short(), check); err != nil {
		t.Fatal(err)
	}
	if got := reason(); !strings.Contains(got, "waiting for a working fix; 1 proposed fix(es) (envgap propose) did not verify") ||
		!strings.Contains(got, "1 more refused before any check, the latest (proposal "+src.Short()+"): changes source file index.js") {
		t.Errorf("with a failed check and a refused proposal: %q", got)
	}
}
