// Package verify is the verify stage: for each candidate without a verdict it runs the
// evaluation core (package core) before and after the candidate's fix, in a fresh
// container with the package registries cut back to its registry_date, and records a
// verdict: verified (the expected failure shows up before the fix and the project runs
// after it), already_works (nothing fails before the fix) or not_reproduced (the failure
// does not show up or does not match, the fix does not make the project run, or the
// result changed between repeats). An infrastructure fault is never a verdict: the
// candidate keeps no verdict and the next verify retries it.
//
// Work is memoised by content: the key of a candidate's verification is the digest of
// the candidate record, its recipe, the image ids, the core's version, the repeat count
// and the limits (memo stage "verify"); each run is memoised too (stage "run"), so a verify
// killed at any point and started again resumes without losing finished runs.
package verify
