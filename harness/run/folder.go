package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/envgap/envgap/harness/eval"
	"github.com/envgap/envgap/lib/agent"
	"github.com/envgap/envgap/schemas"
)

// FolderOptions configure Folder (envgap run --agent). Tasks and Open are required.
type FolderOptions struct {
	// Tasks returns the tasks of the split (the store's task set, a Hub folder's or a task
	// rows file's), read first.
	// The subset is nil when the whole split is taken (eval.RunOptions.Tasks).
	Tasks func() ([]schemas.Task, *schemas.EvalSubset, error)
	// Release, when set, returns every task of the release the split was taken from: the
	// result folder's corpus id is the release's unless a subset was taken
	// (eval.RunOptions.Release).
	Release func() ([]schemas.Task, error)
	// Agent is noop, gold, or a shell command run with sh -c in the workspace (Options).
	Agent agent.Spec
	// Model, when set, returns envgap's own model agent (nil when Agent names none);
	// called once the tasks are read.
	Model func(context.Context) (*agent.ModelAgent, error)
	// Contained, when set, returns how the agent command runs in a box (--agent-image;
	// nil: on this host) for the tasks; called once Open has opened, with what checks
	// the agent's images: the evaluator's runner, or nil when it cannot.
	Contained func(ctx context.Context, tasks []schemas.Task, checker agent.ImageChecker) (*agent.Contained, error)
	// Name names the agent in the summary; "" names it after the command's first word.
	Name  string
	Split string
	// K, MaxAttempts, AttemptTimeout, Materialize, ReproCommand and Jobs are as in Options.
	K              int
	MaxAttempts    int
	AttemptTimeout time.Duration
	Materialize    agent.MaterializeFunc
	ReproCommand   string
	Jobs           int
	// WorkDir holds the run directories (empty: a temporary directory, removed at the end).
	WorkDir string
	// Out is the result folder; the complete runs of an earlier run into it with the same
	// agent and settings are kept (Kept).
	Out string
	// Open opens the evaluator (the engines, the registry proxy, the safe-install check)
	// and what closes it. Not called when Remote runs.
	Open func() (*eval.Evaluator, io.Closer, error)
	// Remote, when set, runs the agent elsewhere (envgap run --slurm: a job array), given
	// the tasks and the summary's header; it returns the outcome and each task's log. An
	// error writes no result folder.
	Remote   func(ctx context.Context, tasks []schemas.Task, meta schemas.EvalSummary) (*eval.Outcome, map[string][]byte, error)
	Progress func(id string, run int, attempt int, r *schemas.EvalResult, err error)
}

// Folder is envgap run --agent: it reads the tasks, runs the agent on each K times (Run)
// and writes the result folder (eval's WriteResults, with each task's log of attempts).
// A nil *eval.Scored means no folder was written (the error says why; a *FolderError
// when Out holds what this run cannot continue); otherwise the error is the run's own
// (cancelled), the faults are in the summary.
func Folder(ctx context.Context, o FolderOptions) (*eval.Scored, error) {
	tasks, subset, err := o.Tasks()
	if err != nil {
		return nil, err
	}
	var ma *agent.ModelAgent
	if o.Model != nil {
		if ma, err = o.Model(ctx); err != nil {
			return nil, err
		}
	}
	name, command := o.Name, o.Agent.Raw
	if ma != nil {
		command = ma.Label()
	}
	if name == "" {
		name = filepath.Base(strings.Fields(command)[0])
	}
	meta := schemas.EvalSummary{Agent: name, Split: o.Split, Mode: schemas.ModeRun, K: o.K, MaxAttempts: o.MaxAttempts, Subset: subset,
		AttemptTimeoutS: int64(o.AttemptTimeout / time.Second)}
	if o.Release != nil && subset == nil {
		all, err := o.Release()
		if err != nil {
			return nil, err
		}
		if meta.CorpusID, err = eval.ReleaseCorpusID(all); err != nil {
			return nil, err
		}
	}
	done, err := Kept(o.Out, meta, command)
	if err != nil {
		return nil, err
	}
	if o.Remote != nil {
		out, logs, err := o.Remote(ctx, tasks, meta)
		if out == nil || err != nil {
			return nil, err
		}
		return (&eval.Evaluator{}).WriteResults(o.Out, meta, tasks, out, nonNil(logs))
	}
	ev, closer, err := o.Open()
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	var contained *agent.Contained
	if o.Contained != nil {
		checker, _ := ev.Runner.(agent.ImageChecker)
		if contained, err = o.Contained(ctx, tasks, checker); err != nil {
			return nil, err
		}
	}
	work := o.WorkDir
	if work == "" {
		if work, err = os.MkdirTemp("", "envgap-run-*"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(work)
	}
	out, runErr := Run(ctx, tasks, Options{
		Evaluator: ev, Materialize: o.Materialize, Agent: o.Agent, Model: ma, Contained: contained, K: o.K,
		MaxAttempts: o.MaxAttempts, AttemptTimeout: o.AttemptTimeout, WorkDir: work, OutDir: o.Out,
		ReproCommand: o.ReproCommand, Jobs: o.Jobs, Done: done, Progress: o.Progress, CorpusID: meta.CorpusID, Split: o.Split,
	})
	if out == nil {
		return nil, runErr
	}
	res := &eval.Outcome{Results: out.Results, Faults: out.Faults, Ran: out.Ran, Reused: out.Kept}
	sc, err := ev.WriteResults(o.Out, meta, tasks, res, nonNil(out.Logs))
	if err != nil {
		return nil, err
	}
	return sc, runErr
}

// nonNil returns logs, or no logs (never made from the results: a run's log is its own).
func nonNil(logs map[string][]byte) map[string][]byte {
	if logs == nil {
		return map[string][]byte{}
	}
	return logs
}

// FolderError is a result folder a run cannot write into: unreadable, or holding the
// results of another run (give a new folder).
type FolderError struct{ Err error }

func (e *FolderError) Error() string { return e.Err.Error() }
func (e *FolderError) Unwrap() error { return e.Err }

// Kept returns the complete runs of an earlier envgap run into the same folder with the
// same agent and settings (resolved, or every attempt made), for Options.Done; nil when
// the folder holds no results yet. command is the agent's command (a model agent's
// label).
func Kept(dir string, meta schemas.EvalSummary, command string) (func(string, int) []schemas.EvalResult, error) {
	if _, err := os.Stat(filepath.Join(dir, schemas.EvalSummaryFile)); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	prev, err := eval.ReadFolder(dir)
	if err != nil {
		return nil, &FolderError{fmt.Errorf("--out %s: %w (give a new folder)", dir, err)}
	}
	s := prev.Summary
	if s.Mode != schemas.ModeRun || s.Agent != meta.Agent || s.Split != meta.Split || s.MaxAttempts != meta.MaxAttempts {
		return nil, &FolderError{fmt.Errorf("--out %s holds results of another run (%s %s on %s); give a new folder", dir, s.Mode, s.Agent, s.Split)}
	}
	byRun := map[string][]schemas.EvalResult{}
	for _, r := range prev.Results {
		if r.Agent != nil && r.Agent.Command != command {
			continue
		}
		key := fmt.Sprintf("%s\x00%d", r.InstanceID, r.Run)
		byRun[key] = append(byRun[key], r)
	}
	return func(id string, k int) []schemas.EvalResult {
		rs := byRun[fmt.Sprintf("%s\x00%d", id, k)]
		if len(rs) == 0 {
			return nil
		}
		last := rs[len(rs)-1]
		if last.Resolved || len(rs) == meta.MaxAttempts {
			return rs
		}
		return nil
	}, nil
}
