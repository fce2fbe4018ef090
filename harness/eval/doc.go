// Package eval scores agent predictions on the evaluation core: envgap eval, and the
// scoring of every attempt of envgap run.
//
// A prediction ({"instance_id", "files": {path: content or null}, "trajectory",
// "cost_usd"}) is an overlay like the reference fix. Score checks its paths (inside the
// project, no symlink or file on the way, text) and that every path is an environment
// file by the environment-file classifier the crawl uses too (lib/envfiles; a new
// unchanged copy of a project file is allowed), reads the trajectory for the later-history rules (leak.go; shapes it
// does not know are "not inspected"), runs the project at base_commit with the files
// applied in a fresh container through the core (side "prediction", memoised by
// verify's run memo), and measures manifest F1 (D1 against D3, core/deps) and the
// safe-install share (the registry audit's, Evaluator.SafeInstall).
//
// Each result (schemas.EvalResult) is memoised in the store (stage "eval") by the task
// row, the prediction, the image, the core and the scoring version and the safe-install
// source: the same prediction is scored once. An infrastructure fault is a *Fault and
// leaves the task without a result. The result folder (results.jsonl, summary.json,
// logs/<id>.log) is written by WriteFolder (WriteResults: with its summary and logs) and
// read by ReadFolder (and by the report). Run is envgap eval whole: the tasks and
// predictions read and matched, the scoring here or elsewhere (RunOptions.Remote: eval
// --slurm), and the result folder written.
package eval
