package verify

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/schemas"
)

// RecheckResult is what a recheck found for one task.
type RecheckResult struct {
	InstanceID string           `json:"instance_id"`
	Kind       schemas.TaskKind `json:"kind"`
	Unchanged  schemas.Digest   `json:"unchanged_run,omitzero"`
	WithFix    schemas.Digest   `json:"fix_run,omitzero"`
	// UnchangedRuns / FixRuns: whether the unchanged project / the fixed one resolved.
	UnchangedRuns bool   `json:"unchanged_runs"`
	FixRuns       bool   `json:"fix_runs"`
	Excluded      bool   `json:"excluded"`
	Reason        string `json:"reason,omitempty"`
	AlreadyExcl   bool   `json:"already_excluded,omitempty"`
	Error         string `json:"error,omitempty"`

	err error // the error behind Error, when a run failed
}

// Recheck is the record of one recheck (ref rechecks/<date>).
type Recheck struct {
	Kind        schemas.RecordKind `json:"kind"`
	Date        string             `json:"date"`
	CoreVersion string             `json:"core_version"`
	Results     []RecheckResult    `json:"results"`
}

// RecheckDate parses a recheck date (YYYY-MM-DD or RFC 3339) and returns its label (the
// day) and the time exclusions it finds are dated (the given time, or the start of that
// day UTC).
func RecheckDate(s string) (label string, since time.Time, err error) {
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return s, t.UTC(), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC().Format("2006-01-02"), t.UTC(), nil
	}
	return "", time.Time{}, fmt.Errorf("recheck date %q: give YYYY-MM-DD or an RFC 3339 time", s)
}

// Recheck runs every task again through the core, unchanged and with its fix, and
// applies the card's rules: a repair task that passes with no change at all, or whose
// reference fix no longer makes it run, is excluded; a control that no longer works is
// excluded. Nothing is deleted: exclusions are new records (ref exclusions/<id>) and the
// recheck itself is kept (ref rechecks/<date>). Running the same recheck twice changes
// nothing. An engine that stops answering (sandbox.ErrEngineUnresponsive) gets no more
// tasks: those left for it are recorded not run (an error, no exclusion), as verify does.
func (s *Stage) Recheck(ctx context.Context, date string, opts Options) (*Recheck, error) {
	label, _, err := RecheckDate(date)
	if err != nil {
		return nil, err
	}
	if len(s.Cores) == 0 {
		return nil, errors.New("recheck: no engine")
	}
	refs, err := s.RecheckTasks()
	if err != nil {
		return nil, err
	}
	var results []RecheckResult
	var down core.Unresponsive
	for i, r := range refs {
		if ctx.Err() != nil {
			return &Recheck{Kind: schemas.KindRecheck, Date: label, CoreVersion: core.Version, Results: results}, ctx.Err()
		}
		cr := s.Cores[i%len(s.Cores)]
		var res RecheckResult
		if down.Err(cr) != nil {
			res = RecheckResult{InstanceID: strings.TrimPrefix(r.Name, data.RefTasks), Error: (&core.InfraError{Err: down.NotRun(cr)}).Error()}
		} else {
			res = s.recheckTask(ctx, cr, r, date, opts)
			down.Note(cr, res.err)
		}
		results = append(results, res)
		if opts.Progress != nil {
			opts.Progress(RecheckEvent(res, i+1, len(refs)))
		}
	}
	return s.SaveRecheck(date, results)
}

// RecheckTasks returns the task refs a recheck reruns, in the order it reruns them.
func (s *Stage) RecheckTasks() ([]data.RefEntry, error) { return s.Store.Refs(data.RefTasks) }

// RecheckOne reruns one task (its ref, from RecheckTasks) on the stage's first engine,
// exactly as Recheck does for each task; the exclusion it finds is recorded. A worker that
// takes tasks one at a time from elsewhere (a Slurm job array) calls it, and the results
// are then saved with SaveRecheck.
func (s *Stage) RecheckOne(ctx context.Context, task data.RefEntry, date string, opts Options) RecheckResult {
	if len(s.Cores) == 0 {
		return RecheckResult{InstanceID: strings.TrimPrefix(task.Name, data.RefTasks), Error: (&core.InfraError{Err: errors.New("recheck: no engine")}).Error()}
	}
	return s.recheckTask(ctx, s.Cores[0], task, date, opts)
}

func (s *Stage) recheckTask(ctx context.Context, cr *core.Core, r data.RefEntry, date string, opts Options) RecheckResult {
	label, since, err := RecheckDate(date)
	if err != nil {
		return RecheckResult{InstanceID: strings.TrimPrefix(r.Name, data.RefTasks), Error: err.Error()}
	}
	var t schemas.Task
	if err := s.Store.GetJSON(r.Digest, &t); err != nil {
		return RecheckResult{InstanceID: strings.TrimPrefix(r.Name, data.RefTasks), Error: err.Error()}
	}
	return s.recheckOne(ctx, cr, rechecked{task: t, label: label, since: since}, opts)
}

