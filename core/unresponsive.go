package core

import (
	"errors"
	"sync"

	"github.com/envgap/envgap/core/sandbox"
)

// Unresponsive keeps, for one command (a verify, a recheck, an eval), the engines that
// stopped answering (sandbox.ErrEngineUnresponsive): the work left for such an engine is
// not sent to it, and is reported not run (NotRun) instead, an infrastructure fault that
// the next command retries. An engine is named by what the work goes to: a *Core, or the
// SpecRunner an evaluator runs on (any comparable value). The zero value is ready; it is
// safe for concurrent use.
type Unresponsive struct {
	mu   sync.Mutex
	down map[any]error
}

// Err returns the error that showed cr stopped answering, or nil while it answers.
func (u *Unresponsive) Err(cr any) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.down[cr]
}

// Note records err of work run on cr: when it says the engine did not answer, cr gets no
// more work (the first such error is kept). It reports whether cr is now down.
func (u *Unresponsive) Note(cr any, err error) bool {
	if !errors.Is(err, sandbox.ErrEngineUnresponsive) {
		return false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.down == nil {
		u.down = map[any]error{}
	}
	if u.down[cr] == nil {
		u.down[cr] = err
	}
	return true
}

// NotRun is the error of work that was not sent to cr because it stopped answering
// (Err(cr) is not nil): "not run: " and that error, which it wraps. It is an
// infrastructure fault, never an outcome.
func (u *Unresponsive) NotRun(cr any) error { return &notRunError{u.Err(cr)} }

type notRunError struct{ err error }

func (e *notRunError) Error() string { return "not run: " + e.err.Error() }
func (e *notRunError) Unwrap() error { return e.err }
