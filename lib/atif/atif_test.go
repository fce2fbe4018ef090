package atif

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func cost(f float64) *float64 { return &f }

// loopEntries is a trajectory as the built-in loop writes it (lib/agent/loop), with a
// refused connection appended after the stop record as lib/agent does.
func loopEntries() []any {
	var v []any
	s := `[
	 {"role":"user","content":"Task (attempt 2 of 3):\n{\"instance_id\":\"demo__proj-1\"}\n\nYour previous attempt was scored and not resolved."},
	 {"role":"assistant","model":"scripted-1","usage":{"input_tokens":1200,"output_tokens":80},"text":"Looking at the manifest.","tool_calls":[{"id":"c1","name":"bash","input":{"command":"cat requirements.txt"}},{"id":"c2","name":"run_repro","input":{}}]},
	 {"role":"tool","tool_call_id":"c1","name":"bash","output":"exit code 0\nnumpy\n<script>alert(1)</script>","is_error":false},
	 {"role":"tool","tool_call_id":"c2","name":"run_repro","output":"repro exit code 1\nModuleNotFoundError","is_error":true},
	 {"type":"note","note":"envgap: 1 older tool outputs elided to stay within the model's context"},
	 {"role":"assistant","model":"scripted-1","usage":{"input_tokens":1500,"output_tokens":40},"tool_calls":[{"id":"c3","name":"write_file","input":{"path":"requirements.txt","content":"numpy==1.26.4\n"}},{"id":"c4","name":"finish","input":"not an object"}]},
	 {"role":"tool","tool_call_id":"c3","name":"write_file","output":"wrote requirements.txt (14 bytes)","is_error":false},
	 {"role":"tool","tool_call_id":"c4","name":"finish","output":"finished: the workspace will be scored","is_error":false},
	 {"type":"stop","status":"finished","num_turns":2,"tokens":{"input":2700,"output":120},"cost_usd":0.0123},
	 {"type":"refused_connection","host":"github.com","port":443,"count":2,"note":"the box's egress door refused 2 connection(s) to github.com:443"}
	]`
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		panic(err)
	}
	return v
}

func verdict() Verdict {
	return Verdict{CorpusID: "5a1e5a1e5a1e", Split: "repaired", InstanceID: "demo__proj-1", Run: 1, Attempt: 2, Agent: "bedrock:scripted-1",
		Status: "leaked", Reason: "the trajectory shows the later history", Trajectory: "inspected (steps)", Inspected: true,
		Leaks:   []Leak{{Rule: "later-history", Entry: 1, Evidence: "git log of every ref: git log --all"}},
		Refused: []Refused{{Host: "github.com", Port: 443, Count: 2}}, RefusedConnections: 2, CostUSD: cost(0.0123)}
}

// agentATIF is an ATIF document an agent wrote itself (v1.6: content parts).
const agentATIF = `{
  "schema_version": "ATIF-v1.6",
  "session_id": "sess-42",
  "agent": {"name": "some-cli", "version": "2.1.0", "model_name": "m-large", "extra": {"flavour": "x"}},
  "steps": [
    {"step_id": 1, "timestamp": "2026-10-01T12:00:00Z", "source": "user", "message": "Fix the build."},
    {"step_id": 2, "timestamp": "2026-10-01T12:00:03.5+02:00", "source": "agent", "model_name": "m-large",
     "message": [{"type": "text", "text": "I will pin numpy."}], "reasoning_content": "pinning is the fix",
     "tool_calls": [{"tool_call_id": "t1", "function_name": "shell", "arguments": {"cmd": "pip install numpy==1.26.4"}}],
     "observation": {"results": [{"source_call_id": "t1", "content": "Successfully installed"}]},
     "metrics": {"prompt_tokens": 900, "completion_tokens": 50, "cached_tokens": 100, "cost_usd": 0.004}},
    {"step_id": 3, "source": "system", "message": "", "observation": {"results": [{"content": "timer fired"}]}}
  ],
  "final_metrics": {"total_prompt_tokens": 900, "total_completion_tokens": 50, "total_cost_usd": 0.004, "total_steps": 3},
  "extra": {"envgap": {"status": "resolved", "resolved": true}}
}`

