// Package openai is the OpenAI-compatible chat-completions provider of the agent loop
// (envgap run --agent openai): the OpenAI API, and the servers people run locally (vLLM,
// Ollama, llama.cpp's server, LM Studio) through --base-url. It uses the official SDK
// (openai-go) with its retries off: model.Retry does the retrying.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/envgap/envgap/lib/agent/model"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// EnvKey is the variable the API key is read from.
const EnvKey = "OPENAI_API_KEY"

// DefaultBaseURL is the OpenAI API.
const DefaultBaseURL = "https://api.openai.com/v1"

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
	id  string
	cli oai.Client
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
		return nil, fmt.Errorf("openai: --base-url %q is not an http(s) URL", base)
	}
	if o.APIKey == "" && o.BaseURL == "" {
		return nil, fmt.Errorf("openai: %s is not set (a key is needed for the OpenAI API; a local server given with --base-url needs none)", EnvKey)
	}
	key := o.APIKey
	if key == "" {
		key = "none" // local servers ignore it; the SDK wants one
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	opts := []option.RequestOption{option.WithAPIKey(key), option.WithBaseURL(strings.TrimRight(base, "/") + "/"),
		option.WithMaxRetries(0), option.WithRequestTimeout(o.Timeout)}
	if o.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(o.HTTPClient))
	}
	return &Model{id: o.Model, cli: oai.NewClient(opts...)}, nil
}

// Name is the model id.
func (m *Model) Name() string { return m.id }

// Complete sends one chat completion with the tools.
func (m *Model) Complete(ctx context.Context, req model.Request) (*model.Response, error) {
	p := oai.ChatCompletionNewParams{Model: shared.ChatModel(m.id)}
	if req.System != "" {
		p.Messages = append(p.Messages, oai.SystemMessage(req.System))
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case model.RoleAssistant:
			a := oai.ChatCompletionAssistantMessageParam{}
			if msg.Text != "" {
				a.Content.OfString = oai.String(msg.Text)
			}
			for _, tc := range msg.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
					ID: tc.ID, Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: string(tc.Input)}}})
			}
			p.Messages = append(p.Messages, oai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		default:
			for _, r := range msg.ToolResults {
				p.Messages = append(p.Messages, oai.ToolMessage(r.Content, r.CallID))
			}
			if msg.Text != "" {
				p.Messages = append(p.Messages, oai.UserMessage(msg.Text))
			}
		}
	}
	for _, t := range req.Tools {
		p.Tools = append(p.Tools, oai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: t.Name, Description: oai.String(t.Description), Parameters: shared.FunctionParameters(t.Schema)}))
	}
	if req.MaxTokens > 0 {
		p.MaxTokens = oai.Int(int64(req.MaxTokens))
	}
	cc, err := m.cli.Chat.Completions.New(ctx, p)
	if err != nil {
		return nil, classify(ctx, err)
	}
	if len(cc.Choices) == 0 {
		return nil, &model.Error{Kind: model.Retryable, Provider: "openai", Message: "the answer has no choices"}
	}
	ch := cc.Choices[0]
	resp := &model.Response{Message: model.Message{Role: model.RoleAssistant, Text: ch.Message.Content},
		Usage: model.Usage{InputTokens: cc.Usage.PromptTokens, OutputTokens: cc.Usage.CompletionTokens}}
	for i, tc := range ch.Message.ToolCalls {
		args := json.RawMessage(tc.Function.Arguments)
		if raw := tc.Function.JSON.Arguments.Raw(); strings.HasPrefix(strings.TrimSpace(raw), "{") {
			args = json.RawMessage(raw) // a server that sends the arguments as an object
		}
		if len(strings.TrimSpace(string(args))) == 0 {
			args = json.RawMessage("{}")
		}
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		resp.Message.ToolCalls = append(resp.Message.ToolCalls, model.ToolCall{ID: id, Name: tc.Function.Name, Input: args})
	}
	switch ch.FinishReason {
	case "tool_calls", "function_call":
		resp.Stop = model.StopToolUse
	case "length":
		resp.Stop = model.StopMaxTokens
	case "stop", "":
		resp.Stop = model.StopEnd
	default:
		resp.Stop = model.StopOther
	}
	if len(resp.Message.ToolCalls) > 0 {
		resp.Stop = model.StopToolUse // some servers answer "stop" with tool calls
	}
	return resp, nil
}

// classify turns the SDK's error into a model.Error (never with a key in it: the SDK's
// message holds the request's URL and the answer's body, not its headers).
func classify(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var ae *oai.Error
	if errors.As(err, &ae) {
		e := &model.Error{Provider: "openai", Status: ae.StatusCode, Message: ae.Message}
		if e.Message == "" {
			e.Message = http.StatusText(ae.StatusCode)
		}
		if ae.Response != nil {
			e.RetryAfter = model.ParseRetryAfter(ae.Response.Header.Get("Retry-After"), time.Now())
		}
		code := strings.ToLower(ae.Code + " " + ae.Type + " " + ae.Message)
		switch {
		case ae.StatusCode == 429 || ae.StatusCode >= 500 || ae.StatusCode == 408:
			e.Kind = model.Retryable
			if strings.Contains(code, "insufficient_quota") {
				e.Kind = model.Auth // out of credit: waiting will not help
			}
		case ae.StatusCode == 401 || ae.StatusCode == 403:
			e.Kind = model.Auth
		case ae.StatusCode == 404 || strings.Contains(code, "model_not_found") || strings.Contains(code, "does not exist"):
			e.Kind = model.UnknownModel
		case strings.Contains(code, "context_length") || strings.Contains(code, "context length") || strings.Contains(code, "maximum context"):
			e.Kind = model.ContextTooLong
		default:
			e.Kind = model.Fatal
		}
		return e
	}
	var ne net.Error
	var oe *net.OpError
	var ue *url.Error
	if errors.As(err, &ne) || errors.As(err, &oe) || errors.As(err, &ue) {
		return &model.Error{Kind: model.Retryable, Provider: "openai", Message: "no answer: " + redactURL(err.Error())}
	}
	return &model.Error{Kind: model.Fatal, Provider: "openai", Message: err.Error()}
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
