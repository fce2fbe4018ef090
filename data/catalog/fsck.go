package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/schemas"
)

// Reachability: what the records of each kind point at. fsck follows every ref and memo
// entry through these to every object it reaches; verify uses the same walk to refuse a
// memoised verdict or run whose parts are gone (and so runs it again).
//
//	candidate_set -> each member's candidate record
//	verdict       -> its candidate record, each before/after run
//	run           -> each step's output blob, the registry proxy's log
//	audit         -> the verdict it audited, its before and after run
//	scan          -> the review file it read, each task, candidate, verdict and cached
//	                 GitHub answer it scanned (not the harness: that digest names the
//	                 binary's source tree, not a stored object)
//	crawl_report  -> the candidate set the crawl stored
//
// The audit, scan and crawl report records belong to their stages (export/audit,
// export/scan, crawl); the walk reads only the fields that name objects, and each stage's
// tests check it against its real records. Other records (task rows, exclusions,
// releases, memo results of the other stages) are checked to be present; what they name
// is not followed. Nor is history (a verdict's or exclusion's previous one): nothing can
// write a lost old verdict again, and a verdict decided again leaves the lost one behind
// as its previous.

// walker follows records from roots, visiting each object once.
type walker struct {
	s    *Catalog
	seen map[schemas.Digest]bool
	// lost is called for every object that is missing, with the chain that reached it.
	lost func(chain string, d schemas.Digest)
}

func (w *walker) leaf(chain string, d schemas.Digest) {
	if d.IsZero() || w.seen[d] {
		return
	}
	w.seen[d] = true
	if !w.s.Has(d) {
		w.lost(chain, d)
	}
}

func (w *walker) record(chain string, d schemas.Digest) {
	if d.IsZero() || w.seen[d] {
		return
	}
	w.seen[d] = true
	b, err := w.s.Get(d)
	if errors.Is(err, data.ErrNotFound) {
		w.lost(chain, d)
		return
	}
	if err != nil {
		return // damaged: the object walk reports it
	}
	var head struct {
		Kind schemas.RecordKind `json:"kind"`
	}
	if json.Unmarshal(b, &head) != nil {
		return // a blob
	}
	switch head.Kind {
	case schemas.KindCandidateSet:
		var set schemas.CandidateSet
		if json.Unmarshal(b, &set) == nil {
			for _, m := range set.Members {
				w.leaf(chain+" -> candidate "+m.InstanceID, m.Digest)
			}
		}
	case schemas.KindVerdict:
		var v schemas.Verdict
		if json.Unmarshal(b, &v) == nil {
			w.leaf(chain+" -> its candidate record", v.Candidate)
			for i, r := range v.Before {
				w.record(fmt.Sprintf("%s -> before run %d", chain, i+1), r)
			}
			for i, r := range v.After {
				w.record(fmt.Sprintf("%s -> after run %d", chain, i+1), r)
			}
		}
	case schemas.KindRun:
		var r schemas.Run
		if json.Unmarshal(b, &r) == nil {
			for _, st := range r.Steps {
				w.leaf(chain+" -> output of step "+st.Name, st.Output)
			}
			w.leaf(chain+" -> registry log", r.Registry)
		}
	case schemas.KindAudit:
		var a struct {
			Verdict   schemas.Digest `json:"verdict"`
			BeforeRun schemas.Digest `json:"before_run"`
			AfterRun  schemas.Digest `json:"after_run"`
		}
		if json.Unmarshal(b, &a) == nil {
			w.record(chain+" -> the verdict it audited", a.Verdict)
			w.record(chain+" -> the before run it audited", a.BeforeRun)
			w.record(chain+" -> the after run it audited", a.AfterRun)
		}
	case schemas.KindScan:
		var sc struct {
			Review  schemas.Digest `json:"review"`
			Objects []struct {
				Kind       string         `json:"kind"`
				InstanceID string         `json:"instance_id"`
				Digest     schemas.Digest `json:"digest"`
			} `json:"objects"`
		}
		if json.Unmarshal(b, &sc) == nil {
			w.leaf(chain+" -> the review file it read", sc.Review)
			for _, o := range sc.Objects {
				what := strings.TrimSpace(o.Kind + " " + o.InstanceID)
				switch o.Kind {
				case "harness":
					// names the source tree the binary embeds, not a stored object
				case "verdict":
					w.record(chain+" -> scanned "+what, o.Digest)
				default:
					w.leaf(chain+" -> scanned "+what, o.Digest)
				}
			}
		}
	case schemas.KindCrawlReport:
		var r struct {
			CandidateSet schemas.Digest `json:"candidate_set_digest"`
		}
		if json.Unmarshal(b, &r) == nil {
			w.record(chain+" -> its candidate set", r.CandidateSet)
		}
	}
}

