// Command envgap is the curation pipeline of the EnvGap benchmark: crawl, verify, admit,
// audit, scan, export, recheck and publish, all over one content-addressed store.
//
// Each command lives in its own cmd_<name>.go file with three pieces: an options struct,
// a constructor that copies flags into it, and a run function that makes one call into a
// stage package. Dependencies are built by the factory (root.go); exit codes are decided
// in one place (main.go); wiring.go is where stages are joined (verify fetches GitHub
// projects through the crawl stage's checkout).
package main
