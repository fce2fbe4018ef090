// Package loop is envgap's own agent: one loop for every model provider. The model sees
// the task (what the dataset card lets an agent see), and acts through four tools: bash
// (a shell command in the box: the task's evaluation image, the workspace as working
// directory), write_file, run_repro (the task's reproduction through the evaluation core
// in a fresh container: the one true answer) and finish. The loop ends at finish, when the
// model stops calling tools, or at a limit (turns, tokens, cost, the attempt's time);
// whatever the workspace then holds is scored.
//
// Every message, tool call and (capped) tool output is kept in the trajectory, in the
// shape eval's later-history rules read. A provider error that is not the agent's
// (throttling past its retries, 5xx, credentials, unknown model) is returned as an error:
// the caller treats it as an infrastructure fault, never an attempt.
package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/envgap/envgap/core/headtail"
	"github.com/envgap/envgap/lib/agent/model"
)

// Box is where the agent's commands run.
type Box interface {
	// Exec runs a shell command in the workspace, stopping it at timeout. An error is a
	// fault of the box (the engine), never of the command.
	Exec(ctx context.Context, command string, timeout time.Duration) (Exec, error)
	// WriteFile writes a file of the workspace (path relative to it, slash-separated).
	// An error is the agent's (a bad path): it is shown to the model.
	WriteFile(path string, content []byte) error
}

// Exec is what a command did.
type Exec struct {
	ExitCode   int
	TimedOut   bool
	Output     []byte // as the box captured it (possibly already head + tail)
	OutputSize int64  // bytes of the whole output
}

// Repro runs the task's reproduction on the workspace as it is now, in a fresh container
// through the evaluation core; output and exit code (0: every step exited 0). An error is
// an infrastructure fault.
type Repro func(ctx context.Context) (output string, exitCode int, err error)

// Limits of one attempt. Zero means the default (DefaultLimits), except MaxTokens,
// BudgetUSD and ContextTokens: zero is no limit.
type Limits struct {
	MaxTurns int
	// MaxTokens bounds the attempt's tokens, input and output of every call together.
	MaxTokens int64
	// ContextTokens is the model's context: when the conversation nears it, older tool
	// outputs are elided (never the task text).
	ContextTokens int64
	// AnswerTokens bounds one answer's output tokens.
	AnswerTokens int
	// CommandTimeout is bash's default per-call timeout (the model may ask for less).
	CommandTimeout time.Duration
	// OutputBytes is how much of one tool output the model is shown (head and tail).
	OutputBytes int
	// BudgetUSD ends the attempt once its cost reaches it (needs Price).
	BudgetUSD float64
}

// DefaultLimits are the limits a zero field takes.
func DefaultLimits() Limits {
	return Limits{MaxTurns: 100, AnswerTokens: 4096, CommandTimeout: 10 * time.Minute, OutputBytes: 16 << 10}
}

// Agent runs attempts.
type Agent struct {
	Model  model.Model
	Limits Limits
	// Price is the model's price; nil: cost unknown (cost_usd null).
	Price *model.Price
	// System replaces the system prompt (empty: System); Tools the tools offered (nil:
	// Tools). envgap study run gives the paper's protocol its own (no run_repro).
	System string
	Tools  []model.Tool
}

// Stop reasons of an attempt.
const (
	StopFinished  = "finished"   // the model called finish
	StopNoTools   = "no_tools"   // the model answered without a tool call
	StopMaxTurns  = "max_turns"  // --max-turns
	StopMaxTokens = "max_tokens" // --max-tokens
	StopBudget    = "budget"     // --budget
	StopTimeout   = "timeout"    // --attempt-timeout
	StopContext   = "context"    // the conversation no longer fits the model's context
)

// Result is what an attempt did.
type Result struct {
	Stop       string
	Turns      int
	Usage      model.Usage
	CostUSD    *float64
	Trajectory []any
	// ToolCalls counts the tool calls by name.
	ToolCalls map[string]int
	// FirstRequest is the time from the attempt's start to the model's first request.
	FirstRequest time.Duration
	// Messages is the conversation at the stop (Continue goes on from it).
	Messages []model.Message
}

