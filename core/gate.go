package core

import (
	"context"
	"sync"
)

// Gate bounds how many runs execute their steps at once. A run that carries a gate
// (Spec.Gate) has its container created, its files copied and the container started
// outside the gate, waits at the gate, runs its steps inside it, and leaves before its
// outputs are collected and the container removed. A stage that runs more runs than the
// gate admits (its --jobs) keeps the next run's container ready while the current steps
// run, so the engine's own work (create, copy, start, collect, remove: about a second a
// run on Podman) is done beside the steps instead of between them. The gate decides when
// steps run, never what they do: a run's result is the same with or without one.
type Gate struct {
	slots chan struct{}
}

// NewGate returns a gate that admits n runs at once (at least 1).
func NewGate(n int) *Gate {
	return &Gate{slots: make(chan struct{}, max(n, 1))}
}

// Enter waits for a place (or for ctx to end) and returns the func that leaves it; the
// func may be called more than once.
func (g *Gate) Enter(ctx context.Context) (func(), error) {
	select {
	case g.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	var once sync.Once
	return func() { once.Do(func() { <-g.slots }) }, nil
}

// Ahead is how many runs a stage keeps in flight for a gate of jobs places: each place
// has a second run whose container is made ready while the first runs its steps.
func Ahead(jobs int) int { return 2 * max(jobs, 1) }
