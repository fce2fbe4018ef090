package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/lib/agent/agenttest"
)

// A command agent's trajectory file in ATIF: validated, passed on whole (the later-history
// rules read its steps), its tokens and cost the attempt's (over cost.json); a file that
// claims to be ATIF and is not is kept as one string entry (not inspected), its tokens not
// taken; a pretty-printed JSON object is one entry.
func TestActReadsATIF(t *testing.T) {
	const doc = `{
  "schema_version": "ATIF-v1.4", "session_id": "s1",
  "agent": {"name": "cli", "version": "1.0"},
  "steps": [
    {"step_id": 1, "source": "user", "message": "fix it"},
    {"step_id": 2, "source": "agent", "message": "ok", "metrics": {"prompt_tokens": 700, "completion_tokens": 30, "cost_usd": 0.25}}
  ],
  "final_metrics": {"total_prompt_tokens": 700, "total_completion_tokens": 30, "total_cost_usd": 0.25}
}`
	cases := []struct {
		name, traj             string
		wantATIF               bool
		wantIn, wantOut        int64
		wantCost               float64
		wantEntry, wantInEntry string
	}{
		{"valid", doc, true, 700, 30, 0.25, "map", ""},
		{"invalid", strings.Replace(doc, `"step_id": 2`, `"step_id": 7`, 1), false, 0, 0, 0.5, "string", "step ids run from 1"},
		{"object", "{\n  \"role\": \"user\",\n  \"content\": \"hi\"\n}", false, 0, 0, 0.5, "map", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws, err := Prepare(context.Background(), agenttest.Task(), t.TempDir(), agenttest.GitMaterialize(0))
			if err != nil {
				t.Fatal(err)
			}
			src := filepath.Join(t.TempDir(), "traj.json")
			if err := os.WriteFile(src, []byte(c.traj), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := "cp " + src + ` "$ENVGAP_TRAJECTORY_FILE" && echo 0.5 > "$ENVGAP_COST_FILE"`
			keep := filepath.Join(t.TempDir(), "agent", "attempt-1")
			act, err := Act(context.Background(), ws, ActOptions{Command: cmd, Timeout: time.Minute, Keep: keep})
			if err != nil {
				t.Fatal(err)
			}
			if (act.ATIF != nil) != c.wantATIF || act.Info.InputTokens != c.wantIn || act.Info.OutputTokens != c.wantOut ||
				act.CostUSD == nil || *act.CostUSD != c.wantCost {
				t.Fatalf("ATIF %v, tokens %d/%d, cost %v; want %v, %d/%d, %v", act.ATIF != nil, act.Info.InputTokens, act.Info.OutputTokens,
					act.CostUSD, c.wantATIF, c.wantIn, c.wantOut, c.wantCost)
			}
			if len(act.Trajectory) != 1 {
				t.Fatalf("entries: %d", len(act.Trajectory))
			}
			switch e := act.Trajectory[0].(type) {
			case string:
				if c.wantEntry != "string" || !strings.Contains(e, c.wantInEntry) || !strings.Contains(e, `"schema_version"`) {
					t.Errorf("entry: %q", e)
				}
			case map[string]any:
				if c.wantEntry != "map" {
					t.Errorf("entry: %v", e)
				}
			}
		})
	}
}
