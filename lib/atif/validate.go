package atif

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// ValidationError is a document that breaks a rule of the format: Path names the field
// (JSON-path style: steps[3].tool_calls[0].arguments), Problem what is wrong.
type ValidationError struct {
	Path, Problem string
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("atif: %s: %s", e.Path, e.Problem)
}

type checker struct {
	version string
	err     *ValidationError
}

func (c *checker) fail(path, format string, args ...any) bool {
	if c.err == nil {
		c.err = &ValidationError{Path: path, Problem: fmt.Sprintf(format, args...)}
	}
	return false
}

// Validate checks a decoded JSON document (objects as map[string]any, numbers as
// json.Number or float64) against the ATIF specification, v1.0 to v1.7. The first rule
// broken is returned as a *ValidationError.
func Validate(doc any) error {
	c := &checker{}
	c.trajectory("$", doc, false)
	if c.err != nil {
		return c.err
	}
	return nil
}

func (c *checker) object(path string, v any, allowed ...string) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, c.fail(path, "must be an object, not %s", kind(v))
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !slices.Contains(allowed, k) {
			return nil, c.fail(path+"."+k, "is not a field of the format (allowed: %s)", strings.Join(allowed, ", "))
		}
	}
	return m, true
}

func kind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("%T", x)
	}
}

// present reports whether m holds a non-null k.
func present(m map[string]any, k string) bool {
	v, ok := m[k]
	return ok && v != nil
}

func (c *checker) required(path string, m map[string]any, keys ...string) bool {
	for _, k := range keys {
		if !present(m, k) {
			return c.fail(path+"."+k, "is required")
		}
	}
	return true
}

func (c *checker) str(path string, m map[string]any, k string) bool {
	if !present(m, k) {
		return true
	}
	if _, ok := m[k].(string); !ok {
		return c.fail(path+"."+k, "must be a string, not %s", kind(m[k]))
	}
	return true
}

func (c *checker) obj(path string, m map[string]any, k string) bool {
	if !present(m, k) {
		return true
	}
	if _, ok := m[k].(map[string]any); !ok {
		return c.fail(path+"."+k, "must be an object, not %s", kind(m[k]))
	}
	return true
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case float64:
		return x, true
	}
	return 0, false
}

func integer(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		return n, err == nil
	case float64:
		return int64(x), x == float64(int64(x))
	}
	return 0, false
}

// count checks an optional non-negative integer.
func (c *checker) count(path string, m map[string]any, k string) bool {
	if !present(m, k) {
		return true
	}
	n, ok := integer(m[k])
	if !ok {
		return c.fail(path+"."+k, "must be an integer, not %s", kind(m[k]))
	}
	if n < 0 {
		return c.fail(path+"."+k, "must not be negative (%d)", n)
	}
	return true
}

func (c *checker) cost(path string, m map[string]any, k string) bool {
	if !present(m, k) {
		return true
	}
	f, ok := number(m[k])
	if !ok {
		return c.fail(path+"."+k, "must be a number, not %s", kind(m[k]))
	}
	if f < 0 {
		return c.fail(path+"."+k, "must not be negative (%v)", f)
	}
	return true
}

func (c *checker) array(path string, m map[string]any, k string) ([]any, bool) {
	if !present(m, k) {
		return nil, true
	}
	a, ok := m[k].([]any)
	if !ok {
		return nil, c.fail(path+"."+k, "must be an array, not %s", kind(m[k]))
	}
	return a, true
}

func (c *checker) trajectory(path string, v any, sub bool) bool {
	m, ok := c.object(path, v, "schema_version", "session_id", "trajectory_id", "agent", "steps", "notes", "final_metrics",
		"extra", "subagent_trajectories", "continued_trajectory_ref")
	if !ok {
		return false
	}
	if !c.required(path, m, "schema_version", "agent", "steps") || !c.str(path, m, "schema_version") {
		return false
	}
	ver := m["schema_version"].(string)
	if !slices.Contains(Versions, ver) {
		return c.fail(path+".schema_version", "%q is not a version of the format (%s)", ver, strings.Join(Versions, ", "))
	}
	if !sub {
		c.version = ver
	}
	for _, k := range []string{"session_id", "trajectory_id", "notes", "continued_trajectory_ref"} {
		if !c.str(path, m, k) {
			return false
		}
	}
	if ver < "ATIF-v1.7" && !c.required(path, m, "session_id") {
		return false
	}
	if ver < "ATIF-v1.7" {
		for _, k := range []string{"trajectory_id", "subagent_trajectories", "continued_trajectory_ref"} {
			if present(m, k) {
				return c.fail(path+"."+k, "is a field of ATIF-v1.7, not of %s", ver)
			}
		}
	}
	if sub && !c.required(path, m, "trajectory_id") {
		return false
	}
	if !c.obj(path, m, "extra") || !c.agent(path+".agent", m["agent"]) {
		return false
	}
	steps, ok := m["steps"].([]any)
	if !ok {
		return c.fail(path+".steps", "must be an array, not %s", kind(m["steps"]))
	}
	if len(steps) == 0 {
		return c.fail(path+".steps", "must hold at least one step")
	}
	for i, s := range steps {
		if !c.step(fmt.Sprintf("%s.steps[%d]", path, i), s, i+1) {
			return false
		}
	}
	if present(m, "final_metrics") && !c.finalMetrics(path+".final_metrics", m["final_metrics"]) {
		return false
	}
	subs, ok := c.array(path, m, "subagent_trajectories")
	if !ok {
		return false
	}
	seen := map[string]bool{}
	for i, s := range subs {
		p := fmt.Sprintf("%s.subagent_trajectories[%d]", path, i)
		if !c.trajectory(p, s, true) {
			return false
		}
		id := s.(map[string]any)["trajectory_id"].(string)
		if seen[id] {
			return c.fail(p+".trajectory_id", "%q is not unique among the subagent trajectories", id)
		}
		seen[id] = true
	}
	return true
}

