package scan

import (
	"io"

	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"sort"
	"time"

	"github.com/envgap/envgap/data"
)

// DefaultReviewFile is where the committed review decisions live, relative to the
// repository root.
const DefaultReviewFile = "data/scan-review.json"

// Decision values.
const (
	DecisionFalsePositive = "false_positive"
	DecisionRedact        = "redact"
)

// AutoReviewer is the "by" of decisions the scan makes on its own (public examples).
const AutoReviewer = "envgap scan"

// Decision is one reviewed finding: what to do with every occurrence of a fingerprint.
type Decision struct {
	Fingerprint string `json:"fingerprint"`
	// Decision is false_positive (leave the text as written) or redact.
	Decision string `json:"decision"`
	// Reason says why; required for false_positive.
	Reason string `json:"reason,omitempty"`
	// Card is the short phrase the dataset card uses for the hit ("ghp_import", "an
	// example Authorization header"). Never a secret.
	Card string `json:"card,omitempty"`
	// Context for people reading the file.
	InstanceID string `json:"instance_id,omitempty"`
	Field      string `json:"field,omitempty"`
	Path       string `json:"path,omitempty"`
	Rule       string `json:"rule,omitempty"`
	// By names who decided, At when (a date or an RFC 3339 time).
	By string `json:"by"`
	At string `json:"at"`
}

// Review is the content of the review file.
type Review struct {
	Version   int        `json:"version"`
	Decisions []Decision `json:"decisions"`
}

var fingerprintRe = regexp.MustCompile(`^[0-9a-f]{64}$`)

// ParseReview decodes and checks a review file's bytes; name is used in errors.
func ParseReview(name string, b []byte) (*Review, error) {
	var r Review
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("review file %s: %w (see the format in the scan package doc)", name, err)
	}
	if r.Version != 1 {
		return nil, fmt.Errorf("review file %s: version %d: want 1", name, r.Version)
	}
	seen := map[string]int{}
	var errs []error
	for i, d := range r.Decisions {
		where := fmt.Sprintf("review file %s: decisions[%d]", name, i)
		if !fingerprintRe.MatchString(d.Fingerprint) {
			errs = append(errs, fmt.Errorf("%s: fingerprint %q: want 64 lower-case hex digits as envgap scan prints them", where, d.Fingerprint))
		}
		if j, dup := seen[d.Fingerprint]; dup {
			errs = append(errs, fmt.Errorf("%s: fingerprint %s is also decided in decisions[%d]; keep one", where, d.Fingerprint, j))
		}
		seen[d.Fingerprint] = i
		switch d.Decision {
		case DecisionFalsePositive:
			if d.Reason == "" {
				errs = append(errs, fmt.Errorf("%s: false_positive needs a reason", where))
			}
		case DecisionRedact:
		default:
			errs = append(errs, fmt.Errorf("%s: decision %q: want %s or %s", where, d.Decision, DecisionFalsePositive, DecisionRedact))
		}
		if d.By == "" || d.At == "" {
			errs = append(errs, fmt.Errorf("%s: by and at (who decided, and when) are required", where))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &r, nil
}

// LoadReview reads a review file. A missing file is an empty review.
func LoadReview(path string) (*Review, []byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Review{Version: 1, Decisions: []Decision{}}, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("review file: %w", err)
	}
	r, err := ParseReview(path, b)
	if err != nil {
		return nil, nil, err
	}
	return r, b, nil
}

// Encode returns the file's bytes: indented JSON, decisions sorted by fingerprint.
func (r *Review) Encode() ([]byte, error) {
	out := Review{Version: 1, Decisions: append([]Decision{}, r.Decisions...)}
	sort.Slice(out.Decisions, func(i, j int) bool { return out.Decisions[i].Fingerprint < out.Decisions[j].Fingerprint })
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Save writes the review file atomically.
func (r *Review) Save(path string) error {
	b, err := r.Encode()
	if err != nil {
		return fmt.Errorf("review file %s: %w", path, err)
	}
	if _, err := ParseReview(path, b); err != nil {
		return err
	}
	if err := data.WriteFile(path, 0o644, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
		return fmt.Errorf("review file %s: %w", path, err)
	}
	return nil
}

// Lookup returns the decision for a fingerprint.
func (r *Review) Lookup(fp string) (Decision, bool) {
	for _, d := range r.Decisions {
		if d.Fingerprint == fp {
			return d, true
		}
	}
	return Decision{}, false
}

// Decide adds or replaces the decision for d.Fingerprint, after checking it. The
// context fields are filled from the latest scan's finding when found there.
func (r *Review) Decide(d Decision, rec *Record, now time.Time) error {
	if d.At == "" {
		d.At = now.UTC().Format("2006-01-02")
	}
	if rec != nil {
		found := false
		for _, o := range rec.Findings {
			if o.Fingerprint == d.Fingerprint {
				d.InstanceID, d.Field, d.Path, d.Rule = o.InstanceID, o.Field, o.Path, o.Rule
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("fingerprint %s is not a finding of the latest scan (envgap scan lists them)", d.Fingerprint)
		}
	}
	next := Review{Version: 1}
	for _, old := range r.Decisions {
		if old.Fingerprint != d.Fingerprint {
			next.Decisions = append(next.Decisions, old)
		}
	}
	next.Decisions = append(next.Decisions, d)
	b, err := next.Encode()
	if err != nil {
		return err
	}
	if _, err := ParseReview("(new decision)", b); err != nil {
		return err
	}
	r.Decisions = next.Decisions
	return nil
}
