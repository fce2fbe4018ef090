package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/envgap/envgap/harness/eval"
	"github.com/envgap/envgap/harness/tasks"
	"github.com/envgap/envgap/schemas"
	"github.com/spf13/cobra"
)

// scoringOptions are the flags eval and run share: where tasks come from, where results
// go, and what the safe-install share asks.
type scoringOptions struct {
	engineOptions
	auditUpstreams
	Split         string
	Tasks         string
	Out           string
	Name          string
	Jobs          int
	NoSafeInstall bool
}

func (o *scoringOptions) addFlags(c *cobra.Command) {
	c.Flags().StringVar(&o.Split, "split", "", "the task config to score: full, reported, repaired, lite or secure (required)")
	c.Flags().StringVar(&o.Tasks, "tasks", "", "an exported Hub folder, or a task rows file (JSON Lines, e.g. the harness zip's release/tasks.jsonl), to take the tasks from (default: the store's task set)")
	c.Flags().StringVar(&o.Out, "out", "", "the result folder to write (required)")
	c.Flags().StringVar(&o.Name, "name", "", "the agent's name in the report")
	c.Flags().IntVar(&o.Jobs, "jobs", 1, "tasks scored at once")
	c.Flags().BoolVar(&o.NoSafeInstall, "no-safe-install", false, "do not ask the registries: safe install is not measured")
	o.engineOptions.addFlags(c)
	o.auditUpstreams.addFlags(c)
}

func (o *scoringOptions) check() error {
	switch {
	case o.Split == "":
		return usageError{errors.New("--split is required (full, reported, repaired, lite or secure)")}
	case o.Out == "":
		return usageError{errors.New("--out DIR is required")}
	case o.Jobs < 1:
		return usageError{errors.New("--jobs must be at least 1")}
	}
	if err := tasks.CheckConfig(o.Split); err != nil {
		return usageError{err}
	}
	return nil
}

// splitTasks returns the tasks of the split: from the exported folder, from a task rows
// file, or from the store.
func (o *scoringOptions) splitTasks(f *factory) ([]schemas.Task, error) {
	if o.Tasks != "" {
		ts, err := tasks.Load(o.Tasks, o.Split)
		if err != nil {
			return nil, usageError{err}
		}
		return ts, nil
	}
	st, err := f.OpenStore()
	if err != nil {
		return nil, err
	}
	all, err := st.Tasks()
	if err != nil {
		return nil, err
	}
	return tasks.OfConfig(all, o.Split)
}

type evalOptions struct {
	scoringOptions
	Slurm slurmOptions
	Pred  string
}

func newEvalCommand(f *factory) *cobra.Command {
	opts := &evalOptions{}
	c := &cobra.Command{
		Use:   "eval --pred FILE --split SPLIT --out DIR",
		Short: "Score agent predictions on the evaluation core",
		Long: `Score predictions (JSON Lines, one a task: {"instance_id", "files": {path: new content or
null}, "trajectory": [...], "cost_usd"}) as the dataset card says. Each prediction's files
are applied to the project at base_commit and the project runs in a fresh container with the
registries cut back to the task's registry_date: resolved means resolve_command and
run_command both exit 0. A file that is not an environment file rejects the prediction, and a
trajectory that read the later history (docs/scoring.md) scores it unresolved.
Manifest F1 and safe install come with it.

Every task of the split needs a prediction, excluded ones too; missing, unknown or repeated
ids and malformed lines are listed and nothing runs (exit 3). --pred gold and --pred noop are
the built-in predictions (the reference fixes; no change). Tasks come from the store's task
set, or from an exported Hub folder with --tasks. Runs and results are memoised in the store:
evaluating the same prediction again runs no container. An infrastructure fault leaves its
task without a result (listed, exit 4); the next eval retries it.

The result folder holds results.jsonl (one result a task), summary.json and logs/<id>.log.`,
		Example: "  envgap eval --pred predictions.jsonl --split reported --out results/my-agent-reported\n  envgap eval --pred gold --split full --tasks hub/ --out results/gold\n  envgap --store /shared/envgap/store eval --pred /shared/preds.jsonl --split full --out results/agent --slurm --workers 8",
		Args:    func(c *cobra.Command, args []string) error { return opts.Slurm.args(c, args) },
		RunE: func(c *cobra.Command, args []string) error {
			if opts.Pred == "" {
				return usageError{errors.New("--pred is required (a predictions file, gold or noop)")}
			}
			if err := opts.check(); err != nil {
				return err
			}
			if err := opts.Slurm.check(c, f, &opts.engineOptions); err != nil {
				return err
			}
			return f.run(c, opts, func() error { return runEval(c, f, opts) })
		},
	}
	c.Flags().StringVar(&opts.Pred, "pred", "", "predictions file (JSON Lines), or gold / noop")
	opts.addFlags(c)
	opts.Slurm.addFlags(c)
	return c
}

