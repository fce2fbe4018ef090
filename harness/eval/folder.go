package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/schemas"
)

// Folder is a result folder read back.
type Folder struct {
	Summary schemas.EvalSummary
	Results []schemas.EvalResult
}

// ReadFolder reads a result folder envgap eval or envgap run wrote.
func ReadFolder(dir string) (*Folder, error) {
	sum, rs, err := schemas.ReadEvalFolder[schemas.EvalResult](dir)
	if err != nil {
		return nil, err
	}
	return &Folder{Summary: sum, Results: rs}, nil
}

// Summarize builds a result folder's summary: its corpus id is meta's (the release's),
// or when meta has none the corpus id of the tasks. Figures leave excluded tasks out; the id
// lists are by the status of each scored task's first attempt of run 1.
func Summarize(meta schemas.EvalSummary, tasks []schemas.Task, results []schemas.EvalResult, faults []schemas.EvalFault) schemas.EvalSummary {
	s := meta
	s.Kind, s.SchemaVersion, s.Tasks = "eval_summary", schemas.EvalSchemaVersion, len(tasks)
	if s.CorpusID == "" {
		if id, err := schemas.CorpusID(tasks); err == nil {
			s.CorpusID = id
		}
	}
	s.ExcludedIDs, s.ResolvedIDs, s.UnresolvedIDs, s.RejectedIDs, s.LeakedIDs, s.NotInspectedIDs =
		[]string{}, []string{}, []string{}, []string{}, []string{}, []string{}
	s.Faults = append([]schemas.EvalFault{}, faults...)
	for _, t := range tasks {
		if t.ExcludedFromScoring {
			s.ExcludedIDs = append(s.ExcludedIDs, t.InstanceID)
		}
	}
	for _, r := range results {
		if r.Excluded || r.Run != 1 || r.Attempt != 1 {
			continue
		}
		s.Scored++
		switch r.Status {
		case schemas.EvalResolved:
			s.ResolvedIDs = append(s.ResolvedIDs, r.InstanceID)
		case schemas.EvalRejected:
			s.RejectedIDs = append(s.RejectedIDs, r.InstanceID)
		case schemas.EvalLeaked:
			s.LeakedIDs = append(s.LeakedIDs, r.InstanceID)
		default:
			s.UnresolvedIDs = append(s.UnresolvedIDs, r.InstanceID)
		}
		if strings.HasPrefix(r.Trajectory, "not inspected") {
			s.NotInspectedIDs = append(s.NotInspectedIDs, r.InstanceID)
		}
	}
	return s
}

// SortResults orders results by instance id, run and attempt.
func SortResults(rs []schemas.EvalResult) {
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		if a.InstanceID != b.InstanceID {
			return a.InstanceID < b.InstanceID
		}
		if a.Run != b.Run {
			return a.Run < b.Run
		}
		return a.Attempt < b.Attempt
	})
}

// WriteFolder writes a result folder: results.jsonl, summary.json and logs/<id>.log (the
// given logs, by instance id). Each file is written to a temporary name and renamed, so
// a reader sees the old file or the new one.
func WriteFolder(dir string, sum schemas.EvalSummary, results []schemas.EvalResult, logs map[string][]byte) error {
	if err := os.MkdirAll(filepath.Join(dir, schemas.EvalLogsDir), 0o755); err != nil {
		return fmt.Errorf("result folder: %w", err)
	}
	SortResults(results)
	var buf bytes.Buffer
	for i := range results {
		b, err := schemas.Canonical(&results[i])
		if err != nil {
			return err
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	if err := writeFile(filepath.Join(dir, schemas.EvalResultsFile), buf.Bytes()); err != nil {
		return err
	}
	sb, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, schemas.EvalSummaryFile), append(sb, '\n')); err != nil {
		return err
	}
	for id, b := range logs {
		if err := schemas.CheckRelPath(id); err != nil || strings.Contains(id, "/") {
			return fmt.Errorf("result folder: instance id %q cannot name a log file", id)
		}
		if err := writeFile(filepath.Join(dir, schemas.EvalLogsDir, id+".log"), b); err != nil {
			return err
		}
	}
	return nil
}