// RecheckEvent is the progress event of one rechecked task (done of total).
func RecheckEvent(res RecheckResult, done, total int) Event {
	ev := Event{InstanceID: res.InstanceID, Done: done, Total: total, Outcome: schemas.OutcomeTask}
	if res.Error != "" {
		ev.Err = errors.New(res.Error)
	}
	return ev
}

// SaveRecheck records a recheck's results (ref rechecks/<day>) and returns the record.
func (s *Stage) SaveRecheck(date string, results []RecheckResult) (*Recheck, error) {
	label, _, err := RecheckDate(date)
	if err != nil {
		return nil, err
	}
	rec := &Recheck{Kind: schemas.KindRecheck, Date: label, CoreVersion: core.Version, Results: results}
	d, err := s.Store.PutJSON(rec)
	if err != nil {
		return rec, err
	}
	return rec, s.Store.SetRef(data.RecheckRef(label), d)
}

// rechecked is what one recheck of a task reruns: the task row and the recheck's day
// (label) with its registry cut-off (since).
type rechecked struct {
	task  schemas.Task
	label string
	since time.Time
}

func (s *Stage) recheckOne(ctx context.Context, cr *core.Core, rc rechecked, opts Options) RecheckResult {
	t, label, since := rc.task, rc.label, rc.since
	kind := schemas.KindOf(&t)
	res := RecheckResult{InstanceID: t.InstanceID, Kind: kind}
	if prev, err := s.Store.Exclusion(t.InstanceID); err == nil && prev.Recheck != label {
		// Excluded earlier (by hand or by another recheck): kept as it is.
		res.AlreadyExcl, res.Excluded, res.Reason = true, true, prev.Reason
		return res
	} else if err != nil && !errors.Is(err, data.ErrNotFound) {
		res.Error = err.Error()
		return res
	}
	// Claimed, so that two rechecks of one date on this store (or workers on several
	// machines) run each task once: the second finds the runs memoised.
	claim, err := s.Store.WaitClaim(ctx, "recheck/"+label+"/"+t.InstanceID, ClaimLease, ClaimPoll)
	if err != nil {
		res.Error = (&core.InfraError{Err: err}).Error()
		return res
	}
	defer claim.Release()
	project, err := core.TaskProject(ctx, &t, opts.Checkout)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	recipe := core.TaskRecipe(&t)
	imageID, err := cr.ImageID(ctx, recipe.Image)
	if err != nil {
		res.Error, res.err = (&core.InfraError{Err: err}).Error(), err
		return res
	}
	// The recheck date is part of each run's memo key: a new recheck runs again, the same
	// one does not.
	tag := "recheck-" + label
	cutoff, err := t.Cutoff()
	if err != nil {
		res.Error, res.err = err.Error(), err
		return res
	}
	base := core.Spec{InstanceID: t.InstanceID, Side: core.SideAfter, Project: project, Recipe: recipe,
		Cutoff: cutoff, Limits: opts.Limits}
	un, ud, err := s.run(ctx, cr, base, imageID, tag+"/unchanged", 0)
	if err != nil {
		res.Error, res.err = err.Error(), err
		return res
	}
	res.Unchanged, res.UnchangedRuns = ud, un.Resolved
	day := label
	switch {
	case t.IsControl:
		if !un.Resolved {
			res.Excluded = true
			res.Reason = fmt.Sprintf("The control no longer works with no change on the %s recheck: %s.", day, core.RunFailure(s.Store, t.Ecosystem, un))
		}
	default:
		fixed := base
		fixed.Overlay = t.GoldFiles
		fr, fd, err := s.run(ctx, cr, fixed, imageID, tag+"/fix", 0)
		if err != nil {
			res.Error, res.err = err.Error(), err
			return res
		}
		res.WithFix, res.FixRuns = fd, fr.Resolved
		switch {
		case un.Resolved:
			res.Excluded = true
			res.Reason = fmt.Sprintf("Passed with no change at all on the %s recheck, so doing nothing would count as a fix.", day)
		case !fr.Resolved:
			who := "reference fix"
			if t.Source == schemas.SourceRepaired {
				who = "maintainers' fix"
			}
			res.Excluded = true
			res.Reason = fmt.Sprintf("The %s no longer made the project run on the %s recheck.", who, day)
		}
	}
	if res.Excluded {
		ex := schemas.Exclusion{Kind: schemas.KindExclusion, InstanceID: t.InstanceID, TaskKind: kind, Reason: res.Reason,
			Since: since.Format(time.RFC3339), Recheck: label}
		d, err := s.Store.PutJSON(&ex)
		if err == nil {
			err = s.Store.SetRef(data.ExclusionRef(t.InstanceID), d)
		}
		if err != nil {
			res.Error = err.Error()
		}
	}
	return res
}
