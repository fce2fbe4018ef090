package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/envgap/envgap/core/untrusted"
	"github.com/envgap/envgap/harness/eval"
	"github.com/envgap/envgap/lib/agent"
	"github.com/envgap/envgap/lib/atif"
	"github.com/envgap/envgap/schemas"
	"github.com/sourcegraph/conc/pool"
)

// Options configures a run of an agent over tasks.
type Options struct {
	Evaluator   *eval.Evaluator
	Materialize agent.MaterializeFunc
	// Agent is noop or gold (the built-in agents, for checking the benchmark itself:
	// noop changes nothing, gold writes the reference fix), or a shell command run with
	// sh -c in the workspace; unused when Model is set.
	Agent agent.Spec
	// Model is envgap's own model agent (run --agent openai|bedrock), acting in a box.
	Model *agent.ModelAgent
	// Contained runs the agent command in a box (--agent-image); nil: on this host.
	Contained *agent.Contained
	// K independent runs per task, each up to MaxAttempts attempts of AttemptTimeout.
	K              int
	MaxAttempts    int
	AttemptTimeout time.Duration
	// WorkDir holds the run directories while they run (removed after each run).
	WorkDir string
	// OutDir receives each attempt's agent output, trajectory and cost under
	// agent/<instance_id>/run-<k>/.
	OutDir string
	// ReproCommand is how an agent runs repro_command (envgap's own binary with
	// "agent-repro"); empty: no repro server.
	ReproCommand string
	Jobs         int
	// Done returns the results of a task's run kept from an earlier run of the same
	// folder (complete: resolved, or every attempt made); nil: run it.
	Done     func(id string, run int) []schemas.EvalResult
	Progress func(id string, run int, attempt int, r *schemas.EvalResult, err error)
	// CorpusID and Split name what the run scores, in each attempt's ATIF trajectory.
	CorpusID, Split string
}

// Outcome is what a run of an agent did.
type Outcome struct {
	Results []schemas.EvalResult
	Faults  []schemas.EvalFault
	// Logs hold, by instance id, each attempt's evaluation log and the agent's output.
	Logs map[string][]byte
	Ran  int
	Kept int
}

// Run runs the agent on every task, K times each. A fault (the workspace could not be
// made, the evaluation hit an infrastructure fault) leaves that task's run without a
// result; the next run of the same folder retries it.
func Run(ctx context.Context, tasks []schemas.Task, opts Options) (*Outcome, error) {
	if opts.K < 1 {
		opts.K = 1
	}
	if opts.MaxAttempts < 1 {
		opts.MaxAttempts = 1
	}
	if opts.Jobs < 1 {
		opts.Jobs = 1
	}
	out := &Outcome{Logs: map[string][]byte{}}
	var mu sync.Mutex
	logs := map[string]*bytes.Buffer{}
	// A provider fault that no other task can escape (credentials, unknown model): the
	// tasks not yet started get it as their fault, without a box.
	var giveUp agent.GiveUp
	p := pool.New().WithContext(ctx).WithMaxGoroutines(opts.Jobs)
	for i := range tasks {
		for k := 1; k <= opts.K; k++ {
			t := &tasks[i]
			p.Go(func(ctx context.Context) error {
				var log bytes.Buffer
				var rs []schemas.EvalResult
				kept := false
				if opts.Done != nil {
					if done := opts.Done(t.InstanceID, k); len(done) > 0 {
						rs, kept = done, true
						fmt.Fprintf(&log, "=== %s run %d: kept from the earlier run of this folder\n", t.InstanceID, k)
						for j := range rs {
							opts.Evaluator.WriteLog(&log, t, &rs[j])
						}
					}
				}
				var err error
				if !kept {
					if stop := giveUp.Held(); stop != nil {
						err = stop // the provider refused the credentials or the model: the same for every task
					} else {
						rs, err = runOne(ctx, t, k, opts, &log)
						giveUp.Note(err)
					}
				}
				mu.Lock()
				defer mu.Unlock()
				b := logs[t.InstanceID]
				if b == nil {
					b = &bytes.Buffer{}
					logs[t.InstanceID] = b
				}
				b.Write(log.Bytes())
				if err != nil {
					out.Faults = append(out.Faults, schemas.EvalFault{InstanceID: t.InstanceID, Error: fmt.Sprintf("run %d: %v", k, err)})
					return nil
				}
				out.Results = append(out.Results, rs...)
				if kept {
					out.Kept++
				} else {
					out.Ran++
				}
				return nil
			})
		}
	}
	_ = p.Wait()
	for id, b := range logs {
		out.Logs[id] = b.Bytes()
	}
	sort.Slice(out.Faults, func(i, j int) bool { return out.Faults[i].InstanceID < out.Faults[j].InstanceID })
	return out, ctx.Err()
}

