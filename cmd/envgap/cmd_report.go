package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/envgap/envgap/harness/report"
	"github.com/spf13/cobra"
)

type reportOptions struct {
	Chart string
}

func newReportCommand(f *factory) *cobra.Command {
	opts := &reportOptions{}
	c := &cobra.Command{
		Use:   "report RESULTS...",
		Short: "The leaderboard of one or more eval/run result folders",
		Long: `Read result folders that envgap eval or envgap run wrote and print, per folder (one agent on
one split): tasks scored (excluded tasks dropped, and said so), the resolved rate of the first
attempt (the ranked score) and the best within the attempts, repairs and controls apart (an
agent that changes nothing gets every control right), mean manifest F1, mean safe install,
rejected and leaked counts, tasks whose trajectory was not inspected, and total cost. Several
folders give one leaderboard table. Markdown for people; --json for programs; --chart FILE
writes a PNG of the resolved rate per agent and split.`,
		Example: "  envgap report results/my-agent-reported results/my-agent-repaired\n  envgap report results/* --chart leaderboard.png\n  envgap report results/gold --json",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{errors.New("give one or more result folders (see envgap report --help)")}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error { return runReport(f, opts, args) },
	}
	c.Flags().StringVar(&opts.Chart, "chart", "", "write the resolved-rate chart (PNG) to this file")
	return c
}

func runReport(f *factory, opts *reportOptions, dirs []string) error {
	var folders []*report.ResultFolder
	for _, d := range dirs {
		rf, err := report.ReadResultFolder(d)
		if err != nil {
			return usageError{err}
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
