// Package tasks loads the tasks a scoring run works on (envgap eval, run --agent,
// corpus-id): the task rows of an exported Hub folder (data/<config>/*.parquet), a task
// rows file (JSON Lines, as envgap hf tasks or the harness zip carry them), or the
// store's task set; and picks the tasks of one task config (full, reported, repaired,
// lite or secure) as export writes them.
package tasks

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

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

// HarnessCheckout returns the task rows file of the harness checkout at dir (an unzipped
// harness zip: release/release.json of kind harness beside release/tasks.jsonl), relative
// to dir, or "" when dir is not one. In a harness checkout eval and run take their tasks
// from there when --tasks is not given, as the dataset card's commands expect.
func HarnessCheckout(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(release.HarnessManifestPath)))
	if err != nil {
		return ""
	}
	var m release.HarnessManifest
	if json.Unmarshal(b, &m) != nil || m.Kind != schemas.KindHarness {
		return ""
	}
	if fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(release.HarnessTasks))); err != nil || fi.IsDir() {
		return ""
	}
	return release.HarnessTasks
}

// EmptyError is a split or selection that holds no task: nothing would be scored. Where
// names where the tasks were looked for.
type EmptyError struct {
	Split, Where string
	// Why says what left nothing: the split itself, or the selection.
	Why string
}

func (e *EmptyError) Error() string {
	return fmt.Sprintf("no task to score: %s (tasks from %s); pick another --split, or check --tasks, --ids and --limit", e.Why, e.Where)
}

// Select picks a subset of the split's tasks (sorted by instance id): the tasks named by
// ids (each must be a task of the split), then the first limit of them (limit 0: all).
// With neither, it returns the tasks as they are and a nil subset. A selection that holds
// no task, or a split with none, is an *EmptyError naming where.
func Select(ts []schemas.Task, split, where string, ids []string, limit int) ([]schemas.Task, *schemas.EvalSubset, error) {
	if len(ts) == 0 {
		return nil, nil, &EmptyError{Split: split, Where: where, Why: fmt.Sprintf("split %s has no task", split)}
	}
	if len(ids) == 0 && limit <= 0 {
		return ts, nil, nil
	}
	whole, err := schemas.CorpusID(ts)
	if err != nil {
		return nil, nil, err
	}
	sub := &schemas.EvalSubset{Limit: limit, OfTasks: len(ts), OfCorpusID: whole}
	out := ts
	if len(ids) > 0 {
		byID := make(map[string]int, len(ts))
		for i := range ts {
			byID[ts[i].InstanceID] = i
		}
		want := map[string]bool{}
		var unknown []string
		for _, id := range ids {
			if _, ok := byID[id]; !ok {
				unknown = append(unknown, id)
			}
			want[id] = true
		}
		if len(unknown) > 0 {
			return nil, nil, fmt.Errorf("--ids: %s: not a task of split %s (tasks from %s)", strings.Join(unknown, ", "), split, where)
		}
		out = nil
		for _, t := range ts {
			if want[t.InstanceID] {
				out = append(out, t)
			}
		}
		sub.IDs = append([]string{}, ids...)
	}
	if limit > 0 && limit < len(out) {
		out = out[:limit]
	}
	if len(out) == 0 {
		return nil, nil, &EmptyError{Split: split, Where: where, Why: "the selection holds no task"}
	}
	return out, sub, nil
}
