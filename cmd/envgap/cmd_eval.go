package main

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

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
	tasks, err := opts.splitTasks(f)
	if err != nil {
		return err
	}
	preds, builtin := eval.Builtin(opts.Pred, tasks)
	name := opts.Name
	if !builtin {
		if preds, err = eval.ReadPredictionsFile(opts.Pred); err != nil {
			return err
		}
		if name == "" {
			name = strings.TrimSuffix(filepath.Base(opts.Pred), filepath.Ext(opts.Pred))
		}
	} else if name == "" {
		name = opts.Pred
	}
	byID, err := eval.Match(tasks, preds, opts.Pred)
	if err != nil {
		return err
	}
	meta := schemas.EvalSummary{Agent: name, Split: opts.Split, Mode: schemas.ModeEval, K: 1, MaxAttempts: 1}
	if opts.Slurm.Slurm {
		return runEvalSlurm(c, f, opts, tasks, builtin, meta)
	}
	ev, sess, err := opts.evaluator(c, f)
	if err != nil {
		return err
	}
	defer sess.Close()
	out, runErr := ev.Eval(c.Context(), tasks, byID, opts.Jobs, evalProgress(f))
	if out == nil {
		return runErr
	}
	return finishScoring(f, ev, scored{dir: opts.Out, meta: meta, tasks: tasks, out: out}, runErr)
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

// scored is a finished scoring run: the result folder to write, the summary's header,
// the tasks, the outcome and the log of each task (nil: made from the results).
type scored struct {
	dir   string
	meta  schemas.EvalSummary
	tasks []schemas.Task
	out   *eval.Outcome
	logs  map[string][]byte
}

// finishScoring writes the result folder of a scoring run (with a log per task made from
// the results unless given) and prints its summary; runErr is the run's own error.
func finishScoring(f *factory, ev *eval.Evaluator, sc scored, runErr error) error {
	if sc.logs == nil {
		logs, err := scoringLogs(ev, sc.tasks, sc.out)
		if err != nil {
			return err
		}
		sc.logs = logs
	}
	return writeScoring(f, sc, runErr)
}

// scoringLogs makes the log of each task from its results.
func scoringLogs(ev *eval.Evaluator, tasks []schemas.Task, out *eval.Outcome) (map[string][]byte, error) {
	byID := make(map[string]*schemas.Task, len(tasks))
	for i := range tasks {
		byID[tasks[i].InstanceID] = &tasks[i]
	}
	eval.SortResults(out.Results)
	logs := map[string][]byte{}
	bufs := map[string]*bytes.Buffer{}
	for i := range out.Results {
		r := &out.Results[i]
		b := bufs[r.InstanceID]
		if b == nil {
			b = &bytes.Buffer{}
			bufs[r.InstanceID] = b
		} else {
			b.WriteString("\n")
		}
		if err := ev.WriteLog(b, byID[r.InstanceID], r); err != nil {
			return nil, err
		}
	}
	for id, b := range bufs {
		logs[id] = b.Bytes()
	}
	return logs, nil
}

// writeScoring writes the result folder and prints its summary.
func writeScoring(f *factory, sc scored, runErr error) error {
	dir, meta, tasks, out, logs := sc.dir, sc.meta, sc.tasks, sc.out, sc.logs
	eval.SortResults(out.Results)
	sum := eval.Summarize(meta, tasks, out.Results, out.Faults)
	sum.Ran, sum.Reused = out.Ran, out.Reused
	sum.ScoredOn = time.Now().UTC().Format(time.DateOnly)
	if err := eval.WriteFolder(dir, sum, out.Results, logs); err != nil {
		return err
	}
	if f.Global.JSON {
		if err := f.printJSON(sum); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(f.Out, "%s on %s (%d tasks, corpus %s): %d scored, %d excluded (listed, not scored); resolved %d, unresolved %d, rejected %d, leaked %d; %d trajectories not inspected\n",
			sum.Agent, sum.Split, sum.Tasks, sum.CorpusID, sum.Scored, len(sum.ExcludedIDs), len(sum.ResolvedIDs), len(sum.UnresolvedIDs), len(sum.RejectedIDs), len(sum.LeakedIDs), len(sum.NotInspectedIDs))
		fmt.Fprintf(f.Out, "%d scored now, %d reused from the store; results in %s (envgap report %s)\n", out.Ran, out.Reused, dir, dir)
		for _, x := range sum.Faults {
			fmt.Fprintf(f.Out, "  %s: no result: %s\n", x.InstanceID, x.Error)
		}
		if ids, reason := eval.SafeInstallNotMeasured(out.Results); len(ids) > 0 {
			fmt.Fprintf(f.Out, "safe install not measured for %d task(s) (%s): %s\n", len(ids), strings.Join(ids, ", "), reason)
		}
	}
	if runErr != nil {
		return runErr
	}
	if len(sum.Faults) > 0 {
		return partialError{fmt.Errorf("%d task(s) have no result because of faults; run the same command again to retry them", len(sum.Faults))}
	}
	return nil
}