func goldenDocs(t *testing.T) map[string]*Trajectory {
	t.Helper()
	own, err := Parse([]byte(agentATIF))
	if err != nil {
		t.Fatalf("the agent's ATIF: %v", err)
	}
	v := verdict()
	raw := v
	raw.Trajectory, raw.Inspected, raw.Leaks, raw.Refused, raw.RefusedConnections = "not inspected: entry 0 is a string, not an object", false, nil, nil, 0
	raw.Agent, raw.Status, raw.Reason, raw.CostUSD = "./agent.sh", "unresolved", "resolve_command exited 1", nil
	gold := v
	gold.Agent, gold.Status, gold.Reason, gold.Resolved, gold.Leaks, gold.Refused, gold.RefusedConnections, gold.CostUSD = "gold", "resolved", "", true, nil, nil, 0, nil
	gold.Trajectory = "inspected (steps)"
	return map[string]*Trajectory{
		"loop": Build(Attempt{SessionID: "5a1e5a1e5a1e/demo__proj-1/run-1", AgentName: "bedrock:scripted-1", AgentVersion: "envgap core 1",
			Model: "scripted-1", Entries: loopEntries(), PromptTokens: 2700, CompletionTokens: 120, Verdict: v}),
		"agent": Build(Attempt{SessionID: "ignored", AgentName: "ignored", Agent: own, Verdict: v}),
		"raw": Build(Attempt{SessionID: "5a1e5a1e5a1e/demo__proj-1/run-1", AgentName: "./agent.sh", AgentVersion: "unknown (a command agent)",
			Entries: []any{"free text the agent printed\n\xff\xfe not UTF-8 <b>bold</b>"}, Verdict: raw}),
		"gold": Build(Attempt{SessionID: "5a1e5a1e5a1e/demo__proj-1/run-1", AgentName: "gold", AgentVersion: "envgap core 1",
			Entries: []any{map[string]any{"type": "note", "note": "envgap's gold agent wrote the reference fix; no model ran"}}, Verdict: gold}),
	}
}

// The documents envgap writes match the golden files, validate, and read back to the same
// bytes (Parse then Marshal).
func TestGoldenRoundTrip(t *testing.T) {
	for name, doc := range goldenDocs(t) {
		t.Run(name, func(t *testing.T) {
			b, err := Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", name+FileSuffix)
			if *update {
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if !bytes.Equal(b, want) {
				t.Fatalf("%s differs from what envgap writes now (run with -update after checking the change):\n%s", path, b)
			}
			back, err := Parse(want)
			if err != nil {
				t.Fatalf("the golden file does not read back: %v", err)
			}
			again, err := Marshal(back)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, want) {
				t.Fatalf("round trip changed %s:\n%s", path, again)
			}
			if v := VerdictOf(back); v == nil || v.InstanceID != "demo__proj-1" || v.Run != 1 || v.Attempt != 2 {
				t.Fatalf("verdict read back: %+v", v)
			}
		})
	}
}

