package eval

import (
	"context"
	"encoding/json"

	"github.com/envgap/envgap/lib/jobs"
	"github.com/envgap/envgap/schemas"
)

// Item is a worker's result of one task of eval --slurm.
type Item struct {
	InstanceID string              `json:"instance_id"`
	Result     *schemas.EvalResult `json:"result,omitempty"`
	Cached     bool                `json:"cached,omitempty"`
	Error      string              `json:"error,omitempty"`
}

// ItemHandler is eval --slurm's work on a worker: it scores one task's prediction
// (predictions by instance id, as Match gives them), as a local eval does.
func ItemHandler(ev *Evaluator, tasks map[string]*schemas.Task, preds map[string]*schemas.Prediction) jobs.Handler {
	return func(ctx context.Context, item string) (json.RawMessage, string) {
		it := Item{InstanceID: item}
		t, ok := tasks[item]
		if !ok {
			it.Error = "the task is not in the split any more"
		} else {
			r, cached, err := ev.Score(ctx, t, preds[item])
			it.Result, it.Cached = r, cached
			if err != nil {
				it.Result, it.Error = nil, err.Error()
			}
		}
		b, _ := json.Marshal(it)
		return b, it.Error
	}
}

// AddTo adds the task's result (or fault) to a run's outcome.
func (it Item) AddTo(out *Outcome, _ map[string][]byte) {
	switch {
	case it.Error != "":
		out.Faults = append(out.Faults, schemas.EvalFault{InstanceID: it.InstanceID, Error: it.Error})
	default:
		out.Results = append(out.Results, *it.Result)
		if it.Cached {
			out.Reused++
		} else {
			out.Ran++
		}
	}
}

// Head is the item's name and error (jobs.Item).
func (it *Item) Head() (id, msg *string) { return &it.InstanceID, &it.Error }

// Lacking says what a result without an error lacks (jobs.Item).
func (it *Item) Lacking() string {
	if it.Result == nil {
		return "the worker's result holds no result"
	}
	return ""
}
