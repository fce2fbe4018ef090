package run

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/harness/eval"
	"github.com/envgap/envgap/lib/agent"
	"github.com/envgap/envgap/lib/agent/agenttest"
	"github.com/envgap/envgap/lib/atif"
	"github.com/envgap/envgap/schemas"
)

// runInto runs an agent on the test task into a result folder (results.jsonl and the
// agent's files) and returns the folder and the results.
func runInto(t *testing.T, agentCmd string, maxAttempts int) (string, []schemas.EvalResult) {
	t.Helper()
	st, err := catalog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ev := &eval.Evaluator{Store: st, Runner: &agenttest.FakeRunner{Store: st}}
	tasks := []schemas.Task{*agenttest.Task()}
	res := filepath.Join(t.TempDir(), "results")
	out, err := Run(context.Background(), tasks, Options{Evaluator: ev, Materialize: agenttest.GitMaterialize(0), Agent: agent.ParseSpec(agentCmd),
		K: 1, MaxAttempts: maxAttempts, AttemptTimeout: time.Minute, WorkDir: t.TempDir(), OutDir: res, CorpusID: "c0ffeec0ffee", Split: "reported"})
	if err != nil || len(out.Faults) > 0 {
		t.Fatalf("run: %v %+v", err, out.Faults)
	}
	meta := schemas.EvalSummary{Agent: commandName(agentCmd), Split: "reported", Mode: schemas.ModeRun, K: 1, MaxAttempts: maxAttempts}
	if _, err := ev.WriteResults(res, meta, tasks, &eval.Outcome{Results: out.Results, Ran: out.Ran}, out.Logs); err != nil {
		t.Fatal(err)
	}
	return res, out.Results
}

func readATIF(t *testing.T, res string, r schemas.EvalResult) *atif.Trajectory {
	t.Helper()
	b, err := os.ReadFile(atif.AttemptPath(res, r.InstanceID, r.Run, r.Attempt))
	if err != nil {
		t.Fatalf("attempt %d has no ATIF file: %v", r.Attempt, err)
	}
	doc, err := atif.Parse(b)
	if err != nil {
		t.Fatalf("attempt %d: %v", r.Attempt, err)
	}
	return doc
}

