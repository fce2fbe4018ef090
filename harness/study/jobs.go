package study

import (
	"context"
	"encoding/json"

	"github.com/envgap/envgap/lib/jobs"
)

// Item is a worker's result of one project of study run --slurm.
type Item struct {
	Rel      string    `json:"rel"`
	Protocol *Protocol `json:"protocol,omitempty"`
	Skipped  bool      `json:"skipped,omitempty"`
	Error    string    `json:"error,omitempty"`
}

// ItemHandler is study run --slurm's work on a worker: it runs one project of the study's
// plan (its folder, Job.Rel), as a local study run does.
func ItemHandler(o RunOptions) (jobs.Handler, error) {
	planned, err := Plan(&o)
	if err != nil {
		return nil, err
	}
	byRel := map[string]Job{}
	for _, j := range planned {
		byRel[j.Rel] = j
	}
	return func(ctx context.Context, item string) (json.RawMessage, string) {
		it := Item{Rel: item}
		j, ok := byRel[item]
		switch {
		case !ok:
			it.Error = "the project is not in the study's plan"
		case Done(o, j):
			it.Skipped = true
		default:
			p, err := RunJob(ctx, o, j)
			if err != nil {
				it.Error = err.Error()
			} else {
				it.Protocol = p
			}
		}
		b, _ := json.Marshal(it)
		return b, it.Error
	}, nil
}

// Head is the item's name and error (jobs.Item).
func (it *Item) Head() (rel, msg *string) { return &it.Rel, &it.Error }

// Lacking says what a result without an error lacks (jobs.Item).
func (it *Item) Lacking() string {
	if it.Protocol == nil && !it.Skipped {
		return "the worker's result holds no protocol"
	}
	return ""
}
