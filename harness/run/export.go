package run

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/envgap/envgap/core/untrusted"
	"github.com/envgap/envgap/lib/agent"
	"github.com/envgap/envgap/lib/atif"
	"github.com/envgap/envgap/schemas"
)

// ExportReport says what ExportATIF wrote.
type ExportReport struct {
	Folder string `json:"folder"`
	Out    string `json:"out"`
	// Attempts counts the attempts of the folder; Kept those whose ATIF file the run
	// wrote (validated and copied), Converted those made now from the raw trajectory (a
	// folder written before envgap wrote ATIF, or by envgap eval).
	Attempts  int `json:"attempts"`
	Kept      int `json:"kept"`
	Converted int `json:"converted"`
	// Invalid lists the ATIF files of the folder that do not validate (not copied: the
	// folder was changed after the run wrote it).
	Invalid []string `json:"invalid"`
}

// ExportATIF writes every attempt's ATIF trajectory of a result folder under out, at the
// same relative paths (agent/<id>/run-<k>/attempt-<n>.atif.json): the folder's own ATIF
// files, validated; for an attempt without one, the document made from its raw
// trajectory (attempt-<n>.trajectory) and its results.jsonl line, as envgap run makes it.
// Every file of the folder is read as untrusted (no link followed, bounded). out must be
// absent or empty.
func ExportATIF(folder, out string) (*ExportReport, error) {
	sum, results, err := schemas.ReadEvalFolder[schemas.EvalResult](folder)
	if err != nil {
		return nil, err
	}
	if ents, err := os.ReadDir(out); err == nil && len(ents) > 0 {
		return nil, fmt.Errorf("--out %s is not empty: give a new folder", out)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	rep := &ExportReport{Folder: folder, Out: out, Invalid: []string{}}
	sort.SliceStable(results, func(i, j int) bool {
		a, b := results[i], results[j]
		if a.InstanceID != b.InstanceID {
			return a.InstanceID < b.InstanceID
		}
		if a.Run != b.Run {
			return a.Run < b.Run
		}
		return a.Attempt < b.Attempt
	})
	for i := range results {
		r := &results[i]
		if err := schemas.CheckRelPath(r.InstanceID); err != nil || strings.Contains(r.InstanceID, "/") {
			return nil, fmt.Errorf("%s: results.jsonl line of %q: the instance id is not a file name", folder, r.InstanceID)
		}
		rep.Attempts++
		rel := atif.AttemptPath("", r.InstanceID, r.Run, r.Attempt)
		dst := filepath.Join(out, rel)
		b, err := untrusted.ReadFile(folder, filepath.ToSlash(rel), atif.MaxBytes)
		switch {
		case err == nil:
			doc, err := atif.Parse(b)
			if err != nil {
				rep.Invalid = append(rep.Invalid, fmt.Sprintf("%s: %v", rel, err))
				continue
			}
			if err := saveATIF(dst, doc); err != nil {
				return nil, err
			}
			rep.Kept++
		case errors.Is(err, fs.ErrNotExist):
			if err := saveATIF(dst, convertAttempt(folder, &sum, r)); err != nil {
				return nil, err
			}
			rep.Converted++
		default:
			rep.Invalid = append(rep.Invalid, fmt.Sprintf("%s: %v", rel, err))
		}
	}
	return rep, nil
}

// convertAttempt makes an attempt's ATIF document from the folder's raw trajectory and
// its result line.
func convertAttempt(folder string, sum *schemas.EvalSummary, r *schemas.EvalResult) *atif.Trajectory {
	a := atif.Attempt{AgentName: sum.Agent, AgentVersion: "envgap core " + r.CoreVersion, Verdict: atif.NewVerdict(r, sum.CorpusID, sum.Split)}
	if a.AgentName == "" {
		a.AgentName = "unknown"
	}
	a.SessionID = fmt.Sprintf("%s/%s/run-%d", sum.CorpusID, r.InstanceID, r.Run)
	if r.Agent != nil {
		a.Model = r.Agent.Model
		a.PromptTokens, a.CompletionTokens = r.Agent.InputTokens, r.Agent.OutputTokens
	}
	raw := filepath.ToSlash(filepath.Join("agent", r.InstanceID, fmt.Sprintf("run-%d", r.Run), fmt.Sprintf("attempt-%d.trajectory", r.Attempt)))
	if b, err := untrusted.ReadFile(folder, raw, atif.MaxBytes); err == nil {
		a.Entries, a.Agent, _ = atif.ReadEntries(b)
	}
	switch {
	case a.Entries != nil:
	case sum.Agent == agent.NameGold || sum.Agent == agent.NameNoop:
		a.Entries = []any{map[string]any{"type": "note", "note": "envgap's " + sum.Agent + " agent: no model ran"}}
	case sum.Mode == schemas.ModeEval:
		a.Entries = []any{map[string]any{"type": "note", "note": "envgap eval scored a predictions file: the result folder keeps no trajectory"}}
	}
	return atif.Build(a)
}
