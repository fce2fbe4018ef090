package run

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/harness/eval"
	"github.com/envgap/envgap/lib/agent"
	"github.com/envgap/envgap/lib/agent/agenttest"
	"github.com/envgap/envgap/schemas"
)

func harness(t *testing.T, agentCmd string, maxAttempts int, timeout time.Duration) (*Outcome, *agenttest.FakeRunner) {
	t.Helper()
	st, err := catalog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fr := &agenttest.FakeRunner{Store: st}
	ev := &eval.Evaluator{Store: st, Runner: fr}
	tk := agenttest.Task()
	out, err := Run(context.Background(), []schemas.Task{*tk}, Options{Evaluator: ev, Materialize: agenttest.GitMaterialize(0), Agent: agent.ParseSpec(agentCmd),
		K: 1, MaxAttempts: maxAttempts, AttemptTimeout: timeout, WorkDir: t.TempDir(), OutDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return out, fr
}

func TestHarnessAgents(t *testing.T) {
	// Fixes on the second attempt, after reading the feedback; writes a trajectory.
	fixer := `if [ "$ENVGAP_ATTEMPT" = 1 ]; then echo 'x==3' > requirements.txt; else grep -q 'status: unresolved' "$ENVGAP_FEEDBACK_FILE" && echo 'x==1' > requirements.txt; fi; echo '[{"action": "edit requirements.txt"}]' > "$ENVGAP_TRAJECTORY_FILE"; echo 0.5 > "$ENVGAP_COST_FILE"`
	out, _ := harness(t, fixer, 3, time.Minute)
	if len(out.Faults) != 0 || len(out.Results) != 2 || out.Results[0].Resolved || !out.Results[1].Resolved || out.Results[1].Attempt != 2 ||
		*out.Results[1].CostUSD != 0.5 || out.Results[1].Trajectory != "inspected (steps)" {
		t.Fatalf("fixer: %+v", out)
	}
	for _, tc := range []struct {
		name, cmd, status, reason string
		attempts                  int
	}{
		{"hangs", "sleep 600", schemas.EvalUnresolved, "did not finish within", 2},
		{"edits source", "echo 'print(2)' > app.py; echo 'x==1' > requirements.txt", schemas.EvalRejected, "changes source file app.py", 2},
		{"writes outside", `echo 'x==1' > requirements.txt; echo hacked > "$ENVGAP_TASK_FILE.new"`, schemas.EvalRejected, "outside its workspace", 2},
		{"deletes the manifest", "rm requirements.txt", schemas.EvalUnresolved, "deletes requirements.txt", 2},
		{"crashes after the fix", "echo 'x==1' > requirements.txt; kill -SEGV $$", schemas.EvalResolved, "", 1},
		{"links outside", "ln -s /etc/passwd passwd.txt", schemas.EvalRejected, "symbolic link", 2},
	} {
		out, _ := harness(t, tc.cmd, 2, 300*time.Millisecond)
		if len(out.Faults) != 0 || len(out.Results) != tc.attempts {
			t.Errorf("%s: %d results, faults %+v", tc.name, len(out.Results), out.Faults)
			continue
		}
		r := out.Results[0]
		if r.Status != tc.status || !strings.Contains(r.Reason, tc.reason) || r.Agent == nil {
			t.Errorf("%s: %s (%s), want %s (%s)", tc.name, r.Status, r.Reason, tc.status, tc.reason)
		}
	}
	// Built-in agents: gold resolves, noop does not; neither runs a command.
	out, _ = harness(t, agent.NameGold, 1, time.Minute)
	if !out.Results[0].Resolved || out.Results[0].Agent != nil {
		t.Errorf("gold: %+v", out.Results[0])
	}
	out, _ = harness(t, agent.NameNoop, 2, time.Minute)
	if len(out.Results) != 2 || out.Results[0].Resolved {
		t.Errorf("noop: %+v", out.Results)
	}
}
