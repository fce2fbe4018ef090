package eval

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/core/deps"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/lib/envfiles"
	"github.com/envgap/envgap/lib/safeinstall"
	"github.com/envgap/envgap/schemas"
	"github.com/sourcegraph/conc/pool"
)

// Version names the scoring rules. It is part of every result's memo key: change it when
// a change here could change a result.
const Version = "envgap-eval/2"

// Store is what the evaluator reads and writes: run records and step outputs, and its
// memoised results.
type Store interface {
	data.Objects
	data.Memos
}

// Evaluator scores predictions. Store and Runner are required.
type Evaluator struct {
	Store  Store
	Runner core.SpecRunner
	// Checkout fetches a GitHub task's base commit alone (verify's checkout).
	Checkout core.ProjectSource
	// SafeInstall measures the safe-install share of the declared packages (the registry
	// audit's check); nil leaves it not measured. An error is a fault of the registries,
	// not of the prediction: the result is kept with safe install not measured
	// (SafeInstallUnreachable), never held back.
	SafeInstall *safeinstall.Checker
	// SafeInstallSource names the registries and advisories SafeInstall asks (part of
	// the memo key: another source scores again, without running a container).
	SafeInstallSource string
	Limits            sandbox.Limits
}

// resultKey is the memo key of one scored prediction (stage "eval").
type resultKey struct {
	Version    string         `json:"version"`
	Core       string         `json:"core"`
	Task       schemas.Digest `json:"task"`
	Prediction schemas.Digest `json:"prediction"`
	ImageID    string         `json:"image_id"`
	Limits     sandbox.Limits `json:"limits"`
	Safe       string         `json:"safe_install"`
}

// SafeInstallUnreachable starts the safe-install reason of a result whose registries or
// advisory database did not answer: the main score is recorded, safe install is not
// measured, and the reason says how to measure it or leave it out. Such a result is not
// memoised, so the same command measures it once they answer.
const SafeInstallUnreachable = "not measured: the registries or the advisory database did not answer"

// SafeInstallHowTo says how to measure safe install where the public services are not
// reachable, or how to leave it out.
const SafeInstallHowTo = "to measure it, give --osv FILE (an OSV export) and a --pypi, --npm-registry or --maven this machine reaches; to leave it out, --no-safe-install"

// Fault is an infrastructure fault: the task has no result and is tried again next time.
type Fault struct{ Err error }

func (f *Fault) Error() string { return f.Err.Error() }
func (f *Fault) Unwrap() error { return f.Err }

// Score evaluates one prediction for one task: the files are checked (paths inside the
// project, environment files only, text), the trajectory read for the later-history
// rules, the project run in a fresh container with the files applied, and manifest F1
// and safe install measured. The result is memoised in the store: the same task,
// prediction and image are scored once (cached reports a memo answer). An error is a
// fault (*Fault for the infrastructure, or the context's error): no result.
func (e *Evaluator) Score(ctx context.Context, t *schemas.Task, p *schemas.Prediction) (*schemas.EvalResult, bool, error) {
	return e.scoreAt(ctx, t, p, nil)
}

// scoreAt is Score, its run waiting at gate (when not nil) for its steps (core.Gate).
func (e *Evaluator) scoreAt(ctx context.Context, t *schemas.Task, p *schemas.Prediction, gate *core.Gate) (*schemas.EvalResult, bool, error) {
	if p == nil {
		return nil, false, fmt.Errorf("%s: no prediction", t.InstanceID)
	}
	td, err := schemas.DigestOf(t)
	if err != nil {
		return nil, false, err
	}
	pd, err := schemas.DigestOf(p)
	if err != nil {
		return nil, false, err
	}
	recipe := core.TaskRecipe(t)
	imageID, err := e.Runner.ImageID(ctx, recipe.Image)
	if err != nil {
		return nil, false, &Fault{fmt.Errorf("%s: image %s: %w", t.InstanceID, recipe.Image, err)}
	}
	key, err := schemas.DigestOf(resultKey{Version, core.Version, td, pd, imageID, e.Limits, e.SafeInstallSource})
	if err != nil {
		return nil, false, err
	}
	if d, err := e.Store.Memo("eval", key); err == nil {
		var r schemas.EvalResult
		if err := e.Store.GetJSON(d, &r); err == nil && r.Kind == schemas.KindEvalResult {
			return &r, true, nil
		}
	}
	r, err := e.score(ctx, t, p, recipe, gate)
	if err != nil {
		return nil, false, err
	}
	// The prediction is kept whole (its trajectory verbatim): envgap cat DIGEST shows it.
	if _, err := e.Store.PutJSON(p); err != nil {
		return nil, false, &Fault{err}
	}
	r.Prediction, r.ImageID = pd, imageID
	d, err := e.Store.PutJSON(r)
	if err != nil {
		return nil, false, &Fault{err}
	}
	if strings.HasPrefix(r.Safe.Reason, SafeInstallUnreachable) {
		return r, false, nil // measured again next time
	}
	if err := e.Store.SetMemo("eval", key, d); err != nil {
		return nil, false, &Fault{err}
	}
	return r, false, nil
}

