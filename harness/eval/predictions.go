package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/envgap/envgap/schemas"
)

// MaxPredictionLine is the longest line a predictions file may have (64 MiB).
const MaxPredictionLine = 64 << 20

// ReadPredictionsFile reads a predictions file (see ReadPredictions).
func ReadPredictionsFile(path string) ([]schemas.Prediction, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("predictions: %w", err)
	}
	defer f.Close()
	return ReadPredictions(f, path)
}

// ReadPredictions reads predictions as JSON Lines, one object a line:
// {"instance_id", "files": {path: content or null}, "trajectory": [...], "cost_usd"}.
// Blank lines are skipped. Every malformed line is named by its line number in the
// schemas.Problems returned: not JSON, invalid UTF-8, unknown fields, no instance_id,
// "files" not an object, a content neither a string nor null, a trajectory not an array,
// cost_usd not a number.
func ReadPredictions(r io.Reader, name string) ([]schemas.Prediction, error) {
	var out []schemas.Prediction
	var probs schemas.Problems
	br := bufio.NewReaderSize(r, 1<<20)
	for line := 1; ; line++ {
		b, err := readLine(br)
		if len(b) > MaxPredictionLine {
			probs = append(probs, schemas.Problem{File: name, Line: line, Msg: fmt.Sprintf("line longer than %d bytes", MaxPredictionLine)})
		} else if len(bytes.TrimSpace(b)) > 0 {
			p, perr := parsePrediction(b)
			if perr != nil {
				perr.File, perr.Line = name, line
				probs = append(probs, *perr)
			} else {
				out = append(out, p)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("predictions %s: %w", name, err)
		}
	}
	if len(probs) > 0 {
		return nil, probs
	}
	return out, nil
}

// readLine reads one line without its newline; it keeps at most MaxPredictionLine+1
// bytes of it and discards the rest.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf) <= MaxPredictionLine {
			buf = append(buf, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		buf = bytes.TrimSuffix(bytes.TrimSuffix(buf, []byte("\n")), []byte("\r"))
		return buf, err
	}
}

func parsePrediction(b []byte) (schemas.Prediction, *schemas.Problem) {
	var p schemas.Prediction
	if !utf8.Valid(b) {
		return p, &schemas.Problem{Msg: "not valid UTF-8 (predictions are UTF-8 JSON)"}
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return p, &schemas.Problem{Msg: "not a JSON object: " + err.Error()}
	}
	var id string
	if v, ok := raw["instance_id"]; !ok || json.Unmarshal(v, &id) != nil || id == "" {
		return p, &schemas.Problem{Field: "instance_id", Msg: "missing or not a non-empty string"}
	}
	prob := func(field, msg string) *schemas.Problem {
		return &schemas.Problem{InstanceID: id, Field: field, Msg: msg}
	}
	var unknown []string
	for k := range raw {
		switch k {
		case "instance_id", "files", "trajectory", "cost_usd":
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return p, prob(unknown[0], "unknown field (a prediction has instance_id, files, trajectory, cost_usd)")
	}
	p.InstanceID = id
	files, ok := raw["files"]
	if !ok {
		return p, prob("files", `missing: give {path: new content or null}, {} for no change`)
	}
	var fm map[string]json.RawMessage
	if err := json.Unmarshal(files, &fm); err != nil || fm == nil {
		return p, prob("files", `not an object: give {path: new content or null}`)
	}
	p.Files = make(map[string]*string, len(fm))
	paths := make([]string, 0, len(fm))
	for k := range fm {
		paths = append(paths, k)
	}
	sort.Strings(paths)
	for _, k := range paths {
		v := fm[k]
		if string(bytes.TrimSpace(v)) == "null" {
			p.Files[k] = nil
			continue
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return p, prob("files", fmt.Sprintf("content of %q is neither a string nor null", k))
		}
		p.Files[k] = &s
	}
	if v, ok := raw["trajectory"]; ok && string(bytes.TrimSpace(v)) != "null" {
		if err := json.Unmarshal(v, &p.Trajectory); err != nil {
			return p, prob("trajectory", "not an array")
		}
	}
	if v, ok := raw["cost_usd"]; ok && string(bytes.TrimSpace(v)) != "null" {
		var c float64
		if err := json.Unmarshal(v, &c); err != nil || c < 0 {
			return p, prob("cost_usd", "not a non-negative number or null")
		}
		p.CostUSD = &c
	}
	return p, nil
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