func (c *checker) agent(path string, v any) bool {
	m, ok := c.object(path, v, "name", "version", "model_name", "extra", "tool_definitions")
	if !ok {
		return false
	}
	if !c.required(path, m, "name", "version") {
		return false
	}
	for _, k := range []string{"name", "version", "model_name"} {
		if !c.str(path, m, k) {
			return false
		}
	}
	defs, ok := c.array(path, m, "tool_definitions")
	if !ok {
		return false
	}
	for i, d := range defs {
		if _, ok := d.(map[string]any); !ok {
			return c.fail(fmt.Sprintf("%s.tool_definitions[%d]", path, i), "must be an object, not %s", kind(d))
		}
	}
	return c.obj(path, m, "extra")
}

// agentOnly are the fields a system or user step must not hold.
var agentOnly = []string{"model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics"}

func (c *checker) step(path string, v any, want int) bool {
	m, ok := c.object(path, v, "step_id", "timestamp", "source", "model_name", "reasoning_effort", "message",
		"reasoning_content", "tool_calls", "observation", "metrics", "extra", "is_copied_context", "llm_call_count")
	if !ok {
		return false
	}
	if !c.required(path, m, "step_id", "source") {
		return false
	}
	if id, ok := integer(m["step_id"]); !ok {
		return c.fail(path+".step_id", "must be an integer, not %s", kind(m["step_id"]))
	} else if id != int64(want) {
		return c.fail(path+".step_id", "is %d; step ids run from 1 in order, this one must be %d", id, want)
	}
	src, ok := m["source"].(string)
	if !ok || (src != SourceSystem && src != SourceUser && src != SourceAgent) {
		return c.fail(path+".source", "must be \"system\", \"user\" or \"agent\", not %v", m["source"])
	}
	if _, ok := m["message"]; !ok {
		return c.fail(path+".message", "is required (it may be empty)")
	}
	if m["message"] != nil && !c.content(path+".message", m["message"]) {
		return false
	}
	for _, k := range []string{"timestamp", "model_name", "reasoning_content"} {
		if !c.str(path, m, k) {
			return false
		}
	}
	if present(m, "timestamp") {
		if _, err := time.Parse(time.RFC3339Nano, m["timestamp"].(string)); err != nil {
			if _, err2 := time.Parse("2006-01-02T15:04:05.999999999", m["timestamp"].(string)); err2 != nil {
				return c.fail(path+".timestamp", "%q is not an ISO 8601 time", m["timestamp"])
			}
		}
	}
	if present(m, "reasoning_effort") {
		if _, isStr := m["reasoning_effort"].(string); !isStr {
			if _, isNum := number(m["reasoning_effort"]); !isNum {
				return c.fail(path+".reasoning_effort", "must be a string or a number, not %s", kind(m["reasoning_effort"]))
			}
		}
	}
	if src != SourceAgent {
		for _, k := range agentOnly {
			if present(m, k) {
				return c.fail(path+"."+k, "is only for a step whose source is \"agent\", and this one's is %q", src)
			}
		}
	}
	if present(m, "is_copied_context") {
		if _, ok := m["is_copied_context"].(bool); !ok {
			return c.fail(path+".is_copied_context", "must be a boolean, not %s", kind(m["is_copied_context"]))
		}
	}
	if !c.count(path, m, "llm_call_count") || !c.obj(path, m, "extra") {
		return false
	}
	calls, ok := c.array(path, m, "tool_calls")
	if !ok {
		return false
	}
	ids := map[string]bool{}
	for i, tc := range calls {
		p := fmt.Sprintf("%s.tool_calls[%d]", path, i)
		cm, ok := c.object(p, tc, "tool_call_id", "function_name", "arguments", "extra")
		if !ok {
			return false
		}
		if !c.required(p, cm, "tool_call_id", "function_name", "arguments") || !c.str(p, cm, "tool_call_id") ||
			!c.str(p, cm, "function_name") || !c.obj(p, cm, "arguments") || !c.obj(p, cm, "extra") {
			return false
		}
		id := cm["tool_call_id"].(string)
		if ids[id] {
			return c.fail(p+".tool_call_id", "%q is used twice in this step", id)
		}
		ids[id] = true
	}
	if present(m, "observation") {
		p := path + ".observation"
		om, ok := c.object(p, m["observation"], "results")
		if !ok {
			return false
		}
		if !c.required(p, om, "results") {
			return false
		}
		results, ok := c.array(p, om, "results")
		if !ok {
			return false
		}
		for i, r := range results {
			rp := fmt.Sprintf("%s.results[%d]", p, i)
			rm, ok := c.object(rp, r, "source_call_id", "content", "subagent_trajectory_ref", "extra")
			if !ok {
				return false
			}
			if !c.str(rp, rm, "source_call_id") || !c.obj(rp, rm, "extra") {
				return false
			}
			if present(rm, "source_call_id") && !ids[rm["source_call_id"].(string)] {
				return c.fail(rp+".source_call_id", "%q names no tool call of this step", rm["source_call_id"])
			}
			if present(rm, "content") && !c.content(rp+".content", rm["content"]) {
				return false
			}
			refs, ok := c.array(rp, rm, "subagent_trajectory_ref")
			if !ok {
				return false
			}
			for j, ref := range refs {
				rfp := fmt.Sprintf("%s.subagent_trajectory_ref[%d]", rp, j)
				fm, ok := c.object(rfp, ref, "session_id", "trajectory_id", "trajectory_path", "extra")
				if !ok {
					return false
				}
				for _, k := range []string{"session_id", "trajectory_id", "trajectory_path"} {
					if !c.str(rfp, fm, k) {
						return false
					}
				}
			}
		}
	}
	if present(m, "metrics") && !c.metrics(path+".metrics", m["metrics"]) {
		return false
	}
	return true
}

