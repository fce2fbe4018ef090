package testenv

import (
	"testing"
)

// fakeTB records what Missing does instead of ending the test.
type fakeTB struct {
	testing.TB
	skipped, failed string
}

func (f *fakeTB) Helper()                        {}
func (f *fakeTB) Skipf(format string, a ...any)  { f.skipped = format }
func (f *fakeTB) Fatalf(format string, a ...any) { f.failed = format }

func TestMissingSkipsOrFails(t *testing.T) {
	t.Setenv(RequireVar, "")
	var f fakeTB
	Missing(&f, "no engine")
	if f.skipped == "" || f.failed != "" {
		t.Errorf("without %s: skipped %q failed %q, want a skip", RequireVar, f.skipped, f.failed)
	}
	t.Setenv(RequireVar, "1")
	f = fakeTB{}
	Tool(&f, "envgap-no-such-tool-xyz")
	if f.failed == "" || f.skipped != "" {
		t.Errorf("with %s=1: skipped %q failed %q, want a failure", RequireVar, f.skipped, f.failed)
	}
	f = fakeTB{}
	Command(&f, "sh", "-c", "exit 3")
	if f.failed == "" {
		t.Errorf("a failing probe under %s=1 did not fail", RequireVar)
	}
	f = fakeTB{}
	if p := Tool(&f, "sh"); p == "" || f.failed != "" || f.skipped != "" {
		t.Errorf("sh: %q %q %q", p, f.failed, f.skipped)
	}
}
