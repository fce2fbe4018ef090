// Package harness is the scoring side of envgap, a stage like crawl, verify and export:
// what a user of the benchmark runs on the exported tasks. It has no code of its own; its
// packages are:
//
//   - harness/tasks: the tasks a scoring run works on (an exported Hub folder, a task
//     rows file, or the store's task set) and the tasks of one task config;
//   - harness/eval: scoring predictions on the evaluation core (envgap eval);
//   - harness/run: running an agent over tasks, attempt by attempt with feedback, each
//     attempt scored by harness/eval (envgap run --agent);
//   - harness/report: the leaderboard numbers and chart over result folders (envgap report).
//
// The harness shares with the other stages only what lives below them: lib (the
// environment-file classifier, the agent protocol, the job queue, the Hub folder's
// format) and the evaluation core (core and its packages). cmd wires it.
package harness
