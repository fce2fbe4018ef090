package agent

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/envgap/envgap/lib/agent/model"
	"github.com/envgap/envgap/schemas"
	"github.com/envgap/envgap/verify/eval"
	"github.com/sourcegraph/conc/pool"
)

// The built-in agents, for checking the benchmark itself.
const (
	AgentNoop = "noop" // changes nothing
	AgentGold = "gold" // writes the reference fix
)

// Options configures a run of an agent over tasks.
type Options struct {
	Evaluator   *eval.Evaluator
	Materialize MaterializeFunc
	// Agent is noop, gold, or a shell command run with sh -c in the workspace; unused
	// when Builtin is set.
	Agent string
	// Builtin is envgap's own model agent (run --agent openai|bedrock), acting in a box.
	Builtin *Builtin
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
	// giveUp holds a provider fault that no other task can escape (credentials, unknown
	// model): the tasks not yet started get it as their fault, without a box.
	var giveUp atomic.Value
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
					if stop, _ := giveUp.Load().(*ProviderError); stop != nil {
						err = stop // the provider refused the credentials or the model: the same for every task
					} else {
						rs, err = runOne(ctx, t, k, opts, &log)
						var pe *ProviderError
						if errors.As(err, &pe) {
							if k, _ := model.KindOf(pe.Err); k == model.Auth || k == model.UnknownModel {
								giveUp.CompareAndSwap(nil, pe)
							}
						}
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
	ws, err := Prepare(ctx, t, runDir, opts.Materialize)
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
	var extra []string
	if opts.ReproCommand != "" && opts.Builtin == nil && opts.Agent != AgentNoop && opts.Agent != AgentGold {
		srv, err := StartRepro(ctx, ws, opts.Evaluator)
		if err != nil {
			return nil, err
		}
		defer srv.Close()
		if extra, err = srv.Env(opts.ReproCommand); err != nil {
			return nil, err
		}
	}
	var results []schemas.EvalResult
	for n := 1; n <= opts.MaxAttempts; n++ {
		r, err := attempt(ctx, ws, n, opts, extra, keep)
		if err != nil {
			return nil, err
		}
		r.Run, r.Attempt = k, n
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
			fmt.Fprintf(log, "agent: %q exited %d after %s (timed out: %v); output kept in %s\n",
				r.Agent.Command, r.Agent.ExitCode, time.Duration(r.Agent.DurationMS)*time.Millisecond, r.Agent.TimedOut, keep)
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
		if err := writeFile(ws.FeedbackFile(), fb.Bytes()); err != nil {
			return nil, err
		}
	}
	return results, nil
}

// attempt runs the agent once and scores the workspace.
func attempt(ctx context.Context, ws *Workspace, n int, opts Options, extra []string, keep string) (*schemas.EvalResult, error) {
	t := ws.Task
	feedback := ""
	if n > 1 {
		feedback = ws.FeedbackFile()
	}
	var act *Action
	switch {
	case opts.Builtin != nil:
		var err error
		if act, err = actBuiltin(ctx, ws, n, opts, filepath.Join(keep, "attempt-"+strconv.Itoa(n))); err != nil {
			return nil, err
		}
	case opts.Agent == AgentNoop || opts.Agent == AgentGold:
		if opts.Agent == AgentGold {
			if err := ws.Apply(t.GoldFiles); err != nil {
				return nil, err
			}
		}
		act = &Action{}
		files, err := ws.Files()
		if errors.Is(err, ErrRefused) {
			act.Refused = err.Error()
		} else if err != nil {
			return nil, err
		}
		act.Files = files
	default:
		env := append([]string{EnvAttempt + "=" + strconv.Itoa(n), EnvMaxAttempts + "=" + strconv.Itoa(opts.MaxAttempts),
			EnvFeedbackFile + "=" + feedback}, extra...)
		var err error
		if act, err = Act(ctx, ws, opts.Agent, env, opts.AttemptTimeout, filepath.Join(keep, "attempt-"+strconv.Itoa(n))); err != nil {
			return nil, err
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
		return r, nil
	}
	r, _, err := opts.Evaluator.Score(ctx, t, pred)
	if err != nil {
		return nil, err
	}
	r.Agent = act.Info
	return r, nil
}

// Action is what one run of an agent command did to its workspace.
type Action struct {
	// Files is the workspace's changes as a files object (nil when refused before they
	// could be read).
	Files      map[string]*string
	Trajectory []any
	CostUSD    *float64
	// Info is how the command ran (nil for the built-in agents).
	Info *schemas.AgentAttempt
	// Refused says why the changes cannot be used (the agent's fault): it timed out,
	// removed its workspace, wrote outside it, or left something that is not a text file.
	// Empty when they can.
	Refused string
}

// Act runs an agent command once in a prepared workspace, with the protocol's
// environment (task file, workspace, trajectory and cost files, HOME) plus extra, and
// reads back what it did. The command's output, trajectory and cost are kept at keep
// (a path prefix: keep.stdout, keep.stderr, keep.trajectory). writable are further
// files of the run directory the agent may write (besides the trajectory and cost
// files). run --agent and propose both call it; an error is a fault of the harness,
// never the agent's.
func Act(ctx context.Context, ws *Workspace, command string, extra []string, timeout time.Duration, keep string, writable ...string) (*Action, error) {
	os.Remove(ws.CostFile())
	before, err := runDirState(ws)
	if err != nil {
		return nil, err
	}
	env := append([]string{
		EnvTaskFile + "=" + ws.TaskFile(), EnvWorkspace + "=" + ws.Dir,
		EnvTrajectoryFile + "=" + ws.TrajectoryFile(), EnvCostFile + "=" + ws.CostFile(),
		"HOME=" + ws.Home(), "TMPDIR=" + ws.Home(),
	}, extra...)
	res, err := RunCommand(ctx, command, ws.Dir, env, timeout)
	if err != nil {
		return nil, err
	}
	act := &Action{Info: &schemas.AgentAttempt{Command: command, ExitCode: res.ExitCode, TimedOut: res.TimedOut,
		DurationMS: res.Duration.Milliseconds(), StdoutSize: res.StdoutSize, StderrSize: res.StderrSize}}
	if err := os.MkdirAll(filepath.Dir(keep), 0o755); err != nil {
		return nil, err
	}
	if err := writeFile(keep+".stdout", res.Stdout); err != nil {
		return nil, err
	}
	if err := writeFile(keep+".stderr", res.Stderr); err != nil {
		return nil, err
	}
	act.Trajectory, act.CostUSD = readState(ws, keep)
	if _, err := os.Stat(ws.Dir); err != nil {
		act.Refused = "the agent removed its workspace"
		return act, nil
	}
	if res.TimedOut {
		if files, err := ws.Files(); err == nil {
			act.Files = files
		}
		act.Refused = fmt.Sprintf("the agent did not finish within %s and was stopped (its process group killed); the attempt is not evaluated", timeout)
		return act, nil
	}
	if outside := changedOutside(ws, before, writable...); outside != "" {
		act.Refused = "the agent wrote outside its workspace: " + outside
		return act, nil
	}
	files, err := ws.Files()
	if errors.Is(err, ErrRefused) {
		act.Refused = err.Error()
		return act, nil
	} else if err != nil {
		return nil, err
	}
	act.Files = files
	return act, nil
}

// runDirState hashes every file of the run directory outside the workspace and HOME.
func runDirState(ws *Workspace) (map[string][32]byte, error) {
	state := map[string][32]byte{}
	err := filepath.WalkDir(ws.RunDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (p == ws.Dir || p == ws.Home()) {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			b = []byte("unreadable: " + err.Error())
		}
		state[p] = sha256.Sum256(b)
		return nil
	})
	return state, err
}

// changedOutside returns a path of the run directory, outside the workspace and HOME,
// that the agent created, changed or removed (the trajectory and cost files excepted),
// or "".
func changedOutside(ws *Workspace, before map[string][32]byte, writable ...string) string {
	after, err := runDirState(ws)
	if err != nil {
		return ws.RunDir + " (" + err.Error() + ")"
	}
	allowed := map[string]bool{ws.TrajectoryFile(): true, ws.CostFile(): true}
	for _, p := range writable {
		allowed[p] = true
	}
	var paths []string
	for p, h := range after {
		if b, ok := before[p]; (!ok || b != h) && !allowed[p] {
			paths = append(paths, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok && !allowed[p] {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	if len(paths) == 0 {
		return ""
	}
	return paths[0]
}

// readState reads the trajectory and cost the agent may have written, and keeps copies
// in keep. A trajectory is a JSON array, or JSON Lines (one entry a line); anything else
// is kept whole as one string entry (which the later-history rules do not inspect).
func readState(ws *Workspace, keep string) ([]any, *float64) {
	var traj []any
	if b, err := readCapped(ws.TrajectoryFile(), maxStateBytes); err == nil && len(bytes.TrimSpace(b)) > 0 {
		writeFile(keep+".trajectory", b)
		if json.Unmarshal(b, &traj) != nil {
			traj = nil
			sc := bufio.NewScanner(bytes.NewReader(b))
			sc.Buffer(nil, maxStateBytes)
			ok := true
			for sc.Scan() {
				if len(bytes.TrimSpace(sc.Bytes())) == 0 {
					continue
				}
				var v any
				if json.Unmarshal(sc.Bytes(), &v) != nil {
					ok = false
					break
				}
				traj = append(traj, v)
			}
			if !ok {
				traj = []any{string(b)}
			}
		}
	}
	var cost *float64
	if b, err := readCapped(ws.CostFile(), 4096); err == nil {
		if c, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64); err == nil && c >= 0 {
			cost = &c
		}
	}
	return traj, cost
}

func readCapped(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}

func writeFile(path string, b []byte) error {
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("run directory: %w", err)
	}
	return nil
}
