package core

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Gate bounds how many runs execute their steps at once. A run that carries a gate
// (Spec.Gate) has its container created, its files copied and the container started
// outside the gate, waits at the gate, runs its steps inside it, and leaves before its
// outputs are collected. A stage that runs more runs than the gate admits (its --jobs)
// keeps the next runs' containers ready while the current steps run, so the engine's own
// work (create, copy, start, collect, remove: about a second a run on Podman) is done
// beside the steps instead of between them:
//
//   - the containers of one engine are prepared (created, filled, started) as many at a
//     time as the gate has places, in turn: the engine starts them one at a time anyway
//     (four started at once were all ready after about 600 ms on Podman here, one after
//     about 150 ms), so the first runs are ready sooner, and a place each keeps the
//     preparations abreast of the steps;
//   - with RemoveInBackground, a run returns once its outputs are collected, its
//     container removed in the background; Wait waits for those removals and returns
//     their faults.
//
// The gate decides when steps run, never what they do: a run's result is the same with or
// without one.
type Gate struct {
	slots chan struct{}
	later bool // RemoveInBackground

	mu       sync.Mutex
	lanes    map[*Core]chan struct{} // containers prepared at once per engine: cap(slots)
	removals sync.WaitGroup
	errs     []error // removals that failed
}

// NewGate returns a gate that admits n runs at once (at least 1).
func NewGate(n int) *Gate {
	return &Gate{slots: make(chan struct{}, max(n, 1))}
}

// RemoveInBackground makes the runs that go through g return once their outputs are
// collected, their containers removed in the background; the caller then calls Wait before
// it reports (its wall time includes the last removals, as it did before). It returns g.
func (g *Gate) RemoveInBackground() *Gate {
	g.later = true
	return g
}

// Enter waits for a place (or for ctx to end) and returns the func that leaves it; the
// func may be called more than once.
func (g *Gate) Enter(ctx context.Context) (func(), error) {
	return enter(ctx, g.slots)
}

func enter(ctx context.Context, ch chan struct{}) (func(), error) {
	select {
	case ch <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	var once sync.Once
	return func() { once.Do(func() { <-ch }) }, nil
}

// prepare returns the Prepare hook of c's runs: as many containers of c's engine as the
// gate has places are prepared at a time, in the order the runs asked (a channel's
// waiting senders go first come, first served).
func (g *Gate) prepare(c *Core) func(context.Context) (func(), error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.lanes == nil {
		g.lanes = map[*Core]chan struct{}{}
	}
	lane := g.lanes[c]
	if lane == nil {
		lane = make(chan struct{}, cap(g.slots))
		g.lanes[c] = lane
	}
	return func(ctx context.Context) (func(), error) { return enter(ctx, lane) }
}

// removing notes the removal of a run's container (what names the run), going on in the
// background: Wait waits for it.
func (g *Gate) removing(what string, removed <-chan error) {
	g.removals.Add(1)
	go func() {
		defer g.removals.Done()
		if err := <-removed; err != nil {
			g.mu.Lock()
			g.errs = append(g.errs, fmt.Errorf("%s: %w", what, err))
			g.mu.Unlock()
		}
	}()
}

// Wait waits for the removals of the containers of the runs that went through the gate
// (RemoveInBackground) and returns the faults of those that failed (a container left behind: the next envgap
// command that opens the engine removes it).
func (g *Gate) Wait() error {
	g.removals.Wait()
	g.mu.Lock()
	defer g.mu.Unlock()
	return errors.Join(g.errs...)
}

// Ahead is how many runs a stage keeps in flight for a gate of jobs places: each place
// has a second run whose container is made ready while the first runs its steps.
func Ahead(jobs int) int { return 2 * max(jobs, 1) }
