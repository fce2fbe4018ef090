package main

import (
	"github.com/envgap/envgap/verify"
	"github.com/spf13/cobra"
)

type tryOptions struct {
	engineOptions
	ID  string
	Fix string
}

func newTryCommand(f *factory) *cobra.Command {
	opts := &tryOptions{}
	c := &cobra.Command{
		Use:   "try ID",
		Short: "Run one candidate once and show every step with its output",
		Long: `Run one candidate once through the evaluation core, in a fresh container with the
registries cut back to its registry_date, and print every step with its output. --fix none
runs the project as it is (bootstrap, resolve, repro); --fix gold applies the reference fix
and runs bootstrap, resolve and run; --fix FILE applies a prediction ({"files": {path:
content or null}}). Nothing is recorded as a verdict.`,
		Example: "  envgap try envgap__claude-code__cpp-t1-24\n  envgap try envgap__o__r-12 --fix gold\n  envgap try envgap__o__r-12 --fix prediction.json",
		Args:    exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.ID = args[0]
			return runTry(c, f, opts)
		},
	}
	c.Flags().StringVar(&opts.Fix, "fix", "none", "none, gold, or a prediction file")
	opts.addFlags(c)
	return c
}

func runTry(c *cobra.Command, f *factory, opts *tryOptions) error {
	env, err := opts.env(f)
	if err != nil {
		return err
	}
	sess, err := verify.Open(c.Context(), env)
	if err != nil {
		return err
	}
	defer sess.Close()
	r, err := sess.Stage.Try(c.Context(), opts.ID, verify.TryOptions{
		Options: verify.Options{Limits: opts.limits(), Checkout: checkoutSource()},
		Fix:     opts.Fix,
	})
	if err != nil {
		return err
	}
	if f.Global.JSON {
		return f.printJSON(r)
	}
	return sess.Stage.PrintRun(f.Out, r)
}
