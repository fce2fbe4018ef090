package verify

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
	"github.com/sourcegraph/conc/pool"
)

// RecipeSource fills a recipe's missing commands (the default recipe generator).
type RecipeSource func(c *schemas.Candidate, project []core.File) (schemas.Recipe, error)

// Options configures a verify run.
type Options struct {
	// IDs restricts the run to these candidates (verified again when their inputs
	// changed; an unchanged one is not run). Empty: every candidate without a verdict.
	IDs []string
	// Jobs is how many candidates run their steps at once (default 1). As many more are
	// in flight, their containers made ready (created, files copied, started) while those
	// steps run and removed after, so that the engine's own work is not done between
	// steps (core.Gate).
	Jobs int
	// Repeat runs each side this many times (default 1); k/n is recorded.
	Repeat int
	// Limits bound each run.
	Limits sandbox.Limits
	// Checkout materialises GitHub candidates.
	Checkout core.ProjectSource
	// Recipes fills missing commands. Nil: DefaultRecipe.
	Recipes RecipeSource
	// Progress receives progress events (may be nil).
	Progress func(Event)
	// Now is the clock (default time.Now).
	Now func() time.Time

	// serial runs Jobs candidates at a time with no container made ready ahead and no
	// gate (how verify ran before core.Gate), for BenchmarkVerifyEngine's comparison.
	serial bool
}

// Event is one progress event.
type Event struct {
	InstanceID string
	Done       int
	Total      int
	Outcome    schemas.Outcome
	Cached     bool
	Err        error
	Elapsed    time.Duration
}

// Result is one candidate's result of a verify run.
type Result struct {
	InstanceID string          `json:"instance_id"`
	Outcome    schemas.Outcome `json:"outcome,omitempty"`
	Reason     string          `json:"reason,omitempty"`
	Stability  string          `json:"stability,omitempty"`
	Cached     bool            `json:"cached"`
	Verdict    schemas.Digest  `json:"verdict,omitzero"`
	Error      string          `json:"error,omitempty"`
	Infra      bool            `json:"infrastructure_fault,omitempty"`

	err      error // the error behind Error
	deferred bool  // claimed by another worker: try again after the others
}

// Report is what a verify run did.
type Report struct {
	Results []Result `json:"results"`
	Ran     int      `json:"ran"`
	Cached  int      `json:"cached"`
	Failed  int      `json:"failed"`
}

// Stage runs verify over a store with one or more cores (one per engine).
type Stage struct {
	Store catalog.Store
	Cores []*core.Core

	mu       sync.Mutex
	imageIDs map[string]string // core index and image name -> id, for one Run
	nextCore atomic.Uint64     // RunSpec spreads specs over the cores
}

// imageID returns an image's id on a core's engine, asking the engine once per Run.
func (s *Stage) imageID(ctx context.Context, cr *core.Core, name string) (string, error) {
	key := fmt.Sprintf("%p/%s", cr, name)
	s.mu.Lock()
	id, ok := s.imageIDs[key]
	s.mu.Unlock()
	if ok {
		return id, nil
	}
	id, err := cr.ImageID(ctx, name)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	if s.imageIDs == nil {
		s.imageIDs = map[string]string{}
	}
	s.imageIDs[key] = id
	s.mu.Unlock()
	return id, nil
}

