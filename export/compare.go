package export

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/envgap/envgap/lib/release"
	"github.com/envgap/envgap/schemas"
)

// DiffColumns lists the columns (card names, card order) whose values differ between two
// task rows.
func DiffColumns(a, b *schemas.Task) []string {
	ma, mb := columnsOf(a), columnsOf(b)
	var out []string
	for _, f := range schemas.TaskFields() {
		if !bytes.Equal(ma[f], mb[f]) {
			out = append(out, f)
		}
	}
	return out
}

func columnsOf(t *schemas.Task) map[string][]byte {
	raw, _ := json.Marshal(t)
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		c, err := schemas.CanonicalizeJSON(v)
		if err != nil {
			c = v
		}
		out[k] = c
	}
	return out
}

// ReleaseDiff compares the task sets of two exported folders.
type ReleaseDiff struct {
	Release        string        `json:"release"`
	Against        string        `json:"against"`
	ReleaseID      string        `json:"release_corpus_id"`
	AgainstID      string        `json:"against_corpus_id"`
	ReleaseTasks   int           `json:"release_tasks"`
	AgainstTasks   int           `json:"against_tasks"`
	Same           bool          `json:"same"`
	Added          []string      `json:"added"`
	Removed        []string      `json:"removed"`
	Changed        []ChangedTask `json:"changed"`
	ConfigProblems []string      `json:"config_problems,omitempty"`
}

// ChangedTask is a task in both releases whose row differs.
type ChangedTask struct {
	InstanceID string   `json:"instance_id"`
	Columns    []string `json:"columns"`
}

// CompareReleases compares the task set of rel with that of against (both exported
// folders): their corpus ids, the tasks added to and removed from against, and, for the
// tasks in both, the columns that differ. It also checks that each task config of rel
// holds exactly the rows of full its rule selects (source, or the secure split).
func CompareReleases(rel, against string) (*ReleaseDiff, error) {
	rt, err := release.ReadTasks(rel)
	if err != nil {
		return nil, err
	}
	at, err := release.ReadTasks(against)
	if err != nil {
		return nil, err
	}
	if _, err := corpusIDOrEmpty(rt); err != nil {
		return nil, fmt.Errorf("release %s: %w", rel, err)
	}
	d, err := CompareTasks(rt, at)
	if err != nil {
		return nil, fmt.Errorf("release %s: %w", against, err)
	}
	d.Release, d.Against = rel, against
	for _, dir := range []string{rel, against} {
		ps, err := checkTaskConfigs(dir)
		if err != nil {
			return nil, err
		}
		d.ConfigProblems = append(d.ConfigProblems, ps...)
	}
	d.Same = d.Same && len(d.ConfigProblems) == 0
	return d, nil
}

// CompareTasks compares two task sets (rt, the one checked, with at): their corpus ids,
// the tasks rt adds to and removes from at, and, for the tasks in both, the columns that
// differ. Same says whether the corpus ids are equal. A set whose corpus id cannot be
// computed (a repeated instance id) is an error.
func CompareTasks(rt, at []schemas.Task) (*ReleaseDiff, error) {
	d := &ReleaseDiff{ReleaseTasks: len(rt), AgainstTasks: len(at),
		Added: []string{}, Removed: []string{}, Changed: []ChangedTask{}}
	var err error
	if d.ReleaseID, err = corpusIDOrEmpty(rt); err != nil {
		return nil, err
	}
	if d.AgainstID, err = corpusIDOrEmpty(at); err != nil {
		return nil, err
	}
	byID := make(map[string]*schemas.Task, len(at))
	for i := range at {
		byID[at[i].InstanceID] = &at[i]
	}
	seen := map[string]bool{}
	for i := range rt {
		t := &rt[i]
		seen[t.InstanceID] = true
		old, ok := byID[t.InstanceID]
		if !ok {
			d.Added = append(d.Added, t.InstanceID)
			continue
		}
		if cols := DiffColumns(old, t); len(cols) > 0 {
			d.Changed = append(d.Changed, ChangedTask{InstanceID: t.InstanceID, Columns: cols})
		}
	}
	for i := range at {
		if !seen[at[i].InstanceID] {
			d.Removed = append(d.Removed, at[i].InstanceID)
		}
	}
	d.Same = d.ReleaseID == d.AgainstID
	return d, nil
}

func corpusIDOrEmpty(ts []schemas.Task) (string, error) {
	if len(ts) == 0 {
		return "", nil
	}
	return schemas.CorpusID(ts)
}

// checkTaskConfigs checks that the reported, repaired, lite and secure configs of an
// exported folder hold exactly the rows of full that belong there.
func checkTaskConfigs(dir string) ([]string, error) {
	full, err := release.ReadTasks(dir)
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, cfg := range []string{release.ConfigReported, release.ConfigRepaired, release.ConfigLite, release.ConfigSecure} {
		got, err := release.ReadTaskConfig(dir, cfg)
		if err != nil {
			return nil, err
		}
		want := release.SelectConfig(full, cfg)
		wantID, _ := corpusIDOrEmpty(want)
		gotID, err := corpusIDOrEmpty(got)
		if err != nil {
			return nil, fmt.Errorf("%s config %s: %w", dir, cfg, err)
		}
		if gotID != wantID || len(got) != len(want) {
			problems = append(problems, fmt.Sprintf("%s: config %s has %d rows (id %s), but full selects %d (id %s)", dir, cfg, len(got), gotID, len(want), wantID))
		}
	}
	return problems, nil
}
