package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

type addOptions struct {
	File string
}

func newAddCommand(f *factory) *cobra.Command {
	opts := &addOptions{}
	return &cobra.Command{
		Use:   "add FILE.jsonl",
		Short: "Validate candidate records and put them in the store",
		Long: `Validate every record of a JSON Lines file of candidates (the dataset card's fields,
plus set, outcome, reason, generated_by, domain). If any record is bad, every problem is
listed with file, line, instance_id and field, nothing is stored, and the exit code is 3.
Otherwise the candidates are stored and a ref candidates/add-<id> points at the set.
Adding the same file again changes nothing and says so.`,
		Example: "  envgap add candidates.jsonl\n  envgap --store /srv/envgap add --json new.jsonl",
		Args:    exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.File = args[0]
			return f.run(c, opts, func() error { return runAdd(f, opts) })
		},
	}
}

func runAdd(f *factory, opts *addOptions) error {
	st, err := f.OpenStore()
	if err != nil {
		return err
	}
	res, err := st.AddCandidatesFile(opts.File)
	if err != nil {
		return err
	}
	if f.Global.JSON {
		return f.printJSON(res)
	}
	if res.Unchanged {
		fmt.Fprintf(f.Out, "unchanged: the %d candidates of %s are already in the store (%s); nothing was written\n", res.Count, opts.File, res.Ref)
		return nil
	}
	fmt.Fprintf(f.Out, "added %d candidates (%d new) from %s as %s\n", res.Count, res.New, opts.File, res.Ref)
	return nil
}
