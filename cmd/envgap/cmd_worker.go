package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/harness/eval"
	"github.com/envgap/envgap/lib/jobs"
	"github.com/envgap/envgap/verify"
	"github.com/spf13/cobra"
)

type workerOptions struct {
	Work string
}

// newWorkerCommand is what each task of a --slurm job array runs.
func newWorkerCommand(f *factory) *cobra.Command {
	opts := &workerOptions{}
	c := &cobra.Command{
		Use:   "worker --work DIR",
		Short: "Take items of a --slurm run from the store until none is left (run by the job array)",
		Long: `One worker of a run started with --slurm (verify, recheck, eval, run, study run): it connects this node's
engine ($DOCKER_HOST), starts its own registry proxy whose cache is the store, claims items
of the run's work folder one at a time under a lease, does each exactly as a local run
does (the same runs, memo and verdicts in the store), and exits when every item has a
result. A worker that is killed loses nothing: its items are given back or their lease
lapses, and another worker does them again.`,
		Example: "  envgap --store /shared/envgap/store worker --work /shared/envgap/store/work/verify-20261130T220000-a1b2c3",
		Hidden:  true,
		Args:    exactArgs(0),
		RunE: func(c *cobra.Command, args []string) error {
			if opts.Work == "" {
				return usageError{fmt.Errorf("--work is required")}
			}
			return runWorker(c, f, opts)
		},
	}
	c.Flags().StringVar(&opts.Work, "work", "", "the run's work folder (under the store's work/)")
	return c
}

func runWorker(c *cobra.Command, f *factory, opts *workerOptions) error {
	if _, err := os.Stat(opts.Work); errors.Is(err, fs.ErrNotExist) {
		// The submitter removes the folder once every item has a result: a worker that
		// starts (or is requeued) after that has nothing to do.
		fmt.Fprintf(f.Err, "envgap worker: the work folder %s is gone: the run is over\n", opts.Work)
		return nil
	}
	q, err := jobs.OpenQueue(opts.Work)
	if err != nil {
		return err
	}
	plan := q.Plan()
	newWork, ok := slurmCommands[plan.Command]
	if !ok {
		return fmt.Errorf("work folder %s: this envgap does not know the command %q of the plan", opts.Work, plan.Command)
	}
	work := newWork()
	if err := json.Unmarshal(plan.Args, work); err != nil {
		return fmt.Errorf("work folder %s: the plan's arguments: %w", opts.Work, err)
	}
	owner := jobs.NewOwner(jobs.OwnerLabel(f.Getenv))
	logf := func(format string, a ...any) {
		fmt.Fprintf(f.Err, "%s envgap worker %s: %s\n", time.Now().UTC().Format(time.RFC3339), owner, fmt.Sprintf(format, a...))
	}
	do, closeFn, err := work.handler(c, f, plan.Items, logf)
	if err != nil {
		return err
	}
	defer closeFn()
	w := &jobs.Worker{Claims: q, Owner: owner, Jobs: work.workers().Jobs, Logf: logf}
	if err := w.Serve(c.Context(), do); err != nil {
		return err
	}
	logf("no work left")
	return nil
}

// openStage opens this node's engine and registry proxy for a verify-stage command.
func openStage(c *cobra.Command, f *factory, eng workerEngine, command string, items []string, logf func(string, ...any)) (*verify.Session, verify.Options, error) {
	eo := eng.engine()
	sess, vo, err := eo.open(c, f)
	if err != nil {
		return nil, vo, err
	}
	logf("engine %s, registry proxy %s; %s of %d item(s)", strings.Join(sess.Hosts(), ","), sess.ProxyURL(), command, len(items))
	vo.Progress = nil
	return sess, vo, nil
}

// verifyWork is verify --slurm: each item is a candidate, verified as a local verify does.
type verifyWork struct {
	workerEngine
	Repeat int `json:"repeat,omitempty"`
}

func (w *verifyWork) command() string       { return "verify" }
func (w *verifyWork) workers() workerEngine { return w.workerEngine }

