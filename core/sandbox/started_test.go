package sandbox

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"
)

// TestStartedHook: Started gets the address the container has on the sandbox network
// (the one its connections to the host come from) before the first step; the zero Addr
// without network; a failing hook stops the run before any step, as an error wrapping
// ErrStartedHook, and leaves no container behind. A box calls it too.
func TestStartedHook(t *testing.T) {
	e, img := needEngine(t)
	var got netip.Addr
	calls := 0
	res := run(t, e, Spec{Image: img, Network: NetworkDefault, Started: func(a netip.Addr) error {
		got, calls = a, calls+1
		return nil
	}, Steps: []Step{{Name: "addr", Command: "hostname -I"}}})
	if calls != 1 || !got.IsValid() || !got.Is4() {
		t.Fatalf("Started called %d times with %v", calls, got)
	}
	if fields := strings.Fields(string(res.Steps[0].Output)); len(fields) == 0 || fields[0] != got.String() {
		t.Errorf("the container says its address is %q, the hook got %s", res.Steps[0].Output, got)
	}
	run(t, e, Spec{Image: img, Started: func(a netip.Addr) error {
		got, calls = a, calls+1
		return nil
	}, Steps: []Step{{Name: "none", Command: "true"}}})
	if calls != 2 || got.IsValid() {
		t.Errorf("without network: Started called %d times with %v, want the zero Addr", calls, got)
	}

	labels := testLabels(t)
	dir := t.TempDir()
	marker := dir + "/ran"
	_, err := e.Run(context.Background(), Spec{Image: img, Network: NetworkDefault, Labels: labels,
		Started: func(netip.Addr) error { return errors.New("no session for it") },
		Steps:   []Step{{Name: "must not run", Command: "echo ran"}}})
	if !errors.Is(err, ErrStartedHook) || !strings.Contains(err.Error(), "no session for it") {
		t.Errorf("a failing hook: %v, want ErrStartedHook naming the hook's error", err)
	}
	if left := containersWith(t, e, labels); len(left) != 0 {
		t.Errorf("a failing hook left %d container(s)", len(left))
	}

	var boxAddr netip.Addr
	b, err := e.OpenBox(context.Background(), BoxSpec{Image: img, Dir: dir, Network: NetworkDefault, Labels: testLabels(t),
		Started: func(a netip.Addr) error { boxAddr = a; return nil }, Limits: Limits{StepTimeout: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	sr, err := b.Exec(context.Background(), "hostname -I; touch "+"/work/ran", 0)
	if err != nil || !strings.HasPrefix(strings.TrimSpace(string(sr.Output)), boxAddr.String()) || !boxAddr.IsValid() {
		t.Errorf("box: hook got %v, the box says %q (%v)", boxAddr, sr.Output, err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the box's command did not run: %v", err)
	}
	bl := testLabels(t)
	if _, err := e.OpenBox(context.Background(), BoxSpec{Image: img, Dir: t.TempDir(), Network: NetworkDefault, Labels: bl,
		Started: func(netip.Addr) error { return errors.New("refused") }}); !errors.Is(err, ErrStartedHook) {
		t.Errorf("a box with a failing hook: %v", err)
	}
	if left := containersWith(t, e, bl); len(left) != 0 {
		t.Errorf("a box with a failing hook left %d container(s)", len(left))
	}
}
