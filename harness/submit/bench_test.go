package submit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/harness/eval"
	"github.com/envgap/envgap/schemas"
)

// syntheticRun writes a run folder of n tasks, each with attempts unresolved attempts then
// a resolved one, a 4 KiB trajectory per attempt kept under agent/, and stores each
// prediction (a 1 KiB file and the trajectory) in st.
func syntheticRun(b *testing.B, dir string, st *data.Store, n, attempts int) {
	b.Helper()
	traj := []any{map[string]any{"action": "cat requirements.txt", "output": strings.Repeat("x", 4000)}}
	var rs []schemas.EvalResult
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("envgap__bench__task-%04d", i)
		for a := 1; a <= attempts; a++ {
			content := strings.Repeat(fmt.Sprintf("pkg%d==1.%d\n", i, a), 80)
			p := &schemas.Prediction{InstanceID: id, Files: map[string]*string{"requirements.txt": &content}, Trajectory: traj}
			d, err := st.PutJSON(p)
			if err != nil {
				b.Fatal(err)
			}
			status := schemas.EvalUnresolved
			if a == attempts {
				status = schemas.EvalResolved
			}
			rs = append(rs, schemas.EvalResult{Kind: schemas.KindEvalResult, SchemaVersion: schemas.EvalSchemaVersion, InstanceID: id, Run: 1, Attempt: a,
				Status: status, Resolved: status == schemas.EvalResolved, Prediction: d, Leaks: []schemas.Leak{}, Trajectory: "inspected (steps)",
				Agent: &schemas.AgentAttempt{Command: "my-agent", DurationMS: 60_000}})
			keep := filepath.Join(dir, AttemptPath(id, 1, a))
			if err := os.MkdirAll(filepath.Dir(keep), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(keep+RawSuffix, []byte(strings.Repeat("y", 4096)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	sum := schemas.EvalSummary{Kind: schemas.KindEvalSummary, SchemaVersion: schemas.EvalSchemaVersion, Agent: "my-agent", Split: "reported",
		Mode: schemas.ModeRun, K: 1, MaxAttempts: 5, AttemptTimeoutS: 1200, CorpusID: "0123456789ab", Tasks: n, ScoredOn: "2026-12-06"}
	if err := eval.WriteFolder(dir, sum, rs, map[string][]byte{}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkPrepareAndOpen: submit prepare of a 1,000-task run (3 attempts a task) into a
// .tar.gz, then Open (unpacking it safely) and the offline part of check: reading the
// folders and predictions back. Reports the bundle's size.
func BenchmarkPrepareAndOpen(b *testing.B) {
	root := b.TempDir()
	st, err := data.Open(filepath.Join(root, "store"))
	if err != nil {
		b.Fatal(err)
	}
	results := filepath.Join(root, "results")
	syntheticRun(b, results, st, 1000, 3)
	yes, no := true, false
	meta := &Meta{Agent: Agent{Name: "a", Version: "1"}, Models: []string{"m"}, Organisation: "o", OpenSource: OpenSource{Agent: &yes, Model: &no}}
	b.ResetTimer()
	var size int64
	var prep, open time.Duration
	for i := 0; i < b.N; i++ {
		out := filepath.Join(root, fmt.Sprintf("bundle-%d.tar.gz", i))
		t0 := time.Now()
		if _, err := Prepare(PrepareOptions{Results: []string{results}, Meta: meta, Store: st, Out: out, Now: time.Now()}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		bu, err := Open(out, DefaultLimits)
		if err != nil || bu.MetadataErr != nil {
			b.Fatal(err, bu.MetadataErr)
		}
		dirs, err := bu.Folders()
		if err != nil {
			b.Fatal(err)
		}
		f, err := eval.ReadFolder(dirs[0])
		if err != nil {
			b.Fatal(err)
		}
		preds, err := ReadPredictions(filepath.Join(dirs[0], PredictionsFile))
		if err != nil || len(preds) != len(f.Results) {
			b.Fatal(err, len(preds))
		}
		open += time.Since(t1)
		prep += t1.Sub(t0)
		bu.Close()
		fi, _ := os.Stat(out)
		size = fi.Size()
	}
	b.ReportMetric(float64(size)/(1<<20), "MiB-bundle")
	b.ReportMetric(prep.Seconds()/float64(b.N), "s-prepare")
	b.ReportMetric(open.Seconds()/float64(b.N), "s-open+read")
}
