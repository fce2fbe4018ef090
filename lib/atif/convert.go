package atif

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/envgap/envgap/schemas"
)

// Verdict is envgap's word on an attempt, kept under the root's extra at ExtraKey.
type Verdict struct {
	CorpusID   string `json:"corpus_id,omitempty"`
	Split      string `json:"split,omitempty"`
	InstanceID string `json:"instance_id"`
	Run        int    `json:"run"`
	Attempt    int    `json:"attempt"`
	// Agent is the agent's command (a built-in agent's label).
	Agent    string `json:"agent"`
	Status   string `json:"status"`
	Resolved bool   `json:"resolved"`
	Reason   string `json:"reason,omitempty"`
	Leaks    []Leak `json:"leaks"`
	// Trajectory is how envgap's later-history rules read the agent's trajectory
	// ("inspected (SHAPE)", "empty", "not inspected: WHY"); Inspected whether they did.
	Trajectory string `json:"trajectory"`
	Inspected  bool   `json:"inspected"`
	// Form says where this document came from: "envgap" (envgap's own agent or a
	// trajectory in a shape envgap reads, converted), "agent" (the agent wrote ATIF,
	// passed through after validation), "raw" (a trajectory envgap cannot read, kept
	// whole in one step) or "none" (the agent wrote no trajectory).
	Form               string    `json:"form"`
	RefusedConnections int       `json:"refused_connections,omitempty"`
	Refused            []Refused `json:"refused,omitempty"`
	CostUSD            *float64  `json:"cost_usd"`
}

// Refused is a target the box's egress door refused, and how often.
type Refused struct {
	Host  string `json:"host"`
	Port  int    `json:"port"`
	Count int    `json:"count"`
}

// Leak is a later-history rule the trajectory matched: Entry is the index of the raw
// trajectory entry (the steps hold theirs in extra.envgap_entries).
type Leak struct {
	Rule     string `json:"rule"`
	Entry    int    `json:"entry"`
	Evidence string `json:"evidence"`
}

// The forms of Verdict.Form.
const (
	FormEnvgap = "envgap"
	FormAgent  = "agent"
	FormRaw    = "raw"
	FormNone   = "none"
)

// EntriesKey is the key of a step's extra that lists the raw trajectory entries (0-based)
// the step was made from: a leak's Entry finds its step by it.
const EntriesKey = "envgap_entries"

// RawKey marks the one step of a raw trajectory (true under the step's extra).
const RawKey = "envgap_raw"

// MaxRawBytes bounds the text a raw step keeps (the head and tail kept around a note).
const MaxRawBytes = 4 << 20

