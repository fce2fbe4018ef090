package export

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
)

// ExcludedTask is one row of the card's table of tasks excluded from scoring.
type ExcludedTask struct {
	InstanceID string           `json:"task"`
	Set        schemas.Source   `json:"set"`
	Kind       schemas.TaskKind `json:"kind"`
	Reason     string           `json:"reason"`
	Since      string           `json:"since"`
	ByHand     bool             `json:"by_hand"`
}

// exclusionsOf lists the tasks of a loaded task set that are excluded from scoring, in the
// set's order (by instance id), with the latest exclusion of each.
func exclusionsOf(st catalog.Store, tasks []schemas.Task) ([]ExcludedTask, error) {
	out := []ExcludedTask{}
	for i := range tasks {
		t := &tasks[i]
		if !t.ExcludedFromScoring {
			continue
		}
		ex, err := st.Exclusion(t.InstanceID)
		if err != nil {
			return nil, fmt.Errorf("exclusion of %s: %w", t.InstanceID, err)
		}
		kind := ex.TaskKind
		if kind == "" {
			kind = schemas.KindOf(t)
		}
		out = append(out, ExcludedTask{InstanceID: t.InstanceID, Set: t.Source, Kind: kind,
			Reason: ex.Reason, Since: ex.Since, ByHand: ex.ByHand})
	}
	return out, nil
}

// ExcludeRequest is a hand exclusion: a task found broken for a reason no recheck measures
// (a parser misread a file, the harness cannot run the project, ...).
type ExcludeRequest struct {
	InstanceID string
	Reason     string
	// Kind is the task's kind; empty takes it from the task row.
	Kind schemas.TaskKind
	// Now is the clock (the exclusion's since); nil means time.Now.
	Now func() time.Time
}

// ExcludeResult says what Exclude did.
type ExcludeResult struct {
	InstanceID string            `json:"instance_id"`
	Exclusion  schemas.Exclusion `json:"exclusion"`
	Digest     schemas.Digest    `json:"digest"`
	// Unchanged is set when the latest exclusion already has this reason and kind; nothing
	// was written.
	Unchanged bool `json:"unchanged"`
}

// Exclude records a hand exclusion of an admitted task as ref exclusions/<id>. A newer
// exclusion points at the one it supersedes (Previous); nothing is ever deleted, and the
// task row itself is not rewritten: the store's task set applies the latest exclusion.
// Excluding again with the same reason and kind changes nothing.
func Exclude(st catalog.Store, req ExcludeRequest) (*ExcludeResult, error) {
	id := req.InstanceID
	reason := strings.TrimSpace(req.Reason)
	if reason == "" {
		return nil, errors.New("exclude: the reason is empty; say in words why the task cannot be scored (it is printed in the dataset card)")
	}
	if strings.ContainsAny(reason, "\n|") {
		return nil, errors.New("exclude: the reason must be one line without '|' (it becomes a row of the card's table)")
	}
	if req.Kind != "" && req.Kind != schemas.TaskRepair && req.Kind != schemas.TaskControl {
		return nil, fmt.Errorf("exclude: kind %q: want repair or control", req.Kind)
	}
	d, err := st.Ref(data.TaskRef(id))
	if errors.Is(err, data.ErrNotFound) {
		return nil, fmt.Errorf("exclude %s: no such task (only admitted tasks can be excluded; envgap status lists them): %w", id, err)
	}
	if err != nil {
		return nil, fmt.Errorf("exclude %s: %w", id, err)
	}
	var t schemas.Task
	if err := st.GetJSON(d, &t); err != nil {
		return nil, fmt.Errorf("exclude %s: %w", id, err)
	}
	kind := req.Kind
	if kind == "" {
		kind = schemas.KindOf(&t)
	}
	now := time.Now
	if req.Now != nil {
		now = req.Now
	}
	since := now().UTC().Format(time.RFC3339)
	prev, err := st.Ref(data.ExclusionRef(id))
	switch {
	case err == nil:
		var old schemas.Exclusion
		if err := st.GetJSON(prev, &old); err != nil {
			return nil, fmt.Errorf("exclude %s: previous exclusion: %w", id, err)
		}
		if old.Reason == reason && old.TaskKind == kind {
			return &ExcludeResult{InstanceID: id, Exclusion: old, Digest: prev, Unchanged: true}, nil
		}
		// A new reason for a task that is already excluded: it has been excluded since then.
		if old.Since != "" {
			since = old.Since
		}
	case errors.Is(err, data.ErrNotFound):
	default:
		return nil, fmt.Errorf("exclude %s: %w", id, err)
	}
	ex := schemas.Exclusion{Kind: schemas.KindExclusion, InstanceID: id, TaskKind: kind, Reason: reason,
		Since: since, ByHand: true, Previous: prev}
	nd, err := st.PutJSON(&ex)
	if err != nil {
		return nil, fmt.Errorf("exclude %s: %w", id, err)
	}
	if err := st.SetRef(data.ExclusionRef(id), nd); err != nil {
		return nil, fmt.Errorf("exclude %s: %w", id, err)
	}
	return &ExcludeResult{InstanceID: id, Exclusion: ex, Digest: nd}, nil
}
