package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
)

// Exit codes.
const (
	exitOK       = 0
	exitError    = 1   // a fault: engine, network, store I/O
	exitUsage    = 2   // wrong flags or arguments
	exitRejected = 3   // input rejected: nothing was stored
	exitPartial  = 4   // some items failed; the rest is done and recorded
	exitDamage   = 5   // fsck found damage, or a check found a difference
	exitCanceled = 130 // interrupted
)

// usageError marks a mistake in the command line.
type usageError struct{ error }

// partialError marks a run that finished with some items failed.
type partialError struct{ error }

// rejectedError marks input that leaves nothing to do (a split or selection with no
// task): nothing ran and nothing was stored.
type rejectedError struct{ error }

// damageError marks a check that found damage or a difference.
type damageError struct{ error }

// exitStatus is an exit code passed through as it is (envgap agent-repro exits with the
// code of the step that failed).
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCommand(defaultFactory())
	err := root.ExecuteContext(ctx)
	os.Exit(exitCode(err))
}

func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var (
		problems schemas.Problems
		conflict *catalog.ConflictError
		usage    usageError
		partial  partialError
		damage   damageError
		rejected rejectedError
	)
	var status exitStatus
	if errors.As(err, &status) {
		return int(status)
	}
	if errors.As(err, &problems) {
		fmt.Fprintf(os.Stderr, "envgap: input rejected, nothing was stored: %d problem(s):\n%s\n", len(problems), problems.Error())
	} else {
		fmt.Fprintln(os.Stderr, "envgap:", err)
	}
	switch {
	case errors.Is(err, context.Canceled):
		return exitCanceled
	case errors.As(err, &problems), errors.As(err, &conflict), errors.As(err, &rejected):
		return exitRejected
	case errors.As(err, &usage):
		return exitUsage
	case errors.As(err, &partial):
		return exitPartial
	case errors.As(err, &damage):
		return exitDamage
	}
	return exitError
}
