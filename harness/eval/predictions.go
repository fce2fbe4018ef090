package eval

import (
	"fmt"
	"os"
	"strings"

	"github.com/envgap/envgap/schemas"
)

// ReadPredictionsFile reads a predictions file (schemas.ReadPredictions).
func ReadPredictionsFile(path string) ([]schemas.Prediction, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("predictions: %w", err)
	}
	defer f.Close()
	return schemas.ReadPredictions(f, path)
}

// Match pairs predictions with tasks. Every task must have exactly one prediction and
// every prediction a task: missing, unknown and repeated ids are all listed in one error
// (nothing is run).
func Match(tasks []schemas.Task, preds []schemas.Prediction, name string) (map[string]*schemas.Prediction, error) {
	known := make(map[string]bool, len(tasks))
	for _, t := range tasks {
		known[t.InstanceID] = true
	}
	byID := make(map[string]*schemas.Prediction, len(preds))
	var probs schemas.Problems
	for i := range preds {
		id := preds[i].InstanceID
		switch {
		case !known[id]:
			probs = append(probs, schemas.Problem{File: name, InstanceID: id, Msg: "unknown instance_id: no task of the split has it"})
		case byID[id] != nil:
			probs = append(probs, schemas.Problem{File: name, InstanceID: id, Msg: "repeated: give one prediction per task"})
		default:
			byID[id] = &preds[i]
		}
	}
	var missing []string
	for _, t := range tasks {
		if byID[t.InstanceID] == nil {
			missing = append(missing, t.InstanceID)
		}
	}
	for _, id := range missing {
		probs = append(probs, schemas.Problem{File: name, InstanceID: id, Msg: "missing: every task of the split needs a prediction, excluded ones too ({\"files\": {}} changes nothing)"})
	}
	if len(probs) > 0 {
		return nil, probs
	}
	return byID, nil
}

// Builtin returns the built-in predictions for tasks: "gold" (each task's reference fix;
// controls change nothing) or "noop" (nothing changed). ok is false for other names.
func Builtin(name string, tasks []schemas.Task) (preds []schemas.Prediction, ok bool) {
	if name != "gold" && name != "noop" {
		return nil, false
	}
	for _, t := range tasks {
		p := schemas.Prediction{InstanceID: t.InstanceID, Files: map[string]*string{}, Trajectory: []any{map[string]any{"note": name}}}
		if name == "gold" {
			for _, f := range t.GoldFiles {
				p.Files[f.Path] = f.Content
			}
		}
		preds = append(preds, p)
	}
	return preds, true
}

// binary reports whether a content is not text: it holds a NUL byte.
func binary(s string) bool { return strings.IndexByte(s, 0) >= 0 }
