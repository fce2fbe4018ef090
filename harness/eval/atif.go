package eval

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/envgap/envgap/lib/atif"
	"github.com/envgap/envgap/schemas"
)

// WriteATIF writes each scored prediction's trajectory in ATIF into the result folder dir
// at agent/<id>/run-1/attempt-1.atif.json (lib/atif), with the result's verdict, as
// envgap run does for its attempts: a trajectory that is ATIF passed through (validated),
// one in a shape the later-history rules read converted, anything else one raw step
// marked not inspected. gold and noop write one step that says no model ran.
func WriteATIF(dir string, sum schemas.EvalSummary, results []schemas.EvalResult, byID map[string]*schemas.Prediction) error {
	for i := range results {
		r := &results[i]
		p := byID[r.InstanceID]
		a := atif.Attempt{SessionID: fmt.Sprintf("%s/%s/run-%d", sum.CorpusID, r.InstanceID, r.Run), AgentName: sum.Agent,
			AgentVersion: "unknown (predictions scored by envgap eval)", Verdict: atif.NewVerdict(r, sum.CorpusID, sum.Split)}
		a.Verdict.Agent = sum.Agent
		switch {
		case sum.Agent == "gold" || sum.Agent == "noop":
			a.AgentVersion = "envgap core " + r.CoreVersion
			a.Entries = []any{map[string]any{"type": "note", "note": "envgap's " + sum.Agent + " predictions: no model ran"}}
		case p != nil:
			a.Entries = p.Trajectory
			if len(p.Trajectory) == 1 {
				if b, err := json.Marshal(p.Trajectory[0]); err == nil && atif.IsATIF(b) {
					a.Entries, a.Agent, _ = atif.ReadEntries(b)
				}
			}
		}
		b, err := atif.Marshal(atif.Build(a))
		if err != nil {
			return fmt.Errorf("trajectory of %s: %w", r.InstanceID, err)
		}
		path := atif.AttemptPath(dir, r.InstanceID, r.Run, r.Attempt)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := writeFile(path, b); err != nil {
			return err
		}
	}
	return nil
}
