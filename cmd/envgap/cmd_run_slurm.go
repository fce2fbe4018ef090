package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/envgap/envgap/harness/eval"
	"github.com/envgap/envgap/harness/run"
	"github.com/envgap/envgap/lib/jobs"
	"github.com/envgap/envgap/schemas"
	"github.com/spf13/cobra"
)

// runWork is run --slurm: each item is a task of the split, its K runs done by one worker
// as a local run does them (the same agent, built-in or command, and the same flags).
type runWork struct {
	workerEngine
	Split          string          `json:"split,omitempty"`
	TaskFolder     string          `json:"tasks,omitempty"`
	NoSafeInstall  bool            `json:"no_safe_install,omitempty"`
	Audit          *auditUpstreams `json:"audit,omitempty"`
	Agent          string          `json:"agent"`
	Builtin        builtinFlags    `json:"builtin"`
	Name           string          `json:"name"`
	K              int             `json:"k"`
	MaxAttempts    int             `json:"max_attempts"`
	AttemptTimeout time.Duration   `json:"attempt_timeout"`
	// Out is the result folder (absolute, on a filesystem every node mounts): the
	// workers write each attempt's agent output there and keep the complete runs of an
	// earlier run of it.
	Out string `json:"out"`
}

func (w *runWork) command() string       { return "run" }
func (w *runWork) workers() workerEngine { return w.workerEngine }

// runItem is a worker's result of one task of a run: its runs' results and faults.
type runItem struct {
	InstanceID string               `json:"instance_id"`
	Results    []schemas.EvalResult `json:"results"`
	Faults     []schemas.EvalFault  `json:"faults,omitempty"`
	Log        []byte               `json:"log,omitempty"`
	Ran        int                  `json:"ran"`
	Kept       int                  `json:"kept"`
	Error      string               `json:"error,omitempty"`
}

