package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/internal/testenv"
	"github.com/envgap/envgap/schemas"
)

// TestSandboxCheck runs `envgap sandbox check` on the engine: every probe is printed with
// what it expects and what it got, none leaks, and the command exits 0.
func TestSandboxCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the container engine")
	}
	e, err := sandbox.Connect(context.Background(), "")
	if err != nil {
		testenv.Missing(t, "no container engine: %v", err)
	}
	defer e.Close()
	if _, err := e.ImageID(context.Background(), schemas.ImageRef("envgap-python-eval")); err != nil {
		testenv.Missing(t, "%v", err)
	}
	out, err := runCLI(t, "sandbox", "check")
	if err != nil {
		t.Fatalf("sandbox check: %v\n%s", err, out)
	}
	for _, want := range []string{"probe", "expected", "result", "envgap's listener on the gateway", "another run's container",
		"the cloud metadata address", "IPv6", "no new privileges", "22 probes, 0 leaking",
		"user namespace: container root is not host root",
		"CONNECT to :80", "an SNI that is not the CONNECT host", "another run's door session, no credential",
		"another run's door session, this run's credential",
		"a request inside its session (control)", "a request outside the session", "a later cut-off", "another run's session", "403 a request outside a registry session, recorded"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "LEAK") {
		t.Errorf("a probe leaks:\n%s", out)
	}
	// A network the engine does not have: refused before any probe, not a leak (exit 1).
	t.Setenv(sandbox.EnvNetwork, "envgap-missing-check")
	_, err = runCLI(t, "sandbox", "check")
	if !errors.Is(err, sandbox.ErrNoWall) || exitCode(err) != exitError {
		t.Fatalf("sandbox check without the network: %v (exit %d), want ErrNoWall, exit %d", err, exitCode(err), exitError)
	}
}
