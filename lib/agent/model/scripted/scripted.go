// Package scripted is a deterministic stand-in for a language model, for tests and the
// demo: it plays a recorded conversation. It is clearly not a model: every answer comes
// from the script, chosen by what the conversation already holds.
//
// A script is JSON:
//
//	{"model": "scripted-demo",
//	 "conversations": [{"match": "TEXT", "turns": [TURN, ...]}, ...]}
//
// The conversation played is the first whose match occurs in the request's first user
// message (an empty match takes any), and every text of its optional "match_all" too. The turn answered is the number of assistant
// messages the request already holds (stateless: the same request gets the same answer;
// past the last turn, the last is repeated). A TURN is an answer
//
//	{"text": "...", "tool_calls": [{"name": "bash", "input": {"command": "ls"}}],
//	 "usage": {"input_tokens": N, "output_tokens": M}}
//
// or a provider error, played once per (conversation, turn) per Server or Model before
// the turn is answered:
//
//	{"errors": [{"status": 429, "retry_after": "1", "message": "..."}], ...}
//
// Model plays a script in process; Server serves it over the OpenAI chat-completions
// wire format (envgap model-serve), so the real openai provider can talk to it.
package scripted

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/envgap/envgap/lib/agent/model"
)

// Script is a set of recorded conversations.
type Script struct {
	Model         string         `json:"model"`
	Conversations []Conversation `json:"conversations"`
}

// Conversation is one recorded conversation.
type Conversation struct {
	Match string `json:"match"`
	// MatchAll are more texts the first user message must hold (all of them).
	MatchAll []string `json:"match_all,omitempty"`
	Turns    []Turn   `json:"turns"`
}

// Turn is one answer of the model (after its errors, if any).
type Turn struct {
	Text      string       `json:"text,omitempty"`
	ToolCalls []Call       `json:"tool_calls,omitempty"`
	Usage     *model.Usage `json:"usage,omitempty"`
	Errors    []Fail       `json:"errors,omitempty"`
	// Always plays Errors on every request, not once (a provider that keeps failing).
	Always bool `json:"always,omitempty"`
}

// Call is a tool call of a turn.
type Call struct {
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// Fail is a provider error to play: an HTTP status with its body's message.
type Fail struct {
	Status     int    `json:"status"`
	RetryAfter string `json:"retry_after,omitempty"`
	Code       string `json:"code,omitempty"`
	Message    string `json:"message,omitempty"`
}

// Read reads and checks a script file.
func Read(path string) (*Script, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(b, path)
}

// Parse checks a script; name names it in errors.
func Parse(b []byte, name string) (*Script, error) {
	var s Script
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("script %s: %w", name, err)
	}
	if len(s.Conversations) == 0 {
		return nil, fmt.Errorf("script %s: no conversations", name)
	}
	for i, c := range s.Conversations {
		if len(c.Turns) == 0 {
			return nil, fmt.Errorf("script %s: conversations[%d]: no turns", name, i)
		}
		for j, t := range c.Turns {
			for k, tc := range t.ToolCalls {
				if tc.Name == "" {
					return nil, fmt.Errorf("script %s: conversations[%d].turns[%d].tool_calls[%d]: no name", name, i, j, k)
				}
				var obj map[string]any
				if len(tc.Input) > 0 && json.Unmarshal(tc.Input, &obj) != nil {
					return nil, fmt.Errorf("script %s: conversations[%d].turns[%d].tool_calls[%d].input: not a JSON object", name, i, j, k)
				}
			}
			for k, f := range t.Errors {
				if f.Status < 400 || f.Status > 599 {
					return nil, fmt.Errorf("script %s: conversations[%d].turns[%d].errors[%d].status %d: want 400-599", name, i, j, k, f.Status)
				}
			}
		}
	}
	return &s, nil
}

// player picks turns and counts the errors already played.
type player struct {
	s      *Script
	mu     sync.Mutex
	played map[[2]int]int
	// Requests counts the requests answered or failed.
	requests int
}

func newPlayer(s *Script) *player { return &player{s: s, played: map[[2]int]int{}} }