// What each conversion makes of its input, field by field.
func TestConversions(t *testing.T) {
	docs := goldenDocs(t)
	loop := docs["loop"]
	if loop.SchemaVersion != Version || loop.Agent.Name != "bedrock:scripted-1" || loop.Agent.ModelName != "scripted-1" {
		t.Errorf("loop root: %+v", loop.Agent)
	}
	// user, agent (2 calls, 2 results), note, agent (2 calls, 2 results), refused.
	srcs := []string{}
	for _, s := range loop.Steps {
		srcs = append(srcs, s.Source)
	}
	if got := strings.Join(srcs, ","); got != "user,agent,system,agent,system" {
		t.Fatalf("loop step sources: %s", got)
	}
	a := loop.Steps[1]
	if len(a.ToolCalls) != 2 || a.ToolCalls[0].Arguments["command"] != "cat requirements.txt" || a.Observation == nil ||
		len(a.Observation.Results) != 2 || a.Observation.Results[1].SourceCallID != "c2" ||
		!strings.Contains(a.Observation.Results[0].Content.Text, "<script>") || *a.Metrics.PromptTokens != 1200 {
		t.Errorf("first agent step: %+v", a)
	}
	if args := loop.Steps[3].ToolCalls[1].Arguments; args["input"] != "not an object" {
		t.Errorf("a tool input that is not an object is kept under arguments.input: %v", args)
	}
	if StepOfEntry(loop, 3) != 1 || StepOfEntry(loop, 4) != 2 || StepOfEntry(loop, 9) != 4 || StepOfEntry(loop, 8) != -1 {
		t.Errorf("entries to steps: %d %d %d %d", StepOfEntry(loop, 3), StepOfEntry(loop, 4), StepOfEntry(loop, 9), StepOfEntry(loop, 8))
	}
	fm := loop.FinalMetrics
	if fm == nil || *fm.TotalPromptTokens != 2700 || *fm.TotalCompletionTokens != 120 || *fm.TotalCostUSD != 0.0123 || *fm.TotalSteps != 5 ||
		fm.Extra["stop"] != "finished" {
		t.Errorf("final metrics: %+v", fm)
	}
	if v := VerdictOf(loop); v.Form != FormEnvgap || len(v.Leaks) != 1 {
		t.Errorf("loop verdict: %+v", v)
	}

	own := docs["agent"]
	if own.SchemaVersion != "ATIF-v1.6" || own.SessionID != "sess-42" || own.Agent.Name != "some-cli" || len(own.Steps) != 3 ||
		own.Steps[1].Message.Text != "I will pin numpy." || own.Agent.Extra["flavour"] != "x" {
		t.Errorf("the agent's ATIF is not passed through: %+v", own)
	}
	if v := VerdictOf(own); v.Form != FormAgent || v.Status != "leaked" {
		t.Errorf("the agent's own extra.envgap must be replaced by the harness's verdict: %+v", v)
	}
	if p, c, cst, ok := own.Totals(); !ok || p != 900 || c != 50 || *cst != 0.004 {
		t.Errorf("totals of the agent's ATIF: %d %d %v %v", p, c, cst, ok)
	}

	raw := docs["raw"]
	if len(raw.Steps) != 1 || raw.Steps[0].Extra[RawKey] != true || !strings.Contains(raw.Steps[0].Message.Text, "\uFFFD") ||
		!strings.Contains(raw.Steps[0].Message.Text, "<b>bold</b>") {
		t.Errorf("raw: %+v", raw.Steps)
	}
	if v := VerdictOf(raw); v.Form != FormRaw || v.Inspected {
		t.Errorf("raw verdict: %+v", v)
	}
	if g := docs["gold"]; len(g.Steps) != 1 || g.Steps[0].Source != SourceSystem || VerdictOf(g).Form != FormEnvgap {
		t.Errorf("gold: %+v", g.Steps)
	}
	none := Build(Attempt{SessionID: "s", AgentName: "noop"})
	if len(none.Steps) != 1 || VerdictOf(none).Form != FormNone {
		t.Errorf("no trajectory: %+v", none)
	}
	if _, err := Marshal(none); err != nil {
		t.Errorf("no trajectory: %v", err)
	}
	// Other shapes the later-history rules read become one step an entry.
	other := Build(Attempt{SessionID: "s", AgentName: "claude", Entries: []any{
		map[string]any{"type": "system", "subtype": "init"},
		map[string]any{"type": "assistant", "message": map[string]any{"content": []any{map[string]any{"type": "text", "text": "hi"}}}},
		map[string]any{"type": "result", "total_cost_usd": 0.5, "result": "done"},
	}})
	if len(other.Steps) != 3 || other.Steps[0].Source != SourceSystem || other.Steps[1].Source != SourceAgent ||
		!strings.Contains(other.Steps[1].Message.Text, `"hi"`) {
		t.Errorf("other shape: %+v", other.Steps)
	}
	if _, err := Marshal(other); err != nil {
		t.Error(err)
	}
}

