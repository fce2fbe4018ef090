package shell_test

import (
	"os/exec"
	"testing"

	"github.com/envgap/envgap/core/shell"
)

// TestQuoteRoundTrips hands hostile words to a real sh and checks each comes back whole.
func TestQuoteRoundTrips(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	for _, w := range []string{"", "plain", "two words", "it's", "'", "''", `a\b`, "$(touch /tmp/x)", "`id`", "$HOME", "line\nbreak", "*", "-n", `"q"`, "tab\there", "!bang"} {
		out, err := exec.Command(sh, "-c", "printf %s "+shell.Quote(w)).Output()
		if err != nil {
			t.Fatalf("%q: %v", w, err)
		}
		if string(out) != w {
			t.Errorf("Quote(%q) came back as %q", w, out)
		}
	}
}
