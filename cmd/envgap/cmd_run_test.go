package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envgap/envgap/schemas"
)

// runAgentCLI runs envgap run on the scenario's reported split (the control) with a fresh
// store per test and the given agent.
func (w *evalWorld) runAgent(t *testing.T, store, agentCmd, out string, extra ...string) (string, error) {
	t.Helper()
	args := []string{"--store", store, "run", "--agent", agentCmd, "--name", "scripted", "--split", "reported", "--tasks", w.hub, "--out", out,
		"--git-url-template", w.gitTemplate, "--pypi-upstream", w.pypi + "/simple/", "--pypi", w.pypi,
		"--npm-registry", "http://127.0.0.1:9/", "--osv", w.osv, "--step-timeout", "3m"}
	return runCLI(t, append(args, extra...)...)
}

func TestRunAgentScripted(t *testing.T) {
	requireEngine(t, "envgap-python-eval")
	w := newEvalWorld(t)
	store := filepath.Join(t.TempDir(), "store")
	res := t.TempDir()

	// Runs repro on the project as it is (it works: a control), breaks it on attempt 1,
	// reads the feedback, and puts it right on attempt 2.
	fixer := `set -e
if [ "$ENVGAP_ATTEMPT" = 1 ]; then
  test -z "$ENVGAP_FEEDBACK_FILE"
  grep -q '"repro_command"' "$ENVGAP_TASK_FILE"
  "$ENVGAP_REPRO" > "$HOME/repro.txt"
  grep -q '=== repro exited 0' "$HOME/repro.txt"
  echo 'tabulate==0.9.2' > requirements.txt
else
  grep -q 'No matching distribution found for tabulate==0.9.2' "$ENVGAP_FEEDBACK_FILE"
  echo 'tabulate==0.9.0' > requirements.txt
fi
echo '[{"action": "edit requirements.txt", "output": "ok"}]' > "$ENVGAP_TRAJECTORY_FILE"
echo 0.01 > "$ENVGAP_COST_FILE"`
	out, err := w.runAgent(t, store, fixer, filepath.Join(res, "fixer"), "--max-attempts", "3")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	rf, err := readFolder(t, filepath.Join(res, "fixer"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rf) != 2 || rf[0].Resolved || rf[0].Status != schemas.EvalUnresolved || rf[0].Agent.ExitCode != 0 || !rf[1].Resolved || rf[1].Attempt != 2 ||
		rf[1].Agent == nil || *rf[1].CostUSD != 0.01 || rf[1].Trajectory != "inspected (steps)" {
		t.Fatalf("fixer: %+v", rf)
	}
	if b, err := os.ReadFile(filepath.Join(res, "fixer", "agent", evalControl, "run-1", "attempt-1.stdout")); err != nil {
		t.Errorf("agent output not kept: %v", err)
	} else if len(b) != 0 {
		t.Errorf("stdout %q", b)
	}
	md, err := runCLI(t, "report", filepath.Join(res, "fixer"))
	if err != nil || !strings.Contains(md, "| scripted | reported | run, k=1, up to 3 attempts | 1 of 1 | 0.0% (0/1) | 100.0% (1/1) |") {
		t.Errorf("report: %v\n%s", err, md)
	}
	runs := countRuns(t, store)
	if runs != 3 {
		t.Errorf("%d container runs for a repro and two attempts, want 3", runs)
	}

	// Hangs: stopped at the attempt timeout, not evaluated, no container.
	out, err = w.runAgent(t, store, "sleep 600", filepath.Join(res, "hang"), "--max-attempts", "2", "--attempt-timeout", "2s")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	rf, _ = readFolder(t, filepath.Join(res, "hang"))
	if len(rf) != 2 || rf[0].Status != schemas.EvalUnresolved || !strings.Contains(rf[0].Reason, "did not finish within 2s") || !rf[0].Agent.TimedOut {
		t.Fatalf("hang: %+v", rf)
	}

	// Edits source: rejected, no container.
	out, err = w.runAgent(t, store, `echo "print('x')" >> stats.py`, filepath.Join(res, "source"), "--max-attempts", "1")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	rf, _ = readFolder(t, filepath.Join(res, "source"))
	if len(rf) != 1 || rf[0].Status != schemas.EvalRejected || rf[0].Reason != "changes source file stats.py" {
		t.Fatalf("source edit: %+v", rf)
	}
	if n := countRuns(t, store); n != runs {
		t.Errorf("a hanging and a source-editing agent ran %d containers", n-runs)
	}

	// The same run again: the complete run is kept, nothing runs.
	out, err = w.runAgent(t, store, fixer, filepath.Join(res, "fixer"), "--max-attempts", "3")
	if err != nil || !strings.Contains(out, "1 reused") {
		t.Errorf("run again: %v\n%s", err, out)
	}
	if n := countRuns(t, store); n != runs {
		t.Errorf("running a complete folder again ran %d containers", n-runs)
	}
}

func readFolder(t *testing.T, dir string) ([]schemas.EvalResult, error) {
	t.Helper()
	_, rs, err := schemas.ReadEvalFolder[schemas.EvalResult](dir)
	return rs, err
}
