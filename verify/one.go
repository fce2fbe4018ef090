package verify

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
)

// verifyKey is the memo key of one candidate's verification.
type verifyKey struct {
	Candidate schemas.Digest `json:"candidate"`
	Recipe    schemas.Recipe `json:"recipe"`
	ImageID   string         `json:"image_id"`
	Core      string         `json:"core"`
	Repeat    int            `json:"repeat"`
	Limits    sandbox.Limits `json:"limits"`
	// Proposal is the proposal checked as the fix (zero for the candidate's own fix: the
	// keys of candidates without proposals are unchanged).
	Proposal schemas.Digest `json:"proposal,omitzero"`
}

func fail(id string, err error) Result {
	var infra *core.InfraError
	return Result{InstanceID: id, Error: err.Error(), Infra: errors.As(err, &infra), err: err}
}

// ClaimLease is how long a verify's claim on a candidate lasts without a renewal (it is
// renewed every third of it while the candidate runs), and ClaimPoll how often a verify
// that found a candidate claimed looks again once it has run everything else.
var (
	ClaimLease = 2 * time.Minute
	ClaimPoll  = time.Second
)

// claim claims a candidate's verification: at once, or failing with data.ErrClaimed when
// wait is false; waiting for the holder when it is true.
func (s *Stage) claim(ctx context.Context, id string, wait bool) (*data.Claim, error) {
	name := "verify/" + id
	if wait {
		return s.Store.WaitClaim(ctx, name, ClaimLease, ClaimPoll)
	}
	return s.Store.TryClaim(name, ClaimLease)
}

// cached returns the memoised verdict of key, pointing the candidate's verdict ref at it.
func (s *Stage) cached(id string, key schemas.Digest) (Result, bool) {
	d, err := s.Store.Memo("verify", key)
	if err != nil {
		return Result{}, false
	}
	var v schemas.Verdict
	if err := s.Store.GetJSON(d, &v); err != nil || len(s.Store.Missing(d)) > 0 {
		return Result{}, false // lost parts: decide it again
	}
	if err := s.Store.SetRef(verdictRef(&v), d); err != nil {
		return fail(id, err), true
	}
	return Result{InstanceID: id, Outcome: v.Outcome, Reason: v.Reason, Stability: v.Stability, Cached: true, Verdict: d}, true
}

// checkOn is how one candidate is checked: on which core, with which options, and whether
// to wait while another worker holds the candidate's claim (false: come back deferred at
// once).
type checkOn struct {
	core *core.Core
	opts Options
	wait bool
	// gate bounds the runs whose steps execute at once (nil: no bound beyond the caller's).
	gate *core.Gate
}

// one verifies one candidate.
func (s *Stage) one(ctx context.Context, on checkOn, c catalog.CandidateEntry) Result {
	if len(c.GoldFiles) == 0 {
		props, err := s.proposals(&c)
		if err != nil {
			return fail(c.InstanceID, err)
		}
		if len(props) > 0 {
			return s.withProposals(ctx, on, c, props)
		}
	}
	return s.check(ctx, on, c, nil)
}

