package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/envgap/envgap/harness/eval"
	"github.com/envgap/envgap/harness/tasks"
	"github.com/envgap/envgap/lib/hubfetch"
	"github.com/envgap/envgap/lib/release"
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
	// IDs and Limit select a subset of the split (marked as one in the result folder).
	IDs   []string
	Limit int
	// harness is set when --tasks was left out in a harness checkout and Tasks is its
	// own copy of the tasks.
	harness bool
}

func (o *scoringOptions) addFlags(c *cobra.Command) {
	c.Flags().StringVar(&o.Split, "split", "", "the task config to score: full, reported, repaired, lite or secure (required)")
	c.Flags().StringVar(&o.Tasks, "tasks", "", "an exported Hub folder, a task rows file (JSON Lines, e.g. the harness zip's release/tasks.jsonl), or a release on the Hub, hf://OWNER/NAME[@REVISION] (downloaded with $HF_TOKEN when set, cached by commit), to take the tasks from (default: in a harness checkout its own release/tasks.jsonl, else the store's task set)")
	c.Flags().StringVar(&o.Out, "out", "", "the result folder to write (default results/<agent>-<split>)")
	c.Flags().StringSliceVar(&o.IDs, "ids", nil, "score only these tasks of the split (comma-separated or repeated): a subset, marked as one, with its own corpus id")
	c.Flags().IntVar(&o.Limit, "limit", 0, "score only the first N tasks of the split (by instance id; after --ids): a subset, marked as one")
	c.Flags().StringVar(&o.Name, "name", "", "the agent's name in the report")
	c.Flags().IntVar(&o.Jobs, "jobs", 1, "tasks whose runs execute their steps at once, as many more made ready meanwhile")
	c.Flags().BoolVar(&o.NoSafeInstall, "no-safe-install", false, "do not ask the registries: safe install is not measured")
	o.engineOptions.addFlags(c)
	o.auditUpstreams.addFlags(c)
}

func (o *scoringOptions) check() error {
	switch {
	case o.Split == "":
		return usageError{errors.New("--split is required (full, reported, repaired, lite or secure)")}
	case o.Jobs < 1:
		return usageError{errors.New("--jobs must be at least 1")}
	case o.Limit < 0:
		return usageError{errors.New("--limit must be 0 (every task) or more")}
	}
	if err := tasks.CheckConfig(o.Split); err != nil {
		return usageError{err}
	}
	if o.Tasks == "" {
		if rows := tasks.HarnessCheckout("."); rows != "" {
			o.Tasks, o.harness = rows, true
		}
	}
	return nil
}

// fetchTasks downloads the release --tasks hf://OWNER/NAME[@REVISION] names (HF_TOKEN
// when set, HF_ENDPOINT for another Hub, ENVGAP_HUB_CACHE for another cache) unless its
// commit is cached, checks its corpus id, and points --tasks at the cached folder.
func (o *scoringOptions) fetchTasks(ctx context.Context, f *factory) error {
	if !hubfetch.IsRef(o.Tasks) {
		return nil
	}
	ref, err := hubfetch.ParseRef(o.Tasks)
	if err != nil {
		return usageError{fmt.Errorf("--tasks: %w", err)}
	}
	cache := f.Getenv(envHubCache)
	if cache == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return fmt.Errorf("--tasks %s: no cache folder (%w): set %s", ref, err, envHubCache)
		}
		cache = filepath.Join(dir, "envgap", "hub")
	}
	got, err := hubfetch.Fetch(ctx, ref, hubfetch.Options{Endpoint: f.Getenv("HF_ENDPOINT"), Token: f.Getenv("HF_TOKEN"), Cache: cache})
	var mismatch *hubfetch.CorpusError
	switch {
	case errors.As(err, &mismatch):
		return damageError{fmt.Errorf("--tasks: %w", err)}
	case err != nil:
		return fmt.Errorf("--tasks: %w", err)
	}
	how := "downloaded"
	if got.Cached {
		how = "cached"
	}
	fmt.Fprintf(f.Err, "tasks: %s: commit %s, corpus %s (%s in %s)\n", ref, got.Commit, got.CorpusID, how, got.Dir)
	o.Tasks = got.Dir
	return nil
}

// envHubCache names the folder Hub releases are cached in.
const envHubCache = "ENVGAP_HUB_CACHE"

// defaultOut sets --out to results/<agent>-<split> when it was left out, and says so on
// stderr.
func (o *scoringOptions) defaultOut(f *factory, agent string) {
	if o.Out != "" {
		return
	}
	o.Out = filepath.Join("results", outName(agent)+"-"+o.Split)
	fmt.Fprintf(f.Err, "--out not given: writing %s\n", o.Out)
}

// outName makes an agent's name a folder name: letters, digits, '-', '_' and '.' kept,
// anything else (a '/', a space) made '_'.
func outName(agent string) string {
	name := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, agent)
	if strings.Trim(name, "._") == "" {
		return "agent"
	}
	return name
}

// releaseTasks are every task where the split's tasks come from: the full config of
// --tasks, or the store's task set.
func (o *scoringOptions) releaseTasks(f *factory) ([]schemas.Task, error) {
	if o.Tasks != "" {
		return tasks.Load(o.Tasks, release.ConfigFull)
	}
	st, err := f.OpenStore()
	if err != nil {
		return nil, err
	}
	return st.Tasks()
}

