package export

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
)

// AuditResult is what the registry audit says about one task: its failure types and the
// findings that put it in the secure config.
type AuditResult struct {
	Categories    []schemas.Category     `json:"categories"`
	SecurityFlags []schemas.SecurityFlag `json:"security_flags"`
}

// AuditSource gives the audit result of a task. ok is false when the task has not been
// audited; the error is for damage or I/O alone. The audit stage (export/audit) provides
// the real source; the command wires it in, so this package does not depend on it.
type AuditSource interface {
	Audit(instanceID string) (res AuditResult, ok bool, err error)
}

// AuditFunc adapts a function to AuditSource.
type AuditFunc func(instanceID string) (AuditResult, bool, error)

// Audit calls f.
func (f AuditFunc) Audit(id string) (AuditResult, bool, error) { return f(id) }

// StoreAudits reads audit records from the store's refs audits/<instance_id>: objects with
// (at least) "categories" and "security_flags" lists. It is the default until the audit
// stage's own reader is wired in.
func StoreAudits(st catalog.Store) AuditSource {
	return AuditFunc(func(id string) (AuditResult, bool, error) {
		d, err := st.Ref(data.AuditRef(id))
		if errors.Is(err, data.ErrNotFound) {
			return AuditResult{}, false, nil
		}
		if err != nil {
			return AuditResult{}, false, err
		}
		b, err := st.Get(d)
		if err != nil {
			return AuditResult{}, false, fmt.Errorf("audit of %s: %w", id, err)
		}
		var res AuditResult
		if err := json.Unmarshal(b, &res); err != nil {
			return AuditResult{}, false, fmt.Errorf("audit of %s (%s): %w", id, d, err)
		}
		return res, true, nil
	})
}

// NoAudits is an AuditSource with no audit results.
var NoAudits AuditSource = AuditFunc(func(string) (AuditResult, bool, error) { return AuditResult{}, false, nil })

// normalized returns the result with sorted, de-duplicated, non-nil lists and checks that
// every value is one of the card's.
func (a AuditResult) normalized(id string) (AuditResult, error) {
	cats := inCardOrder(a.Categories, schemas.Categories)
	flags := inCardOrder(a.SecurityFlags, schemas.SecurityFlags)
	for _, c := range cats {
		if err := c.Valid(); err != nil {
			return a, fmt.Errorf("audit of %s: category %w", id, err)
		}
	}
	for _, f := range flags {
		if err := f.Valid(); err != nil {
			return a, fmt.Errorf("audit of %s: security flag %w", id, err)
		}
	}
	return AuditResult{Categories: cats, SecurityFlags: flags}, nil
}

// inCardOrder returns the distinct values of in, ordered as the card lists them (unknown
// values last, sorted), never nil.
func inCardOrder[T ~string](in, all []T) []T {
	rank := make(map[T]int, len(all))
	for i, v := range all {
		rank[v] = i
	}
	out := make([]T, 0, len(in))
	seen := map[T]bool{}
	for _, v := range in {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		ri, iok := rank[out[i]]
		rj, jok := rank[out[j]]
		switch {
		case iok && jok:
			return ri < rj
		case iok != jok:
			return iok
		}
		return out[i] < out[j]
	})
	return out
}
