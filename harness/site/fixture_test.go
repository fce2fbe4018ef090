package site

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/envgap/envgap/schemas"
)

// The fixture's candidates (testdata/candidates.jsonl, exported by envgap's export code to
// testdata/hub: cmd/envgap's TestSiteFixtureIsAnExport keeps it so): two repair tasks (one
// of them hostile: its problem statement and patch carry script payloads), a control that
// is then excluded, a not_reproduced candidate and one never checked.
const (
	idRepaired = "envgap__acme__pyproj-12"
	idHostile  = "envgap__evil__payload-66"
	idControl  = "envgap__acme__works-7"
	idNotRepro = "envgap__acme__gone-3"
	idWaiting  = "envgap__acme__later-9"
)

// fixtureHub is the fixture's Hub folder.
const fixtureHub = "testdata/hub"

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
		Mode: schemas.EvalMode(mode), K: 1, MaxAttempts: maxAttempts, CorpusID: corpus, ExcludedIDs: []string{}}
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
	hub := fixtureHub
	rel, err := LoadHub(hub)
	if err != nil {
		t.Fatal(err)
	}
	zip, err := os.ReadFile(filepath.Join(hub, "harness", "envgap-source.zip"))
	if err != nil {
		t.Fatal(err)
	}
	rel.Harness = &Harness{Zip: zip, CorpusID: zipCorpusID(t, zip)}
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

// zipCorpusID is the corpus id of the task rows a harness zip carries
// (envgap-source/release/tasks.jsonl).
func zipCorpusID(t testing.TB, b []byte) string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	f, err := zr.Open("envgap-source/release/tasks.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	tasks, problems, err := schemas.ReadTasks("tasks.jsonl", bytes.NewReader(lines))
	if err != nil || len(problems) > 0 {
		t.Fatalf("the zip's tasks: %v %v", err, problems)
	}
	id, err := schemas.CorpusID(tasks)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
