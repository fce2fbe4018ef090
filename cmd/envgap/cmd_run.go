package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/envgap/envgap/crawl"
	"github.com/envgap/envgap/crawl/gitfetch"
	"github.com/envgap/envgap/crawl/lite"
	"github.com/envgap/envgap/harness/eval"
	"github.com/envgap/envgap/harness/run"
	"github.com/envgap/envgap/lib/agent"
	"github.com/envgap/envgap/schemas"
	"github.com/spf13/cobra"
)

type runOptions struct {
	scoringOptions
	Agent          agent.Spec
	K              int
	MaxAttempts    int
	AttemptTimeout time.Duration
	WorkDir        string
	modelFlags
	Slurm slurmOptions
}

func newRunCommand(f *factory) *cobra.Command {
	opts := &runOptions{}
	c := &cobra.Command{
		Use:   "run --agent CMD --split SPLIT [--out DIR]",
		Short: "Run an agent on each task, with the evaluation's output fed back between attempts",
		Long: `Run an agent on every task of the split, --k times each. Each run gets a workspace holding the
project at base_commit and nothing later (checked), a task file with what the dataset card lets
an agent see, and a command that runs repro_command in the evaluation container. The agent
command runs with sh -c in the workspace, with the paths in environment variables
(docs/agents.md); when it exits, the workspace's changes become the prediction's files and
are scored as envgap eval scores them. When the attempt is not resolved and attempts
remain, the evaluation's output is written to the feedback file and the agent runs again.
An attempt that runs past --attempt-timeout is stopped (its process group killed) and not
evaluated. --agent noop (no change) and --agent gold (the reference fix) are built in.

--agent openai|bedrock --model ID is envgap's own agent (docs/agents.md): one loop with bash,
write_file, run_repro and finish, every action in a container from the task's evaluation
image on the workspace, with the date-limited registries and the egress door; limited by
--max-turns, --max-tokens, --attempt-timeout, --budget and --context-tokens. A provider
fault (credentials, unknown model, failing past its retries) is a fault, not an attempt.

An agent command runs on this host with your privileges and network (not contained), unless
--agent-image IMAGE is given: then each attempt runs it in a box from IMAGE (built FROM the
tasks' evaluation image, checked first; EVAL-IMAGE=IMAGE per evaluation image), with the run
directory at its own path, the date-limited registries and the egress door, plus each
--allow-host HOST[:PORT] (the agent CLI's model API).

The result folder is envgap eval's, with one result per attempt, plus agent/<id>/run-<k>/
(each attempt's stdout, stderr and trajectory). Runs already complete in the folder (from an
earlier run with the same agent and settings) are kept; a fault leaves its run without a
result (exit 4) and the next run retries it.

With --slurm, each task's runs are one item of a Slurm job array (docs/slurm.md): the
workers run the same agent with the same flags on their nodes, writing into --out, which
must be on a filesystem every node mounts.

Tasks, --ids, --limit and the default --out (results/<agent>-<split>, the model agents
as <agent>-<model>) are as for envgap eval.`,
		Example: "  envgap run --agent bedrock --model MODEL --split reported --k 1 --max-attempts 5 --out results/bedrock\n  envgap run --agent openai --base-url http://127.0.0.1:8000/v1 --model qwen --split full --out results/qwen\n  envgap run --agent noop --split full --tasks hub/ --out results/noop\n  envgap --store /shared/envgap/store run --agent openai --model M --base-url URL --split full --out /shared/results/m --slurm --workers 8\n  envgap run --agent 'my-agent --model m' --split repaired --k 1 --max-attempts 5 --out results/my-agent-repaired\n  envgap run --agent 'my-agent' --agent-image my-agent:py --allow-host api.example.com --split full --out results/my-agent",
		Args:    func(c *cobra.Command, args []string) error { return opts.Slurm.args(c, args) },
		RunE: func(c *cobra.Command, args []string) error {
			switch {
			case opts.Agent.Empty():
				return usageError{errors.New("--agent is required (a command, noop or gold)")}
			case opts.K < 1 || opts.MaxAttempts < 1:
				return usageError{errors.New("--k and --max-attempts must be at least 1")}
			case opts.AttemptTimeout <= 0:
				return usageError{errors.New("--attempt-timeout must be positive")}
			}
			if err := opts.check(); err != nil {
				return err
			}
			opts.defaultOut(f, runAgentName(opts))
			if err := opts.fetchTasks(c.Context(), f); err != nil {
				return err
			}
			if err := opts.modelFlags.checkFlags(opts.Agent); err != nil {
				return err
			}
			if err := opts.Slurm.check(c, f, &opts.engineOptions); err != nil {
				return err
			}
			if opts.Slurm.Slurm && opts.WorkDir != "" {
				return usageError{errors.New("--work-dir does not go with --slurm: each worker makes its workspaces on its node")}
			}
			return f.run(c, opts, func() error { return runAgent(c, f, opts) })
		},
	}
	c.Flags().Var(&opts.Agent, "agent", "openai or bedrock (envgap's own agent with --model, acting in a box), noop, gold, or an agent command (run with sh -c in the workspace)")
	opts.modelFlags.add(c)
	c.Flags().IntVar(&opts.K, "k", 1, "independent runs per task")
	c.Flags().IntVar(&opts.MaxAttempts, "max-attempts", 10, "attempts per run; after a failed one the evaluation's output is fed back")
	c.Flags().DurationVar(&opts.AttemptTimeout, "attempt-timeout", 20*time.Minute, "time limit of one attempt of the agent")
	c.Flags().StringVar(&opts.WorkDir, "work-dir", "", "where workspaces are made (default: a temporary directory)")
	opts.scoringOptions.addFlags(c)
	opts.Slurm.addFlags(c)
	return c
}

