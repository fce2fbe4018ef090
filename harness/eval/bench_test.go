package eval

import (
	"context"
	"fmt"
	"testing"

	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
)

// BenchmarkReEval1000: evaluating 1,000 unchanged predictions again, every result from
// the store's memo (containers/op must be 0).
func BenchmarkReEval1000(b *testing.B) {
	st, err := catalog.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	fr := &fakeRunner{}
	ev := &Evaluator{Store: st, Runner: fr}
	tasks := make([]schemas.Task, 1000)
	preds := map[string]*schemas.Prediction{}
	for i := range tasks {
		id := fmt.Sprintf("envgap__a__python-t1-%d", i+1)
		tasks[i] = schemas.Task{
			Ident:  schemas.Ident{InstanceID: id},
			Source: schemas.SourceLite,
			Spec: schemas.Spec{
				Ecosystem:      schemas.EcosystemPython,
				ProjectFiles:   []schemas.File{{Path: "requirements.txt", Content: str("x==2\n")}, {Path: "app.py", Content: str(fmt.Sprintf("print(%d)\n", i))}},
				ResolveCommand: "pip install -r requirements.txt", RunCommand: "python3 app.py", RegistryDate: "2023-01-01T00:00:00Z",
				ProblemStatement: "it does not run",
			},
		}
		preds[id] = &schemas.Prediction{InstanceID: id, Files: map[string]*string{"requirements.txt": str("x==1\n")},
			Trajectory: []any{map[string]any{"action": "pip install -r requirements.txt", "output": "ERROR: No matching distribution found for x==2"}}}
	}
	if _, err := ev.Eval(context.Background(), tasks, preds, 2, nil); err != nil {
		b.Fatal(err)
	}
	before := fr.runs.Load()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, err := ev.Eval(context.Background(), tasks, preds, 2, nil)
		if err != nil || out.Reused != 1000 {
			b.Fatalf("%v, %d reused", err, out.Reused)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(fr.runs.Load()-before)/float64(b.N), "containers/op")
}
