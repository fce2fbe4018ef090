package bedrock_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/envgap/envgap/lib/agent/model"
	"github.com/envgap/envgap/lib/agent/model/bedrock"
	"github.com/envgap/envgap/lib/agent/model/scripted"
)

const (
	accessKey = "AKIDTESTEXAMPLE"
	secretKey = "wJalrXUtnFEMI-SECRET-never-printed"
	region    = "us-west-2"
)

// fake is Bedrock's Converse API (REST JSON, SigV4-signed) playing a script: it checks
// each request's signature with the test credentials, reads the Converse request and
// answers the Converse response, or the script's errors as Bedrock's exceptions.
type fake struct {
	t        *testing.T
	m        *scripted.Model
	requests atomic.Int64
	lastBody atomic.Value
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	body, _ := io.ReadAll(r.Body)
	f.lastBody.Store(body)
	if err := checkSignature(r, body); err != nil {
		exception(w, 403, "InvalidSignatureException", err.Error(), "")
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if r.Method != http.MethodPost || len(parts) != 3 || parts[0] != "model" || parts[2] != "converse" {
		exception(w, 404, "UnknownOperationException", "not a converse request: "+r.URL.Path, "")
		return
	}
	id, _ := url.PathUnescape(parts[1])
	if id != f.m.Name() {
		exception(w, 400, "ValidationException", "The provided model identifier is invalid.", "")
		return
	}
	var in struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Text    *string `json:"text"`
				ToolUse *struct {
					ToolUseID string          `json:"toolUseId"`
					Name      string          `json:"name"`
					Input     json.RawMessage `json:"input"`
				} `json:"toolUse"`
				ToolResult *struct {
					ToolUseID string `json:"toolUseId"`
					Content   []struct {
						Text string `json:"text"`
					} `json:"content"`
					Status string `json:"status"`
				} `json:"toolResult"`
			} `json:"content"`
		} `json:"messages"`
		System []struct {
			Text string `json:"text"`
		} `json:"system"`
		ToolConfig *struct {
			Tools []struct {
				ToolSpec struct {
					Name        string `json:"name"`
					InputSchema struct {
						JSON map[string]any `json:"json"`
					} `json:"inputSchema"`
				} `json:"toolSpec"`
			} `json:"tools"`
		} `json:"toolConfig"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		exception(w, 400, "ValidationException", "malformed request: "+err.Error(), "")
		return
	}
	req := model.Request{}
	for i, m := range in.Messages {
		msg := model.Message{Role: model.Role(m.Role)}
		for _, c := range m.Content {
			switch {
			case c.Text != nil:
				msg.Text += *c.Text
			case c.ToolUse != nil:
				msg.ToolCalls = append(msg.ToolCalls, model.ToolCall{ID: c.ToolUse.ToolUseID, Name: c.ToolUse.Name, Input: c.ToolUse.Input})
			case c.ToolResult != nil:
				msg.ToolResults = append(msg.ToolResults, model.ToolResult{CallID: c.ToolResult.ToolUseID, Content: c.ToolResult.Content[0].Text})
			default:
				exception(w, 400, "ValidationException", fmt.Sprintf("messages.%d: an empty content block", i), "")
				return
			}
		}
		req.Messages = append(req.Messages, msg)
	}
	resp, fail, err := f.m.Next(req)
	switch {
	case err != nil:
		exception(w, 400, "ValidationException", err.Error(), "")
		return
	case fail != nil:
		code := fail.Code
		if code == "" {
			code = map[int]string{429: "ThrottlingException", 500: "InternalServerException", 503: "ServiceUnavailableException",
				403: "AccessDeniedException", 404: "ResourceNotFoundException"}[fail.Status]
		}
		exception(w, fail.Status, code, fail.Message, fail.RetryAfter)
		return
	}
	var content []any
	if resp.Message.Text != "" {
		content = append(content, map[string]any{"text": resp.Message.Text})
	}
	for _, c := range resp.Message.ToolCalls {
		content = append(content, map[string]any{"toolUse": map[string]any{"toolUseId": c.ID, "name": c.Name, "input": c.Input}})
	}
	stop := "end_turn"
	if resp.Stop == model.StopToolUse {
		stop = "tool_use"
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": content}},
		"stopReason": stop,
		"usage": map[string]any{"inputTokens": resp.Usage.InputTokens, "outputTokens": resp.Usage.OutputTokens,
			"totalTokens": resp.Usage.InputTokens + resp.Usage.OutputTokens},
		"metrics": map[string]any{"latencyMs": 1},
	})
}

func exception(w http.ResponseWriter, status int, code, msg, retryAfter string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", code+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"message": msg})
}

// checkSignature signs the request again with the test credentials and compares.
func checkSignature(r *http.Request, body []byte) error {
	auth := r.Header.Get("Authorization")
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 ") {
		return errors.New("not SigV4-signed")
	}
	var signed []string
	for _, f := range strings.Split(strings.TrimPrefix(auth, "AWS4-HMAC-SHA256 "), ", ") {
		if v, ok := strings.CutPrefix(f, "Credential="); ok && !strings.HasPrefix(v, accessKey+"/") || ok && !strings.Contains(v, "/"+region+"/bedrock/aws4_request") {
			return fmt.Errorf("credential scope %s", v)
		}
		if v, ok := strings.CutPrefix(f, "SignedHeaders="); ok {
			signed = strings.Split(v, ";")
		}
	}
	when, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return fmt.Errorf("X-Amz-Date: %v", err)
	}
	again, _ := http.NewRequest(r.Method, "http://"+r.Host+r.URL.EscapedPath(), bytes.NewReader(body))
	again.URL.RawPath = r.URL.EscapedPath()
	for _, h := range signed {
		if h != "host" {
			again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	again.Host = r.Host
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: accessKey, SecretAccessKey: secretKey}, again,
		hex.EncodeToString(sum[:]), "bedrock", region, when); err != nil {
		return err
	}
	if again.Header.Get("Authorization") != auth {
		return errors.New("the signature does not match")
	}
	return nil
}

func serve(t *testing.T, script string) (*fake, *bedrock.Model) {
	t.Helper()
	s, err := scripted.Parse([]byte(script), "test")
	if err != nil {
		t.Fatal(err)
	}
	f := &fake{t: t, m: scripted.New(s)}
	ts := httptest.NewServer(f)
	t.Cleanup(ts.Close)
	m, err := bedrock.New(context.Background(), bedrock.Options{Model: "anthropic.claude-test-v1:0", Region: region, Endpoint: ts.URL,
		Credentials: credentials.NewStaticCredentialsProvider(accessKey, secretKey, "")})
	if err != nil {
		t.Fatal(err)
	}
	return f, m
}

var tools = []model.Tool{{Name: "bash", Description: "run", Schema: map[string]any{"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string"}}, "required": []string{"command"}}}}

func TestConverseWithTools(t *testing.T) {
	f, m := serve(t, `{"model":"anthropic.claude-test-v1:0","conversations":[{"match":"TASK-1","turns":[
		{"text":"looking","tool_calls":[{"name":"bash","input":{"command":"cat package.json"}}],"usage":{"input_tokens":1200,"output_tokens":30}},
		{"text":"done","usage":{"input_tokens":1500,"output_tokens":5}}]}]}`)
	req := model.Request{System: "sys", Tools: tools, MaxTokens: 512, Messages: []model.Message{{Role: model.RoleUser, Text: "fix TASK-1"}}}
	r, err := m.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if r.Stop != model.StopToolUse || len(r.Message.ToolCalls) != 1 || r.Message.Text != "looking" {
		t.Fatalf("answer %+v", r)
	}
	var in struct{ Command string }
	if err := json.Unmarshal(r.Message.ToolCalls[0].Input, &in); err != nil || in.Command != "cat package.json" {
		t.Fatalf("input %s %v", r.Message.ToolCalls[0].Input, err)
	}
	if r.Usage != (model.Usage{InputTokens: 1200, OutputTokens: 30}) {
		t.Fatalf("usage %+v", r.Usage)
	}
	body := string(f.lastBody.Load().([]byte))
	for _, want := range []string{`"toolSpec"`, `"inputSchema":{"json"`, `"system":[{"text":"sys"}]`, `"maxTokens":512`} {
		if !strings.Contains(body, want) {
			t.Fatalf("the request lacks %s: %s", want, body)
		}
	}
	req.Messages = append(req.Messages, r.Message, model.Message{Role: model.RoleUser, ToolResults: []model.ToolResult{{CallID: r.Message.ToolCalls[0].ID, Content: "{}"}}})
	r, err = m.Complete(context.Background(), req)
	if err != nil || r.Stop != model.StopEnd || r.Message.Text != "done" {
		t.Fatalf("%+v %v", r, err)
	}
	if !strings.Contains(string(f.lastBody.Load().([]byte)), `"toolResult":{`) {
		t.Fatalf("the tool result was not sent")
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name, fail string
		kind       model.Kind
		retryAfter time.Duration
	}{
		{"throttled", `{"status":429,"retry_after":"4","message":"Too many requests, please wait before trying again."}`, model.Retryable, 4 * time.Second},
		{"5xx", `{"status":503,"message":"Service unavailable"}`, model.Retryable, 0},
		{"500", `{"status":500,"message":"internal"}`, model.Retryable, 0},
		{"expired", `{"status":403,"code":"ExpiredTokenException","message":"The security token included in the request is expired"}`, model.Auth, 0},
		{"denied", `{"status":403,"message":"You don't have access to the model with the specified model ID."}`, model.Auth, 0},
		{"not found", `{"status":404,"message":"Model not found"}`, model.UnknownModel, 0},
		{"too long", `{"status":400,"code":"ValidationException","message":"Input is too long for requested model."}`, model.ContextTooLong, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, m := serve(t, `{"model":"anthropic.claude-test-v1:0","conversations":[{"turns":[{"errors":[`+tc.fail+`],"always":true}]}]}`)
			_, err := m.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "x"}}})
			var e *model.Error
			if !errors.As(err, &e) {
				t.Fatalf("%v is not a model.Error", err)
			}
			if e.Kind != tc.kind || e.RetryAfter != tc.retryAfter {
				t.Fatalf("kind %v retry-after %v, want %v %v (%v)", e.Kind, e.RetryAfter, tc.kind, tc.retryAfter, err)
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Fatalf("the error prints the secret: %v", err)
			}
		})
	}
}

func TestUnknownModelID(t *testing.T) {
	_, m := serve(t, `{"model":"other","conversations":[{"turns":[{"text":"x"}]}]}`)
	_, err := m.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "x"}}})
	if k, _ := model.KindOf(err); k != model.UnknownModel {
		t.Fatalf("got %v", err)
	}
}

func TestThrottledTwiceThenAnswers(t *testing.T) {
	f, m := serve(t, `{"model":"anthropic.claude-test-v1:0","conversations":[{"turns":[{"text":"ok","errors":[
		{"status":429,"retry_after":"2"},{"status":503}]}]}]}`)
	var waits []time.Duration
	rm := model.Retry(m, model.RetryPolicy{Base: time.Millisecond, Sleep: func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	}})
	r, err := rm.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "x"}}})
	if err != nil || r.Message.Text != "ok" || len(waits) != 2 || waits[0] != 2*time.Second || f.requests.Load() != 3 {
		t.Fatalf("%+v %v waits %v requests %d", r, err, waits, f.requests.Load())
	}
}

func TestBadSignatureRefused(t *testing.T) {
	s, _ := scripted.Parse([]byte(`{"model":"m","conversations":[{"turns":[{"text":"x"}]}]}`), "t")
	ts := httptest.NewServer(&fake{t: t, m: scripted.New(s)})
	defer ts.Close()
	m, err := bedrock.New(context.Background(), bedrock.Options{Model: "m", Region: region, Endpoint: ts.URL,
		Credentials: credentials.NewStaticCredentialsProvider(accessKey, "another-secret", "")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "x"}}})
	if k, _ := model.KindOf(err); k != model.Auth {
		t.Fatalf("a request signed with another secret: %v", err)
	}
}

func TestOptions(t *testing.T) {
	if _, err := bedrock.New(context.Background(), bedrock.Options{Region: region}); err == nil || !strings.Contains(err.Error(), "--model") {
		t.Fatalf("no model: %v", err)
	}
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	t.Setenv("AWS_CONFIG_FILE", "/nonexistent")
	if _, err := bedrock.New(context.Background(), bedrock.Options{Model: "m"}); err == nil || !strings.Contains(err.Error(), "--region") {
		t.Fatalf("no region: %v", err)
	}
}