func runEval(c *cobra.Command, f *factory, opts *evalOptions) error {
	o := eval.RunOptions{
		Tasks:    func() ([]schemas.Task, error) { return opts.splitTasks(f) },
		Pred:     opts.Pred,
		Agent:    opts.Name,
		Split:    opts.Split,
		Out:      opts.Out,
		Jobs:     opts.Jobs,
		Open:     func() (*eval.Evaluator, io.Closer, error) { return opts.evaluator(c, f) },
		Progress: evalProgress(f),
	}
	if opts.Slurm.Slurm {
		o.Remote = func(_ context.Context, tasks []schemas.Task, builtin bool) (*eval.Outcome, eval.Store, error) {
			return runEvalSlurm(c, f, opts, tasks, builtin)
		}
	}
	sc, err := eval.Run(c.Context(), o)
	return printScored(f, opts.Out, sc, err)
}

// evalProgress shows the progress of a scoring run, a task at a time.
func evalProgress(f *factory) func(eval.Event) {
	p := f.newProgress()
	return func(e eval.Event) {
		switch {
		case e.Err != nil:
			p.step(e.Done, e.Total, e.InstanceID, "no result", e.Err.Error())
		case e.Result != nil:
			how := "scored"
			if e.Cached {
				how = "reused"
			}
			p.step(e.Done, e.Total, e.InstanceID, fmt.Sprintf("%s (%s)", e.Result.Status, how), "")
		}
	}
}

// printScored prints the summary of a result folder written (sc nil: none was; err is
// returned) and returns the run's own error err, or a partial error when tasks have no
// result because of faults.
func printScored(f *factory, dir string, sc *eval.Scored, err error) error {
	if sc == nil {
		return err
	}
	sum := sc.Summary
	if f.Global.JSON {
		if err := f.printJSON(sum); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(f.Out, "%s on %s (%d tasks, corpus %s): %d scored, %d excluded (listed, not scored); resolved %d, unresolved %d, rejected %d, leaked %d; %d trajectories not inspected\n",
			sum.Agent, sum.Split, sum.Tasks, sum.CorpusID, sum.Scored, len(sum.ExcludedIDs), len(sum.ResolvedIDs), len(sum.UnresolvedIDs), len(sum.RejectedIDs), len(sum.LeakedIDs), len(sum.NotInspectedIDs))
		fmt.Fprintf(f.Out, "%d scored now, %d reused from the store; results in %s (envgap report %s)\n", sum.Ran, sum.Reused, dir, dir)
		for _, x := range sum.Faults {
			fmt.Fprintf(f.Out, "  %s: no result: %s\n", x.InstanceID, x.Error)
		}
		if ids, reason := eval.SafeInstallNotMeasured(sc.Results); len(ids) > 0 {
			fmt.Fprintf(f.Out, "safe install not measured for %d task(s) (%s): %s\n", len(ids), strings.Join(ids, ", "), reason)
		}
	}
	if err != nil {
		return err
	}
	if len(sum.Faults) > 0 {
		return partialError{fmt.Errorf("%d task(s) have no result because of faults; run the same command again to retry them", len(sum.Faults))}
	}
	return nil
}
