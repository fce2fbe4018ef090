package verify

import (
	"fmt"
	"slices"
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

// Case is what Classify knows of a candidate besides its runs.
type Case struct {
	Set       schemas.Source
	HasFix    bool   // the candidate carries a fix (gold_files)
	Regex     string // the recipe's expected_failure_regex; "" derives one from the failure
	Signature string // the candidate's failure_signature, if it has one
}

// Decision is the whole of a verdict's judgement: its outcome with the reason and
// stability, whether it is a control, the failure signature it records and, for a recipe
// without expected_failure_regex, the pattern derived from the failure.
type Decision struct {
	Outcome          schemas.Outcome
	Reason           string
	Stability        string
	IsControl        bool
	FailureSignature string // the verdict's failure_signature ("" for a control)
	DerivedRegex     string // expected_failure_regex derived from the failure ("" when the recipe had one or none was found)
}

// Classify decides a candidate's verdict from its repeated observations. The rules:
//
//   - a recipe without expected_failure_regex (Lite projects) takes the failure line of
//     the first repeat whose output holds a recognised environment failure
//     (Observation.Recognised) as its signature and its quoted form as the pattern; a
//     repeat's failure matches only if it is that failure;
//   - every repeat must agree (before: fails-matching / fails-other / passes; after:
//     resolved or not), else not_reproduced "flaky k/n";
//   - nothing fails before the fix -> already_works (a reported candidate whose unchanged
//     project also runs becomes a control);
//   - a failure that does not match expected_failure_regex -> not_reproduced (without a
//     pattern: not a recognised environment failure);
//   - the failure reproduces but there is no fix -> not_checked, which is no verdict
//     (the caller records a reproduction, not a verdict);
//   - the fix does not make the project run -> not_reproduced;
//   - otherwise verified.
//
// The signature recorded is the derived one, else the candidate's, else the matched
// failure line; a control records none.
func Classify(c Case, obs []Observation) Decision {
	sig, derived := "", ""
	if c.Regex == "" {
		for _, o := range obs {
			if o.BeforeFailed && o.Recognised && o.FailedLine != "" {
				sig, derived = o.FailedLine, schemas.FailureRegex(o.FailedLine)
				break
			}
		}
		// Every repeat must show the same recognised failure.
		obs = slices.Clone(obs)
		for i := range obs {
			obs[i].BeforeMatched = obs[i].BeforeFailed && sig != "" && matches(derived, obs[i].FailedLine)
		}
	}
	d := decide(c.Set, c.HasFix, obs)
	if c.Regex == "" && sig == "" && len(obs) > 0 && obs[0].BeforeFailed && d.Outcome == schemas.OutcomeNotReproduced && !strings.HasPrefix(d.Reason, "flaky") {
		d.Reason = fmt.Sprintf("the project failed before the fix (step %s: %q), but that is not a recognised environment failure and the candidate gives no expected_failure_regex; add one if this is the failure", obs[0].FailedStep, obs[0].FailedLine)
	}
	d.FailureSignature = c.Signature
	if sig != "" {
		d.FailureSignature, d.DerivedRegex = sig, derived
	} else if d.FailureSignature == "" && len(obs) > 0 && obs[0].BeforeMatched {
		d.FailureSignature = obs[0].FailedLine
	}
	if d.IsControl {
		d.FailureSignature = ""
	}
	return d
}

func matches(re, s string) bool {
	r, err := schemas.CompileFailureRegex(re)
	return err == nil && r.MatchString(s)
}

// decide applies the outcome rules to observations whose BeforeMatched is final.
func decide(set schemas.Source, hasFix bool, obs []Observation) Decision {
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
		// Not a verdict: the candidate stays not_checked, waiting for a fix to check.
		return Decision{Outcome: schemas.OutcomeNotChecked, Stability: stability,
			Reason: fmt.Sprintf("the failure reproduces (step %s: %q), but the candidate has no reference fix to check: no verdict yet; add gold_files (or envgap propose) and verify again", first.FailedStep, first.FailedLine)}
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
