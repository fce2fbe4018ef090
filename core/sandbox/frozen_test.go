package sandbox

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/envgap/envgap/core/sandbox/sandboxtest"
)

// frozenRun starts a run of `sleep 600` (step timeout stepTimeout) through a freezer,
// freezes the engine once the container runs, and returns the run's outcome channel.
func frozenRun(t *testing.T, ctx context.Context, stepTimeout time.Duration) (<-chan error, time.Time) {
	real, img := needEngine(t)
	f, host := sandboxtest.New(t)
	e, err := Connect(context.Background(), host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	labels := testLabels(t)
	t.Cleanup(func() {
		// The engine thaws first (freezer cleanups run later): remove what the run left.
		for _, c := range containersWith(t, real, labels) {
			real.cli.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true})
		}
	})
	errc := make(chan error, 1)
	go func() {
		_, err := e.Run(ctx, Spec{Image: img, Labels: labels, Steps: []Step{{Name: "wait", Command: "sleep 600", Timeout: stepTimeout}}})
		errc <- err
	}()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if l := containersWith(t, real, labels); len(l) == 1 && l[0].State == "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run's container does not run")
		}
	}
	time.Sleep(300 * time.Millisecond) // the step's exec is attached and polled
	f.Freeze()
	return errc, time.Now()
}

// TestFrozenEngineIsAFault: an engine that stops answering mid-step turns into
// ErrEngineUnresponsive soon after the step's timeout, not a hang and not a result.
func TestFrozenEngineIsAFault(t *testing.T) {
	const stepTimeout = 3 * time.Second
	errc, frozeAt := frozenRun(t, context.Background(), stepTimeout)
	// The bound: the step timeout, the kill's grace, the abandoned removal, and slack
	// for a loaded machine. Without deadlines the run waits for the engine forever.
	bound := stepTimeout + killGrace + abandonTimeout + 10*time.Second
	select {
	case err := <-errc:
		if !errors.Is(err, ErrEngineUnresponsive) {
			t.Fatalf("run over a frozen engine returned %v, want ErrEngineUnresponsive", err)
		}
		t.Logf("fault after %s: %v", time.Since(frozeAt).Round(time.Millisecond), err)
	case <-time.After(bound):
		t.Fatalf("run over a frozen engine still going %s after the freeze (step timeout %s)", bound, stepTimeout)
	}
}

// TestFrozenEngineCancel: a cancelled run over a frozen engine returns promptly.
func TestFrozenEngineCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc, _ := frozenRun(t, ctx, 10*time.Minute)
	time.Sleep(500 * time.Millisecond)
	cancelled := time.Now()
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled run returned %v, want context.Canceled", err)
		}
		t.Logf("returned %s after the cancel", time.Since(cancelled).Round(time.Millisecond))
	case <-time.After(abandonTimeout + 10*time.Second):
		t.Fatal("a cancelled run over a frozen engine did not return")
	}
}
