package envgap

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestSourceHoldsEveryTrackedFile checks that the embedded tree holds every file git
// tracks, as the working tree has it, so that the harness zip builds like a checkout does.
func TestSourceHoldsEveryTrackedFile(t *testing.T) {
	out, err := exec.Command("git", "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout (git ls-files: %v); the embedded tree is checked from a checkout", err)
	}
	tracked := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(tracked) < 100 {
		t.Fatalf("git ls-files lists only %d files", len(tracked))
	}
	src := Source()
	for _, p := range tracked {
		disk, err := os.ReadFile(p)
		if err != nil {
			continue // deleted in the working tree, not yet in the index
		}
		b, err := fs.ReadFile(src, p)
		if err != nil {
			t.Errorf("%s is tracked but not embedded (add its folder to the go:embed lines of source.go): %v", p, err)
			continue
		}
		if !bytes.Equal(b, disk) {
			t.Errorf("%s: the embedded copy differs from the working tree", p)
		}
	}
}
