package atif

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Version is the schema version envgap writes: v1.4, the last version before content
// parts and run-scoped sessions, which every reader of the format since October 2025
// accepts. Versions v1.0 to v1.7 are read.
const Version = "ATIF-v1.4"

// Versions are the schema versions Validate accepts.
var Versions = []string{"ATIF-v1.0", "ATIF-v1.1", "ATIF-v1.2", "ATIF-v1.3", "ATIF-v1.4", "ATIF-v1.5", "ATIF-v1.6", "ATIF-v1.7"}

// ExtraKey is the key of the root's extra that holds envgap's verdict (Verdict).
const ExtraKey = "envgap"

// MaxBytes bounds a trajectory file Parse reads (the bound of the agent's trajectory
// file in lib/agent).
const MaxBytes = 64 << 20

// The sources of a step.
const (
	SourceSystem = "system"
	SourceUser   = "user"
	SourceAgent  = "agent"
)

// Trajectory is one ATIF document: one attempt of an agent.
type Trajectory struct {
	SchemaVersion string `json:"schema_version"`
	// SessionID names the agent run (required up to v1.6).
	SessionID string `json:"session_id,omitempty"`
	// TrajectoryID names this trajectory (v1.7).
	TrajectoryID           string         `json:"trajectory_id,omitempty"`
	Agent                  Agent          `json:"agent"`
	Steps                  []Step         `json:"steps"`
	Notes                  string         `json:"notes,omitempty"`
	FinalMetrics           *FinalMetrics  `json:"final_metrics,omitempty"`
	ContinuedTrajectoryRef string         `json:"continued_trajectory_ref,omitempty"`
	SubagentTrajectories   []Trajectory   `json:"subagent_trajectories,omitempty"`
	Extra                  map[string]any `json:"extra,omitempty"`
}

// Agent is the agent that made a trajectory.
type Agent struct {
	Name            string         `json:"name"`
	Version         string         `json:"version"`
	ModelName       string         `json:"model_name,omitempty"`
	ToolDefinitions []any          `json:"tool_definitions,omitempty"`
	Extra           map[string]any `json:"extra,omitempty"`
}