// handler runs the agent on one task, as a local run does.
func (args *runWork) handler(c *cobra.Command, f *factory, _ []string, logf func(string, ...any)) (jobs.Handler, func(), error) {
	so := &scoringOptions{engineOptions: args.engine(), Split: args.Split, Tasks: args.TaskFolder, NoSafeInstall: args.NoSafeInstall}
	if args.Audit != nil {
		so.auditUpstreams = *args.Audit
	}
	tasks, err := so.splitTasks(f)
	if err != nil {
		return nil, nil, err
	}
	taskByID := make(map[string]*schemas.Task, len(tasks))
	for i := range tasks {
		taskByID[tasks[i].InstanceID] = &tasks[i]
	}
	builtin, err := args.Builtin.agent(c.Context(), args.Agent, f)
	if err != nil {
		return nil, nil, err
	}
	command := args.Agent
	if builtin != nil {
		command = builtin.Label()
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
	ev, sess, err := so.evaluator(c, f)
	if err != nil {
		os.RemoveAll(work)
		return nil, nil, err
	}
	logf("engine %s, registry proxy %s; run of %s on %d task(s)", strings.Join(sess.Hosts(), ","), sess.ProxyURL(), command, len(tasks))
	repro := reproCommand()
	return func(ctx context.Context, item string) (json.RawMessage, string) {
			it := runItem{InstanceID: item, Results: []schemas.EvalResult{}}
			t, ok := taskByID[item]
			if !ok {
				it.Error = "the task is not in the split any more"
			} else {
				out, err := run.Run(ctx, []schemas.Task{*t}, run.Options{
					Evaluator: ev, Materialize: materialize(args.GitURLTemplate), Agent: args.Agent, Builtin: builtin, K: args.K,
					MaxAttempts: args.MaxAttempts, AttemptTimeout: args.AttemptTimeout, WorkDir: work, OutDir: args.Out,
					ReproCommand: repro, Jobs: 1, Done: done,
				})
				switch {
				case out == nil:
					it.Error = fmt.Sprint(err)
				default:
					it.Results, it.Faults, it.Log, it.Ran, it.Kept = out.Results, out.Faults, out.Logs[item], out.Ran, out.Kept
					if err != nil {
						it.Error = err.Error()
					}
				}
			}
			b, _ := json.Marshal(it)
			return b, it.Error
		}, func() {
			sess.Close()
			os.RemoveAll(work)
		}, nil
}

// runAgentSlurm runs the agent on the split's tasks as a Slurm job array (one item per
// task) and writes the same result folder as a local run. Bad input was refused before.
func runAgentSlurm(c *cobra.Command, f *factory, opts *runOptions, tasks []schemas.Task, meta schemas.EvalSummary) error {
	st, err := f.OpenStore()
	if err != nil {
		return err
	}
	audit := opts.auditUpstreams
	args := &runWork{workerEngine: opts.workerEngine(opts.Jobs), Split: opts.Split, NoSafeInstall: opts.NoSafeInstall, Audit: &audit,
		Agent: opts.Agent, Builtin: opts.builtinFlags, Name: meta.Agent, K: opts.K, MaxAttempts: opts.MaxAttempts, AttemptTimeout: opts.AttemptTimeout}
	if args.Out, err = filepath.Abs(opts.Out); err != nil {
		return err
	}
	if err := os.MkdirAll(args.Out, 0o755); err != nil {
		return err
	}
	shared := map[string]string{"result folder": args.Out}
	if opts.Tasks != "" {
		if args.TaskFolder, err = filepath.Abs(opts.Tasks); err != nil {
			return err
		}
		shared["tasks folder"] = args.TaskFolder
	}
	if audit.OSVFile != "" {
		if args.Audit.OSVFile, err = filepath.Abs(audit.OSVFile); err != nil {
			return err
		}
		shared["OSV file"] = args.Audit.OSVFile
	}
	if args.Builtin.Prices != "" {
		if args.Builtin.Prices, err = filepath.Abs(args.Builtin.Prices); err != nil {
			return err
		}
		shared["prices file"] = args.Builtin.Prices
	}
	items := make([]string, len(tasks))
	for i, t := range tasks {
		items[i] = t.InstanceID
	}
	progress := f.newProgress()
	res, err := opts.Slurm.run(c, f, args, items, shared, func(d *jobs.Done, done, total int) {
		it := runItemOf(d)
		status := fmt.Sprintf("%d result(s)", len(it.Results))
		if it.Error != "" {
			status = "fault: " + it.Error
		}
		progress.step(done, total, d.Item, status, "")
	})
	progress.finish()
	if res == nil || err != nil {
		return err
	}
	out := &eval.Outcome{Results: []schemas.EvalResult{}, Faults: []schemas.EvalFault{}}
	logs := map[string][]byte{}
	for i, d := range res.Results {
		it := runItem{InstanceID: items[i], Error: notDone(res)}
		if d != nil {
			it = runItemOf(d)
		}
		out.Results = append(out.Results, it.Results...)
		out.Faults = append(out.Faults, it.Faults...)
		if it.Error != "" && len(it.Faults) == 0 {
			out.Faults = append(out.Faults, schemas.EvalFault{InstanceID: items[i], Error: it.Error})
		}
		out.Ran += it.Ran
		out.Reused += it.Kept
		if len(it.Log) > 0 {
			logs[items[i]] = it.Log
		}
	}
	return finishScoring(f, &eval.Evaluator{Store: st}, scored{dir: opts.Out, meta: meta, tasks: tasks, out: out, logs: logs}, nil)
}

// runItemOf reads a worker's result of one task.
func runItemOf(d *jobs.Done) runItem {
	var it runItem
	if msg := decodeResult(d, &it, &it.InstanceID); msg != "" {
		return runItem{InstanceID: d.Item, Error: msg}
	}
	if it.Results == nil && it.Error == "" {
		it.Error = "the worker's result holds no results"
	}
	return it
}
