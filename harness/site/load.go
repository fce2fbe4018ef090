package site

import (
	"fmt"
	"path/filepath"
	"sort"

	"github.com/envgap/envgap/harness/report"
	"github.com/envgap/envgap/lib/release"
	"github.com/envgap/envgap/schemas"
)

// Release is what the site reads from a Hub folder (envgap export's output).
type Release struct {
	// CorpusID is the corpus id of Tasks.
	CorpusID string
	// Candidates are the candidates config's rows; Tasks the full config's.
	Candidates []schemas.Candidate
	Tasks      []schemas.Task
	// Harness is the release's harness zip (nil: the folder has none).
	Harness *Harness
}

// Harness is the release's harness zip as the Evaluation code page offers it. The caller
// reads it (cmd: release.ReadHarness) and checks that its task copy is the release's.
type Harness struct {
	// Zip is the zip's bytes, copied into the site as HarnessZip.
	Zip []byte
	// CorpusID is the corpus id of the zip's copy of the task rows.
	CorpusID string
	// Dir is the folder the zip unpacks to; Tasks the task rows' path inside it.
	Dir, Tasks string
}

// LoadHub reads a Hub folder's candidates and full configs and the corpus id of the task
// rows. The harness zip is the caller's to add (Release.Harness).
func LoadHub(dir string) (*Release, error) {
	cands, err := release.ReadCandidates(dir)
	if err != nil {
		return nil, fmt.Errorf("site: Hub folder %s: %w", dir, err)
	}
	tasks, err := release.ReadTasks(dir)
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
	return &Release{CorpusID: id, Candidates: cands, Tasks: tasks}, nil
}

// Attempt is what a task page shows of one attempt: the fields of a results.jsonl line it
// reads.
type Attempt struct {
	InstanceID string         `json:"instance_id"`
	Excluded   bool           `json:"excluded"`
	Run        int            `json:"run"`
	Attempt    int            `json:"attempt"`
	Status     string         `json:"status"`
	Resolved   bool           `json:"resolved"`
	Reason     string         `json:"reason"`
	Rejection  string         `json:"rejection"`
	Leaks      []schemas.Leak `json:"leaks"`
	ManifestF1 struct {
		Measured bool    `json:"measured"`
		F1       float64 `json:"f1"`
	} `json:"manifest_f1"`
	// What a run's attempt page shows besides (runs.go).
	Trajectory string                `json:"trajectory"`
	CostUSD    *float64              `json:"cost_usd"`
	Agent      *schemas.AgentAttempt `json:"agent"`
	Steps      []schemas.EvalStep    `json:"steps"`
}

// Results is one result folder: the figures the report reads and the attempts the task
// pages show.
type Results struct {
	// Name is the folder as given (slash-separated, cleaned): the leaderboard names it.
	Name     string
	Folder   *report.ResultFolder
	Attempts []Attempt
	// Dir is the folder on disk, where the run pages read each attempt's ATIF
	// trajectory and the evaluation's log ("": none, the pages say so).
	Dir string
}

// LoadResults reads result folders, sorted by name so the order given does not matter.
// Two folders with the same name are refused.
func LoadResults(dirs []string) ([]*Results, error) {
	folders := make([]Folder, len(dirs))
	for i, d := range dirs {
		folders[i] = Folder{Name: d, Dir: d}
	}
	return LoadFolders(folders)
}

// Folder is a result folder to read (Dir) and the name the site shows it by (a path as
// given; a submission bundle's folder is named inside the bundle as given).
type Folder struct{ Name, Dir string }

// LoadFolders is LoadResults with each folder's name given apart from where it is read.
func LoadFolders(folders []Folder) ([]*Results, error) {
	var out []*Results
	seen := map[string]bool{}
	for _, fo := range folders {
		d := fo.Dir
		name := filepath.ToSlash(filepath.Clean(fo.Name))
		if seen[name] {
			return nil, fmt.Errorf("site: result folder %s given twice", fo.Name)
		}
		seen[name] = true
		f, err := report.ReadResultFolder(d)
		if err != nil {
			return nil, err
		}
		_, atts, err := schemas.ReadEvalFolder[Attempt](d)
		if err != nil {
			return nil, err
		}
		f.Dir = name
		out = append(out, &Results{Name: name, Folder: f, Attempts: atts, Dir: d})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
