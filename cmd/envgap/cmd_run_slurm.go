package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/envgap/envgap/harness/eval"
	"github.com/envgap/envgap/harness/run"
	"github.com/envgap/envgap/lib/agent"
	"github.com/envgap/envgap/lib/jobs"
	"github.com/envgap/envgap/schemas"
	"github.com/spf13/cobra"
)

// runWork is run --slurm: each item is a task of the split, its K runs done by one worker
// as a local run does them (the same agent, model agent, built-in or command, and the
// same flags).
type runWork struct {
	scoringWork
	Agent          agent.Spec    `json:"agent"`
	ModelFlags     modelFlags    `json:"model_flags"`
	Name           string        `json:"name"`
	K              int           `json:"k"`
	MaxAttempts    int           `json:"max_attempts"`
	AttemptTimeout time.Duration `json:"attempt_timeout"`
	// Out is the result folder (absolute, on a filesystem every node mounts): the
	// workers write each attempt's agent output there and keep the complete runs of an
	// earlier run of it.
	Out string `json:"out"`
}

func (w *runWork) Command() string { return "run" }

// Open opens what runs the agent on one task as a local run does (run.ItemHandler).
func (args *runWork) Open(_ context.Context, env *workerEnv, _ []string, logf func(string, ...any)) (jobs.Handler, func(), error) {
	c, f := env.c, env.f
	tasks, taskByID, err := args.tasks(f)
	if err != nil {
		return nil, nil, err
	}
	ma, err := newModelAgent(c.Context(), f, args.Agent, &args.ModelFlags)
	if err != nil {
		return nil, nil, err
	}
	command := args.Agent.Raw
	if ma != nil {
		command = ma.Label()
	}
	meta := schemas.EvalSummary{Agent: args.Name, Split: args.Split, Mode: schemas.ModeRun, K: args.K, MaxAttempts: args.MaxAttempts}
	done, err := keptRuns(args.Out, meta, command)
	if err != nil {
		return nil, nil, err
	}
	work, err := os.MkdirTemp("", "envgap-run-*")
	if err != nil {
		return nil, nil, err
	}
	ev, sess, err := args.evaluator(c, f, logf, "run of %s on %d task(s)", command, len(tasks))
	if err != nil {
		os.RemoveAll(work)
		return nil, nil, err
	}
	contained, err := args.ModelFlags.contained(c.Context(), f, args.Agent, agent.CardImages(tasks), sess.Stage)
	if err != nil {
		sess.Close()
		os.RemoveAll(work)
		return nil, nil, err
	}
	do := run.ItemHandler(taskByID, run.Options{
		Evaluator: ev, Materialize: materialize(args.GitURLTemplate), Agent: args.Agent, Model: ma, Contained: contained, K: args.K,
		MaxAttempts: args.MaxAttempts, AttemptTimeout: args.AttemptTimeout, WorkDir: work, OutDir: args.Out,
		ReproCommand: reproCommand(), Done: done, Split: args.Split,
	})
	return do, func() {
		sess.Close()
		os.RemoveAll(work)
	}, nil
}

// runAgentSlurm runs the agent on the split's tasks as a Slurm job array (one item per
// task), for the same result folder as a local run (run.FolderOptions.Remote): the
// outcome and each task's log. Bad input was refused before.
func runAgentSlurm(c *cobra.Command, f *factory, opts *runOptions, tasks []schemas.Task, meta schemas.EvalSummary) (*eval.Outcome, map[string][]byte, error) {
	if _, err := f.OpenStore(); err != nil { // the store the workers share opens here first
		return nil, nil, err
	}
	sw, shared, err := scoringWorkOf(&opts.scoringOptions)
	if err != nil {
		return nil, nil, err
	}
	args := &runWork{scoringWork: sw, Agent: opts.Agent, ModelFlags: opts.modelFlags, Name: meta.Agent, K: opts.K,
		MaxAttempts: opts.MaxAttempts, AttemptTimeout: opts.AttemptTimeout, Out: opts.Out}
	if err := sharedPath(shared, "result folder", &args.Out); err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(args.Out, 0o755); err != nil {
		return nil, nil, err
	}
	if err := sharedPath(shared, "prices file", &args.ModelFlags.Prices); err != nil {
		return nil, nil, err
	}
	progress := f.newProgress()
	out, logs, err := scoreSlurm(c, f, &opts.Slurm, args, tasks, shared, jobs.ItemOf[run.Item], func(it run.Item, done, total int) {
		status := fmt.Sprintf("%d result(s)", len(it.Results))
		if it.Error != "" {
			status = "fault: " + it.Error
		}
		progress.step(done, total, it.InstanceID, status, "")
	})
	progress.finish()
	return out, logs, err
}