// NewResult returns the result of a prediction that was not run (the harness refused
// it, or the agent did not finish): status and reason as given, the prediction's files,
// trajectory reading and cost filled in.
func NewResult(t *schemas.Task, p *schemas.Prediction, status, reason string) *schemas.EvalResult {
	r := newResult(t, p)
	r.Status, r.Reason = status, reason
	if d, err := schemas.DigestOf(p); err == nil {
		r.Prediction = d
	}
	return r
}

func newResult(t *schemas.Task, p *schemas.Prediction) *schemas.EvalResult {
	r := &schemas.EvalResult{
		Kind: schemas.KindEvalResult, SchemaVersion: schemas.EvalSchemaVersion, InstanceID: t.InstanceID,
		Source: t.Source, IsControl: t.IsControl, Excluded: t.ExcludedFromScoring, Run: 1, Attempt: 1,
		Leaks: []schemas.Leak{}, Files: []string{}, DeletedFiles: []string{}, Steps: []schemas.EvalStep{},
		D1: []string{}, D3: []string{}, CostUSD: p.CostUSD, CoreVersion: core.Version,
		ManifestF1: schemas.ManifestScore{Phantom: []string{}, Hidden: []string{}},
	}
	if t.ExclusionReason != nil {
		r.ExclusionReason = *t.ExclusionReason
	}
	for _, f := range p.Overlay() {
		if f.Content == nil {
			r.DeletedFiles = append(r.DeletedFiles, f.Path)
		} else {
			r.Files = append(r.Files, f.Path)
		}
	}
	steps, shape, ok := readTrajectory(p.Trajectory)
	switch {
	case !ok:
		r.Trajectory = "not inspected: " + shape
	case shape == "empty":
		r.Trajectory = "empty"
	default:
		r.Trajectory = "inspected (" + shape + ")"
		r.Leaks = findLeaks(t, steps, p.Files)
	}
	return r
}

func (e *Evaluator) score(ctx context.Context, t *schemas.Task, p *schemas.Prediction, recipe schemas.Recipe, gate *core.Gate) (*schemas.EvalResult, error) {
	r := newResult(t, p)
	ov := p.Overlay()
	reject := func(path, why string) (*schemas.EvalResult, error) {
		r.Status, r.Rejection, r.Reason = schemas.EvalRejected, path, why
		return r, nil
	}
	// Checks that need no project: paths and text.
	for _, f := range ov {
		if err := schemas.CheckRelPath(f.Path); err != nil {
			return reject(f.Path, "refused path: "+err.Error())
		}
		if f.Content != nil && binary(*f.Content) {
			return reject(f.Path, fmt.Sprintf("binary content in %s (a NUL byte): environment files are text", f.Path))
		}
	}
	project, err := core.TaskProject(ctx, t, e.Checkout)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &Fault{err}
	}
	if _, err := core.ApplyOverlay(project, ov); err != nil {
		return reject(firstPath(ov, err), strings.TrimPrefix(err.Error(), core.ErrOverlay.Error()+": "))
	}
	if path := envfiles.SourceChange(project, ov); path != "" {
		return reject(path, "changes source file "+path)
	}
	cutoff, err := t.Cutoff()
	if err != nil {
		return nil, &Fault{fmt.Errorf("%s: the task cannot run: %w", t.InstanceID, err)}
	}
	run, rd, _, err := e.Runner.RunSpec(ctx, core.Spec{
		InstanceID: t.InstanceID, Side: core.SidePrediction, Project: project, Overlay: ov, Recipe: recipe,
		Cutoff: cutoff, Limits: e.Limits, ManifestPaths: t.ManifestPaths, Gate: gate,
	}, "eval")
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var infra *core.InfraError
		if errors.As(err, &infra) {
			return nil, &Fault{err}
		}
		return nil, &Fault{fmt.Errorf("%s: the task cannot run: %w", t.InstanceID, err)}
	}
	r.RunRecord, r.ChecksPassed = rd, run.Resolved
	for _, st := range run.Steps {
		r.Steps = append(r.Steps, schemas.EvalStep{Name: st.Name, Command: st.Command, ExitCode: st.ExitCode,
			TimedOut: st.TimedOut, DurationMS: st.DurationMS, Output: st.Output, FullOutput: st.FullOutput,
			OutputSize: st.OutputSize, Truncated: st.Truncated})
	}
	r.D1, r.D3 = depNames(t.Ecosystem, run.D1), depNames(t.Ecosystem, run.D3)
	c := deps.Compare(t.Ecosystem, run.D1, run.D3)
	r.ManifestF1 = schemas.ManifestScore{Measured: c.Measured, Reason: c.Reason, Precision: c.Precision,
		Recall: c.Recall, F1: c.F1, Phantom: nonNil(c.Phantom), Hidden: nonNil(c.Hidden)}
	switch {
	case e.SafeInstall == nil:
		r.Safe.Reason = "not measured: no registry audit was asked for"
	case run.D1.Unreadable != "":
		r.Safe.Reason = "not measured: " + run.D1.Unreadable
	default:
		s, err := e.SafeInstall.Score(ctx, t.Ecosystem, cutoff, run.D1.Deps)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			s = schemas.SafeInstallScore{Reason: fmt.Sprintf("%s (%v); %s", SafeInstallUnreachable, err, SafeInstallHowTo)}
		}
		r.Safe = s
	}
	switch {
	case len(r.Leaks) > 0:
		r.Status = schemas.EvalLeaked
		l := r.Leaks[0]
		r.Reason = fmt.Sprintf("the trajectory read the later history (rule %s, step %d: %s)", l.Rule, l.Step, l.Evidence)
	case run.Resolved:
		r.Status, r.Resolved = schemas.EvalResolved, true
	default:
		r.Status = schemas.EvalUnresolved
		r.Reason = core.RunFailure(e.Store, t.Ecosystem, run)
		if len(r.DeletedFiles) > 0 {
			r.Reason += fmt.Sprintf("; the prediction deletes %s", strings.Join(r.DeletedFiles, ", "))
		}
	}
	return r, nil
}

