package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/crawl/gittest"
	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/data/demo"
	"github.com/envgap/envgap/schemas"
)

// The evaluation scenario: acme/stats, a small Python program that prints a table with
// the demo's stand-in for tabulate (served by the fixture index of data/demo).
//
//	c1  requirements.txt pins tabulate==0.9.1, never released: pip cannot install it
//	h2  PR #2 head: pins tabulate==0.9.0 (the reference fix of issue #1)
//
// Tasks: envgap__acme__stats-1 (repaired, base c1, fix h2), envgap__acme__stats-5 (a
// reported control at h2: it works), envgap__acme__stats-7 (repaired like -1, excluded).
const (
	evalRepair   = "envgap__acme__stats-1"
	evalControl  = "envgap__acme__stats-5"
	evalExcluded = "envgap__acme__stats-7"
	evalStatsPy  = "from tabulate import tabulate\nprint(tabulate([[1, 2.5]], headers=['n', 'mean']))\n"
	evalBroken   = "tabulate==0.9.1\n"
	evalFixed    = "tabulate==0.9.0\n"
)

// evalWorld is the scenario: the git repository (file://), the fixture index, and a Hub
// folder exported from a curation store that the evaluation never sees.
type evalWorld struct {
	gitTemplate string
	pypi        string
	hub         string
	osv         string
	c1, h2      string
	// curation is the store the Hub folder was exported from.
	curation string
}

