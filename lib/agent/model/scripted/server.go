package scripted

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/envgap/envgap/lib/agent/model"
)

// Server serves a script over the OpenAI chat-completions wire format: POST
// {base}/chat/completions answers chat.completion objects with tool_calls and usage, and
// the script's errors as the API's error objects (with Retry-After). It is the demo's
// stand-in model (envgap model-serve) and the tests' fake of the OpenAI API.
type Server struct {
	p        *player
	id       string
	Requests atomic.Int64
	// LastAuth is the Authorization header of the last request (tests check a key is sent).
	lastAuth atomic.Value
}

// NewServer returns a server playing s.
func NewServer(s *Script) *Server {
	id := s.Model
	if id == "" {
		id = "scripted"
	}
	return &Server{p: newPlayer(s), id: id}
}

// LastAuth is the Authorization header of the last request.
func (s *Server) LastAuth() string {
	v, _ := s.lastAuth.Load().(string)
	return v
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

type wireRequest struct {
	Model    string        `json:"model"`
	Messages []wireMessage `json:"messages"`
	Tools    []struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func apiError(w http.ResponseWriter, status int, typ, code, msg, retryAfter string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": code, "param": nil}})
}

// ServeHTTP answers chat completions (and GET /models, which some clients ask first).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.Requests.Add(1)
	s.lastAuth.Store(r.Header.Get("Authorization"))
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": []any{map[string]any{"id": s.id, "object": "model", "owned_by": "envgap-scripted"}}})
		return
	case r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions"):
		apiError(w, http.StatusNotFound, "invalid_request_error", "not_found", "scripted server: only POST /chat/completions", "")
		return
	}
	var req wireRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 256<<20)).Decode(&req); err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "", "scripted server: bad JSON: "+err.Error(), "")
		return
	}
	if req.Model != s.id {
		apiError(w, http.StatusNotFound, "invalid_request_error", "model_not_found", fmt.Sprintf("The model `%s` does not exist (this scripted server plays %q)", req.Model, s.id), "")
		return
	}
	first, assistants := "", 0
	var msgs []model.Message
	for _, m := range req.Messages {
		switch m.Role {
		case "assistant":
			assistants++
			msgs = append(msgs, model.Message{Role: model.RoleAssistant, Text: text(m.Content)})
		case "user":
			if first == "" {
				first = text(m.Content)
			}
			msgs = append(msgs, model.Message{Role: model.RoleUser, Text: text(m.Content)})
		case "tool":
			msgs = append(msgs, model.Message{Role: model.RoleUser, ToolResults: []model.ToolResult{{CallID: m.ToolCallID, Content: text(m.Content)}}})
		}
	}
	t, f, err := s.p.next(first, assistants)
	if err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "", "scripted server: "+err.Error(), "")
		return
	}
	if f != nil {
		typ := "server_error"
		switch {
		case f.Status == 429:
			typ = "rate_limit_exceeded"
		case f.Status < 500:
			typ = "invalid_request_error"
		}
		apiError(w, f.Status, typ, f.Code, f.Message, f.RetryAfter)
		return
	}
	resp := t.response(model.Request{Messages: msgs})
	var calls []map[string]any
	for _, c := range resp.Message.ToolCalls {
		calls = append(calls, map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": string(c.Input)}})
	}
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	msg := map[string]any{"role": "assistant", "content": resp.Message.Text, "refusal": nil}
	if len(calls) > 0 {
		msg["tool_calls"] = calls
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": fmt.Sprintf("chatcmpl-scripted-%d", s.Requests.Load()), "object": "chat.completion", "created": 0, "model": s.id,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
		"usage": map[string]any{"prompt_tokens": resp.Usage.InputTokens, "completion_tokens": resp.Usage.OutputTokens,
			"total_tokens": resp.Usage.InputTokens + resp.Usage.OutputTokens},
	})
}
