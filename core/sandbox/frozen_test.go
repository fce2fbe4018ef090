package sandbox

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/envgap/envgap/core/sandbox/sandboxtest"
)

// frozenRun starts a run of `sleep 600` (step timeout stepTimeout) through a freezer,
// freezes the engine once the container runs, and returns the run's outcome channel.
func frozenRun(t *testing.T, ctx context.Context, stepTimeout time.Duration) (<-chan error, time.Time) {
	real, f, e, img, labels := behindFreezer(t)
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

// behindFreezer returns the real engine, a Freezer in front of it and the engine opened
// through it, an image, and labels of the test's own; at the end, once the engine thaws
// (the freezer's cleanups run later), what carries the labels is removed.
func behindFreezer(t *testing.T) (real *Engine, f *sandboxtest.Freezer, e *Engine, img string, labels map[string]string) {
	real, img = needEngine(t)
	f, host := sandboxtest.New(t)
	e, err := Connect(context.Background(), host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	labels = testLabels(t)
	t.Cleanup(func() {
		for _, c := range containersWith(t, real, labels) {
			real.cli.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true})
		}
	})
	return real, f, e, img, labels
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

// TestGatedRunAfterAnUnansweredCall: a run waiting at its gate while a call of the engine
// goes unanswered does not start its steps once it enters (ErrEngineUnresponsive, its
// container removed); a call answered since clears that, and the next gated run runs.
func TestGatedRunAfterAnUnansweredCall(t *testing.T) {
	real, img := needEngine(t)
	f, host := sandboxtest.New(t)
	e, err := Connect(context.Background(), host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	labels := testLabels(t)
	open, entered := make(chan struct{}), make(chan struct{})
	gate := func(ctx context.Context) (func(), error) {
		close(entered)
		<-open
		return func() {}, nil
	}
	errc := make(chan error, 1)
	go func() {
		_, err := e.Run(context.Background(), Spec{Image: img, Labels: labels, Gate: gate, Steps: []Step{{Name: "s", Command: "true"}}})
		errc <- err
	}()
	<-entered
	f.Freeze()
	err = e.call(context.Background(), 300*time.Millisecond, time.Time{}, "inspecting an image", func(ctx context.Context) error {
		_, err := e.cli.ImageInspect(ctx, img)
		return err
	})
	if !errors.Is(err, ErrEngineUnresponsive) {
		t.Fatalf("a call to the frozen engine: %v", err)
	}
	f.Thaw()
	close(open)
	if err := <-errc; !errors.Is(err, ErrEngineUnresponsive) || !strings.Contains(err.Error(), "waited to start its steps") {
		t.Fatalf("a gated run after an unanswered call: %v, want ErrEngineUnresponsive before its steps", err)
	}
	if left := containersWith(t, real, labels); len(left) != 0 {
		t.Fatalf("the refused run left %d container(s)", len(left))
	}
	// Answered since (the image inspection of the next run): the next gated run runs.
	res, err := e.Run(context.Background(), Spec{Image: img, Labels: labels, Steps: []Step{{Name: "s", Command: "echo ran"}},
		Gate: func(context.Context) (func(), error) { return func() {}, nil }})
	if err != nil || string(res.Steps[0].Output) != "ran\n" {
		t.Fatalf("the next gated run: %v %+v", err, res)
	}
}

// TestBackgroundRemovalGivesUpOnAnUnresponsiveEngine: the removal of a run that ended well
// goes on after Run returned (RemoveLater), with a minute's time. When the engine freezes
// meanwhile and a call of another run finds it unresponsive, the removal gives up soon
// (ErrEngineUnresponsive, the container left to the next command's sweep) instead of keeping
// the stage, which waits for its removals, that minute longer.
func TestBackgroundRemovalGivesUpOnAnUnresponsiveEngine(t *testing.T) {
	real, f, e, img, labels := behindFreezer(t)
	// A container of the run, created and started through the freezer.
	id, _, err := e.create(context.Background(), time.Minute, Spec{Image: img, Labels: labels, Shell: []string{"sh", "-c"}, WorkDir: "/"})
	if err != nil {
		t.Fatal(err)
	}
	f.Freeze()
	removed := make(chan error, 1)
	start := time.Now()
	go func() { removed <- e.removeInBackground(id) }()
	time.Sleep(500 * time.Millisecond)
	e.unanswered.Store(true) // as a call of another run that timed out does
	select {
	case err := <-removed:
		if !errors.Is(err, ErrEngineUnresponsive) || !strings.Contains(err.Error(), "removes the container") {
			t.Fatalf("removal on a frozen engine: %v, want ErrEngineUnresponsive and the sweep named", err)
		}
		t.Logf("gave up %s after the start", time.Since(start).Round(time.Millisecond))
	case <-time.After(cleanupTimeout / 2):
		t.Fatalf("the removal still waits %s after the engine was found unresponsive", cleanupTimeout/2)
	}
	f.Thaw()
	if l := containersWith(t, real, labels); len(l) != 1 {
		t.Errorf("%d containers of the run on the engine, want the one left behind", len(l))
	}
}
