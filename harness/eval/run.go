package eval

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/envgap/envgap/schemas"
)

// RunOptions configure Run (envgap eval). Tasks and Open are required.
type RunOptions struct {
	// Tasks returns the tasks of the split to score (the store's task set, a Hub folder's
	// or a task rows file's), read first, and the subset they are when only part of the
	// split was selected (nil: the whole split).
	Tasks func() ([]schemas.Task, *schemas.EvalSubset, error)
	// Pred is a predictions file, or gold / noop (Builtin).
	Pred string
	// Agent names the agent in the summary; "" names it after Pred (the file's name
	// without its extension, or gold / noop).
	Agent string
	Split string
	// Out is the result folder to write.
	Out  string
	Jobs int
	// Open opens the evaluator (the engines, the registry proxy, the safe-install check)
	// and what closes it. Not called when Remote scores.
	Open func() (*Evaluator, io.Closer, error)
	// Remote, when set, scores the tasks elsewhere (envgap eval --slurm: a job array),
	// given the tasks once every one has its prediction and whether the predictions are
	// built in; it returns the outcome and the store holding its results' runs (read for
	// the logs). An error writes no result folder.
	Remote   func(ctx context.Context, tasks []schemas.Task, builtin bool) (*Outcome, Store, error)
	Progress func(Event)
	// Release, when set, returns every task of the release the split was taken from (its
	// full config, or the store's task set): the result folder's corpus id is the
	// release's, as the site and the leaderboard compare it, unless a subset was taken;
	// and the predictions of its tasks outside the split (one predictions file for every
	// split, as the dataset card's commands use it) are set aside, not refused.
	Release func() ([]schemas.Task, error)
}

// Run is envgap eval: it reads the tasks and the predictions, checks that every task has
// exactly one prediction (nothing runs otherwise), scores them and writes the result
// folder (WriteResults). A nil *Scored means no folder was written (the error says why);
// otherwise the error is the scoring's own (cancelled), the faults are in the summary.
func Run(ctx context.Context, o RunOptions) (*Scored, error) {
	tasks, subset, err := o.Tasks()
	if err != nil {
		return nil, err
	}
	var all []schemas.Task
	if o.Release != nil && subset == nil {
		if all, err = o.Release(); err != nil {
			return nil, err
		}
	}
	aside := 0
	preds, builtin := Builtin(o.Pred, tasks)
	name := o.Agent
	if !builtin {
		if preds, err = ReadPredictionsFile(o.Pred); err != nil {
			return nil, err
		}
		switch {
		case subset != nil:
			preds = OfTasks(preds, tasks)
		case all != nil:
			preds, aside = outsideSplit(preds, tasks, all)
		}
	}
	if name == "" {
		name = AgentName(o.Pred)
	}
	byID, err := Match(tasks, preds, o.Pred)
	if err != nil {
		return nil, err
	}
	meta := schemas.EvalSummary{Agent: name, Split: o.Split, Mode: schemas.ModeEval, K: 1, MaxAttempts: 1, Subset: subset}
	if meta.CorpusID, err = ReleaseCorpusID(all); err != nil {
		return nil, err
	}
	if o.Remote != nil {
		out, st, err := o.Remote(ctx, tasks, builtin)
		if out == nil || err != nil {
			return nil, err
		}
		sc, err := (&Evaluator{Store: st}).WriteResults(o.Out, meta, tasks, out, nil)
		if sc != nil {
			sc.SetAside = aside
		}
		if err == nil {
			err = WriteATIF(o.Out, sc.Summary, sc.Results, byID)
		}
		return sc, err
	}
	ev, closer, err := o.Open()
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	out, runErr := ev.Eval(ctx, tasks, byID, o.Jobs, o.Progress)
	if out == nil {
		return nil, runErr
	}
	sc, err := ev.WriteResults(o.Out, meta, tasks, out, nil)
	if err != nil {
		return nil, err
	}
	if err := WriteATIF(o.Out, sc.Summary, sc.Results, byID); err != nil {
		return nil, err
	}
	sc.SetAside = aside
	return sc, runErr
}