// firstPath returns the overlay path an ApplyOverlay error names.
func firstPath(ov []schemas.File, err error) string {
	for _, f := range ov {
		if strings.Contains(err.Error(), fmt.Sprintf("%q", f.Path)) {
			return f.Path
		}
	}
	return ""
}

func depNames(eco schemas.Ecosystem, ds schemas.DepSet) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, d := range ds.Deps {
		if k := deps.Key(eco, d.Name); k != "" && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Event is one task's progress.
type Event struct {
	InstanceID string
	Done       int
	Total      int
	Result     *schemas.EvalResult
	Cached     bool
	Err        error
}

// Outcome is what one evaluation of a split did.
type Outcome struct {
	Results []schemas.EvalResult
	Faults  []schemas.EvalFault
	Ran     int // results scored now
	Reused  int // results taken from the memo
}

// Eval scores every task's prediction, jobs at a time: jobs runs execute their steps at
// once while as many more have their containers made ready (core.Gate). A fault leaves its task without a
// result (listed in Faults); the others are scored, except on an engine that stopped
// answering (sandbox.ErrEngineUnresponsive): the tasks left are not sent to it (faults,
// "not run"), as verify does. The context's error is returned when cancelled.
func (e *Evaluator) Eval(ctx context.Context, tasks []schemas.Task, preds map[string]*schemas.Prediction, jobs int, progress func(Event)) (*Outcome, error) {
	if jobs < 1 {
		jobs = 1
	}
	res := make([]*schemas.EvalResult, len(tasks))
	errs := make([]error, len(tasks))
	cached := make([]bool, len(tasks))
	var mu sync.Mutex
	var down core.Unresponsive
	done := 0
	gate := core.NewGate(jobs)
	p := pool.New().WithContext(ctx).WithMaxGoroutines(core.Ahead(jobs))
	for i := range tasks {
		p.Go(func(ctx context.Context) error {
			if ctx.Err() != nil {
				errs[i] = ctx.Err()
				return nil
			}
			var r *schemas.EvalResult
			var c bool
			var err error
			if down.Err(e.Runner) != nil {
				err = &Fault{fmt.Errorf("%s: %w", tasks[i].InstanceID, down.NotRun(e.Runner))}
			} else {
				r, c, err = e.scoreAt(ctx, &tasks[i], preds[tasks[i].InstanceID], gate)
				down.Note(e.Runner, err)
			}
			res[i], cached[i], errs[i] = r, c, err
			mu.Lock()
			done++
			ev := Event{InstanceID: tasks[i].InstanceID, Done: done, Total: len(tasks), Result: r, Cached: c, Err: err}
			mu.Unlock()
			if progress != nil {
				progress(ev)
			}
			return nil
		})
	}
	_ = p.Wait()
	out := &Outcome{Results: []schemas.EvalResult{}, Faults: []schemas.EvalFault{}}
	for i := range tasks {
		switch {
		case errs[i] != nil:
			out.Faults = append(out.Faults, schemas.EvalFault{InstanceID: tasks[i].InstanceID, Error: errs[i].Error()})
		default:
			out.Results = append(out.Results, *res[i])
			if cached[i] {
				out.Reused++
			} else {
				out.Ran++
			}
		}
	}
	return out, ctx.Err()
}
