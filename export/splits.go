package export

import (
	"fmt"

	"github.com/envgap/envgap/schemas"
)

// SplitTasks returns the tasks of one task config (full, reported, repaired, lite or
// secure), as export would write them into that config.
func SplitTasks(tasks []schemas.Task, config string) ([]schemas.Task, error) {
	if config == ConfigCandidates || !knownConfig(config) {
		return nil, fmt.Errorf("split %q: want one of full, reported, repaired, lite, secure", config)
	}
	return selectConfig(tasks, config), nil
}