// check verifies a candidate with its own fix, or with a proposal's (p): the proposal's
// gold_files are the fix and its commands replace the candidate's where given. A verdict
// checking a proposal names it; when it is not verified it is kept under
// proposal-checks/<id>/<proposal> and the candidate stays without a verdict.
func (s *Stage) check(ctx context.Context, on checkOn, c catalog.CandidateEntry, p *proposal) Result {
	cr, opts, wait := on.core, on.opts, on.wait
	id := c.InstanceID
	// The project is fetched only when it is needed: to generate missing commands (once
	// per candidate; the result is memoised) or to run. A re-verify of unchanged
	// candidates fetches nothing.
	var project []core.File
	getProject := func() ([]core.File, error) {
		if project != nil {
			return project, nil
		}
		p, err := s.project(ctx, &c.Candidate, opts)
		project = p
		return p, err
	}
	recipe, err := s.recipe(&c, opts.Recipes, getProject)
	if err != nil {
		return fail(id, err)
	}
	fix := c.GoldFiles
	var pd schemas.Digest
	if p != nil {
		recipe, fix, pd = p.rec.ApplyRecipe(recipe), p.rec.GoldFiles, p.digest
	}
	imageID, err := s.imageID(ctx, cr, recipe.Image)
	if err != nil {
		return fail(id, &core.InfraError{Err: fmt.Errorf("%s: %w", id, err)})
	}
	key, err := schemas.DigestOf(verifyKey{c.Digest, recipe, imageID, core.Version, opts.Repeat, opts.Limits, pd})
	if err != nil {
		return fail(id, err)
	}
	if res, ok := s.cached(id, key); ok {
		return res
	}
	// Claim the candidate, so that another verify on this store (or a worker on another
	// machine) does not run it too; then look again: the holder may have just finished.
	claim, err := s.claim(ctx, id, wait)
	if errors.Is(err, data.ErrClaimed) {
		return Result{InstanceID: id, deferred: true}
	}
	if err != nil {
		return fail(id, &core.InfraError{Err: err})
	}
	defer claim.Release()
	if res, ok := s.cached(id, key); ok {
		return res
	}
	if _, err := getProject(); err != nil {
		return fail(id, err)
	}
	cutoff, err := c.Cutoff()
	if err != nil {
		return fail(id, err)
	}
	var before, after []schemas.Digest
	var obs []Observation
	for i := 0; i < opts.Repeat; i++ {
		b, a, bd, ad, err := s.pair(ctx, cr, on.gate,
			core.Spec{InstanceID: id, Side: core.SideBefore, Project: project, Recipe: recipe, Cutoff: cutoff, Limits: opts.Limits},
			core.Spec{InstanceID: id, Side: core.SideAfter, Project: project, Overlay: fix, Recipe: recipe, Cutoff: cutoff, Limits: opts.Limits},
			imageID, i)
		if err != nil {
			return fail(id, err)
		}
		before, after = append(before, bd), append(after, ad)
		o, err := s.observe(c.Ecosystem, b, a)
		if err != nil {
			return fail(id, err)
		}
		obs = append(obs, o)
	}
	dec := Classify(Case{Set: c.Set, HasFix: len(fix) > 0, Regex: recipe.ExpectedFailureRegex, Signature: c.FailureSignature}, obs)
	v := schemas.Verdict{
		Kind: schemas.KindVerdict, InstanceID: id, Candidate: c.Digest, Key: key, Outcome: dec.Outcome, Reason: dec.Reason,
		IsControl: dec.IsControl, Recipe: recipe, Before: before, After: after, Stability: dec.Stability,
		CoreVersion: core.Version, DecidedAt: opts.Now().UTC().Format(time.RFC3339), FailureSignature: dec.FailureSignature,
		Proposal: pd,
	}
	if dec.DerivedRegex != "" {
		v.Recipe.ExpectedFailureRegex = dec.DerivedRegex
	}
	if dec.Outcome == schemas.OutcomeNotChecked {
		// The failure reproduces but there is no fix to check: a reproduction, not a
		// verdict; the candidate stays not_checked.
		v.Kind = KindReproduction
	}
	// The verdict this one replaces; none when there is none, or when it was lost (this
	// run decides it again).
	if _, prev, err := s.Store.Verdict(id); err == nil {
		if verdictRef(&v) == data.VerdictRef(id) {
			v.Previous = prev
		}
	} else if !errors.Is(err, data.ErrNotFound) && !errors.Is(err, data.ErrDangling) {
		return fail(id, err)
	}
	select {
	case <-claim.Lost():
		return fail(id, &core.InfraError{Err: fmt.Errorf("%s: %w; its verdict is left to the worker that took it", id, data.ErrClaimLost)})
	default:
	}
	d, err := s.Store.PutJSON(&v)
	if err != nil {
		return fail(id, err)
	}
	if err := s.Store.SetMemo("verify", key, d); err != nil {
		return fail(id, err)
	}
	if err := s.Store.SetRef(verdictRef(&v), d); err != nil {
		return fail(id, err)
	}
	return Result{InstanceID: id, Outcome: v.Outcome, Reason: v.Reason, Stability: v.Stability, Verdict: d}
}

// KindReproduction is the record kind of a verify result that is not a verdict: the
// failure reproduced, but the candidate has no reference fix to check (data.RefReproductions).
const KindReproduction = "reproduction"

// verdictRef is the ref a verify result is recorded under: verdicts/<id>; for a
// reproduction (a failure that reproduced with no fix to check), reproductions/<id>; for the
// check of a proposal that did not verify, proposal-checks/<id>/<proposal>.
func verdictRef(v *schemas.Verdict) string {
	if v.Kind == KindReproduction && v.Proposal.IsZero() {
		return data.ReproductionRef(v.InstanceID)
	}
	if !v.Proposal.IsZero() && v.Outcome != schemas.OutcomeVerified {
		return data.ProposalCheckRef(v.InstanceID, v.Proposal)
	}
	return data.VerdictRef(v.InstanceID)
}

// pair runs a candidate's before and after sides (repeat i). With a gate, both
// containers are made ready at once and each waits at the gate for its steps (which still
// run at most --jobs at a time, with the other candidates'); a fault of one side stops the
// other. Without a gate, the sides run one after the other. The runs are the same either
// way: two fresh containers, each with its own registry session.
func (s *Stage) pair(ctx context.Context, cr *core.Core, gate *core.Gate, before, after core.Spec, imageID string, i int) (b, a *schemas.Run, bd, ad schemas.Digest, err error) {
	if gate == nil {
		if b, bd, err = s.run(ctx, cr, before, imageID, "", i); err != nil {
			return nil, nil, bd, ad, err
		}
		a, ad, err = s.run(ctx, cr, after, imageID, "", i)
		return b, a, bd, ad, err
	}
	before.Gate, after.Gate = gate, gate
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var berr, aerr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if a, ad, aerr = s.run(pctx, cr, after, imageID, "", i); aerr != nil {
			cancel()
		}
	}()
	if b, bd, berr = s.run(pctx, cr, before, imageID, "", i); berr != nil {
		cancel()
	}
	wg.Wait()
	// The first fault is the one reported: the other side's is then the cancellation.
	switch {
	case berr != nil && (aerr == nil || !errors.Is(berr, context.Canceled) || ctx.Err() != nil):
		return nil, nil, bd, ad, berr
	case aerr != nil:
		return nil, nil, bd, ad, aerr
	}
	return b, a, bd, ad, nil
}

