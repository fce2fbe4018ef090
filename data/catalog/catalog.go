package catalog

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/schemas"
)

// Verdict returns the latest verdict of a candidate, or data.ErrNotFound when it has none.
// A verdict ref whose object is lost is a *data.DanglingError, never "no verdict".
func (s *Catalog) Verdict(id string) (schemas.Verdict, schemas.Digest, error) {
	var v schemas.Verdict
	d, err := s.RefJSON(data.VerdictRef(id), &v)
	if errors.Is(err, data.ErrDangling) {
		err = fmt.Errorf("the verdict of %s is lost: %w; run envgap verify --ids %s to decide it again", id, err, id)
	}
	return v, d, err
}

// Exclusion returns the latest exclusion of a task, or data.ErrNotFound when it has none
// (a lost one is a *data.DanglingError).
func (s *Catalog) Exclusion(id string) (schemas.Exclusion, error) {
	var e schemas.Exclusion
	_, err := s.RefJSON(data.ExclusionRef(id), &e)
	return e, err
}

// Tasks returns the store's task set: every admitted task row with its latest exclusion
// applied, sorted by instance id.
func (s *Catalog) Tasks() ([]schemas.Task, error) {
	refs, err := s.Refs(data.RefTasks)
	if err != nil {
		return nil, err
	}
	out := make([]schemas.Task, 0, len(refs))
	for _, r := range refs {
		var t schemas.Task
		if _, err := s.RefJSON(r.Name, &t); err != nil {
			return nil, fmt.Errorf("task %s: %w", strings.TrimPrefix(r.Name, data.RefTasks), err)
		}
		ex, err := s.Exclusion(t.InstanceID)
		switch {
		case err == nil:
			ApplyExclusion(&t, ex)
		case !errors.Is(err, data.ErrNotFound):
			return nil, err
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].InstanceID < out[j].InstanceID })
	return out, nil
}

// ApplyExclusion sets a task row's exclusion fields from an exclusion record.
func ApplyExclusion(t *schemas.Task, ex schemas.Exclusion) {
	reason, since := ex.Reason, ex.Since
	t.ExcludedFromScoring = true
	t.ExclusionReason = &reason
	t.ExcludedSince = &since
}

// ReasonReproducedNoFix is the not_checked reason of a candidate whose failure reproduced
// but that has no reference fix to check (a reproduction, not a verdict).
const ReasonReproducedNoFix = "no verdict yet: the failure reproduces in a clean container, but there is no reference fix to check; waiting for one (gold_files, envgap propose) and its clean-container check"

// Status is a candidate's current outcome and the reason for it.
type Status struct {
	Outcome schemas.Outcome `json:"outcome"`
	Reason  string          `json:"reason"`
}

// CurrentOutcome derives a candidate's outcome from the store: task when admitted, else
// the latest verdict, else the outcome its import decided, else not_checked.
func (s *Catalog) CurrentOutcome(c schemas.Candidate) (Status, error) {
	if _, err := s.Ref(data.TaskRef(c.InstanceID)); err == nil {
		return Status{schemas.OutcomeTask, "admitted as a task"}, nil
	} else if !errors.Is(err, data.ErrNotFound) {
		return Status{}, err
	}
	v, _, err := s.Verdict(c.InstanceID)
	if err == nil {
		return s.proposalsFailed(c.InstanceID, Status{v.Outcome, v.Reason})
	}
	if !errors.Is(err, data.ErrNotFound) {
		return Status{}, err
	}
	if c.Outcome != "" && c.Outcome != schemas.OutcomeNotChecked {
		return Status{c.Outcome, c.Reason}, nil
	}
	st := Status{schemas.OutcomeNotChecked, "no verdict yet: waiting for its clean-container check (envgap verify)"}
	if _, err := s.Ref(data.ReproductionRef(c.InstanceID)); err == nil {
		st.Reason = ReasonReproducedNoFix
	} else if !errors.Is(err, data.ErrNotFound) {
		return Status{}, err
	}
	return s.proposalsFailed(c.InstanceID, st)
}