// runOne is one run (k) of the agent on one task: up to MaxAttempts attempts, with the
// evaluation's output fed back after each failed one.
func runOne(ctx context.Context, t *schemas.Task, k int, opts Options, log *bytes.Buffer) ([]schemas.EvalResult, error) {
	runDir := filepath.Join(opts.WorkDir, t.InstanceID, "run-"+strconv.Itoa(k))
	if err := os.RemoveAll(runDir); err != nil {
		return nil, err
	}
	defer os.RemoveAll(runDir)
	ws, err := agent.Prepare(ctx, t, runDir, opts.Materialize)
	if err != nil {
		return nil, err
	}
	keep := filepath.Join(opts.OutDir, "agent", t.InstanceID, "run-"+strconv.Itoa(k))
	if err := os.RemoveAll(keep); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(keep, 0o755); err != nil {
		return nil, err
	}
	var repro *agent.ReproServer
	if opts.ReproCommand != "" && opts.Model == nil && !opts.Agent.IsBuiltin() {
		if repro, err = agent.StartRepro(ctx, ws, agent.ReproConfig{Runner: opts.Evaluator.Runner, Store: opts.Evaluator.Store, Limits: opts.Evaluator.Limits}); err != nil {
			return nil, err
		}
		defer repro.Close()
	}
	var results []schemas.EvalResult
	for n := 1; n <= opts.MaxAttempts; n++ {
		r, act, err := attempt(ctx, ws, n, opts, repro, keep)
		if err != nil {
			return nil, err
		}
		r.Run, r.Attempt = k, n
		if err := writeATIF(opts.OutDir, t, r, act, opts); err != nil {
			return nil, err
		}
		results = append(results, *r)
		if opts.Progress != nil {
			opts.Progress(t.InstanceID, k, n, r, nil)
		}
		if err := opts.Evaluator.WriteLog(log, t, r); err != nil {
			return nil, err
		}
		if r.Agent != nil && r.Agent.Model != "" {
			fmt.Fprintf(log, "agent: %s stopped (%s) after %d turns, %d input and %d output tokens, %s; %d connections refused; trajectory kept in %s\n",
				r.Agent.Command, r.Agent.Stop, r.Agent.Turns, r.Agent.InputTokens, r.Agent.OutputTokens,
				time.Duration(r.Agent.DurationMS)*time.Millisecond, r.Agent.RefusedConnections, keep)
		} else if r.Agent != nil {
			where := "on this host (not contained)"
			if r.Agent.AgentImage != "" {
				where = fmt.Sprintf("in a box from %s, %d connections refused", r.Agent.AgentImage, r.Agent.RefusedConnections)
			}
			fmt.Fprintf(log, "agent: %q exited %d after %s (timed out: %v), %s; output kept in %s\n",
				r.Agent.Command, r.Agent.ExitCode, time.Duration(r.Agent.DurationMS)*time.Millisecond, r.Agent.TimedOut, where, keep)
		}
		log.WriteString("\n")
		if r.Resolved || n == opts.MaxAttempts {
			break
		}
		// The feedback for the next attempt: this attempt's evaluation, as a person reads it.
		var fb bytes.Buffer
		if err := opts.Evaluator.WriteLog(&fb, t, r); err != nil {
			return nil, err
		}
		// Written as a new file over whatever the agent left at its name (on this host it
		// could have made it a link to a host file), never through it.
		if err := untrusted.WriteFile(ws.RunDir, agent.FeedbackFileName, fb.Bytes(), 0o644); err != nil {
			return nil, fmt.Errorf("run directory: %w", err)
		}
	}
	return results, nil
}

