package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/lib/agent/model"
	"github.com/envgap/envgap/lib/agent/model/openai"
	"github.com/envgap/envgap/lib/agent/model/scripted"
)

const secret = "sk-test-SECRET-never-printed"

func serve(t *testing.T, script string) (*scripted.Server, string) {
	t.Helper()
	s, err := scripted.Parse([]byte(script), "test")
	if err != nil {
		t.Fatal(err)
	}
	srv := scripted.NewServer(s)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return srv, ts.URL + "/v1"
}

func newModel(t *testing.T, base, id string) model.Model {
	t.Helper()
	m, err := openai.New(openai.Options{Model: id, BaseURL: base, APIKey: secret})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var tools = []model.Tool{{Name: "bash", Description: "run", Schema: map[string]any{"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string"}}}}}

func TestConversationWithTools(t *testing.T) {
	srv, base := serve(t, `{"model":"m1","conversations":[{"match":"TASK-1","turns":[
		{"text":"looking","tool_calls":[{"name":"bash","input":{"command":"ls -la"}}],"usage":{"input_tokens":100,"output_tokens":7}},
		{"text":"done","usage":{"input_tokens":150,"output_tokens":3}}]}]}`)
	m := newModel(t, base, "m1")
	req := model.Request{System: "sys", Tools: tools, Messages: []model.Message{{Role: model.RoleUser, Text: "fix TASK-1"}}}
	r, err := m.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if r.Stop != model.StopToolUse || len(r.Message.ToolCalls) != 1 || r.Message.ToolCalls[0].Name != "bash" {
		t.Fatalf("answer %+v", r)
	}
	var in struct{ Command string }
	if err := json.Unmarshal(r.Message.ToolCalls[0].Input, &in); err != nil || in.Command != "ls -la" {
		t.Fatalf("input %s: %v", r.Message.ToolCalls[0].Input, err)
	}
	if r.Usage != (model.Usage{InputTokens: 100, OutputTokens: 7}) {
		t.Fatalf("usage %+v", r.Usage)
	}
	if srv.LastAuth() != "Bearer "+secret {
		t.Fatalf("the key was not sent as a bearer token")
	}
	req.Messages = append(req.Messages, r.Message, model.Message{Role: model.RoleUser,
		ToolResults: []model.ToolResult{{CallID: r.Message.ToolCalls[0].ID, Content: "total 0"}}})
	r, err = m.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if r.Stop != model.StopEnd || r.Message.Text != "done" || r.Usage.InputTokens != 150 {
		t.Fatalf("second answer %+v", r)
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name, fail string
		kind       model.Kind
		retryAfter time.Duration
	}{
		{"throttled", `{"status":429,"retry_after":"2","message":"Rate limit reached"}`, model.Retryable, 2 * time.Second},
		{"5xx", `{"status":503,"message":"overloaded"}`, model.Retryable, 0},
		{"expired key", `{"status":401,"code":"invalid_api_key","message":"Incorrect API key provided"}`, model.Auth, 0},
		{"forbidden", `{"status":403,"message":"not allowed"}`, model.Auth, 0},
		{"too long", `{"status":400,"code":"context_length_exceeded","message":"This model's maximum context length is 8192 tokens"}`, model.ContextTooLong, 0},
		{"bad request", `{"status":400,"message":"bad"}`, model.Fatal, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, base := serve(t, `{"model":"m1","conversations":[{"turns":[{"errors":[`+tc.fail+`],"always":true}]}]}`)
			_, err := newModel(t, base, "m1").Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "x"}}})
			var e *model.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not a model.Error", err)
			}
			if e.Kind != tc.kind || e.RetryAfter != tc.retryAfter {
				t.Fatalf("kind %v retry-after %v, want %v %v (%v)", e.Kind, e.RetryAfter, tc.kind, tc.retryAfter, err)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "SECRET") {
				t.Fatalf("the error prints the key: %v", err)
			}
		})
	}
}

func TestUnknownModel(t *testing.T) {
	_, base := serve(t, `{"model":"m1","conversations":[{"turns":[{"text":"hi"}]}]}`)
	_, err := newModel(t, base, "no-such-model").Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "x"}}})
	if k, ok := model.KindOf(err); !ok || k != model.UnknownModel {
		t.Fatalf("got %v", err)
	}
}

func TestThrottledTwiceThenAnswers(t *testing.T) {
	srv, base := serve(t, `{"model":"m1","conversations":[{"turns":[{"text":"ok","errors":[
		{"status":429,"retry_after":"3"},{"status":500}]}]}]}`)
	var waits []time.Duration
	m := model.Retry(newModel(t, base, "m1"), model.RetryPolicy{Base: time.Millisecond, Sleep: func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	}})
	r, err := m.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "x"}}})
	if err != nil || r.Message.Text != "ok" {
		t.Fatalf("%+v %v", r, err)
	}
	if len(waits) != 2 || waits[0] != 3*time.Second || waits[1] >= time.Second {
		t.Fatalf("waits %v: want Retry-After's 3s, then a short backoff", waits)
	}
	if srv.Requests.Load() != 3 {
		t.Fatalf("%d requests, want 3", srv.Requests.Load())
	}
}

