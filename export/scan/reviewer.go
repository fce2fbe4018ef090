package scan

import (
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
)

// Reviewer is the credential-scan review as an export reads it (export.Reviewer): the
// review check of the store's rows and of the harness zip's source (Harness), the
// redaction of reviewed secrets and the card's paragraph. The redactions are read from
// the latest scan once, on the first row, after Check has passed. One Reviewer serves one
// export of one store.
type Reviewer struct {
	// Harness is the harness zip's source as scanned texts (FieldHarness); nil: the export
	// ships no harness, and Check refuses a scan that covered one.
	Harness []Text

	reds   []Redaction
	err    error
	loaded bool
}

// Check refuses unless the latest scan covers the store and every finding is decided
// (CheckReviewed).
func (r *Reviewer) Check(st catalog.Store) error { return CheckReviewed(st, r.Harness) }

func (r *Reviewer) redactions(st catalog.Store) ([]Redaction, error) {
	if !r.loaded {
		r.reds, r.err = Redactions(st)
		r.loaded = true
	}
	return r.reds, r.err
}

// RedactTask replaces the reviewed secrets of a task row (ApplyRedactions).
func (r *Reviewer) RedactTask(st catalog.Store, t *schemas.Task) (int, error) {
	reds, err := r.redactions(st)
	if err != nil {
		return 0, err
	}
	return ApplyRedactions(t, reds)
}

// RedactCandidate replaces the reviewed secrets of a candidate row
// (ApplyCandidateRedactions).
func (r *Reviewer) RedactCandidate(st catalog.Store, c *schemas.Candidate) (int, error) {
	reds, err := r.redactions(st)
	if err != nil {
		return 0, err
	}
	return ApplyCandidateRedactions(c, reds)
}

// CardSection returns the card's credential-scan paragraph of the latest scan
// (CardSection).
func (r *Reviewer) CardSection(st catalog.Store, taskIDs []string) (string, error) {
	rec, _, err := Latest(st)
	if err != nil {
		return "", err
	}
	return CardSection(rec, taskIDs), nil
}
