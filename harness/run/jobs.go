package run

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/envgap/envgap/harness/eval"
	"github.com/envgap/envgap/lib/jobs"
	"github.com/envgap/envgap/schemas"
)

// Item is a worker's result of one task of run --slurm: its runs' results and faults.
type Item struct {
	InstanceID string               `json:"instance_id"`
	Results    []schemas.EvalResult `json:"results"`
	Faults     []schemas.EvalFault  `json:"faults,omitempty"`
	Log        []byte               `json:"log,omitempty"`
	Ran        int                  `json:"ran"`
	Kept       int                  `json:"kept"`
	Error      string               `json:"error,omitempty"`
}

// ItemHandler is run --slurm's work on a worker: it runs the agent on one task (tasks by
// instance id), K times, as a local run does (o, one task at a time).
func ItemHandler(tasks map[string]*schemas.Task, o Options) jobs.Handler {
	o.Jobs = 1
	return func(ctx context.Context, item string) (json.RawMessage, string) {
		it := Item{InstanceID: item, Results: []schemas.EvalResult{}}
		t, ok := tasks[item]
		if !ok {
			it.Error = "the task is not in the split any more"
		} else {
			out, err := Run(ctx, []schemas.Task{*t}, o)
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
	}
}

// AddTo adds the task's results, faults and log to a run's.
func (it Item) AddTo(out *eval.Outcome, logs map[string][]byte) {
	out.Results = append(out.Results, it.Results...)
	out.Faults = append(out.Faults, it.Faults...)
	if it.Error != "" && len(it.Faults) == 0 {
		out.Faults = append(out.Faults, schemas.EvalFault{InstanceID: it.InstanceID, Error: it.Error})
	}
	out.Ran += it.Ran
	out.Reused += it.Kept
	if len(it.Log) > 0 {
		logs[it.InstanceID] = it.Log
	}
}

// Head is the item's name and error (jobs.Item).
func (it *Item) Head() (id, msg *string) { return &it.InstanceID, &it.Error }

// Lacking says what a result without an error lacks (jobs.Item).
func (it *Item) Lacking() string {
	if it.Results == nil {
		return "the worker's result holds no results"
	}
	return ""
}
