package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/envgap/envgap/schemas"
	"github.com/spf13/cobra"
)

func newStatusCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:     "status",
		Short:   "Show the funnel: candidates by set and outcome, tasks, exclusions",
		Example: "  envgap status\n  envgap status --json",
		Args:    exactArgs(0),
		RunE: func(c *cobra.Command, args []string) error {
			return f.run(c, nil, func() error { return runStatus(f) })
		},
	}
}

func runStatus(f *factory) error {
	st, err := f.OpenStore()
	if err != nil {
		return err
	}
	fun, err := st.ComputeFunnel()
	if err != nil {
		return err
	}
	if f.Global.JSON {
		return f.printJSON(fun)
	}
	fmt.Fprintf(f.Out, "store %s: %d candidates, %d tasks\n\n", st.Dir(), fun.Total, fun.TaskTotal)
	tw := tabwriter.NewWriter(f.Out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "outcome\t")
	for _, s := range schemas.Sources {
		fmt.Fprintf(tw, "%s\t", s)
	}
	fmt.Fprintln(tw, "all\t")
	for _, o := range schemas.Outcomes {
		fmt.Fprintf(tw, "%s\t", o)
		sum := 0
		for _, s := range schemas.Sources {
			n := fun.Candidates[s][o]
			sum += n
			fmt.Fprintf(tw, "%d\t", n)
		}
		fmt.Fprintf(tw, "%d\t\n", sum)
	}
	fmt.Fprint(tw, "tasks excluded from scoring\t")
	sum := 0
	for _, s := range schemas.Sources {
		sum += fun.Excluded[s]
		fmt.Fprintf(tw, "%d\t", fun.Excluded[s])
	}
	fmt.Fprintf(tw, "%d\t\n", sum)
	return tw.Flush()
}
