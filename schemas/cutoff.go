package schemas

import (
	"fmt"
	"time"
)

// CutoffForms lists the registry cut-off spellings ParseCutoff accepts, for error messages
// and help text.
const CutoffForms = `"2023-07-30" (end of that day, UTC), "2023-07-30T12:00:00Z", "2023-07-30T12:00:00.123456Z" or "2023-07-30T14:00:00+02:00" (RFC 3339 with an offset)`

// Cutoff is a registry cut-off (a record's registry_date): a package file or version
// published at or before it is served, one published after it is not. Every stage reads a
// cut-off through ParseCutoff and compares through Includes, so the proxy that serves a
// file and the audit that asks whether it existed at the date agree to the nanosecond.
// The zero Cutoff is not a valid cut-off (IsZero).
type Cutoff struct {
	t time.Time // UTC
}

// ParseCutoff parses a registry cut-off. It accepts an RFC 3339 instant with an offset or
// "Z" (any number of fractional digits; normalised to UTC) and a bare date
// (2023-07-30), which means the end of that day in UTC, inclusive to the nanosecond
// (23:59:59.999999999). A date-time without an offset is an error, never local time.
func ParseCutoff(s string) (Cutoff, error) {
	if s == "" {
		return Cutoff{}, fmt.Errorf("cut-off is empty; use %s", CutoffForms)
	}
	if len(s) == len(time.DateOnly) {
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return Cutoff{}, fmt.Errorf("cut-off %q is not a date: %w; use %s", s, err, CutoffForms)
		}
		if d.Year() < 1 {
			return Cutoff{}, fmt.Errorf("cut-off %q is out of range (years 0001 to 9999)", s)
		}
		return Cutoff{d.AddDate(0, 0, 1).Add(-time.Nanosecond).UTC()}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		if _, err2 := time.Parse("2006-01-02T15:04:05.999999999", s); err2 == nil {
			return Cutoff{}, fmt.Errorf("cut-off %q has no offset (add Z for UTC); use %s", s, CutoffForms)
		}
		return Cutoff{}, fmt.Errorf("cut-off %q is not RFC 3339: %w; use %s", s, err, CutoffForms)
	}
	if s[10] != 'T' {
		return Cutoff{}, fmt.Errorf("cut-off %q must separate date and time with \"T\"; use %s", s, CutoffForms)
	}
	if t.Year() < 1 || t.Year() > 9999 {
		return Cutoff{}, fmt.Errorf("cut-off %q is out of range (years 0001 to 9999)", s)
	}
	return Cutoff{t.UTC()}, nil
}

// CutoffAt returns the cut-off at instant t (e.g. now, for a run with no record date).
func CutoffAt(t time.Time) Cutoff { return Cutoff{t.UTC()} }

// Time returns the last instant the cut-off includes, in UTC.
func (c Cutoff) Time() time.Time { return c.t }

// IsZero reports whether c is the zero Cutoff (never parsed).
func (c Cutoff) IsZero() bool { return c.t.IsZero() }

// Includes reports whether something published at t is within the cut-off (at or before
// it).
func (c Cutoff) Includes(t time.Time) bool { return !t.After(c.t) }

// Equal reports whether two cut-offs are the same instant.
func (c Cutoff) Equal(d Cutoff) bool { return c.t.Equal(d.t) }

// String returns the canonical spelling: RFC 3339 in UTC with as many fractional digits as
// needed. ParseCutoff(c.String()) equals c.
func (c Cutoff) String() string { return c.t.Format(time.RFC3339Nano) }

// MarshalText writes the canonical spelling.
func (c Cutoff) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText parses with ParseCutoff.
func (c *Cutoff) UnmarshalText(b []byte) error {
	p, err := ParseCutoff(string(b))
	if err != nil {
		return err
	}
	*c = p
	return nil
}

// Cutoff returns the record's registry_date as a cut-off (the one place a record's date
// is parsed on its way to the core).
func (s *Spec) Cutoff() (Cutoff, error) {
	c, err := ParseCutoff(s.RegistryDate)
	if err != nil {
		return Cutoff{}, fmt.Errorf("registry_date: %w", err)
	}
	return c, nil
}

// MustParseCutoff is ParseCutoff for a literal known to be right (tests, constants); it
// panics on an error.
func MustParseCutoff(s string) Cutoff {
	c, err := ParseCutoff(s)
	if err != nil {
		panic(err)
	}
	return c
}
