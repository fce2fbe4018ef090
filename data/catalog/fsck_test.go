package catalog

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/schemas"
)

func objectFile(s *Catalog, d schemas.Digest) string {
	return filepath.Join(s.Dir(), "objects", d.Hex()[:2], d.Hex()[2:])
}

func fsckKinds(t *testing.T, s *Catalog) map[string][]data.Damage {
	t.Helper()
	rep, err := s.Fsck(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]data.Damage{}
	for _, d := range rep.Damage {
		out[d.Kind] = append(out[d.Kind], d)
	}
	return out
}

// A candidate record lost from its set is reported, and the same add writes it back.
func TestFsckFindsLostCandidate(t *testing.T) {
	s := newCatalog(t)
	cands := []schemas.Candidate{testCandidate(1), testCandidate(2)}
	if _, err := s.AddCandidateSet("add", "add x.jsonl", cands, nil); err != nil {
		t.Fatal(err)
	}
	d, _, err := s.CandidateDigest(testCandidate(2).InstanceID)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(objectFile(s, d))
	got := fsckKinds(t, s)
	if len(got["missing"]) != 1 || !strings.Contains(got["missing"][0].Detail, "candidate envgap__o__r-2") || !strings.HasPrefix(got["missing"][0].Path, "refs/candidates/add-") {
		t.Fatalf("fsck: %+v", got)
	}
	if _, err := s.CandidateByID(testCandidate(2).InstanceID); errors.Is(err, data.ErrNotFound) || !errors.Is(err, data.ErrDangling) {
		t.Errorf("lost record: %v", err)
	}
	res, err := s.AddCandidateSet("add", "add x.jsonl", []schemas.Candidate{testCandidate(1), testCandidate(2)}, nil)
	if err != nil || !res.Unchanged {
		t.Fatalf("add again: %+v %v", res, err)
	}
	if got := fsckKinds(t, s); len(got) != 0 {
		t.Fatalf("after the same add: %+v", got)
	}
}

// Two sets holding one id with different content (written around the lock, as an old
// envgap could) are a conflict.
func TestFsckFindsConflictingSets(t *testing.T) {
	s := newCatalog(t)
	a, b := testCandidate(1), testCandidate(1)
	b.ProblemStatement = "other"
	for i, c := range []schemas.Candidate{a, b} {
		cd, _ := s.PutJSON(&c)
		set := schemas.CandidateSet{Kind: "candidate_set", Name: "x", Members: []schemas.SetMember{{InstanceID: c.InstanceID, Digest: cd}}}
		sd, _ := s.PutJSON(&set)
		if err := s.SetRef(data.RefCandidates+[]string{"a", "b"}[i], sd); err != nil {
			t.Fatal(err)
		}
	}
	got := fsckKinds(t, s)
	if len(got["conflict"]) != 1 || got["conflict"][0].Path != "refs/candidates/b" {
		t.Fatalf("fsck: %+v", got)
	}
}

// A verdict's runs and their step outputs are followed; a lost verdict object is an
// error, never "no verdict".
func TestFsckFollowsVerdicts(t *testing.T) {
	s := newCatalog(t)
	c := testCandidate(1)
	if _, err := s.AddCandidateSet("add", "add x.jsonl", []schemas.Candidate{c}, nil); err != nil {
		t.Fatal(err)
	}
	cd, _, _ := s.CandidateDigest(c.InstanceID)
	out, _ := s.Put([]byte("Error: Cannot find module 'x'\n"))
	reg, _ := s.Put([]byte(`{"served":[]}`))
	run := schemas.Run{Kind: "run", InstanceID: c.InstanceID, Side: "before", Steps: []schemas.StepRecord{{Name: "repro", Output: out}}, Registry: reg}
	rd, _ := s.PutJSON(&run)
	v := schemas.Verdict{Kind: "verdict", InstanceID: c.InstanceID, Candidate: cd, Outcome: schemas.OutcomeNotReproduced, Before: []schemas.Digest{rd}}
	vd, _ := s.PutJSON(&v)
	if err := s.SetRef(data.RefVerdicts+c.InstanceID, vd); err != nil {
		t.Fatal(err)
	}
	if got := fsckKinds(t, s); len(got) != 0 {
		t.Fatalf("whole store: %+v", got)
	}
	if m := s.Missing(vd); m != nil {
		t.Fatalf("Missing of a whole verdict: %v", m)
	}
	os.Remove(objectFile(s, out))
	got := fsckKinds(t, s)
	if len(got["missing"]) != 1 || got["missing"][0].Path != "refs/verdicts/"+c.InstanceID ||
		!strings.Contains(got["missing"][0].Detail, "before run 1 -> output of step repro") || !strings.Contains(got["missing"][0].Detail, "envgap verify --ids "+c.InstanceID) {
		t.Fatalf("fsck: %+v", got)
	}
	if m := s.Missing(vd); len(m) != 1 {
		t.Errorf("Missing: %v", m)
	}
	os.Remove(objectFile(s, vd))
	_, _, err := s.Verdict(c.InstanceID)
	if err == nil || errors.Is(err, data.ErrNotFound) || !errors.Is(err, data.ErrDangling) || !strings.Contains(err.Error(), "verify --ids") {
		t.Fatalf("dangling verdict: %v", err)
	}
	if _, err := s.CurrentOutcome(c); err == nil {
		t.Error("the outcome of a candidate whose verdict is lost reads as fine")
	}
	if _, err := s.ComputeFunnel(); err == nil {
		t.Error("the funnel counts a lost verdict")
	}
	if got := fsckKinds(t, s); len(got["dangling-ref"]) != 1 {
		t.Errorf("fsck: %+v", got)
	}
}