// content is a string, or (v1.6) an array of content parts, each an object with a type.
func (c *checker) content(path string, v any) bool {
	switch x := v.(type) {
	case string:
		return true
	case []any:
		if c.version != "" && c.version < "ATIF-v1.6" {
			return c.fail(path, "is an array of content parts, which %s does not have (ATIF-v1.6 added them)", c.version)
		}
		for i, p := range x {
			pp := fmt.Sprintf("%s[%d]", path, i)
			pm, ok := p.(map[string]any)
			if !ok {
				return c.fail(pp, "must be an object (a content part), not %s", kind(p))
			}
			t, ok := pm["type"].(string)
			if !ok {
				return c.fail(pp+".type", "is required (a string)")
			}
			if t == "text" {
				if _, ok := pm["text"].(string); !ok {
					return c.fail(pp+".text", "is required for a text part (a string)")
				}
			}
		}
		return true
	}
	return c.fail(path, "must be a string or an array of content parts, not %s", kind(v))
}

func (c *checker) metrics(path string, v any) bool {
	m, ok := c.object(path, v, "prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd", "prompt_token_ids",
		"completion_token_ids", "logprobs", "extra")
	if !ok {
		return false
	}
	for _, k := range []string{"prompt_tokens", "completion_tokens", "cached_tokens"} {
		if !c.count(path, m, k) {
			return false
		}
	}
	if !c.cost(path, m, "cost_usd") || !c.obj(path, m, "extra") {
		return false
	}
	for _, k := range []string{"prompt_token_ids", "completion_token_ids"} {
		a, ok := c.array(path, m, k)
		if !ok {
			return false
		}
		for i, e := range a {
			if _, ok := integer(e); !ok {
				return c.fail(fmt.Sprintf("%s.%s[%d]", path, k, i), "must be an integer, not %s", kind(e))
			}
		}
	}
	a, ok := c.array(path, m, "logprobs")
	if !ok {
		return false
	}
	for i, e := range a {
		if _, ok := number(e); !ok {
			return c.fail(fmt.Sprintf("%s.logprobs[%d]", path, i), "must be a number, not %s", kind(e))
		}
	}
	return true
}

func (c *checker) finalMetrics(path string, v any) bool {
	m, ok := c.object(path, v, "total_prompt_tokens", "total_completion_tokens", "total_cached_tokens", "total_cost_usd",
		"total_steps", "extra")
	if !ok {
		return false
	}
	for _, k := range []string{"total_prompt_tokens", "total_completion_tokens", "total_cached_tokens", "total_steps"} {
		if !c.count(path, m, k) {
			return false
		}
	}
	return c.cost(path, m, "total_cost_usd") && c.obj(path, m, "extra")
}
