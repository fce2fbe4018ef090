package harbor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/envgap/envgap/schemas"
)

// Loaded is one task read by Load: its path and files, or why it could not be read.
type Loaded struct {
	Path  string
	Files []File
	Err   error
}

// Load reads the tasks at src: a tasks.parquet file, a Hub folder (harbor/tasks.parquet),
// one task directory (it holds task.toml), or a folder of task directories. A row whose
// task_binary cannot be read is returned with its Err set (named by the row's path).
func Load(src string) ([]Loaded, error) {
	info, err := os.Stat(src)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		b, err := os.ReadFile(src)
		if err != nil {
			return nil, err
		}
		return loadParquet(b)
	}
	if b, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(ParquetPath))); err == nil {
		return loadParquet(b)
	}
	if _, err := os.Stat(filepath.Join(src, ConfigPath)); err == nil {
		files, err := ReadDir(src)
		return []Loaded{{Path: filepath.Base(src), Files: files, Err: err}}, nil
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		return nil, err
	}
	var out []Loaded
	for _, e := range ents {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(src, e.Name(), ConfigPath)); err == nil {
				files, err := ReadDir(filepath.Join(src, e.Name()))
				out = append(out, Loaded{Path: e.Name(), Files: files, Err: err})
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no Harbor task (no task.toml, no %s)", src, ParquetPath)
	}
	return out, nil
}

func loadParquet(b []byte) ([]Loaded, error) {
	rows, err := ReadParquet(b)
	if err != nil {
		return nil, err
	}
	out := make([]Loaded, 0, len(rows))
	seen := map[string]bool{}
	for _, r := range rows {
		l := Loaded{Path: r.Path}
		switch {
		case r.Path == "" || strings.ContainsAny(r.Path, "/\\") || r.Path == "." || r.Path == "..":
			l.Err = fmt.Errorf("row path %q is not a task folder name", r.Path)
		case seen[r.Path]:
			l.Err = errors.New("the path appears in two rows")
		default:
			l.Files, l.Err = ReadArchive(r.TaskBinary)
		}
		seen[r.Path] = true
		out = append(out, l)
	}
	return out, nil
}

// CheckReport is what Check found.
type CheckReport struct {
	Tasks    int       `json:"tasks"`
	Problems []Problem `json:"problems"`
	Results  []Result  `json:"results"`
}

// OK reports whether every task passed the structural checks and every trial met its
// expectation.
func (r *CheckReport) OK() bool {
	if len(r.Problems) > 0 {
		return false
	}
	for _, x := range r.Results {
		if !x.OK() {
			return false
		}
	}
	return true
}

// CheckOptions configure Check.
type CheckOptions struct {
	// CorpusID, when set, must be every task's metadata.corpus_id.
	CorpusID string
	// NoTrials stops after the structural checks.
	NoTrials bool
	Trial    TrialOptions
}

// Check runs the structural checks on every task at src, then (unless NoTrials) the
// smoke-test trials of each task that passed them on eng. An error is a fault (the
// engine, a build): no verdict.
func Check(ctx context.Context, eng *Engine, src string, o CheckOptions) (*CheckReport, error) {
	tasks, err := Load(src)
	if err != nil {
		return nil, err
	}
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].Path < tasks[j].Path })
	rep := &CheckReport{Tasks: len(tasks), Problems: []Problem{}, Results: []Result{}}
	var good []Loaded
	for _, t := range tasks {
		if t.Err != nil {
			rep.Problems = append(rep.Problems, Problem{Task: t.Path, Field: "task_binary", Msg: t.Err.Error()})
			continue
		}
		ps := CheckFiles(t.Path, t.Files, o.CorpusID)
		rep.Problems = append(rep.Problems, ps...)
		if len(ps) == 0 {
			good = append(good, t)
		}
	}
	if o.NoTrials || len(good) == 0 {
		return rep, nil
	}
	if eng == nil {
		return nil, errors.New("harbor check: no engine for the trials")
	}
	if err := eng.EnsureGoImage(ctx, o.Trial.Log); err != nil {
		return nil, err
	}
	for _, t := range good {
		rs, err := eng.Trials(ctx, t.Path, t.Files, o.Trial)
		if err != nil {
			return nil, err
		}
		rep.Results = append(rep.Results, rs...)
	}
	return rep, nil
}

// WriteTable prints the smoke-test table: one line per task and scenario.
func (r *CheckReport) WriteTable(w io.Writer) {
	for _, p := range r.Problems {
		fmt.Fprintf(w, "FAIL %s\n", p)
	}
	if len(r.Results) == 0 {
		return
	}
	fmt.Fprintf(w, "%-40s %-16s %8s %8s  %s\n", "task", "scenario", "expected", "result", "reason")
	for _, x := range r.Results {
		want, got := fmt.Sprint(x.Want), fmt.Sprint(x.Got)
		if x.Want < 0 {
			want = "-"
		}
		switch {
		case x.Skipped != "":
			got, x.Reason = "skipped", x.Skipped
		case x.Errored:
			got = "errored"
		}
		mark := ""
		if !x.OK() {
			mark = "  <-- DISAGREES"
		}
		fmt.Fprintf(w, "%-40s %-16s %8s %8s  %s%s\n", x.Task, x.Scenario, want, got, firstLine(x.Reason), mark)
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 100 {
		s = s[:100] + "..."
	}
	return s
}

// Tie checks that the tasks at src (a tasks.parquet) are a release's: one row for each of
// its tasks that is not excluded from scoring and no other, each passing the structural
// checks with the release's corpus id in its metadata.
func Tie(src string, tasks []schemas.Task, corpusID string) ([]Problem, error) {
	loaded, err := Load(src)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for i := range tasks {
		if !tasks[i].ExcludedFromScoring {
			want[tasks[i].InstanceID] = true
		}
	}
	ps := []Problem{}
	for _, l := range loaded {
		if l.Err != nil {
			ps = append(ps, Problem{Task: l.Path, Field: "task_binary", Msg: l.Err.Error()})
			continue
		}
		if !want[l.Path] {
			ps = append(ps, Problem{Task: l.Path, Field: "path", Msg: "not a task of the release (or excluded from scoring)"})
		}
		delete(want, l.Path)
		ps = append(ps, CheckFiles(l.Path, l.Files, corpusID)...)
	}
	missing := make([]string, 0, len(want))
	for id := range want {
		missing = append(missing, id)
	}
	sort.Strings(missing)
	for _, id := range missing {
		ps = append(ps, Problem{Task: id, Field: "path", Msg: "a task of the release has no row"})
	}
	return ps, nil
}
