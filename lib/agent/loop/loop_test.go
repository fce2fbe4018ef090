package loop_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/lib/agent/loop"
	"github.com/envgap/envgap/lib/agent/model"
	"github.com/envgap/envgap/lib/agent/model/scripted"
)

// memBox stands for the box in the loop's own tests (the real box is tested with the
// engine in harness/run): it records what it is asked and answers out.
type memBox struct {
	commands []string
	files    map[string]string
	out      func(cmd string) loop.Exec
}

func (b *memBox) Exec(_ context.Context, cmd string, _ time.Duration) (loop.Exec, error) {
	b.commands = append(b.commands, cmd)
	if b.out != nil {
		return b.out(cmd), nil
	}
	return loop.Exec{Output: []byte("ok\n"), OutputSize: 3}, nil
}

func (b *memBox) WriteFile(p string, c []byte) error {
	if b.files == nil {
		b.files = map[string]string{}
	}
	b.files[p] = string(c)
	return nil
}

func script(t *testing.T, s string) *scripted.Model {
	t.Helper()
	sc, err := scripted.Parse([]byte(s), "test")
	if err != nil {
		t.Fatal(err)
	}
	return scripted.New(sc)
}

const fixScript = `{"model":"s","conversations":[{"match":"T-1","turns":[
	{"text":"read","tool_calls":[{"name":"bash","input":{"command":"cat requirements.txt"}}],"usage":{"input_tokens":1000,"output_tokens":10}},
	{"tool_calls":[{"name":"run_repro","input":{}}],"usage":{"input_tokens":1100,"output_tokens":10}},
	{"tool_calls":[{"name":"write_file","input":{"path":"requirements.txt","content":"requests==2.31.0\n"}}],"usage":{"input_tokens":1200,"output_tokens":20}},
	{"tool_calls":[{"name":"finish","input":{"summary":"pinned"}}],"usage":{"input_tokens":1300,"output_tokens":5}}]}]}`

