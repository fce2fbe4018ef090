package catalog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/schemas"
)

// AddResult says what storing a candidate set did.
type AddResult struct {
	Ref       string         `json:"ref"`
	Set       schemas.Digest `json:"set"`
	Count     int            `json:"candidates"`
	New       int            `json:"new_candidates"`
	Unchanged bool           `json:"unchanged"`
}

// ConflictError lists candidates whose instance id is already stored with other content.
type ConflictError struct {
	IDs []string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%d candidate(s) already in the store with different content: %v; stored candidates are never rewritten: give the new record another instance_id, or leave it out", len(e.IDs), e.IDs)
}

// AddCandidateSet stores candidates (already validated) as one set and points the ref
// candidates/<prefix>-<12 hex of the members' digest> at it. Storing the same candidates
// again changes nothing and says so (but writes again any of their records that went
// missing). A candidate whose instance id is stored with other content is refused
// (ConflictError) and no ref is set. Concurrent adds are serialised by the store's lock:
// of two adds of one id with different content, exactly one succeeds.
func (s *Catalog) AddCandidateSet(prefix, origin string, cands []schemas.Candidate, rejects []schemas.CrawlReject) (*AddResult, error) {
	idx, err := s.index()
	if err != nil {
		return nil, err
	}
	members := make([]schemas.SetMember, 0, len(cands))
	blobs := make([][]byte, 0, len(cands))
	for i := range cands {
		if cands[i].Outcome == "" {
			cands[i].Outcome = schemas.OutcomeNotChecked
		}
		if err := schemas.FillLiteBaseCommit(&cands[i]); err != nil {
			return nil, fmt.Errorf("candidate %s: %w", cands[i].InstanceID, err)
		}
		b, err := schemas.Canonical(&cands[i])
		if err != nil {
			return nil, fmt.Errorf("candidate %s: %w", cands[i].InstanceID, err)
		}
		members = append(members, schemas.SetMember{InstanceID: cands[i].InstanceID, Digest: schemas.Hash(b)})
		blobs = append(blobs, b)
	}
	// Refuse a conflict before writing anything.
	if _, err := admit(idx, members); err != nil {
		return nil, err
	}
	sort.Slice(members, func(i, j int) bool { return members[i].InstanceID < members[j].InstanceID })
	key, err := schemas.DigestOf(members)
	if err != nil {
		return nil, err
	}
	ref := data.CandidateSetRef(prefix + "-" + key.Short())
	// Objects first, the ref last: a write killed halfway leaves only unreferenced
	// objects, and running it again completes it. The records are written even when the
	// set is stored already: that restores a record lost from the store.
	batch := s.NewBatch()
	for _, b := range blobs {
		if _, err := batch.Put(b); err != nil {
			return nil, err
		}
	}
	if err := batch.Commit(); err != nil {
		return nil, err
	}
	if d, err := s.Ref(ref); err == nil {
		return &AddResult{Ref: ref, Set: d, Count: len(members), Unchanged: true}, nil
	} else if !errors.Is(err, data.ErrNotFound) {
		return nil, err
	}
	set := schemas.CandidateSet{Kind: schemas.KindCandidateSet, Name: prefix + "-" + key.Short(), Origin: origin, Members: members, Rejects: rejects}
	d, err := s.PutJSON(&set)
	if err != nil {
		return nil, err
	}
	res := &AddResult{Ref: ref, Set: d, Count: len(members)}
	err = s.Locked(func(tx *data.Tx) error {
		// Decide again under the lock, over the sets as they are now.
		if cur, err := tx.Ref(ref); err == nil {
			res.Set, res.Unchanged = cur, true
			return nil
		}
		idx, err := s.index()
		if err != nil {
			return err
		}
		if res.New, err = admit(idx, members); err != nil {
			return err
		}
		return tx.SetRef(ref, d)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// admit checks members against the index: it returns how many are new, or a ConflictError
// listing those stored with other content.
func admit(idx map[string]indexEntry, members []schemas.SetMember) (int, error) {
	var conflicts []string
	n := 0
	for _, m := range members {
		if old, ok := idx[m.InstanceID]; !ok {
			n++
		} else if old.Digest != m.Digest {
			conflicts = append(conflicts, m.InstanceID)
		}
	}
	if len(conflicts) > 0 {
		sort.Strings(conflicts)
		return 0, &ConflictError{IDs: conflicts}
	}
	return n, nil
}

// AddCandidatesFile validates every record of a JSON Lines file and, only when all are
// valid, stores them as one set (see AddCandidateSet). When any record is bad it returns
// schemas.Problems listing every problem, and writes nothing.
func (s *Catalog) AddCandidatesFile(path string) (*AddResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("add: %w", err)
	}
	defer f.Close()
	cands, problems, err := schemas.ReadCandidates(path, f)
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return s.AddCandidateSet("add", "add "+filepath.Base(path), cands, nil)
}