// mutate decodes the golden agent document, applies f, and validates it.
func mutate(t *testing.T, f func(m map[string]any)) error {
	t.Helper()
	var m map[string]any
	if err := decode([]byte(agentATIF), &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	return Validate(m)
}

func stepN(m map[string]any, i int) map[string]any { return m["steps"].([]any)[i].(map[string]any) }

// Every field the specification requires, and every rule it states, is checked: removing
// or breaking it makes Validate fail naming the field.
func TestValidateEveryRule(t *testing.T) {
	if err := mutate(t, func(map[string]any) {}); err != nil {
		t.Fatalf("the valid document: %v", err)
	}
	cases := []struct {
		name, path string
		f          func(m map[string]any)
	}{
		{"schema_version required", "$.schema_version", func(m map[string]any) { delete(m, "schema_version") }},
		{"schema_version known", "$.schema_version", func(m map[string]any) { m["schema_version"] = "ATIF-v9" }},
		{"session_id required before v1.7", "$.session_id", func(m map[string]any) { delete(m, "session_id") }},
		{"agent required", "$.agent", func(m map[string]any) { delete(m, "agent") }},
		{"agent.name required", "$.agent.name", func(m map[string]any) { delete(m["agent"].(map[string]any), "name") }},
		{"agent.version required", "$.agent.version", func(m map[string]any) { delete(m["agent"].(map[string]any), "version") }},
		{"agent.version a string", "$.agent.version", func(m map[string]any) { m["agent"].(map[string]any)["version"] = json.Number("2") }},
		{"steps required", "$.steps", func(m map[string]any) { delete(m, "steps") }},
		{"steps not empty", "$.steps", func(m map[string]any) { m["steps"] = []any{} }},
		{"step_id required", "$.steps[0].step_id", func(m map[string]any) { delete(stepN(m, 0), "step_id") }},
		{"step_id sequential", "$.steps[1].step_id", func(m map[string]any) { stepN(m, 1)["step_id"] = json.Number("3") }},
		{"step_id integer", "$.steps[0].step_id", func(m map[string]any) { stepN(m, 0)["step_id"] = json.Number("1.5") }},
		{"source required", "$.steps[0].source", func(m map[string]any) { delete(stepN(m, 0), "source") }},
		{"source enum", "$.steps[0].source", func(m map[string]any) { stepN(m, 0)["source"] = "assistant" }},
		{"message required", "$.steps[0].message", func(m map[string]any) { delete(stepN(m, 0), "message") }},
		{"message type", "$.steps[0].message", func(m map[string]any) { stepN(m, 0)["message"] = json.Number("1") }},
		{"text part needs text", "$.steps[1].message[0].text", func(m map[string]any) {
			stepN(m, 1)["message"] = []any{map[string]any{"type": "text"}}
		}},
		{"timestamp ISO 8601", "$.steps[0].timestamp", func(m map[string]any) { stepN(m, 0)["timestamp"] = "yesterday" }},
		{"agent-only on user step", "$.steps[0].tool_calls", func(m map[string]any) { stepN(m, 0)["tool_calls"] = []any{} }},
		{"metrics only on agent step", "$.steps[2].metrics", func(m map[string]any) { stepN(m, 2)["metrics"] = map[string]any{} }},
		{"model_name only on agent step", "$.steps[0].model_name", func(m map[string]any) { stepN(m, 0)["model_name"] = "x" }},
		{"tool_call_id required", "$.steps[1].tool_calls[0].tool_call_id", func(m map[string]any) {
			delete(stepN(m, 1)["tool_calls"].([]any)[0].(map[string]any), "tool_call_id")
		}},
		{"function_name required", "$.steps[1].tool_calls[0].function_name", func(m map[string]any) {
			delete(stepN(m, 1)["tool_calls"].([]any)[0].(map[string]any), "function_name")
		}},
		{"arguments an object", "$.steps[1].tool_calls[0].arguments", func(m map[string]any) {
			stepN(m, 1)["tool_calls"].([]any)[0].(map[string]any)["arguments"] = "pip install"
		}},
		{"observation results required", "$.steps[1].observation.results", func(m map[string]any) {
			stepN(m, 1)["observation"] = map[string]any{}
		}},
		{"source_call_id names a call of the step", "$.steps[1].observation.results[0].source_call_id", func(m map[string]any) {
			stepN(m, 1)["observation"].(map[string]any)["results"].([]any)[0].(map[string]any)["source_call_id"] = "t9"
		}},
		{"prompt_tokens not negative", "$.steps[1].metrics.prompt_tokens", func(m map[string]any) {
			stepN(m, 1)["metrics"].(map[string]any)["prompt_tokens"] = json.Number("-1")
		}},
		{"cost a number", "$.steps[1].metrics.cost_usd", func(m map[string]any) { stepN(m, 1)["metrics"].(map[string]any)["cost_usd"] = "free" }},
		{"final total_steps integer", "$.final_metrics.total_steps", func(m map[string]any) {
			m["final_metrics"].(map[string]any)["total_steps"] = "3"
		}},
		{"final total_cost_usd not negative", "$.final_metrics.total_cost_usd", func(m map[string]any) {
			m["final_metrics"].(map[string]any)["total_cost_usd"] = json.Number("-0.1")
		}},
		{"extra an object", "$.extra", func(m map[string]any) { m["extra"] = "x" }},
		{"unknown root field", "$.trajectory", func(m map[string]any) { m["trajectory"] = []any{} }},
		{"unknown step field", "$.steps[0].role", func(m map[string]any) { stepN(m, 0)["role"] = "user" }},
		{"v1.7 field in v1.6", "$.trajectory_id", func(m map[string]any) { m["trajectory_id"] = "x" }},
		{"content parts before v1.6", "$.steps[1].message", func(m map[string]any) { m["schema_version"] = "ATIF-v1.4" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := mutate(t, c.f)
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("want a validation error at %s, got %v", c.path, err)
			}
			if ve.Path != c.path {
				t.Fatalf("error at %s (%s), want %s", ve.Path, ve.Problem, c.path)
			}
		})
	}
	// v1.7: session_id optional, trajectory_id allowed.
	if err := mutate(t, func(m map[string]any) {
		m["schema_version"] = "ATIF-v1.7"
		delete(m, "session_id")
		m["trajectory_id"] = "a1"
	}); err != nil {
		t.Errorf("v1.7 without session_id: %v", err)
	}
}

