package core

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/schemas"
)

// probeRunner answers the egress probe (egress.ImageHosts) slowly, counting the probes,
// and, for a spec with RemoveLater, reports the removal of its "container" through
// Result.Removed when the test releases it.
type probeRunner struct {
	probes  atomic.Int64
	later   atomic.Int64
	release chan struct{}
	fail    error
}

func (r *probeRunner) ImageID(context.Context, string) (string, error) {
	return "sha256:" + strings.Repeat("ef", 32), nil
}

func (r *probeRunner) Run(_ context.Context, spec sandbox.Spec) (*sandbox.Result, error) {
	r.probes.Add(1)
	time.Sleep(50 * time.Millisecond)
	out := []byte("deb http://deb.example.test/debian bookworm main\n")
	res := &sandbox.Result{ImageID: "sha256:" + strings.Repeat("ef", 32), Collected: map[string][]byte{}}
	for _, st := range spec.Steps {
		res.Steps = append(res.Steps, sandbox.StepResult{Name: st.Name, Command: st.Command, Output: out, OutputSHA256: schemas.Hash(out).Hex()})
	}
	if spec.RemoveLater {
		r.later.Add(1)
		removed := make(chan error, 1)
		res.Removed = removed
		go func() {
			<-r.release
			removed <- r.fail
		}()
	}
	return res, nil
}

// TestAllowlistOneProbeForRunsAtOnce: runs that ask for an image's allowlist at once
// (the first runs of a verify) wait for one probe; through a gate that removes in the
// background, the probe's container is removed so too, and the gate's Wait waits for it
// and reports its fault.
func TestAllowlistOneProbeForRunsAtOnce(t *testing.T) {
	r := &probeRunner{release: make(chan struct{}), fail: errors.New("engine said no")}
	c := &Core{Runner: r}
	gate := NewGate(1).RemoveInBackground()
	var wg sync.WaitGroup
	got := make([][]string, 6)
	errs := make([]error, 6)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				got[i], _, errs[i] = c.allowlistOf(context.Background(), "envgap-python-eval", gate)
			} else {
				got[i], errs[i] = c.Allowlist(context.Background(), "envgap-python-eval")
			}
		}()
	}
	wg.Wait()
	for i := range got {
		if errs[i] != nil || len(got[i]) != 1 || got[i][0] != "deb.example.test:80" {
			t.Fatalf("asker %d: %v %v", i, got[i], errs[i])
		}
	}
	if n := r.probes.Load(); n != 1 {
		t.Fatalf("%d probes for one image asked at once, want 1", n)
	}
	// The probe ran for a run through the gate, or for Allowlist (no gate): its removal
	// is the gate's only in the first case.
	if r.later.Load() == 1 {
		waited := make(chan error, 1)
		go func() { waited <- gate.Wait() }()
		select {
		case err := <-waited:
			t.Fatalf("Wait returned (%v) before the probe's container was removed", err)
		case <-time.After(50 * time.Millisecond):
		}
		close(r.release)
		if err := <-waited; err == nil || !strings.Contains(err.Error(), "package sources: engine said no") {
			t.Fatalf("Wait = %v, want the probe's failed removal", err)
		}
	} else if err := gate.Wait(); err != nil {
		t.Fatalf("Wait = %v with no removal of its own", err)
	}

	// Through a gate that removes in the background, always so.
	r2 := &probeRunner{release: make(chan struct{})}
	close(r2.release)
	c2, g2 := &Core{Runner: r2}, NewGate(1).RemoveInBackground()
	if _, _, err := c2.allowlistOf(context.Background(), "envgap-python-eval", g2); err != nil {
		t.Fatal(err)
	}
	if r2.later.Load() != 1 || g2.Wait() != nil {
		t.Fatalf("the probe of a run through the gate: removed later %d times", r2.later.Load())
	}
	// Without one, the probe's container is removed before Run returns.
	r3 := &probeRunner{release: make(chan struct{})}
	if _, _, err := (&Core{Runner: r3}).allowlistOf(context.Background(), "envgap-python-eval", NewGate(1)); err != nil || r3.later.Load() != 0 {
		t.Fatalf("a gate without RemoveInBackground: %v, removed later %d times", err, r3.later.Load())
	}
}
