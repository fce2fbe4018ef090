// Package openai is the OpenAI-compatible chat-completions provider of the agent loop
// (envgap run --agent openai): the OpenAI API, and the servers people run locally (vLLM,
// Ollama, llama.cpp's server, LM Studio) through --base-url.
//
// It speaks the wire format itself (POST {base}/chat/completions, JSON in and out) with
// net/http rather than through the official SDK: the one call the loop makes is small,
// the servers above differ in details an SDK's strict types reject (arguments sent as an
// object, content as a list of parts, usage left out), and the SDK's root package alone
// took 60 s of a fresh machine's 143 s build of envgap, compiled last and alone. It does
// no retrying: model.Retry does.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/envgap/envgap/lib/agent/model"
)

// EnvKey is the variable the API key is read from.
const EnvKey = "OPENAI_API_KEY"

// DefaultBaseURL is the OpenAI API.
const DefaultBaseURL = "https://api.openai.com/v1"

// maxAnswer bounds an answer's body: a chat completion is kilobytes; a server that sends
// more is at fault, not a reason to exhaust memory.
const maxAnswer = 32 << 20

// Options configure the provider.
type Options struct {
	Model   string
	BaseURL string // empty: the OpenAI API
	// APIKey: empty is allowed only for a base URL other than the OpenAI API (a local
	// server needs none).
	APIKey     string
	HTTPClient *http.Client
	Timeout    time.Duration // per request (default 10m)
}

// Model is a chat-completions model.
type Model struct {
	id       string
	endpoint string // {base}/chat/completions
	key      string // empty: no Authorization header
	hc       *http.Client
	timeout  time.Duration
}

// New checks the options (without any request) and returns the model.
func New(o Options) (*Model, error) {
	if strings.TrimSpace(o.Model) == "" {
		return nil, errors.New("openai: --model is required")
	}
	base := o.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai: --base-url %q is not an http(s) URL", redactURL(base))
	}
	if o.APIKey == "" && o.BaseURL == "" {
		return nil, fmt.Errorf("openai: %s is not set (a key is needed for the OpenAI API; a local server given with --base-url needs none)", EnvKey)
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	return &Model{id: o.Model, endpoint: strings.TrimRight(base, "/") + "/chat/completions", key: o.APIKey, hc: hc, timeout: o.Timeout}, nil
}

// Name is the model id.
func (m *Model) Name() string { return m.id }

// The request's wire types.
type (
	wireRequest struct {
		Model     string        `json:"model"`
		Messages  []wireMessage `json:"messages"`
		Tools     []wireTool    `json:"tools,omitempty"`
		MaxTokens int           `json:"max_tokens,omitempty"`
	}
	wireMessage struct {
		Role       string         `json:"role"`
		Content    *string        `json:"content"` // null for an assistant message of tool calls only
		ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
		ToolCallID string         `json:"tool_call_id,omitempty"`
	}
	wireToolCall struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	wireTool struct {
		Type     string `json:"type"`
		Function struct {
			Name        string         `json:"name"`
			Description string         `json:"description,omitempty"`
			Parameters  map[string]any `json:"parameters,omitempty"`
		} `json:"function"`
	}
)

