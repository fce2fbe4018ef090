package site

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/envgap/envgap/export"
	"github.com/envgap/envgap/schemas"
)

// Release is what the site reads from a Hub folder (envgap export's output).
type Release struct {
	// CorpusID is the corpus id of Tasks.
	CorpusID string
	// Candidates are the candidates config's rows; Tasks the full config's.
	Candidates []schemas.Candidate
	Tasks      []schemas.Task
	// Harness is the harness zip read back (nil when the folder has none) and HarnessZip
	// its bytes, copied into the site.
	Harness    *export.Harness
	HarnessZip []byte
}

// LoadHub reads a Hub folder: the candidates and full configs, the corpus id of the task
// rows and the harness zip.
func LoadHub(dir string) (*Release, error) {
	cands, err := export.ReadCandidates(dir)
	if err != nil {
		return nil, fmt.Errorf("site: Hub folder %s: %w", dir, err)
	}
	tasks, err := export.ReadTasks(dir)
	if err != nil {
		return nil, fmt.Errorf("site: Hub folder %s: %w", dir, err)
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("site: Hub folder %s has no task rows (data/full)", dir)
	}
	id, err := schemas.CorpusID(tasks)
	if err != nil {
		return nil, fmt.Errorf("site: Hub folder %s: %w", dir, err)
	}
	r := &Release{CorpusID: id, Candidates: cands, Tasks: tasks}
	zipPath := filepath.Join(dir, filepath.FromSlash(export.HarnessPath))
	if b, err := os.ReadFile(zipPath); err == nil {
		h, err := export.ReadHarness(zipPath)
		if err != nil {
			return nil, fmt.Errorf("site: %w", err)
		}
		if h.CorpusID != id {
			return nil, fmt.Errorf("site: the harness zip %s holds corpus %s, the folder's task rows are %s: the folder is not one release", zipPath, h.CorpusID, id)
		}
		r.Harness, r.HarnessZip = h, b
	} else if !os.IsNotExist(err) {
		return nil, fmt.Errorf("site: %w", err)
	}
	return r, nil
}

// Attempt is what a task page shows of one attempt: the fields of a results.jsonl line it
// reads.
type Attempt struct {
	InstanceID string `json:"instance_id"`
	Excluded   bool   `json:"excluded"`
	Run        int    `json:"run"`
	Attempt    int    `json:"attempt"`
	Status     string `json:"status"`
	Resolved   bool   `json:"resolved"`
	Reason     string `json:"reason"`
	Rejection  string `json:"rejection"`
	Leaks      []struct {
		Rule string `json:"rule"`
	} `json:"leaks"`
	ManifestF1 struct {
		Measured bool    `json:"measured"`
		F1       float64 `json:"f1"`
	} `json:"manifest_f1"`
}

// Results is one result folder: the figures the report reads and the attempts the task
// pages show.
type Results struct {
	// Name is the folder as given (slash-separated, cleaned): the leaderboard names it.
	Name     string
	Folder   *export.ResultFolder
	Attempts []Attempt
}

// LoadResults reads result folders, sorted by name so the order given does not matter.
// Two folders with the same name are refused.
func LoadResults(dirs []string) ([]*Results, error) {
	var out []*Results
	seen := map[string]bool{}
	for _, d := range dirs {
		name := filepath.ToSlash(filepath.Clean(d))
		if seen[name] {
			return nil, fmt.Errorf("site: result folder %s given twice", d)
		}
		seen[name] = true
		f, err := export.ReadResultFolder(d)
		if err != nil {
			return nil, err
		}
		_, atts, err := schemas.ReadEvalFolder[Attempt](d)
		if err != nil {
			return nil, err
		}
		f.Dir = name
		out = append(out, &Results{Name: name, Folder: f, Attempts: atts})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