// next returns the turn for a conversation whose first user text is first and which
// holds assistants assistant messages, or the error to play first.
func (p *player) next(first string, assistants int) (*Turn, *Fail, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests++
	ci := -1
	for i, c := range p.s.Conversations {
		if strings.Contains(first, c.Match) && containsAll(first, c.MatchAll) {
			ci = i
			break
		}
	}
	if ci < 0 {
		return nil, nil, fmt.Errorf("no conversation of the script matches this task")
	}
	c := p.s.Conversations[ci]
	ti := min(assistants, len(c.Turns)-1)
	t := &c.Turns[ti]
	key := [2]int{ci, ti}
	if t.Always && len(t.Errors) > 0 {
		return nil, &t.Errors[p.played[key]%len(t.Errors)], nil
	}
	if n := p.played[key]; n < len(t.Errors) {
		p.played[key]++
		return nil, &t.Errors[n], nil
	}
	return t, nil, nil
}

// Model plays a script in process.
type Model struct {
	id string
	p  *player
}

// New returns a model playing s under the id s.Model (or "scripted").
func New(s *Script) *Model {
	id := s.Model
	if id == "" {
		id = "scripted"
	}
	return &Model{id: id, p: newPlayer(s)}
}

// Name is the script's model id.
func (m *Model) Name() string { return m.id }

// Requests is how many requests the model got.
func (m *Model) Requests() int {
	m.p.mu.Lock()
	defer m.p.mu.Unlock()
	return m.p.requests
}

// Complete plays the next turn.
func (m *Model) Complete(ctx context.Context, req model.Request) (*model.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r, f, err := m.Next(req)
	if err != nil {
		return nil, &model.Error{Kind: model.Fatal, Provider: "scripted", Status: 400, Message: err.Error()}
	}
	if f != nil {
		return nil, FailError("scripted", f)
	}
	return r, nil
}

// Next plays the next turn for req: the answer, or the provider error to play (fakes of
// a provider's wire format use it), or an error when no conversation matches.
func (m *Model) Next(req model.Request) (*model.Response, *Fail, error) {
	first, assistants := summary(req.Messages)
	t, f, err := m.p.next(first, assistants)
	if err != nil || f != nil {
		return nil, f, err
	}
	return t.response(req), nil, nil
}

// FailError is the model.Error a Fail stands for.
func FailError(provider string, f *Fail) *model.Error {
	e := &model.Error{Provider: provider, Status: f.Status, Message: f.Message,
		RetryAfter: model.ParseRetryAfter(f.RetryAfter, time.Now())}
	switch {
	case f.Status == 429 || f.Status >= 500:
		e.Kind = model.Retryable
	case f.Status == 401 || f.Status == 403:
		e.Kind = model.Auth
	case f.Status == 404:
		e.Kind = model.UnknownModel
	default:
		e.Kind = model.Fatal
	}
	return e
}

func summary(msgs []model.Message) (first string, assistants int) {
	for _, m := range msgs {
		if m.Role == model.RoleAssistant {
			assistants++
		} else if first == "" && m.Text != "" {
			first = m.Text
		}
	}
	return first, assistants
}

// response is the turn as an answer; tool call ids are numbered by turn.
func (t *Turn) response(req model.Request) *model.Response {
	_, n := summary(req.Messages)
	r := &model.Response{Message: model.Message{Role: model.RoleAssistant, Text: t.Text}, Stop: model.StopEnd}
	for i, c := range t.ToolCalls {
		in := c.Input
		if len(in) == 0 {
			in = json.RawMessage("{}")
		}
		r.Message.ToolCalls = append(r.Message.ToolCalls, model.ToolCall{ID: fmt.Sprintf("call_%d_%d", n, i), Name: c.Name, Input: in})
	}
	if len(r.Message.ToolCalls) > 0 {
		r.Stop = model.StopToolUse
	}
	if t.Usage != nil {
		r.Usage = *t.Usage
	} else {
		r.Usage = estimate(req, r)
	}
	return r
}

// estimate counts tokens as a model roughly would (4 bytes a token), so limits and
// costs have something to add up in a demo.
func estimate(req model.Request, r *model.Response) model.Usage {
	in := len(req.System)
	for _, m := range req.Messages {
		b, _ := json.Marshal(m)
		in += len(b)
	}
	out, _ := json.Marshal(r.Message)
	return model.Usage{InputTokens: int64(in/4 + 1), OutputTokens: int64(len(out)/4 + 1)}
}

func containsAll(s string, subs []string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}
