package eval

import (
	"os"
	"strings"
	"testing"

	"github.com/envgap/envgap/lib/atif"
	"github.com/envgap/envgap/schemas"
)

// envgap eval writes each prediction's trajectory in ATIF with the result's verdict: the
// predictions' own ATIF passed through, another shape converted, ATIF that does not
// validate kept raw (not inspected), no trajectory one step that says so.
func TestWriteATIF(t *testing.T) {
	own := map[string]any{"schema_version": "ATIF-v1.4", "session_id": "s", "agent": map[string]any{"name": "cli", "version": "9"},
		"steps": []any{map[string]any{"step_id": 1.0, "source": "agent", "message": "pinned"}}}
	broken := map[string]any{"schema_version": "ATIF-v1.4", "steps": []any{}}
	preds := map[string]*schemas.Prediction{
		"a": {InstanceID: "a", Trajectory: []any{own}},
		"b": {InstanceID: "b", Trajectory: []any{map[string]any{"action": "git log --all", "output": "x"}}},
		"c": {InstanceID: "c", Trajectory: []any{broken}},
		"d": {InstanceID: "d"},
	}
	var results []schemas.EvalResult
	for _, id := range []string{"a", "b", "c", "d"} {
		results = append(results, schemas.EvalResult{InstanceID: id, Run: 1, Attempt: 1, Status: schemas.EvalUnresolved, Trajectory: "inspected (steps)", CoreVersion: "t"})
	}
	dir := t.TempDir()
	sum := schemas.EvalSummary{Agent: "preds", Split: "repaired", CorpusID: "c0ffeec0ffee"}
	if err := WriteATIF(dir, sum, results, preds); err != nil {
		t.Fatal(err)
	}
	read := func(id string) *atif.Trajectory {
		b, err := os.ReadFile(atif.AttemptPath(dir, id, 1, 1))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := atif.Parse(b)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		return doc
	}
	if d := read("a"); d.Agent.Name != "cli" || atif.VerdictOf(d).Form != atif.FormAgent || atif.VerdictOf(d).CorpusID != "c0ffeec0ffee" {
		t.Errorf("own ATIF: %+v", d)
	}
	if d := read("b"); len(d.Steps) != 1 || !strings.Contains(d.Steps[0].Message.Text, "git log --all") || atif.VerdictOf(d).Form != atif.FormEnvgap {
		t.Errorf("steps: %+v", d.Steps)
	}
	if d := read("c"); atif.VerdictOf(d).Form != atif.FormRaw || !strings.Contains(d.Steps[0].Message.Text, "not valid ATIF") {
		t.Errorf("broken ATIF: %+v", d.Steps)
	}
	if d := read("d"); atif.VerdictOf(d).Form != atif.FormNone || d.Agent.Name != "preds" {
		t.Errorf("no trajectory: %+v", d)
	}
}
