package scan

import (
	"fmt"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
)

// Field names used in findings besides the card's column names.
const (
	FieldGoldFiles    = "gold_files"
	FieldProjectFiles = "project_files"
	FieldRunLog       = "run_log"
	FieldCrawlCache   = "crawl_cache" // a cached GitHub answer; Path is "METHOD URL"
	// FieldHarness is a file of envgap's own source in the harness zip; Path is the
	// entry's name in the zip (envgap-source/...), InstanceID empty.
	FieldHarness = "harness"
)

// published reports whether texts of a field are published (run logs and the crawl cache
// are only stored).
func published(field string) bool { return field != FieldRunLog && field != FieldCrawlCache }

// Object is something the scan read: a task row, a candidate, a verdict (with its runs), a
// cached GitHub answer or the harness zip's source tree (kind harness, digest HarnessDigest).
type Object struct {
	Kind       string         `json:"kind"` // task, candidate, verdict, github_response, harness
	InstanceID string         `json:"instance_id"`
	Digest     schemas.Digest `json:"digest"`
}

// Occurrence is one place a finding was seen. Several occurrences may share a
// fingerprint (the same secret twice in one text); one decision covers them all.
type Occurrence struct {
	// Finding is the card-level finding (nested under "finding" in JSON).
	schemas.Finding `json:"finding"`
	// Set is the candidate set of the instance (reported, repaired, lite).
	Set schemas.Source `json:"set,omitempty"`
	// Text is the digest of the text the secret is in; Start and End its byte range.
	Text  schemas.Digest `json:"text"`
	Start int64          `json:"start"`
	End   int64          `json:"end"`
	// Example names the kind of public example, for public_example findings.
	Example string `json:"example,omitempty"`
	// Decision is the decision that applies (from the review file, or automatic for
	// public examples); nil while unreviewed.
	Decision *Decision `json:"decision,omitempty"`
}

// Skip is a text that was not scanned (Record.Skipped) or was scanned with a caveat
// (Record.Notes), with the reason.
type Skip struct {
	InstanceID string `json:"instance_id"`
	Field      string `json:"field"`
	Path       string `json:"path,omitempty"`
	Size       int64  `json:"size"`
	Reason     string `json:"reason"`
}

// Record is the stored result of one scan (ref scans/latest).
type Record struct {
	Kind      schemas.RecordKind `json:"kind"`
	Engine    string             `json:"engine"`
	Rules     int                `json:"rules"`
	ScannedAt string             `json:"scanned_at"`
	// Review is the digest of the review file's bytes as read (stored as a blob); zero
	// when there was no file.
	Review     schemas.Digest `json:"review"`
	ReviewPath string         `json:"review_path"`
	Objects    []Object       `json:"objects"`
	Texts      int            `json:"texts"`
	Bytes      int64          `json:"bytes"`
	Findings   []Occurrence   `json:"findings"`
	Skipped    []Skip         `json:"skipped"`
	Notes      []Skip         `json:"notes"`
	// StaleDecisions lists fingerprints the review file decides that no longer occur.
	StaleDecisions []string `json:"stale_decisions"`
}

// Unreviewed returns the occurrences without a decision.
func (r *Record) Unreviewed() []Occurrence {
	var out []Occurrence
	for _, o := range r.Findings {
		if o.Decision == nil {
			out = append(out, o)
		}
	}
	return out
}

// Latest reads the record scans/latest points at.
func Latest(st catalog.Store) (*Record, schemas.Digest, error) {
	d, err := st.Ref(data.RefScanLatest)
	if err != nil {
		return nil, d, fmt.Errorf("credential scan: %w: run envgap scan first", err)
	}
	var r Record
	if err := st.GetJSON(d, &r); err != nil {
		return nil, d, fmt.Errorf("credential scan %s: %w", data.RefScanLatest, err)
	}
	if r.Kind != schemas.KindScan {
		return nil, d, fmt.Errorf("credential scan %s: object %s is a %q record, not a scan", data.RefScanLatest, d.Short(), r.Kind)
	}
	return &r, d, nil
}
