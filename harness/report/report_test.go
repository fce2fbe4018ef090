package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envgap/envgap/schemas"
)

// writeResultFolder writes a result folder the way eval does (summary and JSON Lines).
func writeResultFolder(t testing.TB, sum schemas.EvalSummary, rs []schemas.EvalResult) string {
	t.Helper()
	dir := t.TempDir()
	sum.Kind, sum.SchemaVersion = "eval_summary", schemas.EvalSchemaVersion
	b, _ := json.Marshal(sum)
	if err := os.WriteFile(filepath.Join(dir, schemas.EvalSummaryFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for _, r := range rs {
		r.Kind = "eval_result"
		line, _ := json.Marshal(r)
		buf.Write(line)
		buf.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, schemas.EvalResultsFile), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func result(id string, control, resolved bool, status string) schemas.EvalResult {
	return schemas.EvalResult{InstanceID: id, IsControl: control, Resolved: resolved, Status: status, Run: 1, Attempt: 1,
		Trajectory: "inspected (steps)"}
}

func TestReportSeparatesControlsAndDropsExcluded(t *testing.T) {
	cost := 0.5
	noop := []schemas.EvalResult{
		result("r1", false, false, schemas.EvalUnresolved), result("r2", false, false, schemas.EvalUnresolved),
		result("c1", true, true, schemas.EvalResolved), result("c2", true, true, schemas.EvalResolved),
	}
	ex := result("x1", false, true, schemas.EvalResolved)
	ex.Excluded = true
	noop = append(noop, ex)
	agent := []schemas.EvalResult{
		result("r1", false, true, schemas.EvalResolved), result("r2", false, false, schemas.EvalLeaked),
		result("c1", true, true, schemas.EvalResolved), result("c2", true, false, schemas.EvalRejected), ex,
	}
	agent[0].ManifestF1, agent[0].Safe, agent[0].CostUSD = schemas.ManifestScore{Measured: true, F1: 0.5}, schemas.SafeInstallScore{Measured: true, Share: 1}, &cost
	agent[2].ManifestF1 = schemas.ManifestScore{Measured: true, F1: 1}
	agent[3].Trajectory = "not inspected: entry 0 is a string, not an object"
	// Run 1 attempt 2 of r2 resolves: the best within attempts counts it, the first does not.
	second := result("r2", false, true, schemas.EvalResolved)
	second.Attempt = 2
	agent = append(agent, second)
	a := writeResultFolder(t, schemas.EvalSummary{Agent: "noop", Split: "reported", Mode: schemas.ModeEval, K: 1, MaxAttempts: 1, Tasks: 5, ExcludedIDs: []string{"x1"}}, noop)
	b := writeResultFolder(t, schemas.EvalSummary{Agent: "my-agent", Split: "reported", Mode: schemas.ModeRun, K: 1, MaxAttempts: 5, Tasks: 5, ExcludedIDs: []string{"x1"},
		Faults: []schemas.EvalFault{{InstanceID: "r3", Error: "engine gone"}}}, agent)
	var folders []*ResultFolder
	for _, d := range []string{a, b} {
		f, err := ReadResultFolder(d)
		if err != nil {
			t.Fatal(err)
		}
		folders = append(folders, f)
	}
	lb := BuildReport(folders)
	n, m := lb.Rows[0], lb.Rows[1]
	if n.Scored != 4 || n.Resolved.N != 2 || n.RepairsResolved.N != 0 || n.ControlsResolved.N != 2 || n.Excluded != 1 {
		t.Errorf("noop row: %+v", n)
	}
	if m.Resolved.N != 2 || m.Best.N != 3 || m.RepairsResolved.N != 1 || m.Leaked != 1 || m.Rejected != 1 || m.NotInspected != 1 ||
		m.ManifestF1.Mean != 0.75 || m.ManifestF1.Measured != 2 || m.SafeInstall.Mean != 1 || m.CostUSD != 0.5 || m.Faults != 1 {
		t.Errorf("agent row: %+v", m)
	}
	var md bytes.Buffer
	if err := lb.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| noop | reported | eval, 1 attempt | 4 of 5 | 50.0% (2/4) | - | 0.0% (0/2) | 100.0% (2/2) |",
		"| my-agent | reported | run, k=1, up to 5 attempts | 4 of 5 | 50.0% (2/4) | 75.0% (3/4) | 50.0% (1/2) | 50.0% (1/2) | 0.75 (2) | 1.00 (1) | 1 | 1 | 1 | $0.50 |",
		"an agent that changes nothing gets every control right",
		"1 excluded task(s) evaluated and dropped from every figure",
		"INCOMPLETE: 1 task(s) have no result",
		"more controls than repairs resolved",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	p1, err := lb.ReportChart()
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := BuildReport(folders).ReportChart()
	if !bytes.Equal(p1, p2) {
		t.Error("the same rows gave two different charts")
	}
	if _, err := png.Decode(bytes.NewReader(p1)); err != nil {
		t.Errorf("chart: %v", err)
	}
	if _, err := ReadResultFolder(t.TempDir()); err == nil || !strings.Contains(err.Error(), "envgap eval") {
		t.Errorf("an empty folder: %v", err)
	}
}

// BenchmarkReport10k: the report over one folder of 10,000 results (read, figures,
// markdown, chart).
func BenchmarkReport10k(b *testing.B) {
	rs := make([]schemas.EvalResult, 10000)
	for i := range rs {
		rs[i] = result(fmt.Sprintf("envgap__o__r-%d", i), i%5 == 0, i%3 == 0, schemas.EvalResolved)
		rs[i].Steps = []schemas.EvalStep{{Name: "resolve", Command: "python3 -m pip install -r requirements.txt"}, {Name: "run", Command: "python3 app.py"}}
		rs[i].D1, rs[i].D3 = []string{"requests", "numpy"}, []string{"requests"}
		rs[i].ManifestF1 = schemas.ManifestScore{Measured: true, F1: 0.67, Precision: 0.5, Recall: 1, Phantom: []string{"numpy"}, Hidden: []string{}}
	}
	dir := writeResultFolder(b, schemas.EvalSummary{Agent: "bench", Split: "full", Mode: schemas.ModeEval, K: 1, MaxAttempts: 1, Tasks: 10000}, rs)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, err := ReadResultFolder(dir)
		if err != nil {
			b.Fatal(err)
		}
		lb := BuildReport([]*ResultFolder{f})
		if err := lb.Markdown(&bytes.Buffer{}); err != nil {
			b.Fatal(err)
		}
		if _, err := lb.ReportChart(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestReportF1AndSafeInstallOverEveryRun: with k = 3 runs, manifest F1 and safe install
// are each run's first attempt averaged over the task's runs, then over the tasks (as the
// ranked score), not run 1 alone. Task a: F1 0.25, 0.5, 0.75 over runs 1-3 (mean 0.5);
// a second attempt's F1 1.0 of run 1 does not count. Task b: F1 measured in run 2 only
// (1.0). Row: (0.5 + 1.0)/2 = 0.75 over 2 tasks. Safe install: a 1, 0, 1 (2/3); b none:
// 2/3 over 1 task. Run 1 alone would give F1 0.25 (1 task) and safe install 1.
func TestReportF1AndSafeInstallOverEveryRun(t *testing.T) {
	mk := func(id string, run, attempt int, f1 *float64, safe *float64) schemas.EvalResult {
		r := result(id, false, false, schemas.EvalUnresolved)
		r.Run, r.Attempt = run, attempt
		if f1 != nil {
			r.ManifestF1 = schemas.ManifestScore{Measured: true, F1: *f1}
		}
		if safe != nil {
			r.Safe = schemas.SafeInstallScore{Measured: true, Share: *safe}
		}
		return r
	}
	f := func(v float64) *float64 { return &v }
	rs := []schemas.EvalResult{
		mk("a", 1, 1, f(0.25), f(1)), mk("a", 1, 2, f(1), f(0)), mk("a", 2, 1, f(0.5), f(0)), mk("a", 3, 1, f(0.75), f(1)),
		mk("b", 1, 1, nil, nil), mk("b", 2, 1, f(1), nil), mk("b", 3, 1, nil, nil),
	}
	dir := writeResultFolder(t, schemas.EvalSummary{Agent: "my-agent", Split: "lite", Mode: "run", K: 3, MaxAttempts: 2, Tasks: 2}, rs)
	folder, err := ReadResultFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	row := BuildReport([]*ResultFolder{folder}).Rows[0]
	if row.ManifestF1.Measured != 2 || math.Abs(row.ManifestF1.Mean-0.75) > 1e-12 {
		t.Errorf("manifest F1 %+v, want 0.75 over 2 tasks", row.ManifestF1)
	}
	if row.SafeInstall.Measured != 1 || math.Abs(row.SafeInstall.Mean-2.0/3) > 1e-12 {
		t.Errorf("safe install %+v, want 2/3 over 1 task", row.SafeInstall)
	}
}
