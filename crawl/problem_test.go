package crawl

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestProblemStatement(t *testing.T) {
	long := strings.Repeat("é", 5000) // 10,000 bytes: an ordinary long body, kept whole
	huge := "x" + strings.Repeat("é", MaxProblemBody/2+10)
	tests := []struct {
		name, body string
		wantLen    int
		truncated  bool
	}{
		{"empty", "", 0, false},
		{"long body kept whole", long, len(long), false},
		{"at the cap", strings.Repeat("a", MaxProblemBody), MaxProblemBody, false},
		{"past the cap, cut on a character boundary", huge, MaxProblemBody - 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps, truncated := problemStatement("Title", tt.body)
			title, body, ok := strings.Cut(ps, "\n\n")
			if !ok || title != "Title" || len(body) != tt.wantLen || truncated != tt.truncated || !utf8.ValidString(body) {
				t.Fatalf("got title %q, body of %d bytes (valid %v), truncated %v; want %d bytes, truncated %v",
					title, len(body), utf8.ValidString(body), truncated, tt.wantLen, tt.truncated)
			}
			if !strings.HasPrefix(tt.body, body) {
				t.Fatal("the body is not a prefix of the issue's")
			}
		})
	}
}
