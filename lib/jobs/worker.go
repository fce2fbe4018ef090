package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Handler does one item and returns its result (the caller's format). retry, when not
// empty, says in words that the item met an infrastructure fault here (an engine gone,
// say) and should be given to another worker while attempts are left; the result is
// recorded as it is when none are.
type Handler func(ctx context.Context, item string) (result json.RawMessage, retry string)

// Worker takes items from a queue until none is left.
type Worker struct {
	Claims Claims
	Owner  Owner
	// Jobs is how many items it does at once (default 1).
	Jobs int
	// Poll is how long it waits when every item left is held by others (default 2s).
	Poll time.Duration
	// MaxFaults stops the worker after this many infrastructure faults in a row (its
	// node's engine is probably broken; Slurm may requeue it elsewhere). Default 3.
	MaxFaults int
	// Logf reports each item (may be nil).
	Logf func(format string, args ...any)

	mu     sync.Mutex
	faults int
}

// fault counts an item's outcome and reports whether the worker should stop.
func (w *Worker) fault(retry string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if retry == "" {
		w.faults = 0
		return nil
	}
	w.faults++
	limit := w.MaxFaults
	if limit <= 0 {
		limit = 3
	}
	if w.faults >= limit {
		return fmt.Errorf("%d infrastructure faults in a row here (last: %s): this worker stops; its node's engine may be broken", w.faults, retry)
	}
	return nil
}

// Serve runs the worker until every item has a result (nil), ctx ends (ctx.Err(); the
// items it holds are released for others at once), or the queue fails.
func (w *Worker) Serve(ctx context.Context, do Handler) error {
	jobs := max(w.Jobs, 1)
	poll := w.Poll
	if poll <= 0 {
		poll = 2 * time.Second
	}
	logf := w.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	errs := make([]error, jobs)
	var wg sync.WaitGroup
	for j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[j] = w.loop(ctx, do, poll, logf)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.Join(errs...)
}

func (w *Worker) loop(ctx context.Context, do Handler, poll time.Duration, logf func(string, ...any)) error {
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c, err := w.Claims.Claim(w.Owner)
		switch {
		case errors.Is(err, ErrNoWork):
			return nil
		case errors.Is(err, ErrWait):
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(poll):
			}
			continue
		case err != nil:
			return err
		}
		if err := w.one(ctx, c, do, logf); err != nil {
			return err
		}
	}
}

// one does one claimed item; its lease renews itself meanwhile, and the item is
// cancelled when the lease is lost.
func (w *Worker) one(ctx context.Context, c Claim, do Handler, logf func(string, ...any)) error {
	start := time.Now()
	logf("%s: claimed (attempt %d)", c.Item, c.Attempt)
	itemCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-stop:
		case <-c.Lost():
			cancel()
		}
	}()
	res, retry := do(itemCtx, c.Item)
	close(stop)
	<-watched
	if ctx.Err() != nil {
		if err := w.Claims.Release(c, "its worker was interrupted"); err != nil && !errors.Is(err, ErrLost) {
			logf("%s: giving the item back: %v", c.Item, err)
		}
		logf("%s: given back (interrupted)", c.Item)
		return ctx.Err()
	}
	select {
	case <-c.Lost():
		logf("%s: the claim went to another worker (the lease was not renewed in time); result dropped", c.Item)
		return nil
	default:
	}
	switch err := w.Claims.Finish(c, res, retry); {
	case errors.Is(err, ErrLost):
		logf("%s: the claim went to another worker; result dropped", c.Item)
	case err != nil:
		return fmt.Errorf("%s: recording the result: %w", c.Item, err)
	case retry != "":
		logf("%s: infrastructure fault here, left for another worker or recorded (attempt %d): %s", c.Item, c.Attempt, retry)
	default:
		logf("%s: done in %s", c.Item, time.Since(start).Round(time.Millisecond))
	}
	return w.fault(retry)
}
