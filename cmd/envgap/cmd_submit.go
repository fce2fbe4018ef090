package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/envgap/envgap/harness/submit"
	"github.com/envgap/envgap/harness/tasks"
	"github.com/spf13/cobra"
)

func newSubmitCommand(f *factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "submit",
		Short: "Make a leaderboard submission (prepare) and check that one is a fair entry (check)",
		Long: `A submission is a bundle: the result folders of envgap run (or eval), one a split, with every
attempt's prediction and trajectory, and a metadata.yaml saying who made the agent and how it
was run. envgap submit prepare writes one; envgap submit check says, one line a check,
whether a bundle is a fair leaderboard entry. See docs/submit.md.`,
	}
	c.AddCommand(newSubmitPrepareCommand(f), newSubmitCheckCommand(f))
	return c
}

type submitPrepareOptions struct {
	Meta string
	Out  string
}

func newSubmitPrepareCommand(f *factory) *cobra.Command {
	opts := &submitPrepareOptions{}
	c := &cobra.Command{
		Use:   "prepare RESULTS... --meta FILE --out BUNDLE",
		Short: "Write a submission bundle from result folders",
		Long: `Write a bundle from result folders of envgap run or envgap eval (one a split, the same corpus and
setting): each folder copied whole (results.jsonl, summary.json, logs, the agent's output and
its trajectories, ATIF and raw), the prediction of every attempt taken from the store that
scored it (--store) into the folder's predictions.jsonl, and metadata.yaml: the meta file's
agent name and version, models, organisation and open-source flags, with the setting (k,
attempts, attempt timeout), the corpus id and the date read from the folders.

--meta is YAML (docs/submit.md): agent.name, agent.version, models, organisation,
open_source.agent and open_source.model are required; setting.label names a setting other
than the leaderboard's; links are optional https pages. A bad meta file is refused with
each field named (exit 3). --out is a new folder, or a file ending .tar.gz.`,
		Example: "  envgap submit prepare results/my-agent-reported results/my-agent-repaired --meta meta.yaml --out my-agent.tar.gz",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if opts.Meta == "" || opts.Out == "" {
				return usageError{errors.New("give --meta FILE and --out BUNDLE (see envgap submit prepare --help)")}
			}
			meta, err := submit.ReadMeta(opts.Meta)
			if err != nil {
				return rejectedError{err}
			}
			st, err := f.OpenStore()
			if err != nil {
				return err
			}
			md, err := submit.Prepare(submit.PrepareOptions{Results: args, Meta: meta, Store: st, Out: opts.Out, Now: time.Now()})
			if err != nil {
				return rejectedError{err}
			}
			if f.Global.JSON {
				return f.printJSON(md)
			}
			fmt.Fprintf(f.Out, "bundle %s: %s %s, %d result folder(s), corpus %s, %s\n", opts.Out, md.Agent.Name, md.Agent.Version, len(md.Results), md.CorpusID, md.Setting.Text())
			if ok, diff := md.Setting.Leaderboard(); !ok {
				if md.Setting.Label == "" {
					fmt.Fprintf(f.Out, "warning: not the leaderboard's setting (%s) and not labelled: submit check will fail; give setting.label in the meta file\n", diff)
				} else {
					fmt.Fprintf(f.Out, "setting labelled %q: shown apart from the leaderboard's (%s)\n", md.Setting.Label, diff)
				}
			}
			fmt.Fprintf(f.Out, "check it: envgap submit check %s\n", opts.Out)
			return nil
		},
	}
	c.Flags().StringVar(&opts.Meta, "meta", "", "the meta file (YAML): agent name and version, models, organisation, open-source flags")
	c.Flags().StringVar(&opts.Out, "out", "", "the bundle to write: a new folder, or a file ending .tar.gz")
	return c
}

type submitCheckOptions struct {
	scoring scoringOptions
}

