package registry

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
			if !got.Equal(tt.want) || got.Location() != time.UTC {
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
		if c.Location() != time.UTC {
			t.Fatalf("ParseCutoff(%q) not UTC: %v", s, c)
		}
		back, err := ParseCutoff(FormatCutoff(c))
		if err != nil || !back.Equal(c) {
			t.Fatalf("round trip of %q: %v %v", s, back, err)
		}
	})
}
