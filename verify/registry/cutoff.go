package registry

import (
	"fmt"
	"strings"
	"time"
)

// CutoffForms lists the cut-off spellings ParseCutoff accepts, for error messages and help text.
const CutoffForms = `"2023-07-30" (end of that day, UTC), "2023-07-30T12:00:00Z", "2023-07-30T12:00:00.123456Z" or "2023-07-30T14:00:00+02:00" (RFC 3339 with an offset)`

// ParseCutoff parses a registry cut-off. It accepts an RFC 3339 instant with an offset or
// "Z" (normalised to UTC) and a bare date, which means the last instant of that day in UTC.
// A date-time without an offset is an error, never local time.
func ParseCutoff(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, fmt.Errorf("cut-off is empty; use %s", CutoffForms)
	}
	if len(s) == len("2006-01-02") {
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return time.Time{}, fmt.Errorf("cut-off %q is not a date: %w; use %s", s, err, CutoffForms)
		}
		if d.Year() < 1 {
			return time.Time{}, fmt.Errorf("cut-off %q is out of range", s)
		}
		return d.AddDate(0, 0, 1).Add(-time.Nanosecond).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		if _, err2 := time.Parse("2006-01-02T15:04:05.999999999", s); err2 == nil {
			return time.Time{}, fmt.Errorf("cut-off %q has no offset (add Z for UTC); use %s", s, CutoffForms)
		}
		return time.Time{}, fmt.Errorf("cut-off %q is not RFC 3339: %w; use %s", s, err, CutoffForms)
	}
	// time.Parse accepts lower-case and odd offsets in some forms; insist on the canonical
	// separators so that one instant has few spellings in URLs.
	if s[10] != 'T' {
		return time.Time{}, fmt.Errorf("cut-off %q must separate date and time with \"T\"; use %s", s, CutoffForms)
	}
	if t.Year() < 1 || t.Year() > 9999 {
		return time.Time{}, fmt.Errorf("cut-off %q is out of range", s)
	}
	return t.UTC(), nil
}

// FormatCutoff returns the canonical spelling of a cut-off: RFC 3339 in UTC with as many
// fractional digits as needed. ParseCutoff(FormatCutoff(t)) equals t.UTC().
func FormatCutoff(t time.Time) string {
	return t.UTC().Format(time.RFC3339Nano)
}

// parseRegistryTime parses a publish or upload time as upstreams write it (RFC 3339 with
// "Z" or an offset, with or without fractions).
func parseRegistryTime(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// formatUploadTime writes the PEP 700 form YYYY-MM-DDTHH:MM:SS.ffffffZ.
func formatUploadTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000Z")
}