// writeFile writes one file of the result folder whole (data.WriteFile: a reader, or a
// second eval writing the same folder, never sees a part).
func writeFile(path string, b []byte) error {
	if err := data.WriteBytes(path, 0o644, b); err != nil {
		return fmt.Errorf("result folder: %w", err)
	}
	return nil
}

// WriteLog writes one scored attempt for people: the prediction, the trajectory's
// reading, the status and reason, every step with its captured output
// and the two scores.
func (e *Evaluator) WriteLog(w io.Writer, t *schemas.Task, r *schemas.EvalResult) error {
	kind := "repair task"
	if t.IsControl {
		kind = "control (the right move is to change nothing and keep it working)"
	}
	fmt.Fprintf(w, "=== %s  run %d attempt %d  (%s, %s)\n", r.InstanceID, r.Run, r.Attempt, t.Source, kind)
	if r.Excluded {
		fmt.Fprintf(w, "excluded from scoring: %s\n", r.ExclusionReason)
	}
	fmt.Fprintf(w, "prediction: writes %s; deletes %s", listOr(r.Files), listOr(r.DeletedFiles))
	if r.CostUSD != nil {
		fmt.Fprintf(w, "; cost $%.4f", *r.CostUSD)
	}
	fmt.Fprintf(w, "\ntrajectory: %s\n", r.Trajectory)
	for _, l := range r.Leaks {
		fmt.Fprintf(w, "  later history: rule %s at step %d: %s\n", l.Rule, l.Step, l.Evidence)
	}
	fmt.Fprintf(w, "status: %s", r.Status)
	if r.Reason != "" {
		fmt.Fprintf(w, ": %s", r.Reason)
	}
	fmt.Fprintln(w)
	if !r.RunRecord.IsZero() {
		var run schemas.Run
		if err := e.Store.GetJSON(r.RunRecord, &run); err != nil {
			return fmt.Errorf("log of %s: %w", r.InstanceID, err)
		}
		if err := core.PrintSteps(w, e.Store, run.Steps); err != nil {
			return fmt.Errorf("log of %s: %w", r.InstanceID, err)
		}
		io.WriteString(w, core.RefusedText(&run))
	}
	if len(r.Steps) > 0 {
		fmt.Fprintf(w, "\nD1 declared: %s\nD3 traced:   %s\n", listOr(r.D1), listOr(r.D3))
	}
	if m := r.ManifestF1; m.Measured {
		fmt.Fprintf(w, "manifest F1: %.2f (precision %.2f, recall %.2f); declared, never loaded: %s; loaded, never declared: %s\n",
			m.F1, m.Precision, m.Recall, listOr(m.Phantom), listOr(m.Hidden))
	} else if len(r.Steps) > 0 {
		fmt.Fprintf(w, "manifest F1: not measured (%s)\n", m.Reason)
	}
	if s := r.Safe; s.Measured {
		fmt.Fprintf(w, "safe install: %d of %d declared packages (%.2f); %d without a registry here\n", s.Safe, s.Total, s.Share, s.Unchecked)
	} else if len(r.Steps) > 0 {
		fmt.Fprintf(w, "safe install: %s\n", s.Reason)
	}
	return nil
}

// SafeInstallNotMeasured returns the tasks whose safe install was not measured because
// the registries or the advisory database did not answer (SafeInstallUnreachable), and
// the first such reason (it says how to measure it, or leave it out).
func SafeInstallNotMeasured(results []schemas.EvalResult) (ids []string, reason string) {
	seen := map[string]bool{}
	for _, r := range results {
		if strings.HasPrefix(r.Safe.Reason, SafeInstallUnreachable) && !seen[r.InstanceID] {
			seen[r.InstanceID] = true
			if reason == "" {
				reason = r.Safe.Reason
			}
			ids = append(ids, r.InstanceID)
		}
	}
	return ids, reason
}

func listOr(s []string) string {
	if len(s) == 0 {
		return "nothing"
	}
	return strings.Join(s, ", ")
}