// Missing lists what is missing at or below object d (see the reachability above), one
// line per lost object naming the chain that reaches it; nil when d is whole.
func (s *Catalog) Missing(d schemas.Digest) []string {
	var out []string
	w := &walker{s: s, seen: map[schemas.Digest]bool{}, lost: func(chain string, d schemas.Digest) {
		out = append(out, fmt.Sprintf("%s (%s)", strings.TrimPrefix(chain, " -> "), d.Short()))
	}}
	w.record("", d)
	return out
}

// Fsck is the store's fsck (every object re-hashed, every ref and memo entry checked)
// plus reachability: every ref and memo entry is followed to every object it reaches
// (kind "missing" for each lost one, with what writes it again), and candidate sets that
// hold one instance id with different content are reported (kind "conflict").
func (s *Catalog) Fsck(ctx context.Context) (*data.FsckReport, error) {
	rep, err := s.Store.Fsck(ctx)
	if err != nil {
		return rep, err
	}
	refs, err := s.Refs("")
	if err != nil {
		return rep, err
	}
	w := &walker{s: s, seen: map[schemas.Digest]bool{}}
	root, fix := "", ""
	w.lost = func(chain string, d schemas.Digest) {
		rep.Damage = append(rep.Damage, data.Damage{Kind: "missing", Path: root,
			Detail: fmt.Sprintf("%s: object %s is missing%s", strings.TrimPrefix(chain, " -> "), d, fix)})
	}
	// The records that point into the others (audits, scans, crawl reports) are walked
	// last, so that a lost object both reach is reported once, under the ref whose
	// stage writes it again (a lost run under its verdict, not under its audit).
	walk := append([]data.RefEntry{}, refs...)
	derived := func(name string) bool {
		return strings.HasPrefix(name, data.RefAudits) || name == data.RefScanLatest || strings.HasPrefix(name, data.RefCrawls)
	}
	sort.SliceStable(walk, func(i, j int) bool { return !derived(walk[i].Name) && derived(walk[j].Name) })
	for _, r := range walk {
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
		if !s.Has(r.Digest) {
			continue // a dangling ref: reported by the store's fsck
		}
		root, fix = path.Join("refs", r.Name), repairHint(r.Name)
		w.record("", r.Digest)
	}
	memos, err := s.MemoEntries()
	if err != nil {
		return rep, err
	}
	for _, m := range memos {
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
		if !s.Has(m.Result) {
			continue // reported by the store's fsck
		}
		root, fix = path.Join("memo", m.Stage, m.Key), "; the stage computes it again when it next needs it"
		w.record("", m.Result)
	}
	s.fsckConflicts(refs, rep)
	sort.SliceStable(rep.Damage, func(i, j int) bool { return rep.Damage[i].Path < rep.Damage[j].Path })
	return rep, nil
}

// repairHint says what writes again what a ref reaches.
func repairHint(ref string) string {
	switch {
	case strings.HasPrefix(ref, data.RefCandidates):
		return "; run the add or crawl that stored this set again to write it back"
	case strings.HasPrefix(ref, data.RefVerdicts):
		id := strings.TrimPrefix(ref, data.RefVerdicts)
		return "; run envgap verify --ids " + id + " to decide it again"
	case strings.HasPrefix(ref, data.RefTasks):
		return "; run envgap admit again"
	case strings.HasPrefix(ref, data.RefAudits):
		return "; run envgap audit again (a lost verdict or run first: envgap verify --ids " + strings.TrimPrefix(ref, data.RefAudits) + ")"
	case ref == data.RefScanLatest:
		return "; run envgap scan again"
	case strings.HasPrefix(ref, data.RefCrawls):
		return "; run the same crawl (--crawl-id " + strings.TrimPrefix(ref, data.RefCrawls) + ") again to write it back"
	}
	return ""
}

// fsckConflicts reports candidate sets that hold one instance id with different content.
func (s *Catalog) fsckConflicts(refs []data.RefEntry, rep *data.FsckReport) {
	first := map[string]indexEntry{}
	for _, r := range refs {
		if !strings.HasPrefix(r.Name, data.RefCandidates) {
			continue
		}
		var set schemas.CandidateSet
		if s.GetJSON(r.Digest, &set) != nil {
			continue // missing or damaged: reported above
		}
		for _, m := range set.Members {
			prev, ok := first[m.InstanceID]
			if !ok {
				first[m.InstanceID] = indexEntry{Digest: m.Digest, Ref: r.Name}
				continue
			}
			if prev.Digest != m.Digest {
				rep.Damage = append(rep.Damage, data.Damage{Kind: "conflict", Path: path.Join("refs", r.Name),
					Detail: fmt.Sprintf("candidate %s differs from the one in %s (%s, here %s); remove one of the two set refs", m.InstanceID, prev.Ref, prev.Digest.Short(), m.Digest.Short())})
			}
		}
	}
}
