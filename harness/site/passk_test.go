package site

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envgap/envgap/harness/report"
)

// A run with k = 3 shows pass@1, pass@3 and pass^3 with their intervals on its board row,
// and the scoring page names the estimator and the interval.
func TestLeaderboardPassAtK(t *testing.T) {
	rel, res := syntheticRelease(40, 1)
	f := res[0].Folder
	f.Summary.K, f.Summary.MaxAttempts = 3, 1
	var rs []report.ResultFigures
	for _, r := range f.Results {
		if r.Attempt != 1 {
			continue
		}
		for run := 1; run <= 3; run++ {
			x := r
			x.Run = run
			x.Resolved = run == 1 && r.Resolved || run == 2 && len(x.InstanceID)%2 == 0
			rs = append(rs, x)
		}
	}
	f.Results = rs
	out := filepath.Join(t.TempDir(), "site")
	if _, err := Build(Input{Release: rel, Results: res}, out); err != nil {
		t.Fatal(err)
	}
	index, err := os.ReadFile(filepath.Join(out, IndexPage))
	if err != nil {
		t.Fatal(err)
	}
	row := report.BuildReport([]*report.ResultFolder{f}).Rows[0]
	if row.PassAtK == nil {
		t.Fatal("no pass@k figures for k = 3")
	}
	for _, want := range []string{"pass@1 ", "pass@3 ", "pass^3 ", "% ["} {
		if !strings.Contains(string(index), want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
	scoring, _ := os.ReadFile(filepath.Join(out, ScoringPage))
	for _, want := range []string{"unbiased estimator of Chen et al. (2021)", "percentile bootstrap interval over tasks", "Wilson"} {
		if !strings.Contains(string(scoring), want) {
			t.Errorf("scoring.html lacks %q", want)
		}
	}
}