// clean makes s valid UTF-8 (invalid bytes replaced by U+FFFD).
func clean(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

func capText(s string, n int) string {
	s = clean(s)
	if len(s) <= n {
		return s
	}
	head, tail := s[:n/2], s[len(s)-n/2:]
	head = strings.ToValidUTF8(head, "")
	tail = strings.ToValidUTF8(tail, "")
	return fmt.Sprintf("%s\n[envgap: %d bytes cut here; %d in all]\n%s", head, len(s)-len(head)-len(tail), len(s), tail)
}

// Raw is the one step of a trajectory envgap cannot read: its text (valid UTF-8, at most
// MaxRawBytes kept), source agent, marked RawKey. Empty text gives an empty message.
func Raw(text string) []Step {
	return []Step{{StepID: 1, Source: SourceAgent, Message: Content{Text: capText(text, MaxRawBytes)},
		Extra: map[string]any{RawKey: true, "note": "the agent's trajectory in a form envgap cannot read, kept as text; envgap's later-history rules did not inspect it"}}}
}

// FromEntries converts trajectory entries (JSON values as decoded) to steps. The built-in
// loop's shape converts exactly: {"role":"user","content"} a user step; {"role":
// "assistant", "model", "text", "tool_calls":[{"id","name","input"}], "usage"} an agent
// step with its tool calls and metrics; {"role":"tool","tool_call_id","output"} an
// observation result of the step that made the call; {"type":"note"} and
// {"type":"refused_connection"} system steps; {"type":"stop"} no step but the final
// metrics (returned). Any other object becomes one step: source from its role or type,
// the message its text, or its JSON when it has none. ok is false when an entry is not an
// object (the caller keeps the trajectory raw instead).
func FromEntries(entries []any) (steps []Step, final *FinalMetrics, stop map[string]any, ok bool) {
	callStep := map[string]int{} // tool call id -> index in steps
	add := func(s Step, entry int) *Step {
		s.StepID = len(steps) + 1
		if s.Extra == nil {
			s.Extra = map[string]any{}
		}
		s.Extra[EntriesKey] = []int{entry}
		steps = append(steps, s)
		return &steps[len(steps)-1]
	}
	for i, e := range entries {
		m, isMap := e.(map[string]any)
		if !isMap {
			return nil, nil, nil, false
		}
		role, _ := m["role"].(string)
		typ, _ := m["type"].(string)
		switch {
		case role == "user" && isString(m["content"]) && len(m) == 2:
			add(Step{Source: SourceUser, Message: Content{Text: clean(m["content"].(string))}}, i)
		case role == "assistant" && (m["tool_calls"] != nil || m["usage"] != nil || isString(m["text"])) && m["content"] == nil:
			s := Step{Source: SourceAgent, Message: Content{Text: str(m["text"])}, ModelName: str(m["model"])}
			if calls, isList := m["tool_calls"].([]any); isList {
				for j, c := range calls {
					cm, _ := c.(map[string]any)
					id := str(cm["id"])
					if id == "" {
						id = fmt.Sprintf("call-%d-%d", i, j)
					}
					args, isObj := cm["input"].(map[string]any)
					if !isObj {
						args = map[string]any{}
						if cm["input"] != nil {
							args["input"] = cm["input"]
						}
					}
					s.ToolCalls = append(s.ToolCalls, ToolCall{ToolCallID: clean(id), FunctionName: clean(str(cm["name"])), Arguments: args})
				}
			}
			if u, isObj := m["usage"].(map[string]any); isObj {
				in, okIn := toInt(u["input_tokens"])
				out, okOut := toInt(u["output_tokens"])
				if okIn || okOut {
					s.Metrics = &Metrics{PromptTokens: &in, CompletionTokens: &out}
				}
			}
			st := add(s, i)
			for _, tc := range st.ToolCalls {
				callStep[tc.ToolCallID] = len(steps) - 1
			}
		case role == "tool" && m["output"] != nil:
			id := clean(str(m["tool_call_id"]))
			content := &Content{Text: clean(textOf(m["output"]))}
			if k, found := callStep[id]; found {
				st := &steps[k]
				if st.Observation == nil {
					st.Observation = &Observation{}
				}
				st.Observation.Results = append(st.Observation.Results, ObservationResult{SourceCallID: id, Content: content})
				st.Extra[EntriesKey] = append(st.Extra[EntriesKey].([]int), i)
				continue
			}
			add(Step{Source: SourceSystem, Message: Content{Text: "output of tool call " + id + " (no step made the call)"},
				Observation: &Observation{Results: []ObservationResult{{Content: content}}}}, i)
		case typ == "note" && isString(m["note"]):
			add(Step{Source: SourceSystem, Message: Content{Text: clean(m["note"].(string))}}, i)
		case typ == "refused_connection":
			n, _ := toInt(m["count"])
			port, _ := toInt(m["port"])
			add(Step{Source: SourceSystem, Message: Content{Text: clean(str(m["note"]))},
				Extra: map[string]any{"refused_connection": map[string]any{"host": clean(str(m["host"])), "port": port, "count": n}}}, i)
		case typ == "stop" && m["status"] != nil && stop == nil:
			stop = m
			final = &FinalMetrics{}
			if tok, isObj := m["tokens"].(map[string]any); isObj {
				in, _ := toInt(tok["input"])
				out, _ := toInt(tok["output"])
				final.TotalPromptTokens, final.TotalCompletionTokens = &in, &out
			}
			if c, isNum := toFloat(m["cost_usd"]); isNum {
				final.TotalCostUSD = &c
			}
		default:
			add(genericStep(m), i)
		}
	}
	if final != nil {
		n := int64(len(steps))
		final.TotalSteps = &n
	}
	return steps, final, stop, true
}

// genericStep is one step of an entry in another shape: its source from its role or
// type, its message the entry's text when it holds one, else its JSON. An entry that holds
// only what a tool returned (output, observation, result, stdout) is a system step whose
// observation holds it.
func genericStep(m map[string]any) Step {
	role, _ := m["role"].(string)
	typ, _ := m["type"].(string)
	src := SourceAgent
	switch {
	case role == "system" || typ == "system":
		src = SourceSystem
	case role == "user" || role == "tool" || role == "tool_result" || role == "observation" || typ == "user" || typ == "tool_result":
		src = SourceUser
	}
	text, output := "", false
	for _, k := range []string{"text", "content", "message", "action", "command", "thought", "output", "observation", "result", "stdout"} {
		if s, isStr := m[k].(string); isStr && s != "" {
			text = s
			output = k == "output" || k == "observation" || k == "result" || k == "stdout"
			break
		}
	}
	if text == "" || len(m) > 3 {
		output = false
		if b, err := marshal(m); err == nil {
			text = string(b)
		}
	}
	text = capText(text, MaxRawBytes)
	if output && role != "assistant" {
		return Step{Source: SourceSystem, Observation: &Observation{Results: []ObservationResult{{Content: &Content{Text: text}}}}}
	}
	return Step{Source: src, Message: Content{Text: text}}
}

func isString(v any) bool { _, ok := v.(string); return ok }

func str(v any) string {
	s, _ := v.(string)
	return clean(s)
}

// textOf is a tool output as text: a string as it is, anything else as its JSON.
func textOf(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case float64:
		if x >= 0 && x == float64(int64(x)) {
			return int64(x), true
		}
	case json.Number:
		if n, err := x.Int64(); err == nil && n >= 0 {
			return n, true
		}
	case int64:
		if x >= 0 {
			return x, true
		}
	case int:
		if x >= 0 {
			return int64(x), true
		}
	}
	return 0, false
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, x >= 0
	case json.Number:
		f, err := x.Float64()
		return f, err == nil && f >= 0
	case *float64:
		if x != nil {
			return *x, *x >= 0
		}
	}
	return 0, false
}