// runAgentName is the agent's name in run's default result folder: --name, else the
// model agent with its model (bedrock-MODEL), else the base name of the command's
// first word (noop, gold, my-agent).
func runAgentName(opts *runOptions) string {
	switch {
	case opts.Name != "":
		return opts.Name
	case opts.Model != "" && opts.Agent.IsModel():
		return opts.Agent.Raw + "-" + opts.Model
	}
	w := strings.Fields(opts.Agent.Raw)
	if len(w) == 0 {
		return "agent"
	}
	return filepath.Base(w[0])
}

// materialize makes a task's workspace: the Lite commit made from project_files, or the
// base commit fetched alone at depth 1.
func materialize(urlTemplate string) agent.MaterializeFunc {
	return func(ctx context.Context, t *schemas.Task, dir string) error {
		if t.Source == schemas.SourceLite || len(t.ProjectFiles) > 0 {
			created, err := time.Parse(time.RFC3339, t.CreatedAt)
			if err != nil {
				return fmt.Errorf("created_at: %w", err)
			}
			h, err := lite.Materialize(dir, t.ProjectFiles, created)
			if err != nil {
				return err
			}
			if h != t.BaseCommit {
				return fmt.Errorf("the commit made from project_files is %s, not base_commit %s", h, t.BaseCommit)
			}
			return nil
		}
		url, err := crawl.GitURL(urlTemplate, t.Repo)
		if err != nil {
			return err
		}
		return gitfetch.Checkout(ctx, url, t.BaseCommit, dir)
	}
}

func runAgent(c *cobra.Command, f *factory, opts *runOptions) error {
	progress := f.newProgress()
	o := run.FolderOptions{
		Tasks:   func() ([]schemas.Task, *schemas.EvalSubset, error) { return opts.splitTasks(f) },
		Release: func() ([]schemas.Task, error) { return opts.releaseTasks(f) },
		Agent:   opts.Agent,
		Model: func(ctx context.Context) (*agent.ModelAgent, error) {
			return newModelAgent(ctx, f, opts.Agent, &opts.modelFlags)
		},
		Contained: func(ctx context.Context, tasks []schemas.Task, checker agent.ImageChecker) (*agent.Contained, error) {
			return opts.modelFlags.contained(ctx, f, opts.Agent, agent.CardImages(tasks), checker)
		},
		Name:           opts.Name,
		Split:          opts.Split,
		K:              opts.K,
		MaxAttempts:    opts.MaxAttempts,
		AttemptTimeout: opts.AttemptTimeout,
		Materialize:    materialize(opts.GitURLTemplate),
		ReproCommand:   reproCommand(),
		Jobs:           opts.Jobs,
		WorkDir:        opts.WorkDir,
		Out:            opts.Out,
		Open: func() (*eval.Evaluator, io.Closer, error) {
			return opts.evaluator(c, f)
		},
		Progress: func(id string, k, n int, r *schemas.EvalResult, err error) {
			progress.step(0, 0, fmt.Sprintf("%s run %d attempt %d", id, k, n), string(r.Status), "")
		},
	}
	if opts.Slurm.Slurm {
		o.Remote = func(_ context.Context, tasks []schemas.Task, meta schemas.EvalSummary) (*eval.Outcome, map[string][]byte, error) {
			return runAgentSlurm(c, f, opts, tasks, meta)
		}
	}
	sc, err := run.Folder(c.Context(), o)
	progress.finish()
	return printScored(f, opts.Out, sc, folderUsage(err))
}

// keptRuns is run.Kept for the workers of run --slurm (a folder a run cannot continue is
// a usage error, as for a local run).
func keptRuns(dir string, meta schemas.EvalSummary, command string) (func(string, int) []schemas.EvalResult, error) {
	done, err := run.Kept(dir, meta, command)
	return done, folderUsage(err)
}

// folderUsage makes a result folder a run cannot continue (run.FolderError) a usage
// error.
func folderUsage(err error) error {
	var fe *run.FolderError
	if errors.As(err, &fe) {
		return usageError{err}
	}
	return err
}

func newAgentReproCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:    "agent-repro",
		Short:  "Run repro_command on the workspace in the evaluation container (for agents started by envgap run)",
		Hidden: true,
		Args:   exactArgs(0),
		RunE: func(c *cobra.Command, args []string) error {
			code, err := agent.ReproClient(c.Context(), f.Getenv(agent.EnvReproURL), f.Getenv(agent.EnvReproToken), f.Out)
			if err != nil {
				return err
			}
			if code != 0 {
				return exitStatus(code)
			}
			return nil
		},
	}
}
