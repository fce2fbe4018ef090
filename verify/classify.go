package verify

import (
	"fmt"
	"strings"

	"github.com/envgap/envgap/schemas"
)

// Observation is what one before-run and one after-run showed, reduced to what the
// outcome depends on.
type Observation struct {
	BeforeFailed  bool   // a project step failed before the fix
	BeforeMatched bool   // ... and expected_failure_regex matched its output
	FailedStep    string // the first failing step before the fix
	FailedLine    string // the line identifying that failure
	Recognised    bool   // its output holds a recognised environment failure (schemas.FailureSignature)
	AfterResolved bool   // resolve and run exited 0 after the fix
	AfterFailure  string // why the after-run did not resolve, in words
}

// Decision is a verdict's outcome with its reason and stability.
type Decision struct {
	Outcome   schemas.Outcome
	Reason    string
	Stability string
	IsControl bool
}

// Classify decides a candidate's outcome from its repeated observations. hasFix says
// whether the candidate carries a fix (gold_files); set is its source. The rules:
//
//   - every repeat must agree (before: fails-matching / fails-other / passes; after:
//     resolved or not), else not_reproduced "flaky k/n";
//   - nothing fails before the fix -> already_works (a reported candidate whose unchanged
//     project also runs becomes a control);
//   - a failure that does not match expected_failure_regex -> not_reproduced;
//   - the fix does not make the project run -> not_reproduced;
//   - otherwise verified.
func Classify(set schemas.Source, hasFix bool, obs []Observation) Decision {
	n := len(obs)
	if n == 0 {
		return Decision{Outcome: schemas.OutcomeNotChecked, Reason: "no runs"}
	}
	key := func(o Observation) string {
		b := "passes"
		if o.BeforeFailed {
			b = "fails"
			if o.BeforeMatched {
				b = "fails-matching"
			}
		}
		return fmt.Sprintf("%s/%v", b, o.AfterResolved)
	}
	counts := map[string]int{}
	for _, o := range obs {
		counts[key(o)]++
	}
	first := obs[0]
	agree := counts[key(first)]
	stability := fmt.Sprintf("%d/%d", agree, n)
	if len(counts) > 1 {
		var parts []string
		for _, o := range obs {
			parts = append(parts, describe(o))
		}
		return Decision{Outcome: schemas.OutcomeNotReproduced, Stability: stability,
			Reason: fmt.Sprintf("flaky %s: the result changed between repeats (%s), so it cannot be a task", stability, strings.Join(dedupe(parts), "; "))}
	}
	stability = fmt.Sprintf("%d/%d", n, n)
	switch {
	case !first.BeforeFailed && first.AfterResolved:
		d := Decision{Outcome: schemas.OutcomeAlreadyWorks, Stability: stability,
			Reason: fmt.Sprintf("nothing failed before the fix in %d of %d runs, and the project ran: there is nothing to repair", n, n)}
		if set == schemas.SourceReported && !hasFix {
			d.IsControl = true
			d.Reason = fmt.Sprintf("the reported failure no longer happens (%d of %d runs) and the unchanged project runs: a control", n, n)
		}
		return d
	case !first.BeforeFailed:
		return Decision{Outcome: schemas.OutcomeNotReproduced, Stability: stability,
			Reason: fmt.Sprintf("the failure did not show up before the fix (every step exited 0), but the project did not run after it either: %s", first.AfterFailure)}
	case !first.BeforeMatched:
		return Decision{Outcome: schemas.OutcomeNotReproduced, Stability: stability,
			Reason: fmt.Sprintf("the project failed before the fix, but not with the expected failure: step %s failed with %q, which expected_failure_regex does not match; fix the pattern or the recipe", first.FailedStep, first.FailedLine)}
	case !hasFix:
		return Decision{Outcome: schemas.OutcomeNotChecked, Stability: stability,
			Reason: fmt.Sprintf("the failure reproduces (step %s: %q), but the candidate has no reference fix to check: add gold_files", first.FailedStep, first.FailedLine)}
	case !first.AfterResolved:
		return Decision{Outcome: schemas.OutcomeNotReproduced, Stability: stability,
			Reason: fmt.Sprintf("the failure reproduces (step %s: %q), but the fix did not make the project run: %s", first.FailedStep, first.FailedLine, first.AfterFailure)}
	}
	return Decision{Outcome: schemas.OutcomeVerified, Stability: stability,
		Reason: fmt.Sprintf("fails before the fix with the expected failure (step %s: %q) and runs after it, in %d of %d runs", first.FailedStep, first.FailedLine, n, n)}
}

func describe(o Observation) string {
	b := "passed before the fix"
	if o.BeforeFailed {
		b = "failed before the fix"
		if o.BeforeMatched {
			b = "failed as expected before the fix"
		}
	}
	a := "ran after it"
	if !o.AfterResolved {
		a = "did not run after it"
	}
	return b + " and " + a
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
