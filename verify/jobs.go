package verify

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/lib/jobs"
)

// VerifyHandler is verify --slurm's work on a worker: it verifies one candidate of the
// plan's items, as a local verify does; its result is the Result (an infrastructure
// fault gives the item back, to be done again).
func (s *Stage) VerifyHandler(items []string, o Options) (jobs.Handler, error) {
	cands, err := s.Select(items)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]catalog.CandidateEntry, len(cands))
	for _, c := range cands {
		byID[c.InstanceID] = c
	}
	return func(ctx context.Context, item string) (json.RawMessage, string) {
		res := s.VerifyOne(ctx, byID[item], o)
		b, _ := json.Marshal(res)
		if res.Infra {
			return b, res.Error
		}
		return b, ""
	}, nil
}

// RecheckHandler is recheck --slurm's work on a worker: it rechecks one task on date, as
// a local recheck does; its result is the RecheckResult.
func (s *Stage) RecheckHandler(date string, o Options) (jobs.Handler, error) {
	refs, err := s.RecheckTasks()
	if err != nil {
		return nil, err
	}
	byID := make(map[string]data.RefEntry, len(refs))
	for _, r := range refs {
		byID[strings.TrimPrefix(r.Name, data.RefTasks)] = r
	}
	return func(ctx context.Context, item string) (json.RawMessage, string) {
		r, ok := byID[item]
		var res RecheckResult
		if !ok {
			res = RecheckResult{InstanceID: item, Error: "the task is no longer in the store"}
		} else {
			res = s.RecheckOne(ctx, r, date, o)
		}
		b, _ := json.Marshal(res)
		return b, res.Error
	}, nil
}
