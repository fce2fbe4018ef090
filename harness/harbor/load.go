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
	// Scenarios and Signals are seed 001's two aggregate tables over every task (see
	// Summarize); empty without trials.
	Scenarios []ScenarioRow `json:"scenarios"`
	Signals   []SignalRow   `json:"signals"`
}

// ScenarioRow is one line of the aggregate smoke-test table: a scenario (repair tasks
// and controls apart where they expect different rewards), the reward it should get and
// what the trials got.
type ScenarioRow struct {
	Scenario Scenario `json:"scenario"`
	Tasks    string   `json:"tasks"` // "repair tasks", "controls" or "all tasks"
	Expected string   `json:"expected"`
	// Result is the rewards got: one value when every trial got it, else each with its
	// count ("0 ×3, errored ×1").
	Result  string `json:"result"`
	Trials  int    `json:"trials"`
	Agree   int    `json:"agree"`
	Skipped int    `json:"skipped"`
}

// SignalRow is one line of the reward-signal breakdown: what decides each task's reward
// against its unfixed project (the still-failing trial: the environment touched, nothing
// fixed), as seed 001's breakdown against the buggy starter.
type SignalRow struct {
	Signal string  `json:"signal"`
	Count  int     `json:"count"`
	Share  float64 `json:"share"`
}

// The reward signals of the breakdown.
const (
	SignalResolve   = "resolve fails (the fix must make the install work)"
	SignalRun       = "run fails (installs; the program fails until fixed)"
	SignalBootstrap = "bootstrap fails"
	SignalTimeout   = "a step times out"
	SignalControl   = "control: runs unchanged (a change must not break it)"
	SignalNone      = "no signal: the unfixed project gets reward 1"
	SignalGuard     = "a guard decides (no step ran)"
	SignalErrored   = "errored (no reward written)"
	SignalSkipped   = "not measured (the task names no manifest)"
)

// Summarize fills the aggregate tables from the trials.
func (r *CheckReport) Summarize() {
	r.Scenarios, r.Signals = nil, nil
	if len(r.Results) == 0 {
		return
	}
	type key struct {
		s     Scenario
		group string
	}
	// Controls and repair tasks expect different rewards unchanged and still failing.
	groupOf := func(x Result) string {
		switch {
		case x.Scenario != ScenarioUnchanged && x.Scenario != ScenarioStillFailing:
			return "all tasks"
		case x.Control:
			return "controls"
		}
		return "repair tasks"
	}
	rows := map[key]*ScenarioRow{}
	got := map[key]map[string]int{}
	var order []key
	for _, sc := range append(append([]Scenario(nil), Scenarios...), ScenarioChange) {
		for _, g := range []string{"all tasks", "repair tasks", "controls"} {
			order = append(order, key{sc, g})
		}
	}
	for _, x := range r.Results {
		k := key{x.Scenario, groupOf(x)}
		row := rows[k]
		if row == nil {
			row = &ScenarioRow{Scenario: x.Scenario, Tasks: k.group, Expected: "-"}
			if x.Want >= 0 {
				row.Expected = fmt.Sprint(x.Want)
			}
			rows[k], got[k] = row, map[string]int{}
		}
		if x.Skipped != "" {
			row.Skipped++
			continue
		}
		row.Trials++
		if x.OK() {
			row.Agree++
		}
		v := fmt.Sprint(x.Got)
		if x.Errored {
			v = "errored"
		}
		got[k][v]++
	}
	for _, k := range order {
		row := rows[k]
		if row == nil {
			continue
		}
		var vals []string
		for v := range got[k] {
			vals = append(vals, v)
		}
		sort.Strings(vals)
		switch {
		case len(vals) == 0:
			row.Result = "skipped"
		case len(vals) == 1:
			row.Result = vals[0]
		default:
			parts := make([]string, len(vals))
			for i, v := range vals {
				parts[i] = fmt.Sprintf("%s ×%d", v, got[k][v])
			}
			row.Result = strings.Join(parts, ", ")
		}
		r.Scenarios = append(r.Scenarios, *row)
	}
	counts := map[string]int{}
	var sigOrder []string
	n := 0
	for _, x := range r.Results {
		if x.Scenario != ScenarioStillFailing {
			continue
		}
		n++
		var sig string
		switch {
		case x.Skipped != "":
			sig = SignalSkipped
		case x.Errored:
			sig = SignalErrored
		case x.Control && x.Got == 1:
			sig = SignalControl
		case x.Got == 1:
			sig = SignalNone
		case x.TimedOut:
			sig = SignalTimeout
		case x.Step == "resolve":
			sig = SignalResolve
		case x.Step == "run":
			sig = SignalRun
		case x.Step == "bootstrap":
			sig = SignalBootstrap
		default:
			sig = SignalGuard
		}
		if counts[sig] == 0 {
			sigOrder = append(sigOrder, sig)
		}
		counts[sig]++
	}
	sort.SliceStable(sigOrder, func(i, j int) bool { return counts[sigOrder[i]] > counts[sigOrder[j]] })
	for _, sg := range sigOrder {
		r.Signals = append(r.Signals, SignalRow{Signal: sg, Count: counts[sg], Share: float64(counts[sg]) / float64(n)})
	}
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
	rep.Summarize()
	return rep, nil
}

// WriteTable prints the smoke-test table (one line per task and scenario), then seed
// 001's two aggregate tables: Scenario | Expected | Result over every task, and the
// reward-signal breakdown (Signal | Count | %).
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
	if len(r.Scenarios) > 0 {
		fmt.Fprintf(w, "\nValidation over %d task(s):\n\n| Scenario | Tasks | Expected | Result | Trials as expected |\n|---|---|---|---|---|\n", r.Tasks)
		for _, x := range r.Scenarios {
			agree := fmt.Sprintf("%d/%d", x.Agree, x.Trials)
			if x.Expected == "-" {
				agree = fmt.Sprintf("- (%d printed only)", x.Trials)
			}
			if x.Skipped > 0 {
				agree += fmt.Sprintf(", %d skipped", x.Skipped)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", x.Scenario, x.Tasks, x.Expected, x.Result, agree)
		}
	}
	if len(r.Signals) > 0 {
		fmt.Fprintf(w, "\nReward-signal breakdown (against the unfixed project: the still-failing trial):\n\n| Signal | Count | %% |\n|---|---|---|\n")
		for _, x := range r.Signals {
			fmt.Fprintf(w, "| %s | %d | %s |\n", x.Signal, x.Count, share(x.Share))
		}
	}
}

// share is a percentage as seed 001 prints them: whole numbers, "<1%" below one.
func share(f float64) string {
	if f > 0 && f < 0.01 {
		return "<1%"
	}
	return fmt.Sprintf("%.0f%%", f*100)
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
