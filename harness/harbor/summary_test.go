package harbor

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestSummarizeTables checks seed 001's two aggregate tables on hand-made trials: two
// repair tasks (one failing in resolve, one in run), one control, one errored trial and
// one disagreement.
func TestSummarizeTables(t *testing.T) {
	var rs []Result
	add := func(task string, control bool, s Scenario, want, got float64, reason string) {
		r := Result{Task: task, Scenario: s, Control: control, Want: want, Got: got, Reason: reason}
		if sm := stepReason.FindStringSubmatch(reason); sm != nil && got == 0 {
			r.Step, r.TimedOut = sm[1], sm[2] == "timed out"
		}
		rs = append(rs, r)
	}
	for _, task := range []string{"a", "b"} {
		add(task, false, ScenarioUnchanged, 0, 0, "the environment is unchanged (a repair task needs a fix)")
		add(task, false, ScenarioEmpty, 0, 0, "changes source file stats.py")
		add(task, false, ScenarioBreaksBuild, 0, 0, "resolve failed (exit 1): ERROR: Invalid requirement: 'envgap harbor check: this is not a manifest'")
		add(task, false, ScenarioOracle, 1, 1, "resolved: the project installs and runs")
		add(task, false, ScenarioSourceEdit, 0, 0, "changes source file stats.py")
	}
	add("a", false, ScenarioStillFailing, 0, 0, "resolve failed (exit 1): ERROR: No matching distribution found for tabulate==0.9.1")
	add("b", false, ScenarioStillFailing, 0, 0, "run failed (exit 1): ModuleNotFoundError: No module named 'six'")
	add("c", true, ScenarioUnchanged, 1, 1, "resolved: the project installs and runs")
	add("c", true, ScenarioEmpty, 0, 0, "changes source file stats.py")
	add("c", true, ScenarioBreaksBuild, 0, 1, "resolved: the project installs and runs") // disagrees
	add("c", true, ScenarioStillFailing, 1, 1, "resolved: the project installs and runs")
	add("c", true, ScenarioOracle, 1, 0, "")
	rs[len(rs)-1].Errored = true
	rs = append(rs, Result{Task: "c", Scenario: ScenarioSourceEdit, Want: 0, Control: true, Skipped: "the project has no source file"})
	rep := &CheckReport{Tasks: 3, Results: rs}
	rep.Summarize()

	type row struct{ scenario, tasks, expected, result, agree string }
	want := []row{
		{"unchanged", "repair tasks", "0", "0", "2/2"},
		{"unchanged", "controls", "1", "1", "1/1"},
		{"empty workspace", "all tasks", "0", "0", "3/3"},
		{"breaks the build", "all tasks", "0", "0 ×2, 1 ×1", "2/3"},
		{"still failing", "repair tasks", "0", "0", "2/2"},
		{"still failing", "controls", "1", "1", "1/1"},
		{"oracle", "all tasks", "1", "1 ×2, errored ×1", "2/3"},
		{"source edit", "all tasks", "0", "0", "2/2"},
	}
	if len(rep.Scenarios) != len(want) {
		t.Fatalf("scenario rows %+v, want %d", rep.Scenarios, len(want))
	}
	for i, w := range want {
		g := rep.Scenarios[i]
		got := row{string(g.Scenario), g.Tasks, g.Expected, g.Result, fmt.Sprintf("%d/%d", g.Agree, g.Trials)}
		if got != w {
			t.Errorf("row %d = %+v, want %+v", i, got, w)
		}
	}
	if s := rep.Scenarios[7]; s.Skipped != 1 {
		t.Errorf("source edit skipped %d, want 1 (the control has no source file)", s.Skipped)
	}
	// Signals over the still-failing trials: 3 tasks, one each.
	sig := map[string]int{}
	for _, s := range rep.Signals {
		sig[s.Signal] = s.Count
		if s.Share != float64(s.Count)/3 {
			t.Errorf("%s share %v, want %d/3", s.Signal, s.Share, s.Count)
		}
	}
	if sig[SignalResolve] != 1 || sig[SignalRun] != 1 || sig[SignalControl] != 1 || len(sig) != 3 {
		t.Errorf("signals %+v, want resolve 1, run 1, control 1", rep.Signals)
	}
	var b bytes.Buffer
	rep.WriteTable(&b)
	for _, s := range []string{"| Scenario | Tasks | Expected | Result | Trials as expected |",
		"| breaks the build | all tasks | 0 | 0 ×2, 1 ×1 | 2/3 |", "| Signal | Count | % |",
		"| " + SignalResolve + " | 1 | 33% |", "DISAGREES", "| source edit | all tasks | 0 | 0 | 2/2, 1 skipped |"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, b.String())
		}
	}
	if rep.OK() {
		t.Error("a report with a disagreeing trial is OK")
	}
}
