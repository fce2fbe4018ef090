// Package tasks loads the tasks a scoring run works on (envgap eval, run --agent,
// corpus-id): the task rows of an exported Hub folder (data/<config>/*.parquet), a task
// rows file (JSON Lines, as envgap hf tasks or the harness zip carry them), or the
// store's task set; and picks the tasks of one task config (full, reported, repaired,
// lite or secure) as export writes them.
package tasks

import (
	"fmt"
	"os"
	"sort"

	"github.com/envgap/envgap/lib/release"
	"github.com/envgap/envgap/schemas"
)

// OfConfig returns the tasks of one task config (full, reported, repaired, lite or secure),
// as export would write them into that config.
func OfConfig(tasks []schemas.Task, config string) ([]schemas.Task, error) {
	if err := CheckConfig(config); err != nil {
		return nil, err
	}
	return release.SelectConfig(tasks, config), nil
}

// CheckConfig says whether config names a task config.
func CheckConfig(config string) error {
	if config == release.ConfigCandidates || !release.KnownConfig(config) {
		return fmt.Errorf("split %q: want one of full, reported, repaired, lite, secure", config)
	}
	return nil
}

// Load returns the tasks of one task config from path: a task rows file (JSON Lines) or
// an exported Hub folder. An error names path.
func Load(path, config string) ([]schemas.Task, error) {
	if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
		all, err := ReadRows(path)
		if err != nil {
			return nil, fmt.Errorf("--tasks %s: %w", path, err)
		}
		sort.Slice(all, func(i, j int) bool { return all[i].InstanceID < all[j].InstanceID })
		return OfConfig(all, config)
	}
	ts, err := release.ReadTaskConfig(path, config)
	if err != nil {
		return nil, fmt.Errorf("--tasks %s: %w", path, err)
	}
	return ts, nil
}

// ReadRows reads task rows from a JSON Lines file or an exported Hub folder (its full
// config). Malformed rows are listed (a schemas.Problems error).
func ReadRows(path string) ([]schemas.Task, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("corpus id: %w", err)
	}
	if fi.IsDir() {
		return release.ReadTasks(path)
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	tasks, problems, err := schemas.ReadTasks(path, fh)
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return tasks, nil
}