func TestFix(t *testing.T) {
	box := &memBox{}
	repros := 0
	a := &loop.Agent{Model: script(t, fixScript), Price: &model.Price{InPerMTok: 3, OutPerMTok: 15}}
	res, err := a.Run(context.Background(), "task T-1", box, func(context.Context) (string, int, error) {
		repros++
		return "ModuleNotFoundError: requests", 1, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != loop.StopFinished || res.Turns != 4 || repros != 1 || box.files["requirements.txt"] != "requests==2.31.0\n" {
		t.Fatalf("stop %s turns %d repros %d files %v", res.Stop, res.Turns, repros, box.files)
	}
	if res.Usage != (model.Usage{InputTokens: 4600, OutputTokens: 45}) {
		t.Fatalf("usage %+v", res.Usage)
	}
	want := (4600*3.0 + 45*15.0) / 1e6
	if res.CostUSD == nil || *res.CostUSD != want {
		t.Fatalf("cost %v, want %v", res.CostUSD, want)
	}
	// user, 4 x (assistant + tool), stop
	if len(res.Trajectory) != 10 {
		t.Fatalf("trajectory of %d entries", len(res.Trajectory))
	}
	if cmd := res.Trajectory[1].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["input"].(map[string]any)["command"]; cmd != "cat requirements.txt" {
		t.Fatalf("the trajectory does not hold the command: %v", cmd)
	}
}

func TestNeverStops(t *testing.T) {
	box := &memBox{}
	a := &loop.Agent{Model: script(t, `{"conversations":[{"turns":[{"tool_calls":[{"name":"bash","input":{"command":"true"}}]}]}]}`), Limits: loop.Limits{MaxTurns: 5}}
	res, err := a.Run(context.Background(), "task", box, nil)
	if err != nil || res.Stop != loop.StopMaxTurns || len(box.commands) != 5 || res.CostUSD != nil {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestMaxTokensAndBudget(t *testing.T) {
	s := `{"conversations":[{"turns":[{"tool_calls":[{"name":"bash","input":{"command":"true"}}],"usage":{"input_tokens":1000,"output_tokens":100}}]}]}`
	res, err := (&loop.Agent{Model: script(t, s), Limits: loop.Limits{MaxTokens: 3000}}).Run(context.Background(), "t", &memBox{}, nil)
	if err != nil || res.Stop != loop.StopMaxTokens || res.Turns != 3 {
		t.Fatalf("max tokens: %+v %v", res, err)
	}
	res, err = (&loop.Agent{Model: script(t, s), Price: &model.Price{InPerMTok: 1000}, Limits: loop.Limits{BudgetUSD: 1.5}}).Run(context.Background(), "t", &memBox{}, nil)
	if err != nil || res.Stop != loop.StopBudget || res.Turns != 2 {
		t.Fatalf("budget: %+v %v", res, err)
	}
}

func TestOutputCapped(t *testing.T) {
	// The box kept 1 MiB of a 1 GiB output (head and tail); the model sees 16 KiB of it.
	const whole = int64(1) << 30
	kept := []byte("HEAD" + strings.Repeat("x", 1<<20-8) + "TAIL")
	box := &memBox{out: func(string) loop.Exec { return loop.Exec{Output: kept, OutputSize: whole} }}
	a := &loop.Agent{Model: script(t, `{"conversations":[{"turns":[{"tool_calls":[{"name":"bash","input":{"command":"yes"}}]},{"text":"done"}]}]}`)}
	res, err := a.Run(context.Background(), "t", box, nil)
	if err != nil || res.Stop != loop.StopNoTools {
		t.Fatalf("%+v %v", res, err)
	}
	out := res.Trajectory[2].(map[string]any)["output"].(string)
	if len(out) > 17<<10 || !strings.Contains(out, "HEAD") || !strings.Contains(out, "TAIL") {
		t.Fatalf("output of %d bytes, head %v tail %v", len(out), strings.Contains(out, "HEAD"), strings.Contains(out, "TAIL"))
	}
	if want := "bytes of output cut here; 1073741824 in all"; !strings.Contains(out, want) {
		t.Fatalf("no note of the cut: %q", out[16<<10/2-50:16<<10/2+100])
	}
}

func TestProviderFailing(t *testing.T) {
	m := model.Retry(script(t, `{"conversations":[{"turns":[{"errors":[{"status":503}],"always":true}]}]}`),
		model.RetryPolicy{Attempts: 3, Sleep: func(context.Context, time.Duration) error { return nil }})
	box := &memBox{}
	_, err := (&loop.Agent{Model: m}).Run(context.Background(), "t", box, nil)
	if k, ok := model.KindOf(err); !ok || k != model.Retryable || len(box.commands) != 0 {
		t.Fatalf("got %v", err)
	}
}

func TestContextElision(t *testing.T) {
	big := strings.Repeat("y", 8000)
	box := &memBox{out: func(string) loop.Exec { return loop.Exec{Output: []byte(big), OutputSize: int64(len(big))} }}
	task := "the task text " + strings.Repeat("z", 2000)
	a := &loop.Agent{Model: script(t, `{"conversations":[{"turns":[{"tool_calls":[{"name":"bash","input":{"command":"cat big"}}]}]}]}`),
		Limits: loop.Limits{MaxTurns: 6, ContextTokens: 6000, OutputBytes: 10000}}
	res, err := a.Run(context.Background(), task, box, nil)
	if err != nil || res.Stop != loop.StopMaxTurns {
		t.Fatalf("%+v %v", res, err)
	}
	notes := 0
	for _, e := range res.Trajectory {
		if m := e.(map[string]any); m["type"] == "note" {
			notes++
		}
	}
	if notes == 0 {
		t.Fatal("nothing was elided")
	}
	if res.Trajectory[0].(map[string]any)["content"] != task {
		t.Fatal("the task text changed")
	}
}

func TestTimeout(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	res, err := (&loop.Agent{Model: script(t, fixScript)}).Run(ctx, "T-1", &memBox{}, nil)
	if err != nil || res.Stop != loop.StopTimeout || res.Turns != 0 {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestCap(t *testing.T) {
	if got := loop.Cap([]byte("short"), 5, 100); got != "short" {
		t.Fatalf("%q", got)
	}
	got := loop.Cap([]byte("0123456789"), 10, 4)
	if !strings.HasPrefix(got, "01") || !strings.HasSuffix(got, "89") || !strings.Contains(got, "6 bytes of output cut here; 10 in all") {
		t.Fatalf("%q", got)
	}
}

// recorder records the requests a model gets.
type recorder struct {
	model.Model
	reqs []model.Request
}

func (r *recorder) Complete(ctx context.Context, req model.Request) (*model.Response, error) {
	r.reqs = append(r.reqs, req)
	return r.Model.Complete(ctx, req)
}

// Continue goes on with the first attempt's conversation: the second attempt's first
// request carries every message of the first, then the new user text; the scripted
// model, which answers by the number of assistant messages, plays the next turns.
func TestContinue(t *testing.T) {
	rec := &recorder{Model: script(t, `{"conversations":[{"match":"the task","turns":[
		{"tool_calls":[{"name":"write_file","input":{"path":"a.txt","content":"1"}}]},
		{"tool_calls":[{"name":"finish","input":{"summary":"done"}}]},
		{"tool_calls":[{"name":"write_file","input":{"path":"a.txt","content":"2"}}]},
		{"tool_calls":[{"name":"finish","input":{"summary":"repaired"}}]}]}]}`)}
	a := &loop.Agent{Model: rec}
	box := &memBox{}
	first, err := a.Run(context.Background(), "the task", box, nil)
	if err != nil || first.Stop != loop.StopFinished || len(first.Messages) != 5 {
		t.Fatalf("%+v %v", first, err)
	}
	second, err := a.Continue(context.Background(), first.Messages, "it failed: E1", box, nil)
	if err != nil || second.Stop != loop.StopFinished {
		t.Fatalf("%+v %v", second, err)
	}
	if box.files["a.txt"] != "2" {
		t.Errorf("a.txt = %q: the second attempt did not go on with the conversation", box.files["a.txt"])
	}
	req := rec.reqs[2]
	if len(req.Messages) != 5 || req.Messages[0].Text != "the task" || req.Messages[1].Role != model.RoleAssistant {
		t.Fatalf("second attempt's first request: %+v", req.Messages)
	}
	// The error joins the last tool results (roles alternate), after them.
	last := req.Messages[4]
	if last.Role != model.RoleUser || len(last.ToolResults) != 1 || last.Text != "it failed: E1" {
		t.Errorf("last message %+v", last)
	}
	if len(first.Messages[4].ToolResults) != 1 || first.Messages[4].Text != "" {
		t.Errorf("Continue changed the earlier attempt's messages: %+v", first.Messages[4])
	}
	if len(second.Messages) != 9 {
		t.Errorf("%d messages after the second attempt, want 9", len(second.Messages))
	}
}

// Continuing a long conversation elides older tool outputs, never the task.
func TestContinueElides(t *testing.T) {
	big := strings.Repeat("y", 8000)
	box := &memBox{out: func(string) loop.Exec { return loop.Exec{Output: []byte(big), OutputSize: int64(len(big))} }}
	task := "the task text " + strings.Repeat("z", 2000)
	a := &loop.Agent{Model: script(t, `{"conversations":[{"turns":[{"tool_calls":[{"name":"bash","input":{"command":"cat big"}}]}]}]}`),
		Limits: loop.Limits{MaxTurns: 2, ContextTokens: 6000, OutputBytes: 10000}}
	res, err := a.Run(context.Background(), task, box, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if res, err = a.Continue(context.Background(), res.Messages, "round error", box, nil); err != nil {
			t.Fatal(err)
		}
	}
	elided := 0
	for _, m := range res.Messages {
		for _, r := range m.ToolResults {
			if strings.HasPrefix(r.Content, "[envgap: this older tool output was elided") {
				elided++
			}
		}
	}
	if elided == 0 || res.Messages[0].Text != task {
		t.Errorf("%d outputs elided; task kept: %v", elided, res.Messages[0].Text == task)
	}
	errs := 0
	for _, m := range res.Messages {
		errs += strings.Count(m.Text, "round error")
	}
	if errs != 2 {
		t.Errorf("the rounds' errors appear %d times in the conversation, want 2", errs)
	}
}
