package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/envgap/envgap"
	"github.com/envgap/envgap/export"
	"github.com/envgap/envgap/harness/harbor"
	"github.com/envgap/envgap/lib/envfiles"
	"github.com/envgap/envgap/schemas"
	"github.com/spf13/cobra"
)

type harborCheckOptions struct {
	CorpusID     string
	NoTrials     bool
	Change       string
	PyPIUpstream string
	NPMUpstream  string
}

func newHarborCommand(f *factory) *cobra.Command {
	c := &cobra.Command{Use: "harbor", Short: "EnvGap's tasks in Harbor's format (written by envgap export --harbor)"}
	opts := &harborCheckOptions{}
	check := &cobra.Command{
		Use:   "check DIR|tasks.parquet",
		Short: "Check Harbor tasks: their structure, then a Harbor-style trial of each on the engine",
		Long: `Check EnvGap tasks in Harbor's format: a tasks.parquet (harbor/tasks.parquet of an exported
folder), an exported folder, one task directory, or a folder of task directories.

First the structure, against Harbor's task layout and task.toml model (schema_version ` + harbor.SchemaVersion + `):
the required files, task.toml's fields and types, the name envgap/<path>, a default-fail
tests/test.sh, solution/solve.sh, and (--corpus-id) the release's corpus id. A row whose
task_binary cannot be unpacked (truncated, corrupt, a path that climbs out) fails, named
by its path.

Then, on the engine (DOCKER_HOST), a trial of each task the way Harbor runs one: build the
environment (main and the registry service), start it, wait for the healthcheck, run the
agent's part, copy tests/ to /tests, run /tests/test.sh as the verifier and read
/logs/verifier/reward.txt. The scenarios (seed 001's five smoke-test rows, then envgap's
own) and the rewards they must get:

  unchanged          0 (1 for a control)
  empty workspace    0 (every file of /work deleted)
  breaks the build   0 (the oracle, then the manifest overwritten with junk)
  still failing      0 (the manifest changed, a newline added, nothing fixed; 1 for a control)
  oracle             1 (solution/solve.sh)
  source edit        0 (the oracle, and one source file changed)
  given change       printed only (--change DIR: files written into /work)

After the trials: seed 001's aggregate tables, Scenario | Expected | Result over every
task, and the reward-signal breakdown (Signal | Count | %: which step decides each task's
reward against its unfixed project, from the still-failing trial). A failed step's reason
quotes its error line.

The registry service's upstreams are the public registries unless --pypi-upstream /
--npm-upstream (or ENVGAP_PYPI_UPSTREAM / ENVGAP_NPM_UPSTREAM) say otherwise. Where
golang:1.26-bookworm cannot be pulled, it is built once from the local base image and this
machine's Go. Exit code 5 when a task fails a check or a trial disagrees.`,
		Example: "  envgap harbor check release/harbor/tasks.parquet\n  envgap harbor check tasks/envgap__acme__stats-1 --change my-fix/",
		Args:    exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return f.run(c, opts, func() error { return runHarborCheck(c.Context(), f, args[0], opts) })
		},
	}
	check.Flags().StringVar(&opts.CorpusID, "corpus-id", "", "the corpus id every task's metadata must carry")
	check.Flags().BoolVar(&opts.NoTrials, "no-trials", false, "the structural checks only (no engine)")
	check.Flags().StringVar(&opts.Change, "change", "", "a folder of files to write into /work as one more trial")
	check.Flags().StringVar(&opts.PyPIUpstream, "pypi-upstream", os.Getenv("ENVGAP_PYPI_UPSTREAM"), "the registry service's PyPI upstream")
	check.Flags().StringVar(&opts.NPMUpstream, "npm-upstream", os.Getenv("ENVGAP_NPM_UPSTREAM"), "the registry service's npm upstream")
	c.AddCommand(check)
	return c
}

func runHarborCheck(ctx context.Context, f *factory, src string, opts *harborCheckOptions) error {
	o := harbor.CheckOptions{CorpusID: opts.CorpusID, NoTrials: opts.NoTrials, Trial: harbor.TrialOptions{
		PyPIUpstream: opts.PyPIUpstream, NPMUpstream: opts.NPMUpstream,
		IsEnvFile: func(p string) bool { return envfiles.ClassifyPath(p).IsEnv() }}}
	if f.Global.Verbose {
		o.Trial.Log = f.Err
	}
	if opts.Change != "" {
		files, err := harbor.ReadDir(opts.Change)
		if err != nil {
			return usageError{fmt.Errorf("--change: %w", err)}
		}
		o.Trial.Change = files
	}
	var eng *harbor.Engine
	if !opts.NoTrials {
		var err error
		if eng, err = harbor.Connect(ctx); err != nil {
			return err
		}
		defer eng.Close()
	}
	rep, err := harbor.Check(ctx, eng, src, o)
	if err != nil {
		return err
	}
	if err := f.output(rep, func(w io.Writer) {
		rep.WriteTable(w)
		switch {
		case rep.OK() && opts.NoTrials:
			fmt.Fprintf(w, "%d tasks: every structural check passed (no trials run)\n", rep.Tasks)
		case rep.OK():
			fmt.Fprintf(w, "%d tasks: every check passed and every trial got the reward it should\n", rep.Tasks)
		}
	}); err != nil {
		return err
	}
	if !rep.OK() {
		return damageError{fmt.Errorf("harbor check: %s: a task failed a check or a trial disagrees", src)}
	}
	return nil
}

// harborExport wires envgap export --harbor: the task directories are made from the
// published rows, each project at base_commit materialized as envgap run does.
func harborExport(ctx context.Context, repo, gitURLTemplate string, progress io.Writer) func([]schemas.Task, string) (*export.HarborOutput, error) {
	return func(pub []schemas.Task, corpusID string) (*export.HarborOutput, error) {
		files, rep, err := harbor.Build(ctx, pub, harbor.Options{Materialize: materialize(gitURLTemplate), Source: envgap.Source(),
			Meta: harbor.Meta{CorpusID: corpusID, Repo: repo}})
		if err != nil {
			return nil, err
		}
		if rep.Tasks > 0 {
			fmt.Fprintf(progress, "harbor: %d tasks in %s (%s per task, %d bytes of parquet per task)\n", rep.Tasks, rep.Duration.Round(1e6),
				(rep.Duration / timeDiv(rep.Tasks)).Round(1e6), rep.ParquetBytes/rep.Tasks)
		}
		return &export.HarborOutput{Files: files, Tasks: rep.Tasks, SchemaVersion: harbor.SchemaVersion}, nil
	}
}

func timeDiv(n int) time.Duration { return time.Duration(n) }
