// Package lib is the shared layer below the stages (crawl, verify, export, harness): what
// more than one stage needs lives here, so that no stage imports another and cmd carries
// no adapters between them. lib stands on the evaluation core (core and its packages),
// data and schemas, and imports no stage; internal/depcheck checks it. Its packages:
//
//   - lib/envfiles: the environment-file classifier (the crawl's candidates, eval's and
//     propose's refusal of source changes);
//   - lib/agent: the agent protocol (workspace, task view, repro server, Act);
//   - lib/jobs: the work queue and Slurm client that run a stage past one machine;
//   - lib/release: the Hub folder's format (configs, parquet layout, readers);
//   - lib/chart: what the PNG charts share;
//   - lib/publish: the one way a folder written whole is put in place (one rename).
package lib
