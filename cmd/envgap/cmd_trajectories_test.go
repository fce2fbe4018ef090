package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envgap/envgap/lib/atif"
	"github.com/envgap/envgap/schemas"
)

// checkBuiltinATIF checks a built-in agent's attempt in ATIF: valid, the loop's tool calls
// and outputs as agent steps, the tokens the result holds, the verdict in its extra.
func checkBuiltinATIF(t *testing.T, res, id string, r schemas.EvalResult) *atif.Trajectory {
	t.Helper()
	b, err := os.ReadFile(atif.AttemptPath(res, id, r.Run, r.Attempt))
	if err != nil {
		t.Errorf("no ATIF file beside the raw trajectory: %v", err)
		return nil
	}
	doc, err := atif.Parse(b)
	if err != nil {
		t.Errorf("the ATIF file: %v", err)
		return nil
	}
	calls := 0
	for _, s := range doc.Steps {
		calls += len(s.ToolCalls)
		if len(s.ToolCalls) > 0 && (s.Observation == nil || len(s.Observation.Results) != len(s.ToolCalls)) {
			t.Errorf("step %d: %d calls, observation %+v", s.StepID, len(s.ToolCalls), s.Observation)
		}
	}
	p, c, _, ok := doc.Totals()
	v := atif.VerdictOf(doc)
	if calls != r.Agent.Turns-boolInt(r.Agent.Stop == "no_tools") || !ok || p != r.Agent.InputTokens || c != r.Agent.OutputTokens ||
		doc.Steps[0].Source != atif.SourceUser || doc.Agent.ModelName != r.Agent.Model || v == nil || v.Status != r.Status || v.Form != atif.FormEnvgap {
		t.Errorf("ATIF of %s run %d attempt %d: %d calls, tokens %d/%d (%v), verdict %+v; result %+v", id, r.Run, r.Attempt, calls, p, c, ok, v, r.Agent)
	}
	return doc
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// envgap trajectories: a result folder's ATIF files exported (and converted where the run
// wrote none); a wrong format or no --out is a usage error.
func TestTrajectoriesCommand(t *testing.T) {
	res := t.TempDir()
	sum := `{"kind":"eval_summary","schema_version":1,"agent":"my-agent","split":"repaired","mode":"run","k":1,"max_attempts":1,"corpus_id":"c0ffeec0ffee","tasks":1}`
	line := `{"kind":"eval_result","schema_version":1,"instance_id":"demo__x-1","run":1,"attempt":1,"status":"leaked","resolved":false,` +
		`"leaks":[{"rule":"later-history","step":0,"evidence":"git log of every ref: git log --all"}],"trajectory":"inspected (steps)","files":[],"deleted_files":[],"steps":[],"d1":[],"d3":[],` +
		`"manifest_f1":{"measured":false,"precision":0,"recall":0,"f1":0,"phantom":null,"hidden":null},"safe_install":{"measured":false,"safe":0,"total":0},"cost_usd":null,"prediction":"","core_version":"1",` +
		`"agent":{"command":"./agent.sh","exit_code":0,"timed_out":false,"duration_ms":5,"stdout_size":0,"stderr_size":0}}`
	os.WriteFile(filepath.Join(res, schemas.EvalSummaryFile), []byte(sum), 0o644)
	os.WriteFile(filepath.Join(res, schemas.EvalResultsFile), []byte(line+"\n"), 0o644)
	dir := filepath.Join(res, "agent", "demo__x-1", "run-1")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "attempt-1.trajectory"), []byte(`{"action":"git log --all"}`+"\n"+`{"observation":"<img src=x onerror=alert(1)>"}`+"\n"), 0o644)

	if _, err := runCLI(t, "trajectories", res, "--format", "json", "--out", t.TempDir()); exitCode(err) != exitUsage {
		t.Errorf("--format json: %v", err)
	}
	if _, err := runCLI(t, "trajectories", res, "--format", "atif"); exitCode(err) != exitUsage {
		t.Errorf("no --out: %v", err)
	}
	out := filepath.Join(t.TempDir(), "atif")
	msg, err := runCLI(t, "trajectories", res, "--format", "atif", "--out", out)
	if err != nil || !strings.Contains(msg, "1 attempts") || !strings.Contains(msg, "1 converted now") {
		t.Fatalf("export: %v\n%s", err, msg)
	}
	b, err := os.ReadFile(atif.AttemptPath(out, "demo__x-1", 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := atif.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	v := atif.VerdictOf(doc)
	if len(doc.Steps) != 2 || doc.Agent.Name != "my-agent" || v.Status != "leaked" || len(v.Leaks) != 1 || atif.StepOfEntry(doc, v.Leaks[0].Entry) != 0 ||
		doc.Steps[1].Observation == nil || !strings.Contains(doc.Steps[1].Observation.Results[0].Content.Text, "<img src=x") || doc.SessionID != "c0ffeec0ffee/demo__x-1/run-1" {
		t.Errorf("converted: %s", b)
	}
	// A folder whose ATIF file was changed: named, exit 4.
	os.WriteFile(atif.AttemptPath(res, "demo__x-1", 1, 1), []byte(`{"schema_version":"ATIF-v1.4","session_id":"s","agent":{"name":"a","version":"1"},"steps":[{"step_id":2,"source":"user","message":""}]}`), 0o644)
	msg, err = runCLI(t, "trajectories", res, "--format", "atif", "--out", filepath.Join(t.TempDir(), "x"))
	if exitCode(err) != exitPartial || !strings.Contains(msg, "step_id") {
		t.Errorf("a changed ATIF file: %v\n%s", err, msg)
	}
}
