// Package core is envgap's evaluation core: the one function that runs a project in a
// clean container and reports what happened. Verify (before and after a fix), recheck,
// controls and the scoring of predictions all call Core.Run; nothing else runs containers.
//
// A Spec is the project (its files at base_commit), an overlay of files to write or
// delete before running (none, the reference fix, or a prediction), the recipe, the
// registry cut-off and the limits. Run checks the overlay (no absolute paths, no "..", no
// path through a symlink of the project) before any container starts, opens a registry
// proxy session at the cut-off, runs the steps in one fresh container through the
// sandbox, and returns a schemas.Run stored in the store with every step's captured
// output as a blob:
//
//	before:              bootstrap, [d2 snapshot], resolve, repro
//	after / prediction:  bootstrap, [d2 snapshot], resolve, [d2 snapshot], run (traced)
//
// D1 is read from the project's manifests on the host (with the overlay applied), D2
// from the package manager's listings the evidence steps leave in /evidence, and D3 from
// the strace log of the run step. An infrastructure fault (engine gone, image missing,
// registry upstream down) is returned as an error, never recorded as the project's
// outcome.
//
// The folder core/ is a floor of its own, between data and lib: everything a container run
// goes through lives here and imports only data, schemas and itself. Its packages:
// core/sandbox (the Docker Engine API: containers, limits, deadlines, the sandbox network),
// core/egress (the one door out), core/registry (the date-limited PyPI and npm proxy),
// core/recipe (the default commands), core/deps (D1, D2, D3 and manifest F1), core/shell
// (the one shell quoting), core/headtail (the one head-and-tail output cap) and
// core/untrusted (the one way to read and write files an agent or a box could have made:
// no link followed, regular files within a bound; ReadDir and the agent protocol use it).
package core