// Tools are the loop's tools.
var Tools = []model.Tool{
	{Name: "bash", Description: "Run a shell command (bash -c) in the workspace, inside the task's evaluation container. " +
		"Output (stdout and stderr merged) is capped: the head and tail are kept. Package installs go through the " +
		"date-limited registry proxy already configured; nothing else on the network is reachable.",
		Schema: map[string]any{"type": "object", "properties": map[string]any{
			"command":         map[string]any{"type": "string", "description": "the command line"},
			"timeout_seconds": map[string]any{"type": "integer", "description": "stop the command after this many seconds (default and maximum: the harness's)"},
		}, "required": []string{"command"}}},
	{Name: "write_file", Description: "Write a file of the workspace (created or replaced), path relative to the workspace.",
		Schema: map[string]any{"type": "object", "properties": map[string]any{
			"path":    map[string]any{"type": "string"},
			"content": map[string]any{"type": "string"},
		}, "required": []string{"path", "content"}}},
	{Name: "run_repro", Description: "Run the task's reproduction (repro_command) on the workspace as it is now, in a fresh " +
		"evaluation container, exactly as scoring sets it up: the one true answer. Things installed by hand in your " +
		"container are not there; only the workspace's files are.",
		Schema: map[string]any{"type": "object", "properties": map[string]any{}}},
	{Name: "finish", Description: "End the attempt: the workspace's changed files become your fix and are scored.",
		Schema: map[string]any{"type": "object", "properties": map[string]any{
			"summary": map[string]any{"type": "string", "description": "what you changed and why"},
		}}},
}

// System is the system prompt.
const System = `You are fixing a software project's environment so that it builds and runs. You work in a
container made from the task's evaluation image, with the project (at the task's base commit) as
your working directory. Fix ONLY environment files (manifests, lockfiles, build and setup files,
Dockerfiles): source files are not accepted. Package registries are served as they were at the
task's registry date; nothing newer exists. The project's later history is not available and
must not be looked for. Use run_repro to check your fix exactly as scoring will; call finish when
done. Only the workspace's files are scored, not what you installed by hand.`

// TaskText renders the task message: the task view as JSON and, after a failed attempt,
// the evaluation's output (capped).
func TaskText(view any, attempt, maxAttempts int, feedback string, capBytes int) (string, error) {
	b, err := json.MarshalIndent(view, "", "  ")
	if err != nil {
		return "", err
	}
	var s strings.Builder
	fmt.Fprintf(&s, "Task (attempt %d of %d):\n%s\n", attempt, maxAttempts, b)
	if feedback != "" {
		fmt.Fprintf(&s, "\nYour previous attempt was scored and not resolved. The evaluation's output:\n%s\n", Cap([]byte(feedback), int64(len(feedback)), capBytes))
	}
	return s.String(), nil
}

// Cap returns out for the model: at most n bytes, the head and the tail kept around a
// note of how much was cut; size is the whole output's length (which may be more than
// len(out) when the box already cut it).
func Cap(out []byte, size int64, n int) string {
	if n <= 0 {
		n = DefaultLimits().OutputBytes
	}
	if len(out) <= n && size <= int64(len(out)) {
		return string(out)
	}
	// n/2 bytes each side; an output the box cut already that fits is kept whole, the
	// note in its middle.
	head, tail := n/2, n/2
	if len(out) <= n {
		head, tail = len(out)/2, len(out)-len(out)/2
	}
	b := headtail.New(head, tail)
	b.Write(out)
	cut := size - int64(len(out)) + b.Cut()
	return string(b.Join(fmt.Sprintf("\n[envgap: %d bytes of output cut here; %d in all]\n", cut, size)))
}

// Run runs one attempt: the conversation starts from task (TaskText) and goes on until
// a stop. The attempt's time is ctx's deadline. An error is an infrastructure fault
// (the provider, the box or the repro); the workspace is scored otherwise.
func (a *Agent) Run(ctx context.Context, task string, box Box, repro Repro) (*Result, error) {
	return a.run(ctx, []model.Message{{Role: model.RoleUser, Text: task}}, task, box, repro)
}

// Continue goes on with an earlier attempt's conversation (its Result.Messages): next is
// the next user message (appended to the last message when that is the user's tool
// results, so that roles still alternate). The first message, the task, is never elided.
func (a *Agent) Continue(ctx context.Context, prior []model.Message, next string, box Box, repro Repro) (*Result, error) {
	if len(prior) == 0 {
		return a.Run(ctx, next, box, repro)
	}
	msgs := make([]model.Message, len(prior), len(prior)+1)
	for i, m := range prior {
		m.ToolCalls = append([]model.ToolCall(nil), m.ToolCalls...)
		m.ToolResults = append([]model.ToolResult(nil), m.ToolResults...)
		msgs[i] = m
	}
	if last := &msgs[len(msgs)-1]; last.Role == model.RoleUser {
		if last.Text != "" {
			last.Text += "\n\n"
		}
		last.Text += next
	} else {
		msgs = append(msgs, model.Message{Role: model.RoleUser, Text: next})
	}
	return a.run(ctx, msgs, next, box, repro)
}

