package schemas

import (
	"errors"
	"strings"
	"testing"
)

// TestReadPrediction: try --fix FILE takes a lone object without instance_id, or the line
// for the id of a predictions file; a missing id and a malformed line are errors that say so.
func TestReadPrediction(t *testing.T) {
	lone := `{"files": {"requirements.txt": "flask==2.0\n", "old.txt": null}}`
	p, err := ReadPrediction(strings.NewReader(lone), "fix.json", "a")
	if err != nil || p.InstanceID != "a" || len(p.Overlay()) != 2 || p.Files["old.txt"] != nil {
		t.Fatalf("lone object: %+v %v", p, err)
	}
	lines := `{"instance_id": "a", "files": {"x": "1"}}` + "\n\n" + `{"instance_id": "b", "files": {"x": "2"}}` + "\n"
	p, err = ReadPrediction(strings.NewReader(lines), "preds.jsonl", "b")
	if err != nil || p.InstanceID != "b" || *p.Files["x"] != "2" {
		t.Fatalf("line for b: %+v %v", p, err)
	}
	if _, err := ReadPrediction(strings.NewReader(lines), "preds.jsonl", "c"); err == nil || !strings.Contains(err.Error(), "no prediction for c") {
		t.Errorf("no line for c: %v", err)
	}
	bad := `{"instance_id": "a", "files": {"x": 1}}`
	_, err = ReadPrediction(strings.NewReader(bad), "preds.jsonl", "a")
	var probs Problems
	if !errors.As(err, &probs) || len(probs) != 1 || probs[0].Line != 1 || probs[0].Field != "files" {
		t.Errorf("bad content: %v", err)
	}
}
