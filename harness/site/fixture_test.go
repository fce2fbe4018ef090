package site

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/export"
	"github.com/envgap/envgap/schemas"
)

// The fixture's candidates (testdata/candidates.jsonl): two repair tasks (one of them
// hostile: its problem statement and patch carry script payloads), a control that is then
// excluded, a not_reproduced candidate and one never checked.
const (
	idRepaired = "envgap__acme__pyproj-12"
	idHostile  = "envgap__evil__payload-66"
	idControl  = "envgap__acme__works-7"
	idNotRepro = "envgap__acme__gone-3"
	idWaiting  = "envgap__acme__later-9"
)

// hubFolder exports the fixture store with envgap's export code and returns the folder.
func hubFolder(t testing.TB) string {
	t.Helper()
	st, err := catalog.Open(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddCandidatesFile("testdata/candidates.jsonl"); err != nil {
		t.Fatal(err)
	}
	for id, o := range map[string]schemas.Outcome{idRepaired: schemas.OutcomeVerified, idHostile: schemas.OutcomeVerified,
		idControl: schemas.OutcomeAlreadyWorks, idNotRepro: schemas.OutcomeNotReproduced} {
		c, err := st.CandidateByID(id)
		if err != nil {
			t.Fatal(err)
		}
		v := schemas.Verdict{Kind: "verdict", InstanceID: id, Candidate: c.Digest, Outcome: o,
			Reason: "decided in a test", IsControl: o == schemas.OutcomeAlreadyWorks,
			Recipe: schemas.Recipe{Ecosystem: c.Ecosystem, Image: c.Ecosystem.Image(), BootstrapCommand: "true",
				ResolveCommand: "make install", ReproCommand: "make repro", RunCommand: "make run",
				ExpectedFailureRegex: "error", Generated: true},
			Stability: "3/3", CoreVersion: "test", DecidedAt: "2026-09-25T00:00:00Z",
			FailureSignature: "error: the build failed <script>window.__pwned=6</script>"}
		d, err := st.PutJSON(&v)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.SetRef(data.RefVerdicts+id, d); err != nil {
			t.Fatal(err)
		}
	}
	if rep, err := export.Admit(st, export.AdmitOptions{}); err != nil || rep.Refused > 0 {
		t.Fatalf("admit: %v %+v", err, rep)
	}
	now := func() time.Time { return time.Date(2026, 9, 29, 12, 0, 0, 0, time.UTC) }
	if _, err := export.Exclude(st, export.ExcludeRequest{InstanceID: idControl, Reason: "the <b>setup.py</b> reads the network", Now: now}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "hub")
	src := fstest.MapFS{"go.mod": {Data: []byte("module example.com/envgap\n\ngo 1.26\n")},
		"main.go": {Data: []byte("package main\n\nfunc main() {}\n")}}
	if _, err := export.Export(st, export.Options{Out: out, Reviewer: reviewed{}, Source: src, NoAudit: true}); err != nil {
		t.Fatal(err)
	}
	return out
}

// reviewed is a credential review with nothing waiting and nothing to redact.
type reviewed struct{}

func (reviewed) Check(catalog.Store) error                                      { return nil }
func (reviewed) RedactTask(catalog.Store, *schemas.Task) (int, error)           { return 0, nil }
func (reviewed) RedactCandidate(catalog.Store, *schemas.Candidate) (int, error) { return 0, nil }
func (reviewed) CardSection(catalog.Store, []string) (string, error)            { return "", nil }

// attempt is one results.jsonl line of a fixture result folder.
type attempt struct {
	id                string
	run, n            int
	status            string
	f1                float64
	control, excluded bool
}

// resultFolder writes a result folder in the format envgap eval and envgap run write.
func resultFolder(t testing.TB, dir, agent, split, mode, corpus string, maxAttempts int, atts []attempt) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sum := schemas.EvalSummary{Kind: "eval_summary", SchemaVersion: schemas.EvalSchemaVersion, Agent: agent, Split: split,
		Mode: mode, K: 1, MaxAttempts: maxAttempts, CorpusID: corpus, ExcludedIDs: []string{}}
	var lines []byte
	ids := map[string]bool{}
	for _, a := range atts {
		r := schemas.EvalResult{Kind: "eval_result", SchemaVersion: schemas.EvalSchemaVersion, InstanceID: a.id,
			IsControl: a.control, Excluded: a.excluded, Run: a.run, Attempt: a.n, Status: a.status,
			Resolved: a.status == schemas.EvalResolved, Trajectory: "empty", CoreVersion: "test",
			ManifestF1: schemas.ManifestScore{Measured: a.f1 > 0, F1: a.f1}}
		switch a.status {
		case schemas.EvalRejected:
			r.Rejection = "src/main.cpp"
			r.Reason = "the prediction changed a source file <script>window.__pwned=7</script>"
		case schemas.EvalLeaked:
			r.Leaks = []schemas.Leak{{Rule: "git-log-after-base", Evidence: "git log"}}
		case schemas.EvalUnresolved:
			r.Reason = "resolve_command exited 1"
		}
		if a.excluded && !ids[a.id] {
			sum.ExcludedIDs = append(sum.ExcludedIDs, a.id)
		}
		ids[a.id] = true
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(append(lines, b...), '\n')
	}
	sum.Tasks = len(ids)
	b, err := json.Marshal(sum)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, schemas.EvalSummaryFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, schemas.EvalResultsFile), lines, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// fixtureSite is the fixture release with four result folders: gold and fixer tie on the