func (a *Agent) run(ctx context.Context, msgs []model.Message, task string, box Box, repro Repro) (*Result, error) {
	lim := a.Limits
	d := DefaultLimits()
	if lim.MaxTurns <= 0 {
		lim.MaxTurns = d.MaxTurns
	}
	if lim.AnswerTokens <= 0 {
		lim.AnswerTokens = d.AnswerTokens
	}
	if lim.CommandTimeout <= 0 {
		lim.CommandTimeout = d.CommandTimeout
	}
	if lim.OutputBytes <= 0 {
		lim.OutputBytes = d.OutputBytes
	}
	start := time.Now()
	res := &Result{ToolCalls: map[string]int{}}
	if a.Price != nil {
		c := 0.0
		res.CostUSD = &c
	}
	conv := &conversation{msgs: msgs}
	defer func() { res.Messages = conv.msgs }()
	res.Trajectory = append(res.Trajectory, map[string]any{"role": "user", "content": task})
	timedOut := func() bool { return ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) }
	contextRetry := false
	for {
		if res.Turns >= lim.MaxTurns {
			res.Stop = StopMaxTurns
			break
		}
		if timedOut() {
			res.Stop = StopTimeout
			break
		}
		if lim.ContextTokens > 0 {
			if n := conv.elide(lim.ContextTokens * 8 / 10); n > 0 {
				res.Trajectory = append(res.Trajectory, map[string]any{"type": "note", "note": fmt.Sprintf("envgap: %d older tool outputs elided to stay within the model's context", n)})
			}
		}
		if res.FirstRequest == 0 {
			res.FirstRequest = time.Since(start)
		}
		sys, tools := a.System, a.Tools
		if sys == "" {
			sys = System
		}
		if tools == nil {
			tools = Tools
		}
		resp, err := a.Model.Complete(ctx, model.Request{System: sys, Messages: conv.msgs, Tools: tools, MaxTokens: lim.AnswerTokens})
		if err != nil {
			if timedOut() {
				res.Stop = StopTimeout
				break
			}
			if k, ok := model.KindOf(err); ok && k == model.ContextTooLong {
				if !contextRetry && conv.elide(0) > 0 {
					contextRetry = true
					res.Trajectory = append(res.Trajectory, map[string]any{"type": "note", "note": "envgap: the model's context was exceeded; every older tool output elided"})
					continue
				}
				res.Stop = StopContext
				break
			}
			return res, err
		}
		contextRetry = false
		res.Turns++
		res.Usage.InputTokens += resp.Usage.InputTokens
		res.Usage.OutputTokens += resp.Usage.OutputTokens
		conv.lastInput = resp.Usage.InputTokens
		conv.lastLen = conv.bytes()
		if a.Price != nil {
			c := a.Price.Cost(res.Usage)
			res.CostUSD = &c
		}
		entry := map[string]any{"role": "assistant", "model": a.Model.Name(), "usage": resp.Usage}
		if resp.Message.Text != "" {
			entry["text"] = resp.Message.Text
		}
		if len(resp.Message.ToolCalls) > 0 {
			var calls []any
			for _, c := range resp.Message.ToolCalls {
				var in any
				if json.Unmarshal(c.Input, &in) != nil {
					in = string(c.Input)
				}
				calls = append(calls, map[string]any{"id": c.ID, "name": c.Name, "input": in})
			}
			entry["tool_calls"] = calls
		}
		res.Trajectory = append(res.Trajectory, entry)
		conv.msgs = append(conv.msgs, resp.Message)
		if len(resp.Message.ToolCalls) == 0 {
			res.Stop = StopNoTools
			break
		}
		results := model.Message{Role: model.RoleUser}
		finished := false
		for _, c := range resp.Message.ToolCalls {
			res.ToolCalls[c.Name]++
			out, isErr, fin, err := a.tool(ctx, c, box, repro, lim)
			if err != nil {
				if timedOut() {
					out, isErr = "the attempt's time ran out during this call", true
				} else {
					return res, err
				}
			}
			finished = finished || fin
			results.ToolResults = append(results.ToolResults, model.ToolResult{CallID: c.ID, Content: out, IsError: isErr})
			res.Trajectory = append(res.Trajectory, map[string]any{"role": "tool", "tool_call_id": c.ID, "name": c.Name, "output": out, "is_error": isErr})
		}
		conv.msgs = append(conv.msgs, results)
		switch {
		case finished:
			res.Stop = StopFinished
		case lim.MaxTokens > 0 && res.Usage.InputTokens+res.Usage.OutputTokens >= lim.MaxTokens:
			res.Stop = StopMaxTokens
		case lim.BudgetUSD > 0 && res.CostUSD != nil && *res.CostUSD >= lim.BudgetUSD:
			res.Stop = StopBudget
		case timedOut():
			res.Stop = StopTimeout
		}
		if res.Stop != "" {
			break
		}
	}
	res.Trajectory = append(res.Trajectory, map[string]any{"type": "stop", "status": res.Stop, "num_turns": res.Turns,
		"tokens": map[string]int64{"input": res.Usage.InputTokens, "output": res.Usage.OutputTokens}, "cost_usd": res.CostUSD})
	return res, nil
}