// Hostile input: over the bound, invalid UTF-8, not ATIF, deep nesting, two values.
func TestParseHostile(t *testing.T) {
	if _, err := Parse(bytes.Repeat([]byte(" "), MaxBytes+1)); err == nil || !strings.Contains(err.Error(), "over") {
		t.Errorf("oversize: %v", err)
	}
	if _, err := Parse([]byte(`[{"role":"user"}]`)); !errors.Is(err, ErrNotATIF) {
		t.Errorf("a JSON array: %v", err)
	}
	if _, err := Parse([]byte(`{"schema_version": 4}`)); !errors.Is(err, ErrNotATIF) {
		t.Errorf("a number version: %v", err)
	}
	bad := strings.Replace(agentATIF, "Fix the build.", "Fix \xff\xfe the build.", 1)
	tr, err := Parse([]byte(bad))
	if err != nil {
		t.Fatalf("invalid UTF-8 is replaced, not refused: %v", err)
	}
	if !strings.Contains(tr.Steps[0].Message.Text, "\uFFFD") {
		t.Errorf("invalid UTF-8 kept: %q", tr.Steps[0].Message.Text)
	}
	deep := `{"schema_version":"ATIF-v1.4","session_id":"s","agent":{"name":"a","version":"1"},"steps":[{"step_id":1,"source":"user","message":"","extra":` +
		strings.Repeat(`{"a":`, 20000) + `1` + strings.Repeat(`}`, 20000) + `}]}`
	if _, err := Parse([]byte(deep)); err == nil {
		t.Errorf("20,000 nested objects are accepted")
	}
	if _, err := Parse([]byte(agentATIF + agentATIF)); err == nil {
		t.Errorf("two documents in one file are accepted")
	}
	if _, err := Parse([]byte(`{"schema_version":"ATIF-v1.4","session_id":"s","agent":{"name":"a","version":"1"},"steps":[{"step_id":1,"source":"user","message":"<img src=x onerror=alert(1)>"}]}`)); err != nil {
		t.Errorf("markup in a message is text, not an error: %v", err)
	}
}