// attempt runs the agent once and scores the workspace.
func attempt(ctx context.Context, ws *agent.Workspace, n int, opts Options, repro *agent.ReproServer, keep string) (*schemas.EvalResult, *agent.Action, error) {
	t := ws.Task
	feedback := ""
	if n > 1 {
		feedback = ws.FeedbackFile()
	}
	var act *agent.Action
	switch {
	case opts.Model != nil:
		var err error
		at := agent.ModelAttempt{N: n, MaxAttempts: opts.MaxAttempts, Timeout: opts.AttemptTimeout,
			Runner: opts.Evaluator.Runner, Store: opts.Evaluator.Store, Limits: opts.Evaluator.Limits}
		if act, err = agent.ActModel(ctx, ws, opts.Model, at, filepath.Join(keep, "attempt-"+strconv.Itoa(n))); err != nil {
			return nil, nil, err
		}
	case opts.Agent.IsBuiltin():
		if opts.Agent.Kind == agent.KindGold {
			if err := ws.Apply(t.GoldFiles); err != nil {
				return nil, nil, err
			}
		}
		act = &agent.Action{}
		files, err := ws.Files()
		if errors.Is(err, agent.ErrRefused) {
			act.Refused = err.Error()
		} else if err != nil {
			return nil, nil, err
		}
		act.Files = files
	default:
		boxes, _ := opts.Evaluator.Runner.(agent.Boxes)
		box, err := opts.Contained.Box(ctx, t, boxes, opts.Evaluator.Limits)
		if err != nil {
			return nil, nil, err
		}
		if box != nil && feedback != "" {
			if feedback, err = filepath.Abs(feedback); err != nil {
				return nil, nil, err
			}
		}
		env := []string{agent.EnvAttempt + "=" + strconv.Itoa(n), agent.EnvMaxAttempts + "=" + strconv.Itoa(opts.MaxAttempts),
			agent.EnvFeedbackFile + "=" + feedback}
		if act, err = agent.Act(ctx, ws, agent.ActOptions{Command: opts.Agent.Raw, Env: env, Timeout: opts.AttemptTimeout, Keep: filepath.Join(keep, "attempt-"+strconv.Itoa(n)),
			Repro: repro, ReproCommand: opts.ReproCommand, Box: box}); err != nil {
			return nil, nil, err
		}
	}
	pred := &schemas.Prediction{InstanceID: t.InstanceID, Files: act.Files, Trajectory: act.Trajectory, CostUSD: act.CostUSD}
	if pred.Files == nil {
		pred.Files = map[string]*string{}
	}
	if act.Refused != "" {
		status := schemas.EvalRejected
		if act.Info != nil && act.Info.TimedOut {
			status = schemas.EvalUnresolved
		}
		r := eval.NewResult(t, pred, status, act.Refused)
		r.Agent = act.Info
		return r, act, nil
	}
	r, _, err := opts.Evaluator.Score(ctx, t, pred)
	if err != nil {
		return nil, nil, err
	}
	r.Agent = act.Info
	return r, act, nil
}

// writeATIF writes an attempt's trajectory in ATIF (lib/atif) beside the raw one:
// agent/<id>/run-<k>/attempt-<n>.atif.json, with envgap's verdict in its extra. The
// built-in agents' always; a command agent's own ATIF passed through, a trajectory in a
// shape envgap reads converted, anything else one raw step marked not inspected.
func writeATIF(out string, t *schemas.Task, r *schemas.EvalResult, act *agent.Action, opts Options) error {
	a := atif.Attempt{AgentVersion: "envgap core " + r.CoreVersion, Verdict: atif.NewVerdict(r, opts.CorpusID, opts.Split)}
	scope := opts.CorpusID
	if scope == "" {
		scope = opts.Split // a run --slurm worker knows the split, not yet the corpus id
	}
	if scope == "" {
		scope = "envgap"
	}
	a.SessionID = fmt.Sprintf("%s/%s/run-%d", scope, t.InstanceID, r.Run)
	switch {
	case opts.Model != nil:
		a.AgentName, a.Model = opts.Model.Label(), opts.Model.Model.Name()
	case opts.Agent.IsBuiltin():
		a.AgentName, a.Verdict.Agent = opts.Agent.Raw, opts.Agent.Raw
		note := "envgap's noop agent changed nothing; no model ran"
		if opts.Agent.Kind == agent.KindGold {
			note = "envgap's gold agent wrote the reference fix; no model ran"
		}
		a.Entries = []any{map[string]any{"type": "note", "note": note}}
	default:
		a.AgentName, a.AgentVersion = commandName(opts.Agent.Raw), "unknown (a command agent)"
	}
	if act != nil && a.Entries == nil {
		a.Entries, a.Agent = act.Trajectory, act.ATIF
	}
	if act != nil {
		for _, c := range act.Refusals {
			a.Verdict.Refused = append(a.Verdict.Refused, atif.Refused{Host: c.Host, Port: c.Port, Count: c.Count})
		}
	}
	if r.Agent != nil {
		a.PromptTokens, a.CompletionTokens = r.Agent.InputTokens, r.Agent.OutputTokens
	}
	return saveATIF(atif.AttemptPath(out, t.InstanceID, r.Run, r.Attempt), atif.Build(a))
}

// commandName is an agent command's first word (its program).
func commandName(command string) string {
	if f := strings.Fields(command); len(f) > 0 {
		return filepath.Base(f[0])
	}
	return "agent"
}

func saveATIF(p string, doc *atif.Trajectory) error {
	b, err := atif.Marshal(doc)
	if err != nil {
		return fmt.Errorf("trajectory %s: %w", p, err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, b, 0o644)
}
