// Package testenv is the one switch that decides what a test does when something real it
// needs is missing: the container engine, an evaluation image, or a host tool (git, pip,
// npm, node, strace, sh). On a developer's machine the test is skipped, saying what is
// missing; under ENVGAP_REQUIRE_ENGINE=1 (CI, `make test`) it fails, so that a machine
// without the engine or a tool cannot pass CI by skipping. Every test that needs one of
// them calls this package; nothing else reads the variable.
//
// Standard library only, and imported by test files only.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// RequireVar is the environment variable that turns a missing engine or tool from a skip
// into a failure when set to "1".
const RequireVar = "ENVGAP_REQUIRE_ENGINE"

// Required reports whether a missing engine or tool fails the test (ENVGAP_REQUIRE_ENGINE=1).
func Required() bool { return os.Getenv(RequireVar) == "1" }

// Missing ends the test because something it needs is missing: a skip that says so, or,
// under Required, a failure.
func Missing(tb testing.TB, format string, args ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, args...)
	if Required() {
		tb.Fatalf("%s (%s=1: a missing engine or tool is a failure)", msg, RequireVar)
		return
	}
	tb.Skipf("%s (set %s=1 to make this a failure)", msg, RequireVar)
}

// Tool returns the path of an executable on PATH, or ends the test through Missing.
func Tool(tb testing.TB, name string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(tb, "%s is not installed: %v", name, err)
	}
	return p
}

// Command runs a probe command (for example python3 -m pip --version) and ends the test
// through Missing when it fails; for tools that are a module of another program.
func Command(tb testing.TB, name string, args ...string) {
	tb.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		Missing(tb, "%s %s does not run: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
}
