package release

import (
	"fmt"
	"slices"
	"sort"

	"github.com/envgap/envgap/schemas"
)

// ReadTasks reads the task rows of an exported Hub folder (data/full/*.parquet), sorted
// by instance id. schemas.CorpusID over them equals the corpus id of the store's task set
// the folder was exported from.
func ReadTasks(dir string) ([]schemas.Task, error) {
	return ReadTaskConfig(dir, ConfigFull)
}

// ReadTaskConfig reads the rows of one task config (full, reported, repaired, lite or
// secure) of an exported folder, sorted by instance id.
func ReadTaskConfig(dir, config string) ([]schemas.Task, error) {
	if config == ConfigCandidates || !KnownConfig(config) {
		return nil, fmt.Errorf("read %s: %q is not a task config; want one of full, reported, repaired, lite, secure", dir, config)
	}
	out, err := ReadConfig(dir, config, TaskLayout)
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].InstanceID < out[j].InstanceID })
	return out, nil
}

// ReadCandidates reads the candidates config of an exported folder, sorted by instance id.
// A null column reads as "" (the card's candidates rows leave unfilled strings null).
func ReadCandidates(dir string) ([]schemas.Candidate, error) {
	rows, err := ReadConfig(dir, ConfigCandidates, CandidateLayout)
	if err != nil {
		return nil, err
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].InstanceID < rows[j].InstanceID })
	return rows, nil
}

// KnownConfig says whether c names a config of the Hub folder (a task config or candidates).
func KnownConfig(c string) bool {
	for _, k := range Configs {
		if k == c {
			return true
		}
	}
	return false
}

// Belongs reports whether a task goes into a task config.
func Belongs(t *schemas.Task, cfg string) bool {
	switch cfg {
	case ConfigFull:
		return true
	case ConfigReported, ConfigRepaired, ConfigLite:
		return string(t.Source) == cfg
	case ConfigSecure:
		return slices.Contains(t.Splits, schemas.SplitSecure)
	}
	return false
}

// SelectConfig returns the tasks that go into a task config, in their order.
func SelectConfig(tasks []schemas.Task, cfg string) []schemas.Task {
	out := []schemas.Task{}
	for i := range tasks {
		if Belongs(&tasks[i], cfg) {
			out = append(out, tasks[i])
		}
	}
	return out
}
