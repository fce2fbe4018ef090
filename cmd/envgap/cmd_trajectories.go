package main

import (
	"errors"
	"fmt"

	"github.com/envgap/envgap/harness/run"
	"github.com/spf13/cobra"
)

type trajectoriesOptions struct {
	Format string
	Out    string
}

func newTrajectoriesCommand(f *factory) *cobra.Command {
	opts := &trajectoriesOptions{}
	c := &cobra.Command{
		Use:   "trajectories RESULTS --format atif --out DIR",
		Short: "Export a result folder's trajectories in ATIF, the format other harnesses read",
		Long: `Write every attempt's trajectory of a result folder (envgap run, envgap eval) in ATIF, Harbor's
Agent Trajectory Interchange Format, under DIR at agent/<instance_id>/run-<k>/attempt-<n>.atif.json.

envgap run already writes each attempt's ATIF file beside the raw trajectory: those are
validated and copied. An attempt without one (a folder from before envgap wrote ATIF, or
envgap eval's) is converted now from its raw trajectory and its results.jsonl line, as the run
would have. envgap's verdict on each attempt (status, leaks, whether the trajectory was
inspected) is under the document's extra.envgap. A file of the folder that is not valid ATIF
is named and not copied (exit 4); docs/agents.md describes the mapping.`,
		Example: "  envgap trajectories results/my-agent-repaired --format atif --out atif/my-agent",
		Args:    cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if opts.Format != "atif" {
				return usageError{fmt.Errorf("--format %q: the only format is atif", opts.Format)}
			}
			if opts.Out == "" {
				return usageError{errors.New("--out DIR is required: the folder the ATIF files are written to")}
			}
			return f.run(c, opts, func() error { return runTrajectories(f, opts, args[0]) })
		},
	}
	c.Flags().StringVar(&opts.Format, "format", "atif", "the format to write (atif)")
	c.Flags().StringVar(&opts.Out, "out", "", "the folder to write (absent or empty)")
	return c
}

func runTrajectories(f *factory, opts *trajectoriesOptions, folder string) error {
	rep, err := run.ExportATIF(folder, opts.Out)
	if err != nil {
		return usageError{err}
	}
	if f.Global.JSON {
		if err := f.printJSON(rep); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(f.Out, "%d attempts of %s: %d ATIF files written by the run, %d converted now; written to %s\n",
			rep.Attempts, rep.Folder, rep.Kept, rep.Converted, rep.Out)
		for _, s := range rep.Invalid {
			fmt.Fprintf(f.Out, "not valid ATIF, not copied: %s\n", s)
		}
	}
	if len(rep.Invalid) > 0 {
		return partialError{fmt.Errorf("%d of %d trajectories of %s are not valid ATIF", len(rep.Invalid), rep.Attempts, folder)}
	}
	return nil
}