// Every attempt gets an ATIF file beside its raw trajectory: gold's, a command agent's
// entries converted, its own ATIF passed through (its tokens and cost the attempt's), a
// trajectory envgap cannot read kept in one raw step; each with the attempt's verdict.
func TestEveryAttemptWritesATIF(t *testing.T) {
	res, rs := runInto(t, agent.NameGold, 1)
	doc := readATIF(t, res, rs[0])
	v := atif.VerdictOf(doc)
	if doc.Agent.Name != "gold" || v.Status != schemas.EvalResolved || !v.Resolved || v.Form != atif.FormEnvgap || v.CorpusID != "c0ffeec0ffee" ||
		v.Split != "reported" || !strings.Contains(doc.Steps[0].Message.Text, "reference fix") {
		t.Errorf("gold: %+v %+v", doc, v)
	}

	fixer := `if [ "$ENVGAP_ATTEMPT" = 1 ]; then echo 'x==3' > requirements.txt; else echo 'x==1' > requirements.txt; fi; ` +
		`echo '[{"role":"assistant","text":"editing","tool_calls":[{"id":"a","name":"bash","input":{"command":"git log --all"}}]},{"role":"tool","tool_call_id":"a","output":"nothing"}]' > "$ENVGAP_TRAJECTORY_FILE"`
	res, rs = runInto(t, fixer, 2)
	if len(rs) != 2 {
		t.Fatalf("fixer: %+v", rs)
	}
	for _, r := range rs {
		doc := readATIF(t, res, r)
		v := atif.VerdictOf(doc)
		if v.Form != atif.FormEnvgap || v.Attempt != r.Attempt || v.Status != r.Status || len(doc.Steps) != 1 || len(doc.Steps[0].ToolCalls) != 1 ||
			doc.Steps[0].Observation == nil || doc.Agent.Name != "if" {
			t.Errorf("fixer attempt %d: %+v %+v", r.Attempt, doc, v)
		}
		if r.Status == schemas.EvalLeaked && (len(v.Leaks) == 0 || atif.StepOfEntry(doc, v.Leaks[0].Entry) != 0) {
			t.Errorf("leak evidence not kept: %+v", v.Leaks)
		}
	}

	own := `echo 'x==1' > requirements.txt; printf '%s' '{"schema_version":"ATIF-v1.4","session_id":"s","agent":{"name":"cli","version":"3"},"steps":[{"step_id":1,"source":"agent","message":"done","metrics":{"prompt_tokens":10,"completion_tokens":2}}],"final_metrics":{"total_prompt_tokens":10,"total_completion_tokens":2,"total_cost_usd":0.75}}' > "$ENVGAP_TRAJECTORY_FILE"`
	res, rs = runInto(t, own, 1)
	doc = readATIF(t, res, rs[0])
	if v := atif.VerdictOf(doc); doc.Agent.Name != "cli" || doc.Agent.Version != "3" || v.Form != atif.FormAgent || !v.Resolved {
		t.Errorf("the agent's own ATIF: %+v %+v", doc, v)
	}
	if a := rs[0].Agent; a.InputTokens != 10 || a.OutputTokens != 2 || rs[0].CostUSD == nil || *rs[0].CostUSD != 0.75 || rs[0].Trajectory != "inspected (ATIF)" {
		t.Errorf("tokens and cost from the agent's ATIF: %+v cost %v, trajectory %q", a, rs[0].CostUSD, rs[0].Trajectory)
	}

	res, rs = runInto(t, `echo 'x==1' > requirements.txt; printf 'free text <script>x</script>\377' > "$ENVGAP_TRAJECTORY_FILE"`, 1)
	doc = readATIF(t, res, rs[0])
	if v := atif.VerdictOf(doc); v.Form != atif.FormRaw || v.Inspected || len(doc.Steps) != 1 || doc.Steps[0].Extra[atif.RawKey] != true ||
		!strings.Contains(doc.Steps[0].Message.Text, "<script>") {
		t.Errorf("raw: %+v %+v", doc.Steps, v)
	}

	// Export: the run's files validated and copied; a missing one converted from the raw
	// trajectory; a tampered one named and not copied.
	res, rs = runInto(t, fixer, 2)
	exp := filepath.Join(t.TempDir(), "atif")
	rep, err := ExportATIF(res, exp)
	if err != nil || rep.Attempts != 2 || rep.Kept != 2 || rep.Converted != 0 || len(rep.Invalid) != 0 {
		t.Fatalf("export: %+v %v", rep, err)
	}
	for _, r := range rs {
		a, _ := os.ReadFile(atif.AttemptPath(res, r.InstanceID, r.Run, r.Attempt))
		b, _ := os.ReadFile(atif.AttemptPath(exp, r.InstanceID, r.Run, r.Attempt))
		if string(a) != string(b) || len(a) == 0 {
			t.Errorf("attempt %d exported differs from the run's", r.Attempt)
		}
	}
	if _, err := ExportATIF(res, exp); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("export into a folder that is not empty: %v", err)
	}
	os.Remove(atif.AttemptPath(res, rs[0].InstanceID, 1, 1))
	if err := os.WriteFile(atif.AttemptPath(res, rs[1].InstanceID, 1, 2), []byte(`{"schema_version":"ATIF-v1.4","steps":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err = ExportATIF(res, filepath.Join(t.TempDir(), "again"))
	if err != nil || rep.Kept != 0 || rep.Converted != 1 || len(rep.Invalid) != 1 || !strings.Contains(rep.Invalid[0], "$.agent: is required") {
		t.Fatalf("export of a changed folder: %+v %v", rep, err)
	}
	conv, err := os.ReadFile(atif.AttemptPath(rep.Out, rs[0].InstanceID, 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	if doc, err := atif.Parse(conv); err != nil || len(doc.Steps[0].ToolCalls) != 1 || atif.VerdictOf(doc).Status != rs[0].Status {
		t.Errorf("converted: %v %+v", err, doc)
	}
}
