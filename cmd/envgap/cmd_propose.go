package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/envgap/envgap/crawl/lite"
	"github.com/envgap/envgap/lib/agent"
	"github.com/envgap/envgap/verify/propose"
	"github.com/spf13/cobra"
)

type proposeOptions struct {
	engineOptions
	Agent agent.Spec
	IDs   []string
	// AttemptTimeout bounds the agent on one candidate (--attempt-timeout, as in envgap
	// run; --timeout is its deprecated alias).
	AttemptTimeout time.Duration
	WorkDir        string
	Keep           string
	modelFlags
}

func newProposeCommand(f *factory) *cobra.Command {
	opts := &proposeOptions{}
	c := &cobra.Command{
		Use:   "propose --agent CMD [--ids ...]",
		Short: "Ask an agent for the reference fix of every reproduced Reported issue that has none",
		Long: `Ask an agent for a reference fix of every Reported candidate whose failure reproduced in a
clean container (envgap verify recorded a reproduction) and that has no fix. The agent runs
as envgap run runs it (docs/agents.md): in a workspace holding the project at
base_commit only, with the task file, plus the reproduction's failing log
($ENVGAP_FAILURE_LOG), the commands it ran ($ENVGAP_RECIPE_FILE), and a file where it may
propose its own commands ($ENVGAP_COMMANDS_FILE) where the generated ones are wrong. It may
run repro_command in the evaluation container ($ENVGAP_REPRO).

--agent openai|bedrock --model ID is envgap's own agent, with run's flags (docs/agents.md):
it acts in a box from the evaluation image, reads the failing log and the commands in its
task text, and proposes the fix only (made_by "model").

An agent command runs on this host unless --agent-image IMAGE is given (as in envgap run):
then it runs in a box from IMAGE, built FROM the candidate's evaluation image, with the
run directory at its own path and the egress door, plus each --allow-host HOST[:PORT].

Its changes become a proposal, a record of its own linked to the candidate's digest (the
candidate stays as crawled): the files (environment files only: a source edit is refused, with
the reason), the patch, the commands, made_by ("AI assistant" with commands, "model" with the
fix only), the agent command, its trajectory and cost. Run envgap verify next: it checks each
proposal like any fix (fails before with the expected failure, runs after); the first that
verifies wins, and admit takes its fix, commands and made_by. An unchanged candidate is not
asked again with the same agent.`,
		Example: "  envgap propose --agent bedrock --model MODEL\n  envgap propose --agent 'my-agent --model m'\n  envgap propose --agent ./fix.sh --ids envgap__o__r-12 --attempt-timeout 30m",
		Args:    exactArgs(0),
		RunE: func(c *cobra.Command, args []string) error {
			if opts.Agent.Empty() {
				return usageError{errors.New("--agent is required (openai, bedrock or an agent command)")}
			}
			if err := opts.modelFlags.checkFlags(opts.Agent); err != nil {
				return err
			}
			if c.Flags().Changed("timeout") {
				fmt.Fprintln(f.Err, "envgap: --timeout is deprecated: use --attempt-timeout (the same flag as envgap run's)")
			}
			if opts.AttemptTimeout <= 0 {
				return usageError{errors.New("--attempt-timeout must be positive")}
			}
			return f.run(c, opts, func() error { return runPropose(c, f, opts) })
		},
	}
	c.Flags().Var(&opts.Agent, "agent", "openai or bedrock (envgap's own agent with --model, acting in a box), or an agent command (run with sh -c in the workspace)")
	opts.modelFlags.add(c)
	c.Flags().StringSliceVar(&opts.IDs, "ids", nil, "candidates to ask for (comma-separated or repeated; default every eligible one)")
	c.Flags().DurationVar(&opts.AttemptTimeout, "attempt-timeout", 20*time.Minute, "time limit of the agent on one candidate")
	c.Flags().DurationVar(&opts.AttemptTimeout, "timeout", 20*time.Minute, "the old name of --attempt-timeout")
	_ = c.Flags().MarkHidden("timeout")
	c.Flags().StringVar(&opts.WorkDir, "work-dir", "", "where workspaces are made (default: a temporary directory)")
	c.Flags().StringVar(&opts.Keep, "keep", "", "a folder to keep each agent's stdout, stderr and trajectory in")
	opts.engineOptions.addFlags(c)
	return c
}

func runPropose(c *cobra.Command, f *factory, opts *proposeOptions) error {
	progress := f.newProgress()
	rep, err := propose.Run(c.Context(), propose.Options{
		Open: func() (*propose.Env, io.Closer, error) {
			sess, vo, err := opts.open(c, f)
			if err != nil {
				return nil, nil, err
			}
			return &propose.Env{Store: sess.Stage.Store, Runner: sess.Stage, Limits: vo.Limits, Checkout: vo.Checkout}, sess, nil
		},
		Model: func(ctx context.Context) (*agent.ModelAgent, error) {
			return newModelAgent(ctx, f, opts.Agent, &opts.modelFlags)
		},
		Contained: func(ctx context.Context, checker agent.ImageChecker) (*agent.Contained, error) {
			return opts.modelFlags.contained(ctx, f, opts.Agent, nil, checker)
		},
		Materialize: materialize(opts.GitURLTemplate), Patch: lite.Patch,
		Agent: opts.Agent.Raw, Timeout: opts.AttemptTimeout, IDs: opts.IDs, WorkDir: opts.WorkDir, OutDir: opts.Keep,
		ReproCommand: reproCommand(),
		Progress: func(r propose.Result) {
			switch {
			case r.Error != "":
				progress.step(0, 0, r.InstanceID, "no proposal", r.Error)
			case r.Refused != "":
				progress.step(0, 0, r.InstanceID, fmt.Sprintf("refused (proposal %s: %s)", r.Proposal.Short(), r.Refused), "")
			default:
				progress.step(0, 0, r.InstanceID, fmt.Sprintf("proposed: proposal %s (%s; %s)", r.Proposal.Short(), r.MadeBy, strings.Join(r.Files, ", ")), "")
			}
		},
	})
	progress.finish()
	if rep == nil {
		return err
	}
	if err := f.output(rep, func(w io.Writer) {
		fmt.Fprintf(w, "asked for %d fixes: %d proposed, %d refused, %d unchanged (not asked again), %d failed\n",
			len(rep.Results), rep.Proposed, rep.Refused, rep.Cached, rep.Failed)
		if rep.Proposed+rep.Cached > rep.Refused {
			fmt.Fprintln(w, "next: envgap verify checks the proposals; envgap admit turns the verified ones into tasks")
		}
	}); err != nil {
		return err
	}
	if err != nil {
		return err
	}
	if rep.Failed > 0 {
		return partialError{fmt.Errorf("%d candidate(s) have no proposal because of faults; run envgap propose again", rep.Failed)}
	}
	return nil
}