// Step is one turn: a system or user message, or an agent's answer with its tool calls and
// what they returned.
type Step struct {
	StepID           int            `json:"step_id"`
	Timestamp        string         `json:"timestamp,omitempty"`
	Source           string         `json:"source"`
	ModelName        string         `json:"model_name,omitempty"`
	ReasoningEffort  any            `json:"reasoning_effort,omitempty"`
	Message          Content        `json:"message"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []ToolCall     `json:"tool_calls,omitempty"`
	Observation      *Observation   `json:"observation,omitempty"`
	Metrics          *Metrics       `json:"metrics,omitempty"`
	IsCopiedContext  *bool          `json:"is_copied_context,omitempty"`
	LLMCallCount     *int64         `json:"llm_call_count,omitempty"`
	Extra            map[string]any `json:"extra,omitempty"`
}

// Content is a message or an observation's content: a string, or (v1.6) an array of
// content parts, kept as given.
type Content struct {
	// Text is the string, or the text parts joined by newlines.
	Text string
	// Parts are the content parts as given (nil for a string).
	Parts []any
}

// MarshalJSON writes the string, or the parts as given.
func (c Content) MarshalJSON() ([]byte, error) {
	if c.Parts != nil {
		return marshal(c.Parts)
	}
	return marshal(c.Text)
}

// UnmarshalJSON reads a string or an array of content parts.
func (c *Content) UnmarshalJSON(b []byte) error {
	*c = Content{}
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		return nil
	}
	if err := json.Unmarshal(b, &c.Text); err == nil {
		return nil
	}
	if err := json.Unmarshal(b, &c.Parts); err != nil {
		return fmt.Errorf("content is neither a string nor an array of content parts")
	}
	var texts []string
	for _, p := range c.Parts {
		if m, ok := p.(map[string]any); ok {
			if s, ok := m["text"].(string); ok {
				texts = append(texts, s)
			}
		}
	}
	c.Text = strings.Join(texts, "\n")
	return nil
}

// ToolCall is a function the agent called.
type ToolCall struct {
	ToolCallID   string         `json:"tool_call_id"`
	FunctionName string         `json:"function_name"`
	Arguments    map[string]any `json:"arguments"`
	Extra        map[string]any `json:"extra,omitempty"`
}

// Observation is what the environment returned in a step.
type Observation struct {
	Results []ObservationResult `json:"results"`
}

// ObservationResult is one result: of a tool call of the same step (SourceCallID), or of
// no call.
type ObservationResult struct {
	SourceCallID          string         `json:"source_call_id,omitempty"`
	Content               *Content       `json:"content,omitempty"`
	SubagentTrajectoryRef []any          `json:"subagent_trajectory_ref,omitempty"`
	Extra                 map[string]any `json:"extra,omitempty"`
}

// Metrics are one step's tokens and cost (prompt tokens include cached ones).
type Metrics struct {
	PromptTokens       *int64         `json:"prompt_tokens,omitempty"`
	CompletionTokens   *int64         `json:"completion_tokens,omitempty"`
	CachedTokens       *int64         `json:"cached_tokens,omitempty"`
	CostUSD            *float64       `json:"cost_usd,omitempty"`
	PromptTokenIDs     []int64        `json:"prompt_token_ids,omitempty"`
	CompletionTokenIDs []int64        `json:"completion_token_ids,omitempty"`
	Logprobs           []float64      `json:"logprobs,omitempty"`
	Extra              map[string]any `json:"extra,omitempty"`
}

// FinalMetrics are the trajectory's totals.
type FinalMetrics struct {
	TotalPromptTokens     *int64         `json:"total_prompt_tokens,omitempty"`
	TotalCompletionTokens *int64         `json:"total_completion_tokens,omitempty"`
	TotalCachedTokens     *int64         `json:"total_cached_tokens,omitempty"`
	TotalCostUSD          *float64       `json:"total_cost_usd,omitempty"`
	TotalSteps            *int64         `json:"total_steps,omitempty"`
	Extra                 map[string]any `json:"extra,omitempty"`
}

// Marshal writes t as envgap stores it: indented JSON, HTML characters not escaped, a
// final newline. It validates t first: envgap never writes what it would refuse to read.
func Marshal(t *Trajectory) ([]byte, error) {
	b, err := marshal(t)
	if err != nil {
		return nil, err
	}
	var doc any
	if err := decode(b, &doc); err != nil {
		return nil, err
	}
	if err := Validate(doc); err != nil {
		return nil, fmt.Errorf("atif: envgap made an invalid trajectory: %w", err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

func decode(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if _, err := d.Token(); err == nil {
		return errors.New("more than one JSON value")
	}
	return nil
}

// ErrNotATIF is Parse's error for a document that does not say it is ATIF (no
// schema_version starting with "ATIF"): another shape, not a broken ATIF file.
var ErrNotATIF = errors.New("not an ATIF document")

// IsATIF says whether b looks like an ATIF document: a JSON object whose schema_version
// starts with "ATIF". Cheap: only the root's keys are decoded.
func IsATIF(b []byte) bool {
	var head struct {
		SchemaVersion any `json:"schema_version"`
	}
	if json.Unmarshal(b, &head) != nil {
		return false
	}
	s, ok := head.SchemaVersion.(string)
	return ok && strings.HasPrefix(strings.ToUpper(s), "ATIF")
}

// Parse reads an ATIF document an agent (or anyone) wrote: at most MaxBytes, invalid
// UTF-8 replaced by U+FFFD, one JSON object, validated (Validate). ErrNotATIF when b is
// not an ATIF document at all; otherwise an error names the field and what is wrong.
func Parse(b []byte) (*Trajectory, error) {
	if len(b) > MaxBytes {
		return nil, fmt.Errorf("atif: %d bytes, over the %d a trajectory may hold", len(b), MaxBytes)
	}
	if !utf8.Valid(b) {
		b = bytes.ToValidUTF8(b, []byte("\uFFFD"))
	}
	var doc any
	if err := decode(b, &doc); err != nil {
		if !IsATIF(b) {
			return nil, ErrNotATIF
		}
		return nil, fmt.Errorf("atif: %w", err)
	}
	m, _ := doc.(map[string]any)
	if v, ok := m["schema_version"].(string); !ok || !strings.HasPrefix(strings.ToUpper(v), "ATIF") {
		return nil, ErrNotATIF
	}
	if err := Validate(doc); err != nil {
		return nil, err
	}
	var t Trajectory
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("atif: %w", err)
	}
	return &t, nil
}

// Totals returns a trajectory's prompt and completion tokens and its cost: final_metrics
// when it holds them, else the sum of the steps' metrics; ok false for a figure nothing
// reports.
func (t *Trajectory) Totals() (prompt, completion int64, cost *float64, ok bool) {
	var p, c *int64
	if fm := t.FinalMetrics; fm != nil {
		p, c, cost = fm.TotalPromptTokens, fm.TotalCompletionTokens, fm.TotalCostUSD
	}
	var sp, sc int64
	var scost float64
	var anyTok, anyCost bool
	for _, s := range t.Steps {
		if m := s.Metrics; m != nil {
			if m.PromptTokens != nil {
				sp += *m.PromptTokens
				anyTok = true
			}
			if m.CompletionTokens != nil {
				sc += *m.CompletionTokens
				anyTok = true
			}
			if m.CostUSD != nil {
				scost += *m.CostUSD
				anyCost = true
			}
		}
	}
	if p == nil && anyTok {
		p = &sp
	}
	if c == nil && anyTok {
		c = &sc
	}
	if cost == nil && anyCost {
		cost = &scost
	}
	if p != nil {
		prompt = *p
	}
	if c != nil {
		completion = *c
	}
	return prompt, completion, cost, p != nil || c != nil
}

// FileSuffix ends the name of an attempt's ATIF file in a result folder.
const FileSuffix = ".atif.json"

// AttemptPath is where a result folder keeps an attempt's ATIF trajectory:
// agent/<instance_id>/run-<k>/attempt-<n>.atif.json, beside the raw attempt-<n>.trajectory.
func AttemptPath(folder, instanceID string, run, attempt int) string {
	return filepath.Join(folder, "agent", instanceID, fmt.Sprintf("run-%d", run), fmt.Sprintf("attempt-%d%s", attempt, FileSuffix))
}
