package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

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
			return f.run(c, opts, func() error { return runWorker(c, f, opts) })
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
	work, err := slurmKinds.Decode(q.Plan())
	if err != nil {
		return fmt.Errorf("work folder %s: %w", opts.Work, err)
	}
	owner := jobs.NewOwner(jobs.OwnerLabel(f.Getenv))
	logf := func(format string, a ...any) {
		fmt.Fprintf(f.Err, "%s envgap worker %s: %s\n", time.Now().UTC().Format(time.RFC3339), owner, fmt.Sprintf(format, a...))
	}
	do, closeFn, err := work.Open(c.Context(), &workerEnv{c: c, f: f}, q.Plan().Items, logf)
	if err != nil {
		return err
	}
	defer closeFn()
	w := &jobs.Worker{Claims: q, Owner: owner, Jobs: work.ItemsAtOnce(), Logf: logf}
	if err := w.Serve(c.Context(), do); err != nil {
		return err
	}
	logf("no work left")
	return nil
}

// workerEnv is what every kind of work opens what it needs with on a worker: the
// command line (its context, flags and store).
type workerEnv struct {
	c *cobra.Command
	f *factory
}

// openStage opens this node's engine and registry proxy for a verify-stage command.
func openStage(env *workerEnv, eng workerEngine, command string, items []string, logf func(string, ...any)) (*verify.Session, verify.Options, error) {
	eo := eng.engine()
	sess, vo, err := eo.open(env.c, env.f)
	if err != nil {
		return nil, vo, err
	}
	logf("engine %s, registry proxy %s; %s of %d item(s)", strings.Join(sess.Hosts(), ","), sess.ProxyURL(), command, len(items))
	vo.Progress = nil
	return sess, vo, nil
}

// verifyWork is verify --slurm: each item is a candidate, verified as a local verify does
// (verify.Stage.VerifyHandler).
type verifyWork struct {
	workerEngine
	Repeat int `json:"repeat,omitempty"`
}

func (w *verifyWork) Command() string { return "verify" }

func (w *verifyWork) Open(_ context.Context, env *workerEnv, items []string, logf func(string, ...any)) (jobs.Handler, func(), error) {
	sess, vo, err := openStage(env, w.workerEngine, w.Command(), items, logf)
	if err != nil {
		return nil, nil, err
	}
	vo.Repeat = w.Repeat
	do, err := sess.Stage.VerifyHandler(items, vo)
	if err != nil {
		sess.Close()
		return nil, nil, err
	}
	return do, func() { sess.Close() }, nil
}

// recheckWork is recheck --slurm: each item is a task, rechecked on Date
// (verify.Stage.RecheckHandler).
type recheckWork struct {
	workerEngine
	Date string `json:"date,omitempty"`
}

func (w *recheckWork) Command() string { return "recheck" }

func (w *recheckWork) Open(_ context.Context, env *workerEnv, items []string, logf func(string, ...any)) (jobs.Handler, func(), error) {
	sess, vo, err := openStage(env, w.workerEngine, w.Command(), items, logf)
	if err != nil {
		return nil, nil, err
	}
	do, err := sess.Stage.RecheckHandler(w.Date, vo)
	if err != nil {
		sess.Close()
		return nil, nil, err
	}
	return do, func() { sess.Close() }, nil
}

// evalWork is eval --slurm: each item is a task of the split, its prediction scored as a
// local eval does (eval.ItemHandler).
type evalWork struct {
	scoringWork
	Pred string `json:"pred,omitempty"`
}

func (w *evalWork) Command() string { return "eval" }

func (args *evalWork) Open(_ context.Context, env *workerEnv, _ []string, logf func(string, ...any)) (jobs.Handler, func(), error) {
	tasks, taskByID, err := args.tasks(env.f)
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
	ev, sess, err := args.evaluator(env.c, env.f, logf, "eval of %d task(s)", len(tasks))
	if err != nil {
		return nil, nil, err
	}
	return eval.ItemHandler(ev, taskByID, byID), func() { sess.Close() }, nil
}
