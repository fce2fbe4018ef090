// Package run is the harness of envgap run --agent: it runs an agent (a command, or the
// built-in gold and noop) K times on every task, each run up to MaxAttempts attempts in a
// fresh workspace (lib/agent), scores every attempt with harness/eval, and feeds the
// evaluation's log back to the next attempt. A fault (the workspace could not be made, an
// infrastructure fault in the evaluation) leaves that run without a result; the next run
// of the same folder retries it, keeping the runs that finished (Kept). Folder is the
// command whole: the tasks read, the runs made here or elsewhere (FolderOptions.Remote:
// run --slurm), and the result folder written as eval writes it.
package run