func TestKeepsFailing(t *testing.T) {
	srv, base := serve(t, `{"model":"m1","conversations":[{"turns":[{"errors":[{"status":502}],"always":true}]}]}`)
	m := model.Retry(newModel(t, base, "m1"), model.RetryPolicy{Attempts: 4, Sleep: func(context.Context, time.Duration) error { return nil }})
	_, err := m.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "x"}}})
	if k, _ := model.KindOf(err); k != model.Retryable || !strings.Contains(err.Error(), "4 calls in a row failed") {
		t.Fatalf("got %v", err)
	}
	if srv.Requests.Load() != 4 {
		t.Fatalf("%d requests, want 4", srv.Requests.Load())
	}
}

func TestOptions(t *testing.T) {
	if _, err := openai.New(openai.Options{Model: "gpt"}); err == nil || !strings.Contains(err.Error(), openai.EnvKey) {
		t.Fatalf("no key for the OpenAI API: %v", err)
	}
	if _, err := openai.New(openai.Options{BaseURL: "http://127.0.0.1:1"}); err == nil || !strings.Contains(err.Error(), "--model") {
		t.Fatalf("no model: %v", err)
	}
	if _, err := openai.New(openai.Options{Model: "m", BaseURL: "ftp://x"}); err == nil {
		t.Fatal("an ftp base URL was taken")
	}
	// A local server needs no key; an unreachable one is a retryable fault.
	m, err := openai.New(openai.Options{Model: "m", BaseURL: "http://user:pw-SECRET@127.0.0.1:1/v1"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "x"}}})
	if k, ok := model.KindOf(err); !ok || k != model.Retryable || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("unreachable server: %v", err)
	}
}

// TestServersThatDiffer: what local servers send differently is taken (arguments as an
// object, content as a list of parts, no usage, a numeric error code), and what the client
// sends is the wire format (an assistant message of tool calls only has null content, a
// tool result its tool_call_id, the tools their JSON Schema).
func TestServersThatDiffer(t *testing.T) {
	var got map[string]any
	answer := `{"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],
		"tool_calls":[{"function":{"name":"bash","arguments":{"command":"ls"}}}]},"finish_reason":"stop"}]}`
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
			http.Error(w, "wrong endpoint", http.StatusNotFound)
			return
		}
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		io.WriteString(w, answer)
	}))
	defer ts.Close()
	m, err := openai.New(openai.Options{Model: "local", BaseURL: ts.URL + "/v1/"})
	if err != nil {
		t.Fatal(err)
	}
	req := model.Request{System: "sys", Tools: tools, MaxTokens: 99, Messages: []model.Message{
		{Role: model.RoleUser, Text: "go"},
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c1", Name: "bash", Input: json.RawMessage(`{"command":"pwd"}`)}}},
		{Role: model.RoleUser, ToolResults: []model.ToolResult{{CallID: "c1", Content: "/w"}}},
	}}
	r, err := m.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if r.Message.Text != "ab" || r.Stop != model.StopToolUse || len(r.Message.ToolCalls) != 1 ||
		string(r.Message.ToolCalls[0].Input) != `{"command":"ls"}` || r.Message.ToolCalls[0].ID != "call_0" || r.Usage != (model.Usage{}) {
		t.Fatalf("answer %+v", r)
	}
	want := `{"max_tokens":99,"messages":[{"content":"sys","role":"system"},{"content":"go","role":"user"},` +
		`{"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{\"command\":\"pwd\"}","name":"bash"},"id":"c1","type":"function"}]},` +
		`{"content":"/w","role":"tool","tool_call_id":"c1"}],"model":"local",` +
		`"tools":[{"function":{"description":"run","name":"bash","parameters":{"properties":{"command":{"type":"string"}},"type":"object"}},"type":"function"}]}`
	if b, _ := json.Marshal(got); string(b) != want {
		t.Fatalf("request\n%s\nwant\n%s", b, want)
	}

	answer = `{"error":{"message":"The model x does not exist","type":"invalid_request_error","code":404}}`
	ts.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, answer)
	})
	if _, err := m.Complete(context.Background(), req); !isKind(err, model.UnknownModel) {
		t.Fatalf("a numeric code and 'does not exist': %v", err)
	}
	// An endless answer is cut at the bound and refused, not read into memory whole.
	ts.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"choices":[{"message":{"content":"`)
		chunk := strings.Repeat("x", 1<<20)
		for i := 0; i < 40; i++ {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
	})
	if _, err := m.Complete(context.Background(), req); !isKind(err, model.Fatal) || !strings.Contains(err.Error(), "MiB") {
		t.Fatalf("an oversized answer: %v", err)
	}
}

func isKind(err error, k model.Kind) bool {
	got, ok := model.KindOf(err)
	return ok && got == k
}
