package main

import (
	"fmt"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/schemas"
	"github.com/envgap/envgap/verify"
	"github.com/spf13/cobra"
)

type tryOptions struct {
	engineOptions
	ID        string
	Fix       string
	Dir       string
	Ecosystem string
	Side      string
	Date      string
	Recipe    schemas.Recipe
}

func newTryCommand(f *factory) *cobra.Command {
	opts := &tryOptions{}
	c := &cobra.Command{
		Use:   "try ID | try --dir DIR --ecosystem ECO",
		Short: "Run one candidate once and show every step with its output",
		Long: `Run one candidate once through the evaluation core, in a fresh container with the
registries cut back to its registry_date, and print every step with its output. --fix none
runs the project as it is (bootstrap, resolve, repro); --fix gold applies the reference fix
and runs bootstrap, resolve and run; --fix FILE applies a prediction ({"files": {path:
content or null}}). Nothing is recorded as a verdict.`,
		Example: "  envgap try envgap__claude-code__cpp-t1-24\n  envgap try envgap__o__r-12 --fix gold\n  envgap try envgap__o__r-12 --fix prediction.json\n  envgap try --dir ./myproject --ecosystem python --side after",
		Args:    maxArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			switch {
			case len(args) == 1 && opts.Dir == "":
				opts.ID = args[0]
			case len(args) == 0 && opts.Dir != "":
				if opts.Ecosystem == "" {
					return usageError{fmt.Errorf("--dir needs --ecosystem (python, cpp, java or javascript)")}
				}
			default:
				return usageError{fmt.Errorf("give a candidate ID or --dir DIR, not both")}
			}
			return f.run(c, opts, func() error { return runTry(c, f, opts) })
		},
	}
	c.Flags().StringVar(&opts.Fix, "fix", "none", "none, gold, or a prediction file")
	c.Flags().StringVar(&opts.Dir, "dir", "", "run a project directory instead of a stored candidate")
	c.Flags().StringVar(&opts.Ecosystem, "ecosystem", "", "with --dir: python, cpp, java or javascript")
	c.Flags().StringVar(&opts.Side, "side", "before", "with --dir: before (repro) or after (run, traced)")
	c.Flags().StringVar(&opts.Date, "registry-date", "", "with --dir: the registry cut-off (default now)")
	c.Flags().StringVar(&opts.Recipe.BootstrapCommand, "bootstrap", "", "with --dir: bootstrap_command")
	c.Flags().StringVar(&opts.Recipe.ResolveCommand, "resolve", "", "with --dir: resolve_command")
	c.Flags().StringVar(&opts.Recipe.ReproCommand, "repro", "", "with --dir: repro_command")
	c.Flags().StringVar(&opts.Recipe.RunCommand, "run", "", "with --dir: run_command")
	c.Flags().StringVar(&opts.Recipe.ExpectedFailureRegex, "expect", "", "with --dir: expected_failure_regex")
	opts.addFlags(c)
	return c
}

func runTry(c *cobra.Command, f *factory, opts *tryOptions) error {
	var cutoff schemas.Cutoff
	if opts.Date != "" {
		var err error
		if cutoff, err = schemas.ParseCutoff(opts.Date); err != nil {
			return usageError{fmt.Errorf("--registry-date: %w", err)}
		}
	}
	sess, vo, err := opts.open(c, f)
	if err != nil {
		return err
	}
	defer sess.Close()
	vo.Progress = nil
	var r *schemas.Run
	if opts.Dir != "" {
		if opts.Side != string(core.SideBefore) && opts.Side != string(core.SideAfter) {
			return usageError{fmt.Errorf("--side must be before or after")}
		}
		r, err = sess.Stage.TryDir(c.Context(), verify.DirOptions{Dir: opts.Dir, Ecosystem: schemas.Ecosystem(opts.Ecosystem),
			Recipe: opts.Recipe, Cutoff: cutoff, Side: core.Side(opts.Side), Options: vo})
	} else {
		r, err = sess.Stage.Try(c.Context(), opts.ID, verify.TryOptions{Options: vo, Fix: opts.Fix})
	}
	if err != nil {
		return err
	}
	if f.Global.JSON {
		return f.printJSON(r)
	}
	return sess.Stage.PrintRun(f.Out, r)
}
