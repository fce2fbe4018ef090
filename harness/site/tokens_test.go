package site

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envgap/envgap/schemas"
)

// A row of envgap's own agent shows its model and tokens, from the report's row, and the
// day the folder was scored.
func TestBoardShowsModelAndTokens(t *testing.T) {
	f := newFixture(t)
	dir := filepath.Join(t.TempDir(), "model-agent")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sum := schemas.EvalSummary{Kind: "eval_summary", SchemaVersion: schemas.EvalSchemaVersion, Agent: "openai", Split: "repaired",
		Mode: "run", K: 1, MaxAttempts: 1, CorpusID: f.Release.CorpusID, Tasks: 1, ExcludedIDs: []string{}, ScoredOn: "2026-11-30"}
	r := schemas.EvalResult{Kind: "eval_result", SchemaVersion: schemas.EvalSchemaVersion, InstanceID: idRepaired, Run: 1, Attempt: 1,
		Status: schemas.EvalResolved, Resolved: true, Trajectory: "empty", CoreVersion: "test",
		Agent: &schemas.AgentAttempt{Command: "openai", Model: "gpt-test-<b>1</b>", InputTokens: 1200, OutputTokens: 345}}
	sb, _ := json.Marshal(sum)
	rb, _ := json.Marshal(r)
	os.WriteFile(filepath.Join(dir, schemas.EvalSummaryFile), sb, 0o644)
	os.WriteFile(filepath.Join(dir, schemas.EvalResultsFile), append(rb, '\n'), 0o644)
	f.Results = append(f.Results, dir)
	out, _ := f.build(t)
	index, err := os.ReadFile(filepath.Join(out, IndexPage))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"openai <span class=\"n\">(gpt-test-&lt;b&gt;1&lt;/b&gt;)</span>", "<td class=\"num\">1200 / 345</td>", "<td>2026-11-30</td>"} {
		if !strings.Contains(string(index), want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
}