// reported board's first attempt (fixer needs its second attempt for the hostile task),
// noop resolves nothing, and stale was scored on another corpus.
type fixture struct {
	Hub     string
	Results []string
	Release *Release
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	hub := hubFolder(t)
	rel, err := LoadHub(hub)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	id := rel.CorpusID
	dirs := []string{
		resultFolder(t, filepath.Join(root, "gold"), "gold", "full", "eval", id, 1, []attempt{
			{id: idRepaired, run: 1, n: 1, status: schemas.EvalResolved, f1: 1},
			{id: idHostile, run: 1, n: 1, status: schemas.EvalResolved, f1: 0.5},
			{id: idControl, run: 1, n: 1, status: schemas.EvalResolved, control: true, excluded: true},
		}),
		resultFolder(t, filepath.Join(root, "fixer"), "fixer-model-x", "reported", "run", id, 3, []attempt{
			{id: idHostile, run: 1, n: 1, status: schemas.EvalRejected},
			{id: idHostile, run: 1, n: 2, status: schemas.EvalResolved, f1: 0.75},
			{id: idControl, run: 1, n: 1, status: schemas.EvalResolved, control: true, excluded: true},
		}),
		resultFolder(t, filepath.Join(root, "noop"), "noop", "full", "eval", id, 1, []attempt{
			{id: idRepaired, run: 1, n: 1, status: schemas.EvalUnresolved},
			{id: idHostile, run: 1, n: 1, status: schemas.EvalLeaked},
			{id: idControl, run: 1, n: 1, status: schemas.EvalResolved, control: true, excluded: true},
		}),
		resultFolder(t, filepath.Join(root, "stale"), "stale-agent", "full", "eval", "0123456789ab", 1, []attempt{
			{id: idRepaired, run: 1, n: 1, status: schemas.EvalResolved},
			{id: idHostile, run: 1, n: 1, status: schemas.EvalResolved},
		}),
	}
	return &fixture{Hub: hub, Results: dirs, Release: rel}
}

func (f *fixture) build(t testing.TB) (string, *Report) {
	t.Helper()
	res, err := LoadResults(f.Results)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "site")
	rep, err := Build(Input{Release: f.Release, Results: res}, out)
	if err != nil {
		t.Fatal(err)
	}
	return out, rep
}