// tasksWhere names where the tasks come from, for messages.
func (o *scoringOptions) tasksWhere(f *factory) string {
	switch {
	case o.harness:
		return o.Tasks + " (this harness's own copy of the release's tasks)"
	case o.Tasks != "":
		return o.Tasks
	}
	return "the store " + f.storeDir() + " (give --tasks for a release's tasks)"
}

// splitTasks returns the tasks of the split (from the exported folder, from a task rows
// file, or from the store), cut to --ids and --limit: the subset is nil when the whole
// split is taken. A split or selection with no task is an error (exit 3) naming where the
// tasks were looked for.
func (o *scoringOptions) splitTasks(f *factory) ([]schemas.Task, *schemas.EvalSubset, error) {
	var ts []schemas.Task
	if o.Tasks != "" {
		var err error
		if ts, err = tasks.Load(o.Tasks, o.Split); err != nil {
			return nil, nil, usageError{err}
		}
		if o.harness {
			fmt.Fprintf(f.Err, "tasks: %s\n", o.tasksWhere(f))
		}
	} else {
		st, err := f.OpenStore()
		if err != nil {
			return nil, nil, err
		}
		all, err := st.Tasks()
		if err != nil {
			return nil, nil, err
		}
		if ts, err = tasks.OfConfig(all, o.Split); err != nil {
			return nil, nil, err
		}
	}
	ts, sub, err := tasks.Select(ts, o.Split, o.tasksWhere(f), o.IDs, o.Limit)
	var empty *tasks.EmptyError
	switch {
	case errors.As(err, &empty):
		return nil, nil, rejectedError{err}
	case err != nil:
		return nil, nil, usageError{err}
	}
	return ts, sub, nil
}

type evalOptions struct {
	scoringOptions
	Slurm slurmOptions
	Pred  string
}

func newEvalCommand(f *factory) *cobra.Command {
	opts := &evalOptions{}
	c := &cobra.Command{
		Use:   "eval --pred FILE --split SPLIT [--out DIR]",
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
the built-in predictions (the reference fixes; no change). Tasks come from --tasks (an
exported Hub folder or a task rows file); without it, in a harness checkout (the unzipped
harness zip) from its own release/tasks.jsonl (said on stderr), else from the store's task
set. A split with no task is an error (exit 3) that names where the tasks were looked for.
--ids and --limit score a subset of the split (the predictions of its other tasks are not
needed): marked as a subset in the folder, its printout, the report and the site, with the
subset's own corpus id. --out defaults to results/<agent>-<split>. Runs and results are memoised in the store:
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
			opts.defaultOut(f, evalAgentName(opts))
			if err := opts.fetchTasks(c.Context(), f); err != nil {
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
		Tasks:    func() ([]schemas.Task, *schemas.EvalSubset, error) { return opts.splitTasks(f) },
		Pred:     opts.Pred,
		Agent:    opts.Name,
		Split:    opts.Split,
		Out:      opts.Out,
		Jobs:     opts.Jobs,
		Open:     func() (*eval.Evaluator, io.Closer, error) { return opts.evaluator(c, f) },
		Progress: evalProgress(f),
		Release:  func() ([]schemas.Task, error) { return opts.releaseTasks(f) },
	}
	if opts.Slurm.Slurm {
		o.Remote = func(_ context.Context, tasks []schemas.Task, builtin bool) (*eval.Outcome, eval.Store, error) {
			return runEvalSlurm(c, f, opts, tasks, builtin)
		}
	}
	sc, err := eval.Run(c.Context(), o)
	return printScored(f, opts.Out, sc, err)
}

// evalAgentName is the agent's name in eval's default result folder: --name, or what
// eval.Run names it after (the predictions file's name, gold or noop).
func evalAgentName(opts *evalOptions) string {
	if opts.Name != "" {
		return opts.Name
	}
	return eval.AgentName(opts.Pred)
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
	if err := f.output(sum, func(w io.Writer) {
		fmt.Fprintf(w, "%s on %s (%d tasks, corpus %s): %d scored, %d excluded (listed, not scored); resolved %d, unresolved %d, rejected %d, leaked %d; %d trajectories not inspected\n",
			sum.Agent, sum.Split, sum.Tasks, sum.CorpusID, sum.Scored, len(sum.ExcludedIDs), len(sum.ResolvedIDs), len(sum.UnresolvedIDs), len(sum.RejectedIDs), len(sum.LeakedIDs), len(sum.NotInspectedIDs))
		if sc.SetAside > 0 {
			fmt.Fprintf(w, "%d prediction(s) of the release's tasks outside split %s set aside, not scored\n", sc.SetAside, sum.Split)
		}
		if sum.Subset != nil {
			fmt.Fprintf(w, "SUBSET, not a leaderboard entry (%s): corpus %s is the subset's own\n", sum.Subset.Label(sum.Tasks), sum.CorpusID)
		}
		fmt.Fprintf(w, "%d scored now, %d reused from the store; results in %s (envgap report %s)\n", sum.Ran, sum.Reused, dir, dir)
		for _, x := range sum.Faults {
			fmt.Fprintf(w, "  %s: no result: %s\n", x.InstanceID, x.Error)
		}
		if ids, reason := eval.SafeInstallNotMeasured(sc.Results); len(ids) > 0 {
			fmt.Fprintf(w, "safe install not measured for %d task(s) (%s): %s\n", len(ids), strings.Join(ids, ", "), reason)
		}
	}); err != nil {
		return err
	}
	if err != nil {
		return err
	}
	if len(sum.Faults) > 0 {
		return partialError{fmt.Errorf("%d task(s) have no result because of faults; run the same command again to retry them", len(sum.Faults))}
	}
	return nil
}
