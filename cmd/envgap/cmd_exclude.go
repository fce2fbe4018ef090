package main

import (
	"fmt"

	"github.com/envgap/envgap/export"
	"github.com/envgap/envgap/schemas"
	"github.com/spf13/cobra"
)

type excludeOptions struct {
	ID     string
	Reason string
	Kind   string
}

func newExcludeCommand(f *factory) *cobra.Command {
	opts := &excludeOptions{}
	c := &cobra.Command{
		Use:   "exclude ID --reason TEXT [--kind repair|control]",
		Short: "Exclude a task from scoring by hand (a parser or harness case)",
		Long: `Record that an admitted task is broken for a reason no recheck measures (the CMake parser
misread a file, the repository commits node_modules, ...). The task stays in the data with
excluded_from_scoring true, exclusion_reason TEXT and excluded_since now; every leaderboard
leaves it out, and the card's table lists it. Nothing is deleted: a new exclusion points at
the one it supersedes (ref exclusions/<ID>), and excluding again with the same reason
changes nothing. --kind defaults to the task's own (control when is_control).`,
		Example: `  envgap exclude envgap__gabime__spdlog-3081 --kind control \
    --reason "The CMake parser misread a bracket inside a quoted string, so no run could be measured."`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.ID = args[0]
			if opts.Reason == "" {
				return usageError{fmt.Errorf("--reason is required")}
			}
			if opts.Kind != "" && schemas.TaskKind(opts.Kind) != schemas.TaskRepair && schemas.TaskKind(opts.Kind) != schemas.TaskControl {
				return usageError{fmt.Errorf("--kind %q: want repair or control", opts.Kind)}
			}
			return f.run(c, opts, func() error { return runExclude(f, opts) })
		},
	}
	c.Flags().StringVar(&opts.Reason, "reason", "", "why the task cannot be scored (one line; shown in the card)")
	c.Flags().StringVar(&opts.Kind, "kind", "", "repair or control (default: the task's own)")
	return c
}

func runExclude(f *factory, opts *excludeOptions) error {
	st, err := f.OpenStore()
	if err != nil {
		return err
	}
	res, err := export.Exclude(st, export.ExcludeRequest{InstanceID: opts.ID, Reason: opts.Reason, Kind: schemas.TaskKind(opts.Kind)})
	if err != nil {
		return err
	}
	if f.Global.JSON {
		return f.printJSON(res)
	}
	if res.Unchanged {
		fmt.Fprintf(f.Out, "unchanged: %s is already excluded with this reason (since %s)\n", res.InstanceID, res.Exclusion.Since)
		return nil
	}
	fmt.Fprintf(f.Out, "excluded %s (%s) since %s: %s\n", res.InstanceID, res.Exclusion.TaskKind, res.Exclusion.Since, res.Exclusion.Reason)
	if !res.Exclusion.Previous.IsZero() {
		fmt.Fprintf(f.Out, "it supersedes exclusion %s, which stays in the store\n", res.Exclusion.Previous.Short())
	}
	return nil
}
