// Package shell is the one shell quoting of the project: commands envgap writes for sh or
// bash (the trace wrapper around run_command, the default recipes, the Slurm worker
// script, the agent's repro command) quote every word they did not write themselves with
// Quote.
package shell

import "strings"

// Quote quotes s as one word for sh and bash: in single quotes, with each single quote of
// s closing the quotes, escaped with a backslash, and opening them again. Any string,
// newlines and the empty string included, comes back as one word with exactly its bytes.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
