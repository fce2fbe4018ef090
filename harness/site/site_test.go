package site

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/envgap/envgap/harness/report"
	"github.com/envgap/envgap/schemas"
)

func readTree(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The same inputs give the same bytes, whatever order the result folders are given in.
func TestSiteIsByteIdentical(t *testing.T) {
	f := newFixture(t)
	a, rep := f.build(t)
	rev := append([]string(nil), f.Results...)
	sort.Sort(sort.Reverse(sort.StringSlice(rev)))
	f2 := &fixture{Hub: f.Hub, Results: rev, Release: f.Release}
	b, _ := f2.build(t)
	ta, tb := readTree(t, a), readTree(t, b)
	if len(ta) != len(tb) || len(ta) != rep.Files {
		t.Fatalf("file counts %d, %d, report %d", len(ta), len(tb), rep.Files)
	}
	for n, x := range ta {
		if !bytes.Equal(x, tb[n]) {
			t.Errorf("%s differs between two builds of the same inputs", n)
		}
	}
	if rep.TaskPages != 5 || rep.Candidates != 5 {
		t.Errorf("report = %+v, want 5 candidates and task pages", rep)
	}
	// Building again into the folder replaces it; a foreign folder is refused.
	res, _ := LoadResults(f.Results)
	if _, err := Build(Input{Release: f.Release, Results: res}, a); err != nil {
		t.Fatal(err)
	}
	foreign := t.TempDir()
	os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644)
	if _, err := Build(Input{Release: f.Release, Results: res}, foreign); err == nil || !strings.Contains(err.Error(), "not a site") {
		t.Errorf("building into a foreign folder: %v", err)
	}
}

// The boards' numbers are envgap report's; ranks follow the first attempt with ties shared;
// the folder of another corpus is apart.
func TestLeaderboard(t *testing.T) {
	f := newFixture(t)
	res, err := LoadResults(f.Results)
	if err != nil {
		t.Fatal(err)
	}
	lb := BuildLeaderboard(f.Release, res)
	if len(lb.Other) != 1 || lb.Other[0].Row.Agent != "stale-agent" || lb.Other[0].Rank != 0 {
		t.Fatalf("other corpus = %+v, want only stale-agent, unranked", lb.Other)
	}
	boards := map[schemas.Source]Board{}
	for _, b := range lb.Boards {
		boards[b.Set] = b
		for _, r := range b.Rows {
			if r.Row.Agent == "stale-agent" {
				t.Errorf("the other corpus's folder is on the %s board", b.Set)
			}
		}
	}
	type want struct {
		agent string
		rank  int
		tied  bool
		n     float64
		of    int
	}
	got := func(b Board) []want {
		var out []want
		for _, r := range b.Rows {
			out = append(out, want{r.Row.Agent, r.Rank, r.Tied, r.Row.Resolved.N, r.Row.Resolved.Of})
		}
		return out
	}
	// reported: gold resolves the hostile task first time; fixer only on its second
	// attempt; noop leaks. The excluded control counts nowhere.
	if g := got(boards[schemas.SourceReported]); !reflect.DeepEqual(g, []want{{"gold", 1, false, 1, 1}, {"fixer-model-x", 2, true, 0, 1}, {"noop", 2, true, 0, 1}}) {
		t.Errorf("reported board = %+v", g)
	}
	if g := got(boards[schemas.SourceRepaired]); !reflect.DeepEqual(g, []want{{"gold", 1, false, 1, 1}, {"noop", 2, false, 0, 1}}) {
		t.Errorf("repaired board = %+v", g)
	}
	if len(boards[schemas.SourceLite].Rows) != 0 {
		t.Errorf("lite board has rows: %+v", boards[schemas.SourceLite].Rows)
	}
	for _, r := range boards[schemas.SourceReported].Rows {
		if r.Row.Agent == "fixer-model-x" && (r.Row.Best.N != 1 || r.Row.Excluded != 1) {
			t.Errorf("fixer's best within attempts = %+v, excluded %d", r.Row.Best, r.Row.Excluded)
		}
	}
	// A folder whose split is the set has exactly envgap report's row.
	for _, r := range res {
		if r.Folder.Summary.Split != "reported" {
			continue
		}
		want := report.BuildReport([]*report.ResultFolder{r.Folder}).Rows[0]
		for _, br := range boards[schemas.SourceReported].Rows {
			if br.Name == r.Name && !reflect.DeepEqual(br.Row, want) {
				t.Errorf("board row %+v\nreport row %+v", br.Row, want)
			}
		}
	}
	// The page shows it: the tie mark, the other-corpus section, a chart per board with rows.
	out, _ := f.build(t)
	index, _ := os.ReadFile(filepath.Join(out, IndexPage))
	for _, s := range []string{`<td class="rank">2=</td>`, `id="other-corpus"`, "0123456789ab", `<svg class="chart"`, "This release has no lite tasks."} {
		if !strings.Contains(string(index), s) {
			t.Errorf("index.html lacks %q", s)
		}
	}
	if n := strings.Count(string(index), `<svg class="chart"`); n != 2 {
		t.Errorf("%d charts, want 2 (reported, repaired)", n)
	}
}

// The Tasks data holds the candidates config's rows; the scoring page holds the card's text.
func TestTasksDataAndScoringText(t *testing.T) {
	f := newFixture(t)
	out, _ := f.build(t)
	cands := f.Release.Candidates
	js, _ := os.ReadFile(filepath.Join(out, TasksData))
	for _, c := range cands {
		if !bytes.Contains(js, []byte(`"`+c.InstanceID+`"`)) {
			t.Errorf("tasks data lacks %s", c.InstanceID)
		}
		if _, err := os.Stat(filepath.Join(out, TaskDir, c.InstanceID+".html")); err != nil {
			t.Errorf("no page for %s: %v", c.InstanceID, err)
		}
	}
	if bytes.Contains(js, []byte("<")) {
		t.Error("tasks data holds a raw <")
	}
	card, _ := os.ReadFile(filepath.Join(f.Hub, "README.md"))
	scoringPage, _ := os.ReadFile(filepath.Join(out, ScoringPage))
	for _, s := range []string{"On the published leaderboard, the score is the agent's first attempt", "Keep the controls in mind when you read a score"} {
		if !strings.Contains(string(card), s) {
			t.Errorf("card lacks %q", s)
		}
		if !strings.Contains(strings.ReplaceAll(string(scoringPage), "&#39;", "'"), s) {
			t.Errorf("scoring page lacks %q", s)
		}
	}
	zip, _ := os.ReadFile(filepath.Join(f.Hub, "harness", "envgap-source.zip"))
	if got, _ := os.ReadFile(filepath.Join(out, HarnessZip)); !bytes.Equal(got, zip) {
		t.Error("the site's harness zip is not the release's")
	}
	for name, b := range readTree(t, out) {
		if strings.HasSuffix(name, ".html") && !bytes.Contains(b, []byte(`http-equiv="Content-Security-Policy"`)) {
			t.Errorf("%s has no Content-Security-Policy", name)
		}
	}
}