// outsideSplit sets aside the predictions of the release's tasks (all) that are not in
// the split; the others, unknown ids among them, are kept for Match to judge.
func outsideSplit(preds []schemas.Prediction, tasks, all []schemas.Task) ([]schemas.Prediction, int) {
	inSplit := make(map[string]bool, len(tasks))
	for _, t := range tasks {
		inSplit[t.InstanceID] = true
	}
	inRelease := make(map[string]bool, len(all))
	for _, t := range all {
		inRelease[t.InstanceID] = true
	}
	var keep []schemas.Prediction
	for _, p := range preds {
		if !inSplit[p.InstanceID] && inRelease[p.InstanceID] {
			continue
		}
		keep = append(keep, p)
	}
	return keep, len(preds) - len(keep)
}

// ReleaseCorpusID is the corpus id of the release's tasks, or "" when they are not known
// (nil: Summarize then gives the corpus id of the tasks scored).
func ReleaseCorpusID(all []schemas.Task) (string, error) {
	if all == nil {
		return "", nil
	}
	id, err := schemas.CorpusID(all)
	if err != nil {
		return "", fmt.Errorf("the release's corpus id: %w", err)
	}
	return id, nil
}

// AgentName is the agent's name eval gives predictions when none is given: gold or noop,
// or the predictions file's name without its extension.
func AgentName(pred string) string {
	if pred == "gold" || pred == "noop" {
		return pred
	}
	return strings.TrimSuffix(filepath.Base(pred), filepath.Ext(pred))
}

// OfTasks keeps the predictions of the given tasks (a subset of the split: the
// predictions of the split's other tasks are not scored, and not refused).
func OfTasks(preds []schemas.Prediction, tasks []schemas.Task) []schemas.Prediction {
	keep := make(map[string]bool, len(tasks))
	for _, t := range tasks {
		keep[t.InstanceID] = true
	}
	var out []schemas.Prediction
	for _, p := range preds {
		if keep[p.InstanceID] {
			out = append(out, p)
		}
	}
	return out
}

// Scored is a result folder written: its summary and its results (in the folder's order).
type Scored struct {
	Summary schemas.EvalSummary
	Results []schemas.EvalResult
	// SetAside counts the predictions of the release's tasks outside the split, not
	// scored (RunOptions.Release).
	SetAside int
}

// WriteResults writes the result folder of a scoring run (WriteFolder): the summary of
// meta, the tasks and the outcome (the day it was scored on, today in UTC), the results,
// and each task's log as given, or made from its results (WriteLog) when logs is nil.
func (e *Evaluator) WriteResults(dir string, meta schemas.EvalSummary, tasks []schemas.Task, out *Outcome, logs map[string][]byte) (*Scored, error) {
	SortResults(out.Results)
	if logs == nil {
		var err error
		if logs, err = e.logs(tasks, out.Results); err != nil {
			return nil, err
		}
	}
	sum := Summarize(meta, tasks, out.Results, out.Faults)
	sum.Ran, sum.Reused = out.Ran, out.Reused
	sum.ScoredOn = time.Now().UTC().Format(time.DateOnly)
	if err := WriteFolder(dir, sum, out.Results, logs); err != nil {
		return nil, err
	}
	return &Scored{Summary: sum, Results: out.Results}, nil
}

// logs makes the log of each task from its (sorted) results.
func (e *Evaluator) logs(tasks []schemas.Task, results []schemas.EvalResult) (map[string][]byte, error) {
	byID := make(map[string]*schemas.Task, len(tasks))
	for i := range tasks {
		byID[tasks[i].InstanceID] = &tasks[i]
	}
	bufs := map[string]*bytes.Buffer{}
	for i := range results {
		r := &results[i]
		b := bufs[r.InstanceID]
		if b == nil {
			b = &bytes.Buffer{}
			bufs[r.InstanceID] = b
		} else {
			b.WriteString("\n")
		}
		if err := e.WriteLog(b, byID[r.InstanceID], r); err != nil {
			return nil, err
		}
	}
	logs := make(map[string][]byte, len(bufs))
	for id, b := range bufs {
		logs[id] = b.Bytes()
	}
	return logs, nil
}
