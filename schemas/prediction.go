package schemas

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"unicode/utf8"
)

// Prediction is one line of a predictions file: the new contents of environment files
// (null deletes a path), the agent's trajectory and its cost.
type Prediction struct {
	InstanceID string             `json:"instance_id"`
	Files      map[string]*string `json:"files"`
	Trajectory []any              `json:"trajectory"`
	CostUSD    *float64           `json:"cost_usd"`
}

// Overlay returns the prediction's files as an overlay (content nil deletes the path),
// sorted by path.
func (p *Prediction) Overlay() []File {
	paths := make([]string, 0, len(p.Files))
	for k := range p.Files {
		paths = append(paths, k)
	}
	sort.Strings(paths)
	out := make([]File, 0, len(paths))
	for _, k := range paths {
		out = append(out, File{Path: k, Content: p.Files[k]})
	}
	return out
}

// MaxPredictionLine is the longest line a predictions file may have (64 MiB).
const MaxPredictionLine = 64 << 20

// ReadPredictions reads predictions as JSON Lines, one object a line:
// {"instance_id", "files": {path: content or null}, "trajectory": [...], "cost_usd"}.
// Blank lines are skipped. Every malformed line is named by its line number in the
// Problems returned: not JSON, invalid UTF-8, unknown fields, no instance_id,
// "files" not an object, a content neither a string nor null, a trajectory not an array,
// cost_usd not a number.
func ReadPredictions(r io.Reader, name string) ([]Prediction, error) {
	var out []Prediction
	var probs Problems
	br := bufio.NewReaderSize(r, 1<<20)
	for line := 1; ; line++ {
		b, err := readPredictionLine(br)
		if len(b) > MaxPredictionLine {
			probs = append(probs, Problem{File: name, Line: line, Msg: fmt.Sprintf("line longer than %d bytes", MaxPredictionLine)})
		} else if len(bytes.TrimSpace(b)) > 0 {
			p, perr := parsePrediction(b, "")
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

// readPredictionLine reads one line without its newline; it keeps at most MaxPredictionLine+1
// bytes of it and discards the rest.
func readPredictionLine(br *bufio.Reader) ([]byte, error) {
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

// parsePrediction parses one prediction; a missing instance_id is defaultID when that is
// not empty.
func parsePrediction(b []byte, defaultID string) (Prediction, *Problem) {
	var p Prediction
	if !utf8.Valid(b) {
		return p, &Problem{Msg: "not valid UTF-8 (predictions are UTF-8 JSON)"}
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return p, &Problem{Msg: "not a JSON object: " + err.Error()}
	}
	var id string
	if v, ok := raw["instance_id"]; !ok && defaultID != "" {
		id = defaultID
	} else if !ok || json.Unmarshal(v, &id) != nil || id == "" {
		return p, &Problem{Field: "instance_id", Msg: "missing or not a non-empty string"}
	}
	prob := func(field, msg string) *Problem {
		return &Problem{InstanceID: id, Field: field, Msg: msg}
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

// ReadPrediction reads the prediction for id from r: the line for id of a predictions file,
// or a lone object without instance_id (envgap try --fix FILE). Malformed lines are errors
// as in ReadPredictions.
func ReadPrediction(r io.Reader, name, id string) (*Prediction, error) {
	var probs Problems
	br := bufio.NewReaderSize(r, 1<<20)
	for line := 1; ; line++ {
		b, err := readPredictionLine(br)
		if len(b) > MaxPredictionLine {
			probs = append(probs, Problem{File: name, Line: line, Msg: fmt.Sprintf("line longer than %d bytes", MaxPredictionLine)})
		} else if len(bytes.TrimSpace(b)) > 0 {
			p, perr := parsePrediction(b, id)
			switch {
			case perr != nil:
				perr.File, perr.Line = name, line
				probs = append(probs, *perr)
			case p.InstanceID == id && len(probs) == 0:
				return &p, nil
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("prediction %s: %w", name, err)
		}
	}
	if len(probs) > 0 {
		return nil, probs
	}
	return nil, fmt.Errorf("%s: no prediction for %s", name, id)
}
