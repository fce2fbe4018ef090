package export

import (
	"fmt"
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
	if config == ConfigCandidates || !knownConfig(config) {
		return nil, fmt.Errorf("read %s: %q is not a task config; want one of full, reported, repaired, lite, secure", dir, config)
	}
	out, err := readConfig(dir, config, taskLayout)
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].InstanceID < out[j].InstanceID })
	return out, nil
}

// ReadCandidates reads the candidates config of an exported folder, sorted by instance id.
// A null column reads as "" (the card's candidates rows leave unfilled strings null).
func ReadCandidates(dir string) ([]schemas.Candidate, error) {
	rows, err := readConfig(dir, ConfigCandidates, candidateLayout)
	if err != nil {
		return nil, err
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].InstanceID < rows[j].InstanceID })
	return rows, nil
}

func knownConfig(c string) bool {
	for _, k := range Configs {
		if k == c {
			return true
		}
	}
	return false
}