// Run verifies the selected candidates. A candidate that hits an infrastructure fault is
// left without a verdict and reported in Report (Failed); the run goes on with the others,
// except on an engine that stopped answering (sandbox.ErrEngineUnresponsive): the
// candidates left for it are not run.
func (s *Stage) Run(ctx context.Context, opts Options) (*Report, error) {
	if len(s.Cores) == 0 {
		return nil, errors.New("verify: no engine")
	}
	if opts.Jobs <= 0 {
		opts.Jobs = 1
	}
	if opts.Repeat <= 0 {
		opts.Repeat = 1
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s.mu.Lock()
	s.imageIDs = nil // images may have been rebuilt since the last Run
	s.mu.Unlock()
	todo, err := s.selectCandidates(opts.IDs)
	if err != nil {
		return nil, err
	}
	rep := &Report{Results: make([]Result, len(todo))}
	var mu sync.Mutex
	done := 0
	var down core.Unresponsive // engines that stopped answering
	start := opts.Now()
	gate, inFlight := core.NewGate(opts.Jobs).RemoveInBackground(), core.Ahead(opts.Jobs)
	if opts.serial {
		gate, inFlight = nil, opts.Jobs
	}
	// Two passes: the first skips candidates another worker has claimed, the second
	// waits for each of those (usually to find its verdict memoised, or to run it when
	// the holder died).
	for _, wait := range []bool{false, true} {
		p := pool.New().WithContext(ctx).WithMaxGoroutines(inFlight)
		for i, c := range todo {
			i, c := i, c
			if wait != rep.Results[i].deferred {
				continue
			}
			p.Go(func(ctx context.Context) error {
				if ctx.Err() != nil {
					return nil
				}
				cr := s.Cores[i%len(s.Cores)]
				var res Result
				if down.Err(cr) != nil {
					err := down.NotRun(cr)
					res = Result{InstanceID: c.InstanceID, Infra: true, Error: err.Error(), err: err}
				} else {
					res = s.one(ctx, checkOn{core: cr, opts: opts, wait: wait, gate: gate}, c)
				}
				mu.Lock()
				rep.Results[i] = res
				if res.deferred {
					mu.Unlock()
					return nil
				}
				down.Note(cr, res.err)
				done++
				ev := Event{InstanceID: c.InstanceID, Done: done, Total: len(todo), Outcome: res.Outcome, Cached: res.Cached, Elapsed: opts.Now().Sub(start)}
				if res.Error != "" {
					ev.Err = errors.New(res.Error)
				}
				mu.Unlock()
				if opts.Progress != nil {
					opts.Progress(ev)
				}
				return nil
			})
		}
		_ = p.Wait()
	}
	// The containers of the last runs are still being removed: the command waits for
	// them, and a container left behind is a fault of the run (not of a candidate: its
	// verdict stands).
	var removeErr error
	if gate != nil {
		if err := gate.Wait(); err != nil {
			removeErr = fmt.Errorf("verify: containers not removed (the next envgap command that opens the engine removes them): %w", err)
		}
	}
	for i, r := range rep.Results {
		if r.InstanceID == "" || r.deferred {
			rep.Results[i] = Result{InstanceID: todo[i].InstanceID, Error: "not run: interrupted"}
		}
		switch {
		case rep.Results[i].Error != "":
			rep.Failed++
		case rep.Results[i].Cached:
			rep.Cached++
		default:
			rep.Ran++
		}
	}
	if err := ctx.Err(); err != nil {
		if removeErr != nil {
			err = errors.Join(err, removeErr)
		}
		return rep, err
	}
	return rep, removeErr
}

// selectCandidates returns the candidates to verify.
func (s *Stage) selectCandidates(ids []string) ([]catalog.CandidateEntry, error) {
	all, err := s.Store.Candidates()
	if err != nil {
		return nil, err
	}
	if len(ids) > 0 {
		byID := map[string]catalog.CandidateEntry{}
		for _, c := range all {
			byID[c.InstanceID] = c
		}
		var out []catalog.CandidateEntry
		var missing []string
		for _, id := range ids {
			c, ok := byID[id]
			if !ok {
				missing = append(missing, id)
				continue
			}
			out = append(out, c)
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("verify: no candidate %s in the store (envgap status lists them)", strings.Join(missing, ", "))
		}
		return out, nil
	}
	var out []catalog.CandidateEntry
	for _, c := range all {
		if c.Outcome != "" && c.Outcome != schemas.OutcomeNotChecked {
			continue // decided by its import (Lite)
		}
		// A not_checked verdict is no verdict ("waiting for its clean-container check"):
		// such a candidate is checked again, with the fixes proposed since.
		if v, _, err := s.Store.Verdict(c.InstanceID); err == nil && v.Outcome != schemas.OutcomeNotChecked {
			continue
		} else if err != nil && !errors.Is(err, data.ErrNotFound) && !errors.Is(err, data.ErrDangling) {
			return nil, err
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].InstanceID < out[j].InstanceID })
	return out, nil
}
