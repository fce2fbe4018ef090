package data

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/envgap/envgap/schemas"
)

// Ref name prefixes: the conventions every stage follows.
const (
	// RefCandidates + name points at a schemas.CandidateSet.
	RefCandidates = "candidates/"
	// RefVerdicts + instance id points at the latest schemas.Verdict.
	RefVerdicts = "verdicts/"
	// RefTasks + instance id points at the admitted schemas.Task row (exclusion fields null).
	RefTasks = "tasks/"
	// RefExclusions + instance id points at the latest schemas.Exclusion.
	RefExclusions = "exclusions/"
	// RefReleases + date points at a schemas.Release.
	RefReleases = "releases/"
	// RefCrawls + crawl id points at a crawl report.
	RefCrawls = "crawls/"
	// RefRechecks + date points at a recheck record.
	RefRechecks = "rechecks/"
)

// CandidateEntry is a stored candidate with its digest and the set ref that holds it.
type CandidateEntry struct {
	schemas.Candidate
	Digest schemas.Digest
	Ref    string
}

// Candidates returns every candidate of every candidate set, sorted by instance id. A
// candidate held by several sets with the same content is listed once.
func (s *Store) Candidates() ([]CandidateEntry, error) {
	refs, err := s.Refs(RefCandidates)
	if err != nil {
		return nil, err
	}
	byID := map[string]CandidateEntry{}
	for _, r := range refs {
		var set schemas.CandidateSet
		if err := s.GetJSON(r.Digest, &set); err != nil {
			return nil, fmt.Errorf("candidate set %s: %w", r.Name, err)
		}
		for _, m := range set.Members {
			if prev, ok := byID[m.InstanceID]; ok {
				if prev.Digest != m.Digest {
					return nil, fmt.Errorf("candidate %s differs between %s and %s; run envgap store fsck and remove one set ref", m.InstanceID, prev.Ref, r.Name)
				}
				continue
			}
			var c schemas.Candidate
			if err := s.GetJSON(m.Digest, &c); err != nil {
				return nil, fmt.Errorf("candidate %s in %s: %w", m.InstanceID, r.Name, err)
			}
			byID[m.InstanceID] = CandidateEntry{Candidate: c, Digest: m.Digest, Ref: r.Name}
		}
	}
	out := make([]CandidateEntry, 0, len(byID))
	for _, e := range byID {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].InstanceID < out[j].InstanceID })
	return out, nil
}

// CandidateByID returns one stored candidate.
func (s *Store) CandidateByID(id string) (CandidateEntry, error) {
	all, err := s.Candidates()
	if err != nil {
		return CandidateEntry{}, err
	}
	i := sort.Search(len(all), func(i int) bool { return all[i].InstanceID >= id })
	if i < len(all) && all[i].InstanceID == id {
		return all[i], nil
	}
	return CandidateEntry{}, fmt.Errorf("candidate %s: %w (envgap status lists what the store holds)", id, ErrNotFound)
}

// Verdict returns the latest verdict of a candidate, or ErrNotFound.
func (s *Store) Verdict(id string) (schemas.Verdict, schemas.Digest, error) {
	var v schemas.Verdict
	d, err := s.Ref(RefVerdicts + id)
	if err != nil {
		return v, d, err
	}
	return v, d, s.GetJSON(d, &v)
}

// Exclusion returns the latest exclusion of a task, or ErrNotFound.
func (s *Store) Exclusion(id string) (schemas.Exclusion, error) {
	var e schemas.Exclusion
	d, err := s.Ref(RefExclusions + id)
	if err != nil {
		return e, err
	}
	return e, s.GetJSON(d, &e)
}

// Tasks returns the store's task set: every admitted task row with its latest exclusion
// applied, sorted by instance id.
func (s *Store) Tasks() ([]schemas.Task, error) {
	refs, err := s.Refs(RefTasks)
	if err != nil {
		return nil, err
	}
	out := make([]schemas.Task, 0, len(refs))
	for _, r := range refs {
		var t schemas.Task
		if err := s.GetJSON(r.Digest, &t); err != nil {
			return nil, fmt.Errorf("task %s: %w", strings.TrimPrefix(r.Name, RefTasks), err)
		}
		ex, err := s.Exclusion(t.InstanceID)
		switch {
		case err == nil:
			ApplyExclusion(&t, ex)
		case !errors.Is(err, ErrNotFound):
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

// Status is a candidate's current outcome and the reason for it.
type Status struct {
	Outcome schemas.Outcome `json:"outcome"`
	Reason  string          `json:"reason"`
}

// CurrentOutcome derives a candidate's outcome from the store: task when admitted, else
// the latest verdict, else the outcome its import decided, else not_checked.
func (s *Store) CurrentOutcome(c schemas.Candidate) (Status, error) {
	if _, err := s.Ref(RefTasks + c.InstanceID); err == nil {
		return Status{schemas.OutcomeTask, "admitted as a task"}, nil
	} else if !errors.Is(err, ErrNotFound) {
		return Status{}, err
	}
	v, _, err := s.Verdict(c.InstanceID)
	if err == nil {
		return Status{v.Outcome, v.Reason}, nil
	}
	if !errors.Is(err, ErrNotFound) {
		return Status{}, err
	}
	if c.Outcome != "" && c.Outcome != schemas.OutcomeNotChecked {
		return Status{c.Outcome, c.Reason}, nil
	}
	return Status{schemas.OutcomeNotChecked, "no verdict yet: waiting for its clean-container check (envgap verify)"}, nil
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
func (s *Store) ComputeFunnel() (*Funnel, error) {
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
