package core

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/schemas"
)

// The words for people about a finished run: why it did not resolve, and its steps with
// their output (verify, recheck, try and eval all say it the same way).

// RunFailure says in words why a run did not resolve: the step that failed, how, and the
// line of its output that identifies the failure.
func RunFailure(objects data.ObjectReader, eco schemas.Ecosystem, r *schemas.Run) string {
	st, line, err := FailureOf(objects, eco, r)
	if err != nil || st == nil {
		return "it did not run"
	}
	return fmt.Sprintf("step %s %s (%s)", st.Name, ExitWords(*st), strings.TrimSpace(line))
}

// FailureOf returns the step that decides a run's failure, with the line of its output
// that identifies it: the step the expected pattern matched, with the line the pattern
// matches, else the first recipe step that failed; nil when no step failed.
func FailureOf(objects data.ObjectReader, eco schemas.Ecosystem, r *schemas.Run) (*schemas.StepRecord, string, error) {
	for i := range r.Steps {
		st := &r.Steps[i]
		if (r.MatchedStep != "" && st.Name != r.MatchedStep) || (r.MatchedStep == "" && (!IsProjectStep(st.Name) || !st.Failed())) {
			continue
		}
		out, err := objects.Get(st.Output)
		if err != nil {
			return nil, "", err
		}
		if r.MatchedStep != "" {
			if re, err := schemas.CompileFailureRegex(r.Recipe.ExpectedFailureRegex); err == nil {
				if line, ok := schemas.MatchedLine(re, string(StripANSI(out))); ok && line != "" {
					return st, line, nil
				}
			}
		}
		return st, failureLine(eco, *st, out), nil
	}
	return nil, "", nil
}

func ExitWords(st schemas.StepRecord) string {
	switch {
	case st.TimedOut:
		return fmt.Sprintf("timed out after %s", time.Duration(st.DurationMS)*time.Millisecond)
	case st.OOMKilled:
		return "ran out of memory"
	case st.DiskExceeded:
		return "wrote more to disk than its bound and was killed"
	case st.CommandNotFound:
		return "could not find its command (exit 127)"
	}
	return fmt.Sprintf("exited %d", st.ExitCode)
}

// failureLine picks the line of a failing step's output that identifies the failure
// (schemas.ErrorLine), or says how the step ended when it printed nothing.
func failureLine(eco schemas.Ecosystem, st schemas.StepRecord, out []byte) string {
	if line, ok := schemas.ErrorLine(eco, string(out)); ok {
		return line
	}
	return ExitWords(st)
}

// PrintSteps writes steps of a run with their captured output (read from the store), for
// people.
func PrintSteps(w io.Writer, st data.ObjectReader, steps []schemas.StepRecord) error {
	for _, step := range steps {
		if IsProjectStep(step.Name) {
			fmt.Fprintf(w, "\n=== %s: %s\n", step.Name, step.Command)
		} else {
			fmt.Fprintf(w, "\n=== %s (evidence for the dependency layers)\n", step.Name)
		}
		out, err := st.Get(step.Output)
		if err != nil {
			return err
		}
		w.Write(out)
		if len(out) > 0 && out[len(out)-1] != '\n' {
			fmt.Fprintln(w)
		}
		status := ExitWords(step)
		if step.Skipped {
			status = "skipped (an earlier step timed out)"
		}
		trunc := ""
		if step.Truncated {
			trunc = fmt.Sprintf(", output capped (%d bytes in all, full output %s)", step.OutputSize, step.FullOutput)
		}
		fmt.Fprintf(w, "=== %s %s in %.1fs%s\n", step.Name, status, float64(step.DurationMS)/1000, trunc)
	}
	return nil
}