// Attempt is what Build makes a trajectory of: one attempt, as the harness saw it.
type Attempt struct {
	// SessionID names the run (corpus, task, run); TrajectoryID the attempt (kept in
	// the verdict: v1.4 has no trajectory_id).
	SessionID string
	// AgentName and AgentVersion name the agent; Model the model (built-in agents).
	AgentName, AgentVersion, Model string
	// Entries are the trajectory as envgap read it (lib/agent: a JSON array, JSON
	// Lines, or one string entry for a file it could not read); nil: none written.
	Entries []any
	// Agent is the ATIF document the agent wrote itself (nil: none); it is passed
	// through with the verdict added.
	Agent *Trajectory
	// Tokens and cost as the harness recorded them (used when the trajectory reports
	// none).
	PromptTokens, CompletionTokens int64
	Verdict                        Verdict
}

// Build makes the ATIF document of an attempt: the agent's own ATIF passed through; its
// entries converted (FromEntries); a trajectory in no shape envgap reads kept raw (Raw);
// no trajectory at all one system step that says so. The verdict goes under the root's
// extra (ExtraKey), Form filled.
func Build(a Attempt) *Trajectory {
	v := a.Verdict
	if v.Leaks == nil {
		v.Leaks = []Leak{}
	}
	if a.Agent != nil {
		t := *a.Agent
		extra := map[string]any{}
		for k, x := range t.Extra {
			extra[k] = x
		}
		v.Form = FormAgent
		extra[ExtraKey] = asMap(v)
		t.Extra = extra
		return &t
	}
	t := &Trajectory{SchemaVersion: Version, SessionID: a.SessionID, Agent: Agent{Name: a.AgentName, Version: a.AgentVersion, ModelName: a.Model}}
	if t.Agent.Version == "" {
		t.Agent.Version = "unknown"
	}
	steps, final, stop, ok := FromEntries(a.Entries)
	switch {
	case len(a.Entries) == 0:
		v.Form = FormNone
		steps = []Step{{StepID: 1, Source: SourceSystem, Message: Content{Text: "envgap: the agent wrote no trajectory"}}}
	case !ok || (len(a.Entries) == 1 && isString(a.Entries[0])):
		v.Form = FormRaw
		text := ""
		if len(a.Entries) == 1 && isString(a.Entries[0]) {
			text = a.Entries[0].(string)
		} else if b, err := marshal(a.Entries); err == nil {
			text = string(b)
		}
		steps = Raw(text)
		final = nil
	default:
		v.Form = FormEnvgap
	}
	if len(steps) == 0 {
		steps = []Step{{StepID: 1, Source: SourceSystem, Message: Content{Text: "envgap: the trajectory holds no step"}}}
	}
	t.Steps = steps
	if final == nil && (a.PromptTokens > 0 || a.CompletionTokens > 0 || v.CostUSD != nil) {
		final = &FinalMetrics{}
	}
	if final != nil {
		if final.TotalPromptTokens == nil && (a.PromptTokens > 0 || a.CompletionTokens > 0) {
			p, c := a.PromptTokens, a.CompletionTokens
			final.TotalPromptTokens, final.TotalCompletionTokens = &p, &c
		}
		if final.TotalCostUSD == nil && v.CostUSD != nil {
			c := *v.CostUSD
			final.TotalCostUSD = &c
		}
		n := int64(len(t.Steps))
		final.TotalSteps = &n
		if stop != nil {
			final.Extra = map[string]any{"stop": str(stop["status"])}
			if n, isNum := toInt(stop["num_turns"]); isNum {
				final.Extra["turns"] = n
			}
		}
	}
	t.FinalMetrics = final
	t.Extra = map[string]any{ExtraKey: asMap(v)}
	return t
}

