package schemas

import (
	"strings"
	"testing"
	"time"
)

func TestParseCutoff(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Time
		wantErr string
	}{
		{in: "2023-07-30T12:00:00Z", want: time.Date(2023, 7, 30, 12, 0, 0, 0, time.UTC)},
		{in: "2023-07-30T14:00:00+02:00", want: time.Date(2023, 7, 30, 12, 0, 0, 0, time.UTC)},
		{in: "2023-07-30T12:00:00.000001Z", want: time.Date(2023, 7, 30, 12, 0, 0, 1000, time.UTC)},
		{in: "2023-07-30", want: time.Date(2023, 7, 30, 23, 59, 59, 999999999, time.UTC)},
		{in: "2024-02-29", want: time.Date(2024, 2, 29, 23, 59, 59, 999999999, time.UTC)},
		{in: "2023-07-30T12:00:00", wantErr: "no offset"},
		{in: "2023-07-30T12:00:00.5", wantErr: "no offset"},
		{in: "2023-02-30", wantErr: "not a date"},
		{in: "", wantErr: "empty"},
		{in: "yesterday", wantErr: "not RFC 3339"},
		{in: "2023-07-30 12:00:00Z", wantErr: "not RFC 3339"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseCutoff(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseCutoff(%q) error = %v, want %q", tt.in, err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), "2023-07-30T12:00:00Z") {
					t.Errorf("error %q does not list the accepted forms", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !got.Time().Equal(tt.want) || got.Time().Location() != time.UTC {
				t.Errorf("ParseCutoff(%q) = %v, want %v (UTC)", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzParseCutoff(f *testing.F) {
	for _, s := range []string{"2023-07-30", "2023-07-30T12:00:00Z", "2023-07-30T12:00:00.123456789+05:30",
		"2023-07-30T12:00:00", "0000-01-01", "9999-12-31T23:59:59Z", "2023-07-30t12:00:00z", "", "2023-7-3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCutoff(s)
		if err != nil {
			if !strings.Contains(err.Error(), "cut-off") {
				t.Fatalf("error %q does not name the cut-off", err)
			}
			return
		}
		if c.Time().Location() != time.UTC {
			t.Fatalf("ParseCutoff(%q) not UTC: %v", s, c)
		}
		back, err := ParseCutoff(c.String())
		if err != nil || !back.Equal(c) || !c.Includes(c.Time()) || c.Includes(c.Time().Add(time.Nanosecond)) {
			t.Fatalf("round trip of %q: %v %v", s, back, err)
		}
	})
}

// The end of a bare date is inclusive to the nanosecond: a file uploaded at 23:59:59.5 of
// the cut-off's date is within it, one a nanosecond after midnight is not.
func TestCutoffBareDateBoundary(t *testing.T) {
	c, err := ParseCutoff("2023-07-30")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		at   time.Time
		want bool
	}{
		{time.Date(2023, 7, 30, 23, 59, 59, 500_000_000, time.UTC), true},
		{time.Date(2023, 7, 30, 23, 59, 59, 999_999_999, time.UTC), true},
		{time.Date(2023, 7, 31, 0, 0, 0, 0, time.UTC), false},
		{time.Date(2023, 7, 31, 1, 59, 59, 500_000_000, time.FixedZone("+02", 2*3600)), true},
		{time.Date(2023, 7, 30, 0, 0, 0, 0, time.UTC), true},
	} {
		if got := c.Includes(tt.at); got != tt.want {
			t.Errorf("cut-off %s includes %s: %v, want %v", c, tt.at.Format(time.RFC3339Nano), got, tt.want)
		}
	}
	if got := c.String(); got != "2023-07-30T23:59:59.999999999Z" {
		t.Errorf("String() = %q", got)
	}
	var u Cutoff
	if err := u.UnmarshalText([]byte("2023-07-30T14:00:00+02:00")); err != nil || u.String() != "2023-07-30T12:00:00Z" {
		t.Errorf("UnmarshalText: %v %v", u, err)
	}
	if b, _ := u.MarshalText(); string(b) != "2023-07-30T12:00:00Z" {
		t.Errorf("MarshalText: %s", b)
	}
}
