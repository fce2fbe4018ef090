package report

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/envgap/envgap/schemas"
)

func TestPassEstimators(t *testing.T) {
	for _, c := range []struct {
		n, c, k int
		at, hat float64
	}{
		{5, 2, 2, 0.7, 0.1}, // 1 - C(3,2)/C(5,2); C(2,2)/C(5,2)
		{3, 1, 3, 1, 0},
		{3, 0, 2, 0, 0},
		{3, 3, 2, 1, 1},
		{10, 3, 1, 0.3, 0.3}, // k = 1: both are c/n
		{2, 1, 5, 1, 0},      // k above n is capped at n
	} {
		if got := passAt(c.n, c.c, c.k); math.Abs(got-c.at) > 1e-12 {
			t.Errorf("pass@%d of %d/%d = %v, want %v", c.k, c.c, c.n, got, c.at)
		}
		if got := passHat(c.n, c.c, c.k); math.Abs(got-c.hat) > 1e-12 {
			t.Errorf("pass^%d of %d/%d = %v, want %v", c.k, c.c, c.n, got, c.hat)
		}
	}
}

// runFolder is a run folder with k runs per task, each run one attempt, resolved as given.
func runFolder(k int, resolved map[string][]bool) *ResultFolder {
	f := &ResultFolder{Dir: "r", Summary: schemas.EvalSummary{Agent: "a", Split: "full", Mode: schemas.ModeRun, K: k, MaxAttempts: 1, Tasks: len(resolved)}}
	for id, runs := range resolved {
		for i, ok := range runs {
			f.Results = append(f.Results, ResultFigures{InstanceID: id, Run: i + 1, Attempt: 1, Resolved: ok, Status: map[bool]string{true: "resolved", false: "unresolved"}[ok]})
		}
	}
	return f
}

