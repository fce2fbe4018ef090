package export

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"testing/fstest"
	"time"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
)

// fixture ids (testdata/candidates.jsonl).
const (
	idRepaired = "envgap__Ezibenroc__PyRoaringBitMap-93"
	idReported = "envgap__PyCQA__isort-2077"
	idControl  = "envgap__chainer__chainer-679"
	idLite     = "envgap__claude-code__cpp-t1-24"
	idWaiting  = "envgap__npm__cli-2818"
	idNotRepro = "envgap__keycloak__keycloak-51785"
	idCodeFix  = "envgap__claude-code__java-t2-27"
)

var fixedNow = func() time.Time { return time.Date(2026, 9, 29, 12, 0, 0, 0, time.UTC) }

// newStore opens a store in a temp dir and adds the fixture candidates.
func newStore(t testing.TB) catalog.Store {
	t.Helper()
	st, err := catalog.Open(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddCandidatesFile("testdata/candidates.jsonl"); err != nil {
		t.Fatal(err)
	}
	return st
}

func recipeFor(eco schemas.Ecosystem) schemas.Recipe {
	return schemas.Recipe{Ecosystem: eco, Image: eco.Image(), BootstrapCommand: "true",
		ResolveCommand: "make install", ReproCommand: "make repro", RunCommand: "make run",
		ExpectedFailureRegex: "error", Generated: true}
}

// putVerdict records a verdict for a stored candidate.
func putVerdict(t testing.TB, st catalog.Store, id string, outcome schemas.Outcome) {
	t.Helper()
	c, err := st.CandidateByID(id)
	if err != nil {
		t.Fatal(err)
	}
	v := schemas.Verdict{Kind: "verdict", InstanceID: id, Candidate: c.Digest, Outcome: outcome,
		Reason: "decided in a test", IsControl: outcome == schemas.OutcomeAlreadyWorks,
		Recipe: recipeFor(c.Ecosystem), Stability: "3/3", CoreVersion: "test", DecidedAt: "2026-09-25T00:00:00Z",
		FailureSignature: "error: the build failed"}
	d, err := st.PutJSON(&v)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetRef(data.RefVerdicts+id, d); err != nil {
		t.Fatal(err)
	}
}

// putAudit records an audit result as ref audits/<id>.
func putAudit(t testing.TB, st catalog.Store, id string, cats []schemas.Category, flags []schemas.SecurityFlag) {
	t.Helper()
	d, err := st.PutJSON(map[string]any{"kind": "audit", "instance_id": id, "categories": cats, "security_flags": flags})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetRef(data.RefAudits+id, d); err != nil {
		t.Fatal(err)
	}
}

// verifiedStore is the fixture store with verdicts: three repair tasks, one control, one
// not_reproduced, one without a verdict, one code_fix from the import.
func verifiedStore(t testing.TB) catalog.Store {
	st := newStore(t)
	putVerdict(t, st, idRepaired, schemas.OutcomeVerified)
	putVerdict(t, st, idReported, schemas.OutcomeVerified)
	putVerdict(t, st, idControl, schemas.OutcomeAlreadyWorks)
	putVerdict(t, st, idLite, schemas.OutcomeVerified)
	putVerdict(t, st, idNotRepro, schemas.OutcomeNotReproduced)
	return st
}

// admittedStore is verifiedStore after Admit, with the lite task audited as unpinned.
func admittedStore(t testing.TB) catalog.Store {
	st := verifiedStore(t)
	putAudit(t, st, idLite, []schemas.Category{schemas.CategoryUnderspecification}, []schemas.SecurityFlag{schemas.FlagUnpinned})
	rep, err := Admit(st, AdmitOptions{Audits: StoreAudits(st)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Refused > 0 {
		t.Fatalf("fixture admission refused: %+v", rep.Admissions)
	}
	return st
}

// testSource is a small source tree for the harness zip: a module file, a script, and
// build products a checkout may hold and tests, which the zip leaves out.
var testSource = fstest.MapFS{
	"go.mod":              {Data: []byte("module example.com/envgap\n\ngo 1.26\n")},
	"main.go":             {Data: []byte("package main\n\nfunc main() {}\n")},
	"scripts/demo.sh":     {Data: []byte("#!/usr/bin/env bash\necho demo\n")},
	"cmd/envgap/envgap":   {Data: []byte("\x7fELF binary")},
	"export/export.test":  {Data: []byte("test binary")},
	"data/store/refs/x":   {Data: []byte("a store")},
	"export/cpu.prof":     {Data: []byte("profile")},
	"export/testdata/big": {Data: make([]byte, maxSourceFile+1)},
	"main_test.go":        {Data: []byte("package main\n")},
	"export/testdata/x":   {Data: []byte("fixture")},
	"testdata/x":          {Data: []byte("fixture")},
	"crawl/gittest/g.go":  {Data: []byte("package gittest\n")},
	".ci/run":             {Data: []byte("#!/bin/sh\nmake test\n")},
}

func testOptions(out string) Options {
	return Options{Out: out, Reviewer: testReviewer{}, Source: testSource}
}

// exportTo exports st to a new folder and returns it.
func exportTo(t testing.TB, st catalog.Store) (string, *Report) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "release")
	rep, err := Export(st, testOptions(out))
	if err != nil {
		t.Fatal(err)
	}
	return out, rep
}

// readTree returns every file under dir (relative path -> bytes).
func readTree(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func taskByID(t testing.TB, st catalog.Store, id string) schemas.Task {
	t.Helper()
	ts, err := st.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range ts {
		if x.InstanceID == id {
			return x
		}
	}
	t.Fatalf("no task %s", id)
	return schemas.Task{}
}

func isNotFound(err error) bool { return errors.Is(err, data.ErrNotFound) }

// testReviewer is a Reviewer whose review is done: it refuses with refuse when set,
// redacts tasks with redactTask when set and gives notes as the card's paragraph.
type testReviewer struct {
	refuse     error
	notes      string
	redactTask func(*schemas.Task) (int, error)
}

func (r testReviewer) Check(catalog.Store) error { return r.refuse }

func (r testReviewer) RedactTask(_ catalog.Store, t *schemas.Task) (int, error) {
	if r.redactTask == nil {
		return 0, nil
	}
	return r.redactTask(t)
}

func (testReviewer) RedactCandidate(catalog.Store, *schemas.Candidate) (int, error) { return 0, nil }

func (r testReviewer) CardSection(catalog.Store, []string) (string, error) { return r.notes, nil }