func newEvalWorld(t testing.TB) *evalWorld {
	t.Helper()
	w := &evalWorld{}
	root := t.TempDir()
	r := gittest.Init(t, filepath.Join(root, "acme", "stats"))
	at := time.Date(2022, 12, 1, 10, 0, 0, 0, time.UTC)
	s := func(v string) *string { return &v }
	w.c1 = r.Commit("", at, "Initial commit", map[string]*string{"requirements.txt": s(evalBroken), "stats.py": s(evalStatsPy), "README.md": s("# stats\n")})
	w.h2 = r.Commit(w.c1, at.Add(time.Hour), "Pin tabulate 0.9.0", map[string]*string{"requirements.txt": s(evalFixed)})
	r.SetRef("refs/heads/main", w.h2)
	w.gitTemplate = "file://" + filepath.ToSlash(root) + "/{owner}/{name}"
	srv := httptest.NewServer(demo.PyPIHandler(demo.PyPIFS()))
	t.Cleanup(srv.Close)
	w.pypi = srv.URL
	w.osv = filepath.Join(t.TempDir(), "osv.json")
	if err := os.WriteFile(w.osv, []byte("[]"), 0o644); err != nil {
		t.Fatal(err)
	}

	curation := filepath.Join(t.TempDir(), "curation")
	st, err := catalog.Open(curation)
	if err != nil {
		t.Fatal(err)
	}
	patch := "diff --git a/requirements.txt b/requirements.txt\n--- a/requirements.txt\n+++ b/requirements.txt\n@@ -1 +1 @@\n-tabulate==0.9.1\n+tabulate==0.9.0\n"
	task := func(id string, n int64, base string, source schemas.Source) schemas.Task {
		issue := "https://github.com/acme/stats/issues/" + strings.TrimPrefix(id, "envgap__acme__stats-")
		lic := "MIT"
		t := schemas.Task{
			Ident: schemas.Ident{InstanceID: id},
			Spec: schemas.Spec{
				Repo: "acme/stats", BaseCommit: base, ProjectFiles: []schemas.File{},
				GoldFiles: []schemas.File{}, ProblemStatement: "stats does not install\n\nERROR: No matching distribution found for tabulate==0.9.1",
				CreatedAt: "2022-12-01T12:00:00Z", RegistryDate: "2023-01-01T00:00:00Z", RegistryDateSource: schemas.DateSourceFor(source),
				Ecosystem: schemas.EcosystemPython, Image: "envgap-python-eval", ManifestPath: "requirements.txt",
				ManifestPaths: []string{"requirements.txt"}, ResolveCommand: "python3 -m pip install -r requirements.txt",
				ReproCommand: "python3 -m pip install -r requirements.txt && python3 stats.py", RunCommand: "python3 stats.py",
			},
			Splits: []schemas.Split{schemas.SplitFull},
			Source: source,
			Origin: schemas.Origin{
				IssueURL: &issue, IssueNumber: n,
				Categories: []schemas.Category{},
			},
			SecurityFlags: []schemas.SecurityFlag{},
			License:       schemas.License{RepoLicense: &lic},
		}
		if source == schemas.SourceRepaired {
			pr, prURL, crawl := int64(2), "https://github.com/acme/stats/pull/2", "pr-test"
			t.Patch, t.GoldFiles = patch, []schemas.File{{Path: "requirements.txt", Content: s(evalFixed)}}
			t.PullRequest, t.PRNumber, t.PRHeadCommit, t.PRMergeCommit, t.CrawlID = &prURL, &pr, &w.h2, &w.h2, &crawl
			t.FailureSignature = "ERROR: No matching distribution found for tabulate==0.9.1"
			t.ExpectedFailureRegex = "No matching distribution found for tabulate==0\\.9\\.1"
		} else {
			t.IsControl = true
			t.ExpectedFailureRegex = "No matching distribution"
		}
		return t
	}
	for _, tk := range []schemas.Task{task(evalRepair, 1, w.c1, schemas.SourceRepaired), task(evalControl, 5, w.h2, schemas.SourceReported), task(evalExcluded, 7, w.c1, schemas.SourceRepaired)} {
		d, err := st.PutJSON(&tk)
		if err == nil {
			err = st.SetRef(data.RefTasks+tk.InstanceID, d)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	ex := schemas.Exclusion{Kind: "exclusion", InstanceID: evalExcluded, TaskKind: "repair", Reason: "Excluded by the test.", Since: "2026-09-29T00:00:00Z", ByHand: true}
	d, _ := st.PutJSON(&ex)
	if err := st.SetRef(data.RefExclusions+evalExcluded, d); err != nil {
		t.Fatal(err)
	}
	w.hub, w.curation = exportStore(t, curation), curation
	return w
}

// eval runs envgap eval on the Hub folder with a fresh store.
func (w *evalWorld) eval(t *testing.T, store, pred, out string) (string, error) {
	t.Helper()
	return runCLI(t, "--store", store, "eval", "--pred", pred, "--split", "full", "--tasks", w.hub, "--out", out,
		"--git-url-template", w.gitTemplate, "--pypi-upstream", w.pypi+"/simple/", "--pypi", w.pypi,
		"--npm-registry", "http://127.0.0.1:9/", "--osv", w.osv, "--step-timeout", "3m")
}

func writePreds(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "preds.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readResults(t *testing.T, dir string) (map[string]schemas.EvalResult, schemas.EvalSummary) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]schemas.EvalResult{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r schemas.EvalResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out[r.InstanceID] = r
	}
	var sum schemas.EvalSummary
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err == nil {
		err = json.Unmarshal(b, &sum)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := time.Parse(time.DateOnly, sum.ScoredOn); err != nil {
		t.Errorf("summary.json's scored_on %q: %v", sum.ScoredOn, err)
	}
	return out, sum
}

// countRuns counts the container runs the store's memo records.
func countRuns(t *testing.T, store string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(filepath.Join(store, "memo", "run"), func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}

func TestEvalFromExportedFolder(t *testing.T) {
	requireEngine(t, "envgap-python-eval")
	w := newEvalWorld(t)
	store := filepath.Join(t.TempDir(), "store")
	res := t.TempDir()
	fixed, _ := json.Marshal(evalFixed)
	wrong, _ := json.Marshal("tabulate==0.9.2\n")
	edited, _ := json.Marshal(evalStatsPy + "print('done')\n")

	// Bad input: a malformed line, a missing, an unknown and a repeated id; nothing runs.
	bad := writePreds(t, `{"instance_id": "`+evalRepair+`", "files": {}}`, `{"instance_id": "`+evalRepair+`", "files": {}}`,
		`{"instance_id": "envgap__acme__stats-99", "files": {}}`)
	_, err := w.eval(t, store, bad, filepath.Join(res, "bad"))
	var probs schemas.Problems
	if !errors.As(err, &probs) || exitCode(err) != exitRejected || len(probs) != 4 {
		t.Fatalf("bad predictions: %v", err)
	}
	if _, err := os.Stat(filepath.Join(res, "bad")); !os.IsNotExist(err) {
		t.Errorf("a rejected predictions file left a result folder")
	}
	if _, err := w.eval(t, store, writePreds(t, "{not json"), filepath.Join(res, "bad")); !errors.As(err, &probs) || !strings.Contains(err.Error(), "preds.jsonl:1") {
		t.Fatalf("malformed line: %v", err)
	}

	// 1. The right fix, the control left alone, the excluded task unchanged.
	right := writePreds(t,
		`{"instance_id": "`+evalRepair+`", "files": {"requirements.txt": `+string(fixed)+`}, "trajectory": [{"action": "python3 -m pip install -r requirements.txt", "output": "ERROR: No matching distribution found for tabulate==0.9.1"}], "cost_usd": 0.25}`,
		`{"instance_id": "`+evalControl+`", "files": {}, "trajectory": [], "cost_usd": null}`,
		`{"instance_id": "`+evalExcluded+`", "files": {}}`)
	out, err := w.eval(t, store, right, filepath.Join(res, "right"))
	if err != nil {
		t.Fatalf("eval: %v\n%s", err, out)
	}
	rs, sum := readResults(t, filepath.Join(res, "right"))
	if r := rs[evalRepair]; !r.Resolved || r.Status != schemas.EvalResolved || !r.ManifestF1.Measured || r.ManifestF1.F1 != 1 ||
		!r.Safe.Measured || r.Safe.Safe != 1 || r.Safe.Total != 1 || *r.CostUSD != 0.25 || r.Trajectory != "inspected (steps)" {
		t.Errorf("right fix: %+v", r)
	}
	if r := rs[evalControl]; !r.Resolved || !r.IsControl {
		t.Errorf("control left alone: %+v", r)
	}
	if r := rs[evalExcluded]; !r.Excluded || r.Resolved || r.ExclusionReason == "" {
		t.Errorf("excluded task: %+v", r)
	}
	// Left at c1 it declares tabulate==0.9.1, a version never published: it does not
	// exist, so it is no safe install.
	if r := rs[evalExcluded]; !r.Safe.Measured || r.Safe.Safe != 0 || r.Safe.Total != 1 {
		t.Errorf("tabulate==0.9.1 (never published): safe install %+v, want 0 of 1", r.Safe)
	}
	if sum.Scored != 2 || len(sum.ResolvedIDs) != 2 || len(sum.ExcludedIDs) != 1 || sum.Ran != 3 || sum.CorpusID == "" {
		t.Errorf("summary: %+v", sum)
	}
	log, err := os.ReadFile(filepath.Join(res, "right", "logs", evalRepair+".log"))
	if err != nil || !strings.Contains(string(log), "=== resolve: python3 -m pip install -r requirements.txt") || !strings.Contains(string(log), "status: resolved") {
		t.Errorf("log: %v\n%s", err, log)
	}
	runs := countRuns(t, store)
	if runs != 3 {
		t.Errorf("%d container runs recorded for three predictions, want 3", runs)
	}

	// 2. A wrong fix, and a source edit on the control (rejected before any container).
	wrongPreds := writePreds(t,
		`{"instance_id": "`+evalRepair+`", "files": {"requirements.txt": `+string(wrong)+`}}`,
		`{"instance_id": "`+evalControl+`", "files": {"stats.py": `+string(edited)+`}}`,
		`{"instance_id": "`+evalExcluded+`", "files": {}}`)
	if out, err = w.eval(t, store, wrongPreds, filepath.Join(res, "wrong")); err != nil {
		t.Fatalf("eval: %v\n%s", err, out)
	}
	rs, _ = readResults(t, filepath.Join(res, "wrong"))
	if r := rs[evalRepair]; r.Status != schemas.EvalUnresolved || !strings.Contains(r.Reason, "resolve") || !r.Safe.Measured || r.Safe.Safe != 0 || r.Safe.Total != 1 {
		t.Errorf("wrong fix: %+v", r)
	}
	if r := rs[evalControl]; r.Status != schemas.EvalRejected || r.Reason != "changes source file stats.py" || len(r.Steps) != 0 {
		t.Errorf("source edit: %+v", r)
	}
	if n := countRuns(t, store); n != runs+1 {
		t.Errorf("%d container runs for a wrong fix and a rejected edit, want 1", n-runs)
	}
	runs = countRuns(t, store)

	// 3. The right fix with a trajectory that read the fix's pull request, and a path
	// escaping the project.
	leaky := writePreds(t,
		`{"instance_id": "`+evalRepair+`", "files": {"requirements.txt": `+string(fixed)+`}, "trajectory": [{"action": "ls"}, {"action": "curl -sL https://github.com/acme/stats/pull/2.diff", "output": "-tabulate==0.9.1\n+tabulate==0.9.0"}]}`,
		`{"instance_id": "`+evalControl+`", "files": {"../outside.txt": "x"}}`,
		`{"instance_id": "`+evalExcluded+`", "files": {}}`)
	if out, err = w.eval(t, store, leaky, filepath.Join(res, "leaky")); err != nil {
		t.Fatalf("eval: %v\n%s", err, out)
	}
	rs, sum = readResults(t, filepath.Join(res, "leaky"))
	if r := rs[evalRepair]; r.Status != schemas.EvalLeaked || r.Resolved || !r.ChecksPassed || len(r.Leaks) == 0 || r.Leaks[0].Step != 1 || r.Leaks[0].Rule != "pull-request" {
		t.Errorf("leaking trajectory: %+v", r)
	}
	if r := rs[evalControl]; r.Status != schemas.EvalRejected || !strings.Contains(r.Reason, "..") {
		t.Errorf("escaping path: %+v", r)
	}
	if len(sum.LeakedIDs) != 1 || len(sum.RejectedIDs) != 1 {
		t.Errorf("summary: %+v", sum)
	}
	if n := countRuns(t, store); n != runs {
		t.Errorf("the same files with another trajectory ran %d containers, want 0", n-runs)
	}

	// 4. The first predictions again: every result from the store, no container.
	if out, err = w.eval(t, store, right, filepath.Join(res, "again")); err != nil {
		t.Fatalf("eval: %v\n%s", err, out)
	}
	_, sum = readResults(t, filepath.Join(res, "again"))
	if sum.Ran != 0 || sum.Reused != 3 || countRuns(t, store) != runs {
		t.Errorf("re-eval: %+v", sum)
	}
}
