// Package model is the small interface between envgap's agent loop and a language model:
// a conversation of messages with tool calls and tool results in, one assistant message
// with its token usage out, and errors of a typed kind so the loop can tell a provider's
// fault (retry it, or end the run as an infrastructure fault) from the agent's own limits.
//
// A provider is one package below this one (openai, bedrock, scripted) implementing Model.
// Providers do no retrying of their own: Retry wraps any Model, retrying throttling and
// server errors with backoff that honours the provider's Retry-After.
package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Role of a message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Message is one turn of the conversation. A user message holds Text and/or the results
// of the previous assistant message's tool calls; an assistant message holds Text and/or
// ToolCalls.
type Message struct {
	Role        Role         `json:"role"`
	Text        string       `json:"text,omitempty"`
	ToolCalls   []ToolCall   `json:"tool_calls,omitempty"`
	ToolResults []ToolResult `json:"tool_results,omitempty"`
}

// ToolCall is the model asking to run a tool. Input is a JSON object.
type ToolCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// ToolResult answers one ToolCall.
type ToolResult struct {
	CallID  string `json:"call_id"`
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
}

// Tool is a tool the model may call; Schema is the JSON Schema of its input object.
type Tool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Schema      map[string]any `json:"input_schema"`
}

// Request is one call of the model.
type Request struct {
	System   string
	Messages []Message
	Tools    []Tool
	// MaxTokens bounds the answer's output tokens (0: the provider's default).
	MaxTokens int
}

// Stop says why the model stopped.
type Stop string

const (
	StopEnd       Stop = "end"        // the model finished its turn
	StopToolUse   Stop = "tool_use"   // it asks for tool calls
	StopMaxTokens Stop = "max_tokens" // the answer hit MaxTokens
	StopOther     Stop = "other"      // filtered, guardrail, or a reason the provider did not name
)

// Usage counts the tokens of one call.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

// Response is the model's answer.
type Response struct {
	Message Message
	Stop    Stop
	Usage   Usage
}

// Model is a language model behind a provider's API.
type Model interface {
	// Name is the model id as the provider knows it.
	Name() string
	// Complete answers one request. Errors are *Error (errors.As) for what the
	// provider answered, or the context's error.
	Complete(ctx context.Context, req Request) (*Response, error)
}

// Kind classifies a provider error.
type Kind int

const (
	// Fatal: a request the provider refused for a reason retrying will not change.
	Fatal Kind = iota
	// Retryable: throttled (429) or a server error (5xx, not ready, unreachable):
	// the same request may succeed later.
	Retryable
	// Auth: missing, invalid or expired credentials, or no access to the model.
	Auth
	// UnknownModel: the provider does not serve the model id.
	UnknownModel
	// ContextTooLong: the conversation is longer than the model's context.
	ContextTooLong
)

func (k Kind) String() string {
	switch k {
	case Retryable:
		return "retryable"
	case Auth:
		return "auth"
	case UnknownModel:
		return "unknown model"
	case ContextTooLong:
		return "context too long"
	}
	return "fatal"
}

// Error is a provider's error. Message is safe to print: providers never put a key or
// a credential in it.
type Error struct {
	Kind     Kind
	Provider string // "openai", "bedrock", ...
	Status   int    // HTTP status, 0 when there was no answer
	// RetryAfter is what the provider asked to wait (Retry-After), 0 if it did not say.
	RetryAfter time.Duration
	Message    string
}

func (e *Error) Error() string {
	s := e.Provider + ": " + e.Kind.String()
	if e.Status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// KindOf returns the kind of err when it is an *Error, and ok.
func KindOf(err error) (Kind, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind, true
	}
	return 0, false
}

// Advice says what a person should do about a provider error that ends a run.
func Advice(err error) string {
	k, ok := KindOf(err)
	if !ok {
		return "check the provider's status and run again"
	}
	switch k {
	case Retryable:
		return "the provider kept failing or throttling; run again later (results kept so far stay)"
	case Auth:
		return "the provider refused the credentials: renew or set them (OPENAI_API_KEY; for Bedrock the AWS chain: AWS_PROFILE, aws sso login, ...) and run again"
	case UnknownModel:
		return "the provider does not serve this model id (or not in this region): check --model (and --region) and run again"
	case ContextTooLong:
		return "lower --context-tokens so older tool outputs are elided sooner"
	}
	return "the provider refused the request; check --model, --base-url and the provider's status"
}

// RetryPolicy bounds Retry.
type RetryPolicy struct {
	// Attempts is how many calls in all (default 8).
	Attempts int
	// Base is the first backoff (default 1s), doubled each time up to Max (default 60s),
	// with jitter; a Retry-After longer than the backoff is honoured (up to Max).
	Base, Max time.Duration
	// Sleep waits (default: a timer that ends with ctx). Tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error
	// OnRetry is told of each retry (may be nil).
	OnRetry func(err error, wait time.Duration)
}

type retrying struct {
	Model
	p RetryPolicy
}

// Retry returns m retrying Retryable errors by p. When every attempt failed, the last
// error is returned, its message saying how many calls failed.
func Retry(m Model, p RetryPolicy) Model {
	if p.Attempts <= 0 {
		p.Attempts = 8
	}
	if p.Base <= 0 {
		p.Base = time.Second
	}
	if p.Max <= 0 {
		p.Max = time.Minute
	}
	if p.Sleep == nil {
		p.Sleep = sleep
	}
	return &retrying{m, p}
}

func (r *retrying) Complete(ctx context.Context, req Request) (*Response, error) {
	backoff := r.p.Base
	for n := 1; ; n++ {
		resp, err := r.Model.Complete(ctx, req)
		var e *Error
		if err == nil || !errors.As(err, &e) || e.Kind != Retryable {
			return resp, err
		}
		if n >= r.p.Attempts {
			last := *e
			last.Message = fmt.Sprintf("%d calls in a row failed; the last: %s", n, e.Message)
			return nil, &last
		}
		wait := backoff/2 + rand.N(backoff/2+1)
		if e.RetryAfter > wait {
			wait = e.RetryAfter
		}
		wait = min(wait, r.p.Max)
		if r.p.OnRetry != nil {
			r.p.OnRetry(err, wait)
		}
		if err := r.p.Sleep(ctx, wait); err != nil {
			return nil, err
		}
		backoff = min(backoff*2, r.p.Max)
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ParseRetryAfter reads a Retry-After header value (seconds, or an HTTP date).
func ParseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	var secs float64
	if _, err := fmt.Sscanf(v, "%g", &secs); err == nil && secs >= 0 {
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := time.Parse(time.RFC1123, v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// Price is what a model costs, in USD per million tokens.
type Price struct {
	InPerMTok  float64 `json:"in_per_mtok"`
	OutPerMTok float64 `json:"out_per_mtok"`
}

// Cost is the price of usage.
func (p Price) Cost(u Usage) float64 {
	return (float64(u.InputTokens)*p.InPerMTok + float64(u.OutputTokens)*p.OutPerMTok) / 1e6
}

// Prices maps model ids to prices (a prices file is this as JSON).
type Prices map[string]Price

// ReadPrices parses a prices file: {"MODEL_ID": {"in_per_mtok": X, "out_per_mtok": Y}, ...}.
func ReadPrices(b []byte) (Prices, error) {
	var p Prices
	dec := json.NewDecoder(bytesReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("prices file: %w", err)
	}
	for id, pr := range p {
		if pr.InPerMTok < 0 || pr.OutPerMTok < 0 {
			return nil, fmt.Errorf("prices file: model %q: a negative price", id)
		}
	}
	return p, nil
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