// tool runs one tool call: the text shown to the model, whether it is an error, whether
// the attempt is finished; an error is an infrastructure fault.
func (a *Agent) tool(ctx context.Context, c model.ToolCall, box Box, repro Repro, lim Limits) (string, bool, bool, error) {
	var in struct {
		Command        string `json:"command"`
		TimeoutSeconds int    `json:"timeout_seconds"`
		Path           string `json:"path"`
		Content        string `json:"content"`
		Summary        string `json:"summary"`
	}
	if len(c.Input) > 0 {
		if err := json.Unmarshal(c.Input, &in); err != nil {
			return "the tool input is not a JSON object of the tool's schema: " + err.Error(), true, false, nil
		}
	}
	switch c.Name {
	case "bash":
		if strings.TrimSpace(in.Command) == "" {
			return "bash needs a command", true, false, nil
		}
		timeout := lim.CommandTimeout
		if in.TimeoutSeconds > 0 && time.Duration(in.TimeoutSeconds)*time.Second < timeout {
			timeout = time.Duration(in.TimeoutSeconds) * time.Second
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
			timeout = max(time.Until(dl), time.Second)
		}
		ex, err := box.Exec(ctx, in.Command, timeout)
		if err != nil {
			return "", true, false, err
		}
		head := fmt.Sprintf("exit code %d\n", ex.ExitCode)
		if ex.TimedOut {
			head = fmt.Sprintf("the command was stopped after %s (exit code %d)\n", timeout, ex.ExitCode)
		}
		return head + Cap(ex.Output, ex.OutputSize, lim.OutputBytes), ex.ExitCode != 0, false, nil
	case "write_file":
		p := strings.TrimPrefix(in.Path, "./")
		if p == "" || path.IsAbs(p) || path.Clean(p) != p || strings.HasPrefix(p, "../") || p == ".." {
			return fmt.Sprintf("write_file: path %q must be relative to the workspace, clean, and inside it", in.Path), true, false, nil
		}
		if err := box.WriteFile(p, []byte(in.Content)); err != nil {
			return "write_file: " + err.Error(), true, false, nil
		}
		return fmt.Sprintf("wrote %s (%d bytes)", p, len(in.Content)), false, false, nil
	case "run_repro":
		out, code, err := repro(ctx)
		if err != nil {
			return "", true, false, err
		}
		return fmt.Sprintf("repro exit code %d\n", code) + Cap([]byte(out), int64(len(out)), lim.OutputBytes), code != 0, false, nil
	case "finish":
		return "finished: the workspace will be scored", false, true, nil
	}
	return fmt.Sprintf("no tool %q: the tools are bash, write_file, run_repro and finish", c.Name), true, false, nil
}

// conversation is the messages sent, with what is known of their size.
type conversation struct {
	msgs []model.Message
	// lastInput is the input tokens the last call reported, for a conversation of
	// lastLen bytes: the ratio estimates the tokens of the conversation now.
	lastInput int64
	lastLen   int
}

func (c *conversation) bytes() int {
	n := 0
	for _, m := range c.msgs {
		n += len(m.Text)
		for _, r := range m.ToolResults {
			n += len(r.Content)
		}
		for _, t := range m.ToolCalls {
			n += len(t.Input) + len(t.Name)
		}
	}
	return n
}

// tokens estimates the conversation's tokens: by the last call's ratio of tokens to
// bytes when known, else 4 bytes a token.
func (c *conversation) tokens() int64 {
	b := int64(c.bytes())
	if c.lastInput > 0 && c.lastLen > 0 {
		return b * c.lastInput / int64(c.lastLen)
	}
	return b / 4
}

const elided = "[envgap: this older tool output was elided to keep the conversation within the model's context]"

// elide replaces the oldest tool outputs (never the first message, the task, nor the
// last message's) with a note until the conversation's estimated tokens are at most
// target (0: every one it may); it returns how many it elided.
func (c *conversation) elide(target int64) int {
	n := 0
	for i := 1; i < len(c.msgs)-1; i++ {
		if target > 0 && c.tokens() <= target {
			break
		}
		for j := range c.msgs[i].ToolResults {
			r := &c.msgs[i].ToolResults[j]
			if r.Content != elided && len(r.Content) > len(elided) {
				r.Content = elided
				n++
			}
		}
	}
	return n
}
