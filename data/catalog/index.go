package catalog

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/schemas"
)

// Catalog is the domain catalogue over a store. It embeds the store, so a *Catalog is
// also a data.Backend. It is safe for concurrent use.
type Catalog struct {
	*data.Store

	mu      sync.Mutex
	members map[schemas.Digest][]schemas.SetMember // decoded set objects, by set digest
	built   []data.RefEntry                        // the candidates/ refs idx was built from
	idx     map[string]indexEntry
}

type indexEntry struct {
	Digest schemas.Digest
	Ref    string
}

// New returns the catalogue over an open store.
func New(s *data.Store) *Catalog {
	return &Catalog{Store: s, members: map[schemas.Digest][]schemas.SetMember{}}
}

// Open opens (creating if needed) the store in dir and its catalogue.
func Open(dir string) (*Catalog, error) {
	s, err := data.Open(dir)
	if err != nil {
		return nil, err
	}
	return New(s), nil
}

// index returns the id index for the store's current candidate sets. The map is shared:
// callers must not change it.
func (s *Catalog) index() (map[string]indexEntry, error) {
	refs, err := s.Refs(data.RefCandidates)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.idx != nil && slices.Equal(refs, s.built) {
		return s.idx, nil
	}
	idx := map[string]indexEntry{}
	for _, r := range refs {
		ms, ok := s.members[r.Digest]
		if !ok {
			var set schemas.CandidateSet
			if err := s.GetJSON(r.Digest, &set); err != nil {
				return nil, fmt.Errorf("candidate set %s: %w", r.Name, err)
			}
			ms = set.Members
			s.members[r.Digest] = ms
		}
		for _, m := range ms {
			if prev, ok := idx[m.InstanceID]; ok {
				if prev.Digest != m.Digest {
					return nil, fmt.Errorf("candidate %s differs between %s and %s; run envgap store fsck and remove one set ref", m.InstanceID, prev.Ref, r.Name)
				}
				continue
			}
			idx[m.InstanceID] = indexEntry{Digest: m.Digest, Ref: r.Name}
		}
	}
	s.idx, s.built = idx, refs
	return idx, nil
}

// CandidateEntry is a stored candidate with its digest and the set ref that holds it.
type CandidateEntry struct {
	schemas.Candidate
	Digest schemas.Digest
	Ref    string
}

func (s *Catalog) entry(id string, e indexEntry) (CandidateEntry, error) {
	var c schemas.Candidate
	if err := s.GetJSON(e.Digest, &c); errors.Is(err, data.ErrNotFound) {
		return CandidateEntry{}, fmt.Errorf("candidate %s: its record %s, listed in %s, is missing from the store (%w); run envgap store fsck, then the add or crawl that stored it again to write it back", id, e.Digest, e.Ref, data.ErrDangling)
	} else if err != nil {
		return CandidateEntry{}, fmt.Errorf("candidate %s in %s: %w", id, e.Ref, err)
	}
	return CandidateEntry{Candidate: c, Digest: e.Digest, Ref: e.Ref}, nil
}

// Candidates returns every candidate of every candidate set, sorted by instance id. A
// candidate held by several sets with the same content is listed once.
func (s *Catalog) Candidates() ([]CandidateEntry, error) {
	idx, err := s.index()
	if err != nil {
		return nil, err
	}
	ids := sortedIDs(idx)
	out := make([]CandidateEntry, 0, len(ids))
	for _, id := range ids {
		e, err := s.entry(id, idx[id])
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// CandidateIDs returns the instance ids of every stored candidate, sorted, without
// reading their records.
func (s *Catalog) CandidateIDs() ([]string, error) {
	idx, err := s.index()
	if err != nil {
		return nil, err
	}
	return sortedIDs(idx), nil
}

func sortedIDs(idx map[string]indexEntry) []string {
	ids := make([]string, 0, len(idx))
	for id := range idx {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// CandidateDigest returns the digest of a stored candidate's record and the set ref that
// holds it, without reading the record (which may be lost); data.ErrNotFound when no set
// holds the id.
func (s *Catalog) CandidateDigest(id string) (schemas.Digest, string, error) {
	idx, err := s.index()
	if err != nil {
		return schemas.Digest{}, "", err
	}
	e, ok := idx[id]
	if !ok {
		return schemas.Digest{}, "", fmt.Errorf("candidate %s: %w", id, data.ErrNotFound)
	}
	return e.Digest, e.Ref, nil
}

// CandidateByID returns one stored candidate, reading only its record.
func (s *Catalog) CandidateByID(id string) (CandidateEntry, error) {
	idx, err := s.index()
	if err != nil {
		return CandidateEntry{}, err
	}
	e, ok := idx[id]
	if !ok {
		return CandidateEntry{}, fmt.Errorf("candidate %s: %w (envgap status lists what the store holds)", id, data.ErrNotFound)
	}
	return s.entry(id, e)
}

// Reader is the catalogue's read side.
type Reader interface {
	Candidates() ([]CandidateEntry, error)
	CandidateIDs() ([]string, error)
	CandidateByID(id string) (CandidateEntry, error)
	CandidateDigest(id string) (schemas.Digest, string, error)
	Verdict(id string) (schemas.Verdict, schemas.Digest, error)
	Exclusion(id string) (schemas.Exclusion, error)
	Tasks() ([]schemas.Task, error)
	CurrentOutcome(c schemas.Candidate) (Status, error)
	Missing(d schemas.Digest) []string
}

// Adder stores candidate sets.
type Adder interface {
	AddCandidateSet(prefix, origin string, cands []schemas.Candidate, rejects []schemas.CrawlReject) (*AddResult, error)
}

// Store is the store with its catalogue: what a stage that reads candidates and writes
// records, refs and memo entries depends on.
type Store interface {
	data.Backend
	Reader
}

var (
	_ Store = (*Catalog)(nil)
	_ Adder = (*Catalog)(nil)
)
