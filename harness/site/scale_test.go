package site

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/envgap/envgap/schemas"
)

// tasksPageFigures opens the Tasks page of a site and returns how long it took to load
// (navigation start to the load event, which runs the list's script: ms) and to filter by
// set and then search (ms), checking the counts the page shows against want.
func tasksPageFigures(tb testing.TB, b *browser, dir string, rel *Release) (load, filter float64) {
	tb.Helper()
	v := b.open(tb, fileURL(dir, TasksPage))
	defer v.close()
	v.clean(tb, TasksPage, dir)
	if n := eval[int](tb, v, `+document.getElementById("count").dataset.count`); n != len(rel.Candidates) {
		tb.Fatalf("the Tasks page counts %d candidates, want %d", n, len(rel.Candidates))
	}
	if n := eval[int](tb, v, `document.querySelectorAll("#rows tr").length`); n != min(100, len(rel.Candidates)) {
		tb.Errorf("the Tasks page shows %d rows, want a page of %d", n, min(100, len(rel.Candidates)))
	}
	load = eval[float64](tb, v, `performance.getEntriesByType("navigation")[0].loadEventEnd`)
	wantLite, wantSearch := 0, 0
	for _, c := range rel.Candidates {
		if c.Set == schemas.SourceLite {
			wantLite++
			if strings.Contains(c.Repo, "proj0001") {
				wantSearch++
			}
		}
	}
	got := eval[[]float64](tb, v, `(() => {
		const t0 = performance.now();
		const s = document.getElementById("f-set"); s.value = "lite"; s.dispatchEvent(new Event("change"));
		const lite = +document.getElementById("count").dataset.count;
		const q = document.getElementById("q"); q.value = "PROJ0001"; q.dispatchEvent(new Event("input"));
		const found = +document.getElementById("count").dataset.count;
		return [performance.now() - t0, lite, found];
	})()`)
	if int(got[1]) != wantLite || int(got[2]) != wantSearch {
		tb.Errorf("filtered counts: lite %v, search %v; want %d, %d", got[1], got[2], wantLite, wantSearch)
	}
	return load, got[0]
}

// A 10,000-candidate site loads and filters in the browser (the figures are logged, not
// asserted: see BenchmarkTasksPageInBrowser).
func TestTenThousandCandidatesInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 10,000-candidate site")
	}
	b := newBrowser(t)
	rel, res := syntheticRelease(10000, 2)
	dir := filepath.Join(t.TempDir(), "site")
	rep, err := Build(Input{Release: rel, Results: res}, dir)
	if err != nil {
		t.Fatal(err)
	}
	load, filter := tasksPageFigures(t, b, dir, rel)
	t.Logf("10,000 candidates (%d files): Tasks page loaded in %.0f ms, set filter + search in %.1f ms", rep.Files, load, filter)
}

// BenchmarkSite: building the site of 10,000 candidates and 20 result folders.
func BenchmarkSite(b *testing.B) {
	rel, res := syntheticRelease(10000, 20)
	for b.Loop() {
		if _, err := Build(Input{Release: rel, Results: res}, filepath.Join(b.TempDir(), "site")); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTasksPageInBrowser: the Tasks page of 10,000 candidates in Chromium, load and
// filter time as metrics (load-ms, filter-ms).
func BenchmarkTasksPageInBrowser(b *testing.B) {
	br := newBrowser(b)
	rel, res := syntheticRelease(10000, 2)
	dir := filepath.Join(b.TempDir(), "site")
	if _, err := Build(Input{Release: rel, Results: res}, dir); err != nil {
		b.Fatal(err)
	}
	var load, filter float64
	n := 0
	for b.Loop() {
		l, f := tasksPageFigures(b, br, dir, rel)
		load, filter, n = load+l, filter+f, n+1
	}
	b.ReportMetric(load/float64(n), "load-ms")
	b.ReportMetric(filter/float64(n), "filter-ms")
}