// proposalsFailed gives a not_checked candidate with proposed fixes (envgap propose) the
// reason that says where they stand: all failed their check (with the latest check's
// reason), all refused before any check (with the latest refusal's reason: a source file
// changed, nothing changed, ...), or one waiting for its check.
func (s *Catalog) proposalsFailed(id string, st Status) (Status, error) {
	if st.Outcome != schemas.OutcomeNotChecked {
		return st, nil
	}
	checks, err := s.Refs(data.ProposalChecksOf(id))
	if err != nil {
		return st, err
	}
	props, err := s.Refs(data.ProposalsOf(id))
	if err != nil {
		return st, err
	}
	checked := map[schemas.Digest]bool{}
	var latest schemas.Verdict
	for _, r := range checks {
		var v schemas.Verdict
		if err := s.GetJSON(r.Digest, &v); err != nil {
			return st, fmt.Errorf("proposal check %s: %w", r.Name, err)
		}
		checked[v.Proposal] = true
		if v.DecidedAt >= latest.DecidedAt {
			latest = v
		}
	}
	var refused, pending int
	var lastRefused schemas.Proposal
	var lastRefusedD schemas.Digest
	for _, r := range props {
		if checked[r.Digest] {
			continue
		}
		var p schemas.Proposal
		if err := s.GetJSON(r.Digest, &p); err != nil {
			return st, fmt.Errorf("proposal %s: %w", r.Name, err)
		}
		if p.Refused == "" {
			pending++
			continue
		}
		refused++
		if p.ProposedAt >= lastRefused.ProposedAt {
			lastRefused, lastRefusedD = p, r.Digest
		}
	}
	switch {
	case pending > 0:
		st.Reason = fmt.Sprintf("no verdict yet: %d proposed fix(es) (envgap propose) wait for their clean-container check (envgap verify)", pending)
	case len(checks) > 0:
		st.Reason = fmt.Sprintf("no verdict yet: waiting for a working fix; %d proposed fix(es) (envgap propose) did not verify, the latest (proposal %s): %s",
			len(checks), latest.Proposal.Short(), latest.Reason)
		if refused > 0 {
			st.Reason += fmt.Sprintf("; %d more refused before any check, the latest (proposal %s): %s", refused, lastRefusedD.Short(), lastRefused.Refused)
		}
	case refused > 0:
		st.Reason = fmt.Sprintf("no verdict yet: the failure reproduces in a clean container, but the %d proposed fix(es) (envgap propose) were refused before any check, the latest (proposal %s): %s; waiting for a fix that can be checked (gold_files, envgap propose)",
			refused, lastRefusedD.Short(), lastRefused.Refused)
	}
	return st, nil
}

// Funnel counts candidates by set and outcome, and tasks by set.
type Funnel struct {
	Candidates map[schemas.Source]map[schemas.Outcome]int `json:"candidates"`
	Tasks      map[schemas.Source]int                     `json:"tasks"`
	Excluded   map[schemas.Source]int                     `json:"excluded"`
	Total      int                                        `json:"total_candidates"`
	TaskTotal  int                                        `json:"total_tasks"`
}

// ComputeFunnel reads the store and counts the funnel.
func (s *Catalog) ComputeFunnel() (*Funnel, error) {
	f := &Funnel{Candidates: map[schemas.Source]map[schemas.Outcome]int{}, Tasks: map[schemas.Source]int{}, Excluded: map[schemas.Source]int{}}
	cands, err := s.Candidates()
	if err != nil {
		return nil, err
	}
	for _, c := range cands {
		st, err := s.CurrentOutcome(c.Candidate)
		if err != nil {
			return nil, err
		}
		if f.Candidates[c.Set] == nil {
			f.Candidates[c.Set] = map[schemas.Outcome]int{}
		}
		f.Candidates[c.Set][st.Outcome]++
		f.Total++
	}
	tasks, err := s.Tasks()
	if err != nil {
		return nil, err
	}
	for _, t := range tasks {
		f.Tasks[t.Source]++
		f.TaskTotal++
		if t.ExcludedFromScoring {
			f.Excluded[t.Source]++
		}
	}
	return f, nil
}