// asMap is v as a JSON object: extra holds what a reader of the file gets back.
func asMap(v Verdict) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // a Verdict always marshals
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		panic(err)
	}
	return m
}

// VerdictOf reads the verdict back from a document's extra (nil when it has none).
func VerdictOf(t *Trajectory) *Verdict {
	x, ok := t.Extra[ExtraKey]
	if !ok {
		return nil
	}
	if v, ok := x.(Verdict); ok {
		return &v
	}
	b, err := json.Marshal(x)
	if err != nil {
		return nil
	}
	var v Verdict
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	return &v
}

// StepOfEntry returns the index in t.Steps of the step made from raw entry i (-1: none).
func StepOfEntry(t *Trajectory, i int) int {
	for k, s := range t.Steps {
		switch es := s.Extra[EntriesKey].(type) {
		case []int:
			for _, e := range es {
				if e == i {
					return k
				}
			}
		case []any:
			for _, e := range es {
				if n, ok := toInt(e); ok && int(n) == i {
					return k
				}
			}
		}
	}
	return -1
}

// ReadEntries reads a trajectory file as lib/agent reads an agent's: the agent's own ATIF
// document (validated: own), or entries: a JSON array, one JSON object, JSON Lines; a file
// in none of these (or ATIF that does not validate: why says so) is one string entry, its
// text. b is bounded by the caller; invalid UTF-8 is replaced.
func ReadEntries(b []byte) (entries []any, own *Trajectory, why string) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil, ""
	}
	if !utf8.Valid(b) {
		b = bytes.ToValidUTF8(b, []byte("\uFFFD"))
	}
	if IsATIF(b) {
		t, err := Parse(b)
		if err == nil {
			var m map[string]any
			if json.Unmarshal(b, &m) == nil {
				return []any{m}, t, ""
			}
		}
		why = fmt.Sprintf("the trajectory file claims to be ATIF and is not valid ATIF (%v)", err)
		return []any{why + "; its text:\n" + string(b)}, nil, why
	}
	var obj map[string]any
	if json.Unmarshal(b, &obj) == nil && obj != nil {
		return []any{obj}, nil, ""
	}
	if json.Unmarshal(b, &entries) == nil {
		return entries, nil, ""
	}
	entries = nil
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var v any
		if json.Unmarshal(line, &v) != nil {
			return []any{string(b)}, nil, ""
		}
		entries = append(entries, v)
	}
	return entries, nil, ""
}

// NewVerdict is the verdict of a scored attempt (a results.jsonl line): corpus and split
// name what the run scored.
func NewVerdict(r *schemas.EvalResult, corpusID, split string) Verdict {
	v := Verdict{CorpusID: corpusID, Split: split, InstanceID: r.InstanceID, Run: r.Run, Attempt: r.Attempt,
		Status: r.Status, Resolved: r.Resolved, Reason: r.Reason, Trajectory: r.Trajectory,
		Inspected: !strings.HasPrefix(r.Trajectory, "not inspected"), CostUSD: r.CostUSD, Leaks: []Leak{}}
	for _, l := range r.Leaks {
		v.Leaks = append(v.Leaks, Leak{Rule: l.Rule, Entry: l.Step, Evidence: l.Evidence})
	}
	if r.Agent != nil {
		v.Agent = r.Agent.Command
		v.RefusedConnections = r.Agent.RefusedConnections
	}
	return v
}