func (w *verifyWork) handler(c *cobra.Command, f *factory, items []string, logf func(string, ...any)) (jobs.Handler, func(), error) {
	sess, vo, err := openStage(c, f, w.workerEngine, w.command(), items, logf)
	if err != nil {
		return nil, nil, err
	}
	vo.Repeat = w.Repeat
	do, err := verifyHandler(sess.Stage, items, vo)
	if err != nil {
		sess.Close()
		return nil, nil, err
	}
	return do, func() { sess.Close() }, nil
}

// recheckWork is recheck --slurm: each item is a task, rechecked on Date.
type recheckWork struct {
	workerEngine
	Date string `json:"date,omitempty"`
}

func (w *recheckWork) command() string       { return "recheck" }
func (w *recheckWork) workers() workerEngine { return w.workerEngine }

func (w *recheckWork) handler(c *cobra.Command, f *factory, items []string, logf func(string, ...any)) (jobs.Handler, func(), error) {
	sess, vo, err := openStage(c, f, w.workerEngine, w.command(), items, logf)
	if err != nil {
		return nil, nil, err
	}
	do, err := recheckHandler(sess.Stage, w.Date, vo)
	if err != nil {
		sess.Close()
		return nil, nil, err
	}
	return do, func() { sess.Close() }, nil
}

// evalWork is eval --slurm: each item is a task of the split, its prediction scored as a
// local eval does.
type evalWork struct {
	scoringWork
	Pred string `json:"pred,omitempty"`
}

func (w *evalWork) command() string { return "eval" }

// handler scores one task's prediction, as a local eval does.
func (args *evalWork) handler(c *cobra.Command, f *factory, _ []string, logf func(string, ...any)) (jobs.Handler, func(), error) {
	tasks, taskByID, err := args.tasks(f)
	if err != nil {
		return nil, nil, err
	}
	preds, builtin := eval.Builtin(args.Pred, tasks)
	if !builtin {
		if preds, err = eval.ReadPredictionsFile(args.Pred); err != nil {
			return nil, nil, err
		}
	}
	byID, err := eval.Match(tasks, preds, args.Pred)
	if err != nil {
		return nil, nil, err
	}
	ev, sess, err := args.evaluator(c, f, logf, "eval of %d task(s)", len(tasks))
	if err != nil {
		return nil, nil, err
	}
	return func(ctx context.Context, item string) (json.RawMessage, string) {
		it := evalItem{InstanceID: item}
		t, ok := taskByID[item]
		if !ok {
			it.Error = "the task is not in the split any more"
		} else {
			r, cached, err := ev.Score(ctx, t, byID[item])
			it.Result, it.Cached = r, cached
			if err != nil {
				it.Result, it.Error = nil, err.Error()
			}
		}
		b, _ := json.Marshal(it)
		return b, it.Error
	}, func() { sess.Close() }, nil
}

// verifyHandler verifies one candidate of the plan, as a local verify does.
func verifyHandler(stage *verify.Stage, items []string, vo verify.Options) (jobs.Handler, error) {
	cands, err := stage.Select(items)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]catalog.CandidateEntry, len(cands))
	for _, c := range cands {
		byID[c.InstanceID] = c
	}
	return func(ctx context.Context, item string) (json.RawMessage, string) {
		res := stage.VerifyOne(ctx, byID[item], vo)
		b, _ := json.Marshal(res)
		if res.Infra {
			return b, res.Error
		}
		return b, ""
	}, nil
}

// recheckHandler rechecks one task, as a local recheck does.
func recheckHandler(stage *verify.Stage, date string, vo verify.Options) (jobs.Handler, error) {
	refs, err := stage.RecheckTasks()
	if err != nil {
		return nil, err
	}
	byID := make(map[string]data.RefEntry, len(refs))
	for _, r := range refs {
		byID[strings.TrimPrefix(r.Name, data.RefTasks)] = r
	}
	return func(ctx context.Context, item string) (json.RawMessage, string) {
		r, ok := byID[item]
		var res verify.RecheckResult
		if !ok {
			res = verify.RecheckResult{InstanceID: item, Error: "the task is no longer in the store"}
		} else {
			res = stage.RecheckOne(ctx, r, date, vo)
		}
		b, _ := json.Marshal(res)
		return b, res.Error
	}, nil
}