// The answer's wire types, lenient where servers differ.
type (
	wireAnswer struct {
		Choices []struct {
			Message struct {
				Content   json.RawMessage `json:"content"` // a string, null, or a list of parts
				ToolCalls []struct {
					ID       string `json:"id"`
					Function struct {
						Name      string          `json:"name"`
						Arguments json.RawMessage `json:"arguments"` // a JSON string, or an object
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage *struct {
			PromptTokens     int64 `json:"prompt_tokens"`
			CompletionTokens int64 `json:"completion_tokens"`
		} `json:"usage"`
	}
	wireError struct {
		Error *struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"` // a string, a number or null
		} `json:"error"`
	}
)

func str(s string) *string { return &s }

// request turns the loop's request into the wire's.
func (m *Model) request(req model.Request) wireRequest {
	w := wireRequest{Model: m.id, MaxTokens: req.MaxTokens}
	if req.System != "" {
		w.Messages = append(w.Messages, wireMessage{Role: "system", Content: str(req.System)})
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case model.RoleAssistant:
			a := wireMessage{Role: "assistant"}
			if msg.Text != "" || len(msg.ToolCalls) == 0 {
				a.Content = str(msg.Text)
			}
			for _, tc := range msg.ToolCalls {
				c := wireToolCall{ID: tc.ID, Type: "function"}
				c.Function.Name, c.Function.Arguments = tc.Name, string(tc.Input)
				a.ToolCalls = append(a.ToolCalls, c)
			}
			w.Messages = append(w.Messages, a)
		default:
			for _, r := range msg.ToolResults {
				w.Messages = append(w.Messages, wireMessage{Role: "tool", Content: str(r.Content), ToolCallID: r.CallID})
			}
			if msg.Text != "" {
				w.Messages = append(w.Messages, wireMessage{Role: "user", Content: str(msg.Text)})
			}
		}
	}
	for _, t := range req.Tools {
		wt := wireTool{Type: "function"}
		wt.Function.Name, wt.Function.Description, wt.Function.Parameters = t.Name, t.Description, t.Schema
		w.Tools = append(w.Tools, wt)
	}
	return w
}

// Complete sends one chat completion with the tools.
func (m *Model) Complete(ctx context.Context, req model.Request) (*model.Response, error) {
	body, err := json.Marshal(m.request(req))
	if err != nil {
		return nil, &model.Error{Kind: model.Fatal, Provider: "openai", Message: "the request cannot be encoded: " + err.Error()}
	}
	rctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(rctx, http.MethodPost, m.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, &model.Error{Kind: model.Fatal, Provider: "openai", Message: redactURL(err.Error())}
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	if m.key != "" {
		hr.Header.Set("Authorization", "Bearer "+m.key)
	}
	resp, err := m.hc.Do(hr)
	if err != nil {
		return nil, noAnswer(ctx, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, noAnswer(ctx, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, classify(resp, raw)
	}
	if len(raw) > maxAnswer {
		return nil, &model.Error{Kind: model.Fatal, Provider: "openai", Message: fmt.Sprintf("the answer is over %d MiB", maxAnswer>>20)}
	}
	var cc wireAnswer
	if err := json.Unmarshal(raw, &cc); err != nil {
		return nil, &model.Error{Kind: model.Retryable, Provider: "openai", Message: "the answer is not a chat completion: " + err.Error()}
	}
	if len(cc.Choices) == 0 {
		return nil, &model.Error{Kind: model.Retryable, Provider: "openai", Message: "the answer has no choices"}
	}
	ch := cc.Choices[0]
	out := &model.Response{Message: model.Message{Role: model.RoleAssistant, Text: content(ch.Message.Content)}}
	if cc.Usage != nil {
		out.Usage = model.Usage{InputTokens: cc.Usage.PromptTokens, OutputTokens: cc.Usage.CompletionTokens}
	}
	for i, tc := range ch.Message.ToolCalls {
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		out.Message.ToolCalls = append(out.Message.ToolCalls, model.ToolCall{ID: id, Name: tc.Function.Name, Input: arguments(tc.Function.Arguments)})
	}
	switch ch.FinishReason {
	case "tool_calls", "function_call":
		out.Stop = model.StopToolUse
	case "length":
		out.Stop = model.StopMaxTokens
	case "stop", "":
		out.Stop = model.StopEnd
	default:
		out.Stop = model.StopOther
	}
	if len(out.Message.ToolCalls) > 0 {
		out.Stop = model.StopToolUse // some servers answer "stop" with tool calls
	}
	return out, nil
}

// content reads a message's content: a string, null, or a list of parts whose text parts
// are joined.
func content(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "text" || p.Type == "" {
				b.WriteString(p.Text)
			}
		}
		return b.String()
	}
	return ""
}

// arguments reads a tool call's arguments: a JSON string holding the object (the API), or
// the object itself (some local servers); empty is {}.
func arguments(raw json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(raw)
	if len(t) > 0 && t[0] == '{' {
		return json.RawMessage(t)
	}
	var s string
	if json.Unmarshal(t, &s) == nil {
		t = bytes.TrimSpace([]byte(s))
	}
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return json.RawMessage("{}")
	}
	return json.RawMessage(t)
}

// noAnswer is a call that got no answer: the caller's cancellation as it is, anything
// else (refused, reset, timed out) retryable, with credentials dropped from URLs.
func noAnswer(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return &model.Error{Kind: model.Retryable, Provider: "openai", Message: "no answer: " + redactURL(err.Error())}
}

// classify turns an error answer into a model.Error (never with a key in it: only the
// answer's status, headers and body are read).
func classify(resp *http.Response, body []byte) error {
	e := &model.Error{Provider: "openai", Status: resp.StatusCode, RetryAfter: model.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())}
	var we wireError
	var code string
	if json.Unmarshal(body, &we) == nil && we.Error != nil {
		e.Message = we.Error.Message
		if json.Unmarshal(we.Error.Code, &code) != nil {
			code = strings.Trim(string(we.Error.Code), `"`)
		}
		code += " " + we.Error.Type
	}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	what := strings.ToLower(code + " " + e.Message)
	switch st := resp.StatusCode; {
	case st == 429 || st >= 500 || st == 408:
		e.Kind = model.Retryable
		if strings.Contains(what, "insufficient_quota") {
			e.Kind = model.Auth // out of credit: waiting will not help
		}
	case st == 401 || st == 403:
		e.Kind = model.Auth
	case st == 404 || strings.Contains(what, "model_not_found") || strings.Contains(what, "does not exist"):
		e.Kind = model.UnknownModel
	case strings.Contains(what, "context_length") || strings.Contains(what, "context length") || strings.Contains(what, "maximum context"):
		e.Kind = model.ContextTooLong
	default:
		e.Kind = model.Fatal
	}
	return e
}

// redactURL drops userinfo from URLs in a message (a base URL may carry credentials).
func redactURL(s string) string {
	for _, f := range strings.Fields(s) {
		f = strings.Trim(f, `"':,`)
		if u, err := url.Parse(f); err == nil && u.User != nil {
			u.User = nil
			s = strings.ReplaceAll(s, f, u.String())
		}
	}
	return s
}
