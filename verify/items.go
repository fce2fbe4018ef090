package verify

import (
	"context"
	"errors"
	"time"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/data/catalog"
)

// Verify and recheck one item at a time, for workers that take their items from
// elsewhere (a Slurm job array's workers take them from the store): the same code as Run
// and Recheck, item by item.

// ResultEvent is the progress event of one verified candidate (done of total, elapsed
// since the run started).
func ResultEvent(res Result, done, total int, elapsed time.Duration) Event {
	ev := Event{InstanceID: res.InstanceID, Done: done, Total: total, Outcome: res.Outcome, Cached: res.Cached, Elapsed: elapsed}
	if res.Error != "" {
		ev.Err = errors.New(res.Error)
	}
	return ev
}

// Count sets Ran, Cached and Failed from Results, as Run does.
func (r *Report) Count() {
	r.Ran, r.Cached, r.Failed = 0, 0, 0
	for _, res := range r.Results {
		switch {
		case res.Error != "":
			r.Failed++
		case res.Cached:
			r.Cached++
		default:
			r.Ran++
		}
	}
}

// Select returns the candidates a Run with these ids verifies: the ones named (an unknown
// id is an error), or, with none named, every candidate without a verdict whose import
// did not decide it, sorted by instance id.
func (s *Stage) Select(ids []string) ([]catalog.CandidateEntry, error) {
	return s.selectCandidates(ids)
}

// VerifyOne verifies one candidate on the stage's first engine, exactly as Run does for
// each candidate it selects (the same memo, runs and verdict ref).
func (s *Stage) VerifyOne(ctx context.Context, c catalog.CandidateEntry, opts Options) Result {
	if len(s.Cores) == 0 {
		return fail(c.InstanceID, &core.InfraError{Err: errors.New("verify: no engine")})
	}
	if opts.Repeat <= 0 {
		opts.Repeat = 1
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return s.one(ctx, checkOn{core: s.Cores[0], opts: opts, wait: true}, c) // waits while another worker holds its claim
}
