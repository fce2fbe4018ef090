package sandbox

import (
	"errors"
	"strings"
	"testing"
)

// TestNetworkFullHint: a start that found the sandbox network's addresses all taken says
// what reclaims them and keeps the engine's error (still matched by errors.Is); any other
// error is returned as it is.
func TestNetworkFullHint(t *testing.T) {
	engineErr := errors.New(`Error response from daemon: plugin type="bridge" failed (add): failed to allocate for range 0: no IP addresses available in range set: 10.89.0.1-10.89.0.254`)
	err := networkFullHint(engineErr, "envgap")
	if !errors.Is(err, engineErr) {
		t.Errorf("the engine's error is lost: %v", err)
	}
	for _, want := range []string{"no free address left", "sandbox network envgap", "bash images/setup-engine.sh"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q is missing from %q", want, err)
		}
	}
	other := errors.New("Error response from daemon: OCI runtime error")
	if got := networkFullHint(other, "envgap"); got != other {
		t.Errorf("another error changed: %v", got)
	}
	if networkFullHint(nil, "envgap") != nil {
		t.Error("no error became one")
	}
}