func newSubmitCheckCommand(f *factory) *cobra.Command {
	opts := &submitCheckOptions{}
	o := &opts.scoring
	c := &cobra.Command{
		Use:   "check BUNDLE",
		Short: "Say, one line a check, whether a bundle is a fair leaderboard entry",
		Long: `Check a bundle (a folder or a .tar.gz that envgap submit prepare wrote) against the release
(--tasks, as envgap eval takes it: in a harness checkout its own release/tasks.jsonl). Each
line is a check, ok or FAIL, and why:

  metadata       metadata.yaml is complete and matches the result folders
  corpus         every folder was scored on the release's corpus id (not a subset)
  complete       every non-excluded task of the split has a result for each run
  attempts       each run is as envgap run makes it (attempts 1..n, none after a resolved
                 one, none longer than the timeout, no attempt's files without its result)
  setting        run, k=1, up to 5 attempts of 20 minutes (the leaderboard's), or labelled
  trajectories   every attempt has a trajectory (ATIF, or the agent's raw file only)
  leaks          no attempt read the later history, and every trajectory was inspected
  rescore        re-scoring every prediction on the evaluation core gives the same numbers

Re-scoring runs the containers (the engine flags are eval's); results already in the store
(--store) are reused. Exit 0: a fair entry; 5: a check failed; 4: an infrastructure fault
left a check without a verdict (run again); 3: the bundle cannot be read.`,
		Example: "  envgap submit check my-agent.tar.gz --tasks hub/\n  envgap --store /tmp/check-store submit check bundles/my-agent --tasks release/tasks.jsonl --jobs 4",
		Args:    cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if o.Jobs < 1 {
				return usageError{errors.New("--jobs must be at least 1")}
			}
			if o.Tasks == "" {
				if rows := tasks.HarnessCheckout("."); rows != "" {
					o.Tasks, o.harness = rows, true
				}
			}
			if err := o.fetchTasks(c.Context(), f); err != nil {
				return err
			}
			return f.run(c, opts, func() error { return runSubmitCheck(c, f, opts, args[0]) })
		},
	}
	c.Flags().StringVar(&o.Tasks, "tasks", "", "the release to check against: an exported Hub folder, a task rows file or hf://OWNER/NAME[@REVISION] (default: in a harness checkout its own release/tasks.jsonl, else the store's task set)")
	c.Flags().IntVar(&o.Jobs, "jobs", 1, "attempts re-scored at once")
	c.Flags().BoolVar(&o.NoSafeInstall, "no-safe-install", false, "do not ask the registries: safe install is not measured again, nor compared")
	o.engineOptions.addFlags(c)
	o.auditUpstreams.addFlags(c)
	return c
}

func runSubmitCheck(c *cobra.Command, f *factory, opts *submitCheckOptions, path string) error {
	o := &opts.scoring
	b, err := submit.Open(path, submit.DefaultLimits)
	if err != nil {
		return rejectedError{err}
	}
	defer b.Close()
	release, err := o.releaseTasks(f)
	if err != nil {
		return usageError{err}
	}
	if len(release) == 0 {
		return rejectedError{fmt.Errorf("no task in %s: give --tasks (the release's Hub folder or task rows)", o.tasksWhere(f))}
	}
	ev, sess, err := o.evaluator(c, f)
	if err != nil {
		return err
	}
	defer sess.Close()
	v, err := submit.Check(c.Context(), submit.CheckOptions{Bundle: b, Release: release, ReleaseWhere: o.tasksWhere(f), Evaluator: ev, Jobs: o.Jobs, Progress: evalProgress(f)})
	if err != nil {
		return err
	}
	if f.Global.JSON {
		if err := f.printJSON(v); err != nil {
			return err
		}
	} else {
		for _, l := range v.Lines {
			fmt.Fprintf(f.Out, "%-24s %-11s %s\n", l.Check, l.Status, l.Why)
		}
	}
	switch {
	case v.Failed > 0:
		return damageError{fmt.Errorf("%s is not a fair leaderboard entry: %d check(s) failed", path, v.Failed)}
	case v.NotChecked > 0:
		return partialError{fmt.Errorf("%s: %d check(s) not made because of infrastructure faults; run the check again", path, v.NotChecked)}
	}
	if !f.Global.JSON {
		fmt.Fprintf(f.Out, "%s is a fair leaderboard entry\n", path)
	}
	return nil
}
