package sandbox

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestPrepareAndRemoveLater: Prepare is entered before the container is created and left
// once it is started, before the gate; with RemoveLater, Run returns with the container
// still there and Result.Removed reports its removal, after which it is gone; the result
// is that of a run without them (same steps, same output, the image's id). A run that
// fails removes its container before it returns, RemoveLater or not, and leaves Prepare.
func TestPrepareAndRemoveLater(t *testing.T) {
	e, img := needEngine(t)
	ctx := context.Background()
	imgID, err := e.ImageID(ctx, img)
	if err != nil {
		t.Fatal(err)
	}
	steps := []Step{{Name: "a", Command: "echo one"}, {Name: "b", Command: "echo two >&2; exit 3"}}
	plain := run(t, e, Spec{Image: img, Steps: steps})

	labels := testLabels(t)
	var entered, left, leftAtGate atomic.Int32
	spec := Spec{Image: img, Steps: steps, Labels: labels, RemoveLater: true,
		Prepare: func(ctx context.Context) (func(), error) {
			entered.Add(1)
			return func() { left.Add(1) }, nil
		},
		Gate: func(ctx context.Context) (func(), error) {
			leftAtGate.Store(left.Load())
			return func() {}, nil
		}}
	res, err := e.Run(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if entered.Load() != 1 || left.Load() != 1 || leftAtGate.Load() != 1 {
		t.Errorf("Prepare entered %d, left %d times (%d when the gate was entered), want 1, 1, 1", entered.Load(), left.Load(), leftAtGate.Load())
	}
	if res.Removed == nil {
		t.Fatal("RemoveLater: no Result.Removed")
	}
	if res.ImageID != imgID || plain.ImageID != imgID {
		t.Errorf("image id %q (without RemoveLater %q), want the engine's %q", res.ImageID, plain.ImageID, imgID)
	}
	for i, st := range res.Steps {
		p := plain.Steps[i]
		if st.Name != p.Name || st.ExitCode != p.ExitCode || string(st.Output) != string(p.Output) || st.OutputSHA256 != p.OutputSHA256 {
			t.Errorf("step %d: %+v, without RemoveLater %+v", i, st, p)
		}
	}
	select {
	case err := <-res.Removed:
		if err != nil {
			t.Fatalf("removal: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the removal did not end within a minute")
	}
	if n := len(containersWith(t, e, labels)); n != 0 {
		t.Errorf("%d container(s) left after Removed reported the removal", n)
	}

	// A run that fails (its Started hook) removes its container before Run returns.
	labels = testLabels(t)
	left.Store(0)
	_, err = e.Run(ctx, Spec{Image: img, Steps: steps, Labels: labels, RemoveLater: true,
		Prepare: func(ctx context.Context) (func(), error) { return func() { left.Add(1) }, nil },
		Started: func(netip.Addr) error { return errors.New("refused") }})
	if !errors.Is(err, ErrStartedHook) {
		t.Fatalf("a failing hook with RemoveLater: %v", err)
	}
	if n := len(containersWith(t, e, labels)); n != 0 || left.Load() != 1 {
		t.Errorf("a failed run left %d container(s), left Prepare %d times", n, left.Load())
	}

	// Prepare's error ends the run before anything is created.
	if _, err := e.Run(ctx, Spec{Image: img, Steps: steps, Labels: testLabels(t),
		Prepare: func(ctx context.Context) (func(), error) { return nil, context.Canceled }}); !errors.Is(err, context.Canceled) {
		t.Errorf("a failing Prepare: %v", err)
	}

	// Without the image inspection first, a missing image is still ErrImageMissing.
	if _, err := e.Run(ctx, Spec{Image: "localhost/envgap-no-such-image:latest", Steps: steps, Labels: testLabels(t)}); !errors.Is(err, ErrImageMissing) || !strings.Contains(err.Error(), "envgap build-images") {
		t.Errorf("a missing image: %v", err)
	}
}
