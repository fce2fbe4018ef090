package sandbox

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrEngineUnresponsive means an engine call got no answer within its deadline (a frozen
// or overloaded engine). It is an infrastructure fault, never a result of the commands.
var ErrEngineUnresponsive = errors.New("the container engine did not answer")

// Deadlines of engine calls. Every call to the engine has one, so a frozen engine turns
// into ErrEngineUnresponsive instead of a hang.
const (
	// maxCallTimeout bounds one API call (create, copy, start, inspect, list, ...).
	maxCallTimeout = 30 * time.Second
	// minCallTimeout is the least a call gets, however short the step timeout.
	minCallTimeout = 10 * time.Second
	// killGrace is how long past a step's timeout the kill of its container, and any
	// call made during the step, may take.
	killGrace = 5 * time.Second
	// cleanupTimeout bounds the removal of a container after a run that went well.
	cleanupTimeout = 60 * time.Second
	// abandonTimeout bounds the removal after a cancelled run or an engine that did not
	// answer: the container is left to the sweep of the next command (its owner, this
	// process, is gone by then) rather than holding up the exit.
	abandonTimeout = 3 * time.Second
)

// callTimeout is the deadline of one engine call in a run whose steps have stepTimeout:
// never past the step timeout (a frozen engine is noticed within the step timeout plus a
// few seconds) and within [minCallTimeout, maxCallTimeout].
func callTimeout(stepTimeout time.Duration) time.Duration {
	return min(maxCallTimeout, max(minCallTimeout, stepTimeout))
}

// call runs one engine call f with a deadline: d from now, and never past limit (when
// set). what names the call in the error. The error of a call that ran out of time wraps
// ErrEngineUnresponsive; a cancelled ctx gives ctx's error.
func (e *Engine) call(ctx context.Context, d time.Duration, limit time.Time, what string, f func(context.Context) error) error {
	start := time.Now()
	dl := start.Add(d)
	if !limit.IsZero() && limit.Before(dl) {
		dl = limit
	}
	cctx, cancel := context.WithDeadline(ctx, dl)
	defer cancel()
	if err := f(cctx); err != nil {
		return fmt.Errorf("%s: %w", what, e.callErr(ctx, cctx, dl.Sub(start), err))
	}
	e.unanswered.Store(false)
	return nil
}

// callErr is the error of a call made under cctx, derived from ctx with deadline d: it
// wraps ErrEngineUnresponsive when the deadline ended the call.
func (e *Engine) callErr(ctx, cctx context.Context, d time.Duration, err error) error {
	if ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
		return e.unresponsive(d)
	}
	return err
}

// unresponsive is the error of an engine that did not answer a call.
func (e *Engine) unresponsive(d time.Duration) error {
	e.unanswered.Store(true)
	return fmt.Errorf("%w at %s within %s (frozen or overloaded? the next envgap command that opens it removes what this run left behind)", ErrEngineUnresponsive, e.host, d.Round(100*time.Millisecond))
}

// background runs f (a call that does not honour its context, such as the hijacking exec
// attach) under ctx: when ctx ends first, the call is left to finish in the background and
// its result, when it comes, is handed to drop (to close what it opened).
func background[T any](ctx context.Context, f func() (T, error), drop func(T)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.err == nil {
				drop(r.v)
			}
		}()
		var zero T
		return zero, ctx.Err()
	}
}
