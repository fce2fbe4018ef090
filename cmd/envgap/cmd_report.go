package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/envgap/envgap/harness/report"
	"github.com/envgap/envgap/harness/submit"
	"github.com/envgap/envgap/harness/tasks"
	"github.com/envgap/envgap/lib/release"
	"github.com/envgap/envgap/schemas"
	"github.com/spf13/cobra"
)

type reportOptions struct {
	Chart   string
	Results []string
	IDs     []string
	Limit   int
	Tasks   string
}

func newReportCommand(f *factory) *cobra.Command {
	opts := &reportOptions{}
	c := &cobra.Command{
		Use:   "report [--results] RESULTS...",
		Short: "The leaderboard of one or more eval/run result folders",
		Long: `Read result folders that envgap eval or envgap run wrote and print, per folder (one agent on
one split): tasks scored (excluded tasks dropped, and said so), the resolved rate of the first
attempt (the ranked score) and the best within the attempts, repairs and controls apart (an
agent that changes nothing gets every control right), mean manifest F1, mean safe install,
rejected and leaked counts, tasks whose trajectory was not inspected, and total cost. Several
folders give one leaderboard table. Markdown for people; --json for programs; --chart FILE
writes a PNG of the resolved rate per agent and split.

Result folders are given as arguments or with --results (repeated or comma-separated), as
envgap site takes them; a submission bundle of envgap submit (a folder or a .tar.gz) gives
its result folders. --ids and --limit report on a subset of each folder's tasks,
marked as a subset (not a leaderboard entry); with the release they were scored against
(--tasks, or in a harness checkout its own release/tasks.jsonl) a subset gets its own corpus
id, the one envgap eval gives the same selection.`,
		Example: "  envgap report results/my-agent-reported results/my-agent-repaired\n  envgap report --results results/gold,results/noop\n  envgap report results/* --chart leaderboard.png\n  envgap report results/gold --json\n  envgap report results/gold --limit 10",
		RunE: func(c *cobra.Command, args []string) error {
			dirs := append(append([]string{}, opts.Results...), args...)
			if len(dirs) == 0 {
				return usageError{errors.New("give one or more result folders (see envgap report --help)")}
			}
			if opts.Limit < 0 {
				return usageError{errors.New("--limit must be 0 (every task) or more")}
			}
			return f.run(c, opts, func() error { return runReport(c.Context(), f, opts, dirs) })
		},
	}
	c.Flags().StringVar(&opts.Chart, "chart", "", "write the resolved-rate chart (PNG) to this file")
	c.Flags().StringSliceVar(&opts.Results, "results", nil, "result folders (repeat or comma-separate; the same as giving them as arguments)")
	c.Flags().StringSliceVar(&opts.IDs, "ids", nil, "report only these tasks of each folder: a subset, marked as one")
	c.Flags().StringVar(&opts.Tasks, "tasks", "", "the release the folders were scored against (an exported Hub folder, a task rows file, or hf://OWNER/NAME[@REVISION]; default: in a harness checkout its own release/tasks.jsonl), for a subset's own corpus id (--ids, --limit)")
	c.Flags().IntVar(&opts.Limit, "limit", 0, "report only the first N tasks of each folder (by instance id; after --ids): a subset, marked as one")
	return c
}

func runReport(ctx context.Context, f *factory, opts *reportOptions, dirs []string) error {
	var all []schemas.Task
	if len(opts.IDs) > 0 || opts.Limit > 0 {
		src := &scoringOptions{Tasks: opts.Tasks}
		if src.Tasks == "" {
			src.Tasks = tasks.HarnessCheckout(".")
		}
		if src.Tasks != "" {
			if err := src.fetchTasks(ctx, f); err != nil {
				return err
			}
			var err error
			if all, err = tasks.Load(src.Tasks, release.ConfigFull); err != nil {
				return usageError{fmt.Errorf("--tasks: %w", err)}
			}
		}
	}
	var folders []*report.ResultFolder
	// Submission bundles (envgap submit) give their result folders, as for site.
	given, closeBundles, err := submit.ResultFolders(dirs, submit.DefaultLimits)
	defer closeBundles()
	if err != nil {
		return usageError{err}
	}
	for _, g := range given {
		rf, err := report.ReadResultFolder(g.Dir)
		if err != nil {
			return usageError{err}
		}
		rf.Dir = g.Name
		if err := rf.Select(opts.IDs, opts.Limit); err != nil {
			return rejectedError{err}
		}
		if all != nil {
			if err := rf.SubsetCorpus(all); err != nil {
				return rejectedError{err}
			}
		}
		folders = append(folders, rf)
	}
	lb := report.BuildReport(folders)
	if opts.Chart != "" {
		png, err := lb.ReportChart()
		if err != nil {
			return err
		}
		if err := os.WriteFile(opts.Chart, png, 0o644); err != nil {
			return fmt.Errorf("report chart: %w", err)
		}
	}
	if f.Global.JSON {
		return f.printJSON(lb)
	}
	return lb.Markdown(f.Out)
}