// run runs one spec, memoised per (spec, image, repeat index) so an interrupted verify
// resumes without repeating finished runs.
func (s *Stage) run(ctx context.Context, cr *core.Core, spec core.Spec, imageID, salt string, i int) (*schemas.Run, schemas.Digest, error) {
	return s.runCached(ctx, cr, spec, imageID, salt, i, nil)
}

// runCached is run; it sets *cached (when not nil) when the memo answered.
func (s *Stage) runCached(ctx context.Context, cr *core.Core, spec core.Spec, imageID, salt string, i int, cached *bool) (*schemas.Run, schemas.Digest, error) {
	r, d, hit, err := core.Memoised(ctx, s.Store, cr.Run, spec, imageID, salt, i)
	if cached != nil {
		*cached = hit
	}
	return r, d, err
}

// observe reduces a before/after pair of runs to what the outcome depends on.
func (s *Stage) observe(eco schemas.Ecosystem, before, after *schemas.Run) (Observation, error) {
	o := Observation{BeforeMatched: before.FailureMatched, AfterResolved: after.Resolved}
	st, line, err := core.FailureOf(s.Store, eco, before)
	if err != nil {
		return o, err
	}
	if st != nil {
		o.BeforeFailed, o.FailedStep, o.FailedLine = true, st.Name, line
		out, err := s.Store.Get(st.Output)
		if err != nil {
			return o, err
		}
		_, o.Recognised = schemas.FailureSignature(eco, string(out))
	}
	if !after.Resolved {
		o.AfterFailure = "no run step"
		st, line, err := core.FailureOf(s.Store, eco, after)
		if err != nil {
			return o, err
		}
		if st != nil {
			o.AfterFailure = fmt.Sprintf("step %s %s: %q", st.Name, core.ExitWords(*st), line)
		}
	}
	return o, nil
}

// project returns a candidate's files at base_commit.
func (s *Stage) project(ctx context.Context, c *schemas.Candidate, opts Options) ([]core.File, error) {
	return core.CandidateProject(ctx, c, opts.Checkout)
}

// recipe returns a candidate's recipe. Missing commands are generated from the project
// once and memoised by the candidate's digest (stage "recipe").
func (s *Stage) recipe(c *catalog.CandidateEntry, gen RecipeSource, project func() ([]core.File, error)) (schemas.Recipe, error) {
	if hasCommands(&c.Candidate) {
		return RecipeFor(&c.Candidate, nil, nil)
	}
	var r schemas.Recipe
	if d, err := s.Store.Memo("recipe", c.Digest); err == nil && s.Store.GetJSON(d, &r) == nil {
		return r, nil
	}
	p, err := project()
	if err != nil {
		return r, err
	}
	if r, err = RecipeFor(&c.Candidate, p, gen); err != nil {
		return r, err
	}
	d, err := s.Store.PutJSON(&r)
	if err == nil {
		err = s.Store.SetMemo("recipe", c.Digest, d)
	}
	return r, err
}

// RecipeFor returns the candidate's recipe, with missing commands filled by gen.
func RecipeFor(c *schemas.Candidate, project []core.File, gen RecipeSource) (schemas.Recipe, error) {
	r := schemas.Recipe{
		Ecosystem: c.Ecosystem, Image: c.Image, BootstrapCommand: c.BootstrapCommand,
		ResolveCommand: c.ResolveCommand, ReproCommand: c.ReproCommand, RunCommand: c.RunCommand,
		D2Command: c.D2Command, ExpectedFailureRegex: c.ExpectedFailureRegex,
	}
	if r.Image == "" {
		r.Image = c.Ecosystem.Image()
	}
	if hasCommands(c) {
		return r, nil
	}
	if gen == nil {
		gen = DefaultRecipe
	}
	g, err := gen(c, project)
	if err != nil {
		return r, fmt.Errorf("%s: default recipe: %w", c.InstanceID, err)
	}
	if r.BootstrapCommand == "" {
		r.BootstrapCommand = g.BootstrapCommand
	}
	if r.ResolveCommand == "" {
		r.ResolveCommand = g.ResolveCommand
		r.Generated = true
	}
	if r.ReproCommand == "" {
		r.ReproCommand = g.ReproCommand
		r.Generated = true
	}
	if r.RunCommand == "" {
		r.RunCommand = g.RunCommand
		r.Generated = true
	}
	return r, nil
}

// hasCommands reports whether a candidate carries every command a run needs.
func hasCommands(c *schemas.Candidate) bool {
	return c.ResolveCommand != "" && c.ReproCommand != "" && c.RunCommand != ""
}