func TestReportPassAtK(t *testing.T) {
	f := runFolder(3, map[string][]bool{"a": {true, false, false}, "b": {true, true, true}, "c": {false, false, false}, "d": {false, true, false}})
	lb := BuildReport([]*ResultFolder{f})
	p := lb.Rows[0].PassAtK
	if p == nil || p.K != 3 || p.Tasks != 4 {
		t.Fatalf("pass@k: %+v", p)
	}
	// pass@1: (1/3 + 1 + 0 + 1/3) / 4; pass@3: (1 + 1 + 0 + 1) / 4; pass^3: (0 + 1 + 0 + 0) / 4.
	for _, c := range []struct {
		name string
		iv   Interval
		want float64
	}{{"pass@1", p.Pass1, (1.0/3 + 1 + 1.0/3) / 4}, {"pass@3", p.PassK, 0.75}, {"pass^3", p.PassHatK, 0.25}} {
		if math.Abs(c.iv.Value-c.want) > 1e-12 || c.iv.Low > c.iv.Value || c.iv.High < c.iv.Value || c.iv.Low < 0 || c.iv.High > 1 || c.iv.Low == c.iv.High {
			t.Errorf("%s = %+v, want %v inside its interval", c.name, c.iv, c.want)
		}
	}
	if math.Abs(p.Pass1.Value-lb.Rows[0].Resolved.Share) > 1e-12 {
		t.Errorf("pass@1 %v is not the first-attempt resolved share %v", p.Pass1.Value, lb.Rows[0].Resolved.Share)
	}
	if again := BuildReport([]*ResultFolder{runFolder(3, map[string][]bool{"a": {true, false, false}, "b": {true, true, true}, "c": {false, false, false}, "d": {false, true, false}})}).Rows[0].PassAtK; !reflect.DeepEqual(again, p) {
		t.Errorf("the same folder gives other intervals: %+v, %+v", again, p)
	}
	var md strings.Builder
	if err := lb.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pass@1 41.7% [", "pass@3 75.0% [", "pass^3 25.0% [", "unbiased estimator of Chen et al. (2021)", "percentile bootstrap over tasks"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, md.String())
		}
	}
	if one := BuildReport([]*ResultFolder{runFolder(1, map[string][]bool{"a": {true}})}).Rows[0].PassAtK; one != nil {
		t.Errorf("k = 1 has pass@k figures: %+v", one)
	}
}

func TestReportSelect(t *testing.T) {
	f := runFolder(1, map[string][]bool{"a": {true}, "b": {false}, "c": {true}})
	f.Summary.CorpusID, f.Summary.ExcludedIDs = "0123456789ab", []string{"b"}
	if err := f.Select([]string{"c", "b"}, 0); err != nil {
		t.Fatal(err)
	}
	s := f.Summary
	if len(f.Results) != 2 || s.Tasks != 2 || s.CorpusID != "" || s.Subset == nil || s.Subset.OfTasks != 3 || s.Subset.OfCorpusID != "0123456789ab" || len(s.ExcludedIDs) != 1 {
		t.Fatalf("selected: %+v %+v", f.Results, s)
	}
	g := runFolder(1, map[string][]bool{"a": {true}, "b": {false}, "c": {true}})
	if err := g.Select(nil, 1); err != nil || len(g.Results) != 1 || g.Results[0].InstanceID != "a" {
		t.Fatalf("--limit 1: %v %+v", err, g.Results)
	}
	if err := g.Select([]string{"z"}, 0); err == nil || !strings.Contains(err.Error(), "z: no result of the folder has it") {
		t.Errorf("an unknown id: %v", err)
	}
	var md strings.Builder
	BuildReport([]*ResultFolder{f}).Markdown(&md)
	if !strings.Contains(md.String(), "| full (subset) |") || !strings.Contains(md.String(), "SUBSET, not a leaderboard entry (subset: 2 of 3 tasks of corpus 0123456789ab; give --tasks for its own corpus id)") {
		t.Errorf("the report does not mark the subset:\n%s", md.String())
	}
}

// TestReportSubsetCorpus: a subset's own corpus id comes from the release's rows of its
// tasks, only when the release is the folder's.
func TestReportSubsetCorpus(t *testing.T) {
	var all []schemas.Task
	for _, id := range []string{"a", "b", "c"} {
		var tk schemas.Task
		tk.InstanceID = id
		all = append(all, tk)
	}
	whole, err := schemas.CorpusID(all)
	if err != nil {
		t.Fatal(err)
	}
	want, err := schemas.CorpusID(all[1:])
	if err != nil {
		t.Fatal(err)
	}
	f := runFolder(1, map[string][]bool{"a": {true}, "b": {false}, "c": {true}})
	f.Summary.CorpusID = whole
	if err := f.Select([]string{"c", "b"}, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.SubsetCorpus(all[:2]); err == nil || !strings.Contains(err.Error(), "give the release") {
		t.Errorf("another release: %v", err)
	}
	if err := f.SubsetCorpus(all); err != nil || f.Summary.CorpusID != want || want == whole {
		t.Fatalf("SubsetCorpus: %v, corpus %q, want %q", err, f.Summary.CorpusID, want)
	}
	var md strings.Builder
	BuildReport([]*ResultFolder{f}).Markdown(&md)
	if !strings.Contains(md.String(), "its own corpus id "+want) {
		t.Errorf("the report does not give the subset's corpus id:\n%s", md.String())
	}
}

// BenchmarkReportPassAtK: one row of 1,000 tasks with 5 runs each (the bootstrap of three
// figures is the cost).
func BenchmarkReportPassAtK(b *testing.B) {
	runs := map[string][]bool{}
	for i := 0; i < 1000; i++ {
		r := make([]bool, 5)
		for j := range r {
			r[j] = (i*7+j*3)%4 == 0
		}
		runs[string(rune('a'+i%26))+strings.Repeat("x", i/26)] = r
	}
	f := runFolder(5, runs)
	b.ResetTimer()
	for range b.N {
		if BuildReport([]*ResultFolder{f}).Rows[0].PassAtK == nil {
			b.Fatal("no pass@k")
		}
	}
}
