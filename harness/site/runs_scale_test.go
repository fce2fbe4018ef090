package site

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/envgap/envgap/lib/atif"
	"github.com/envgap/envgap/schemas"
)

// syntheticRuns writes, under root, agents result folders of envgap run over the first
// tasks tasks of rel: each task one or two attempts, each attempt an ATIF file of the
// built-in loop's shape (turns turns, each a command and an output of outBytes) and a
// section of its task's log. It returns the folders.
func syntheticRuns(tb testing.TB, rel *Release, root string, tasks, agents, turns, outBytes int) []string {
	tb.Helper()
	out := strings.Repeat("collecting numpy==1.26.4 ... building wheel\n", outBytes/44+1)[:outBytes]
	var dirs []string
	for k := 0; k < agents; k++ {
		agent := fmt.Sprintf("agent-%d", k)
		dir := filepath.Join(root, agent)
		var atts []attempt
		for j := 0; j < tasks; j++ {
			t := rel.Tasks[j]
			n := 1 + (j+k)%2
			var log strings.Builder
			for a := 1; a <= n; a++ {
				status := schemas.EvalUnresolved
				if a == n && (j+k)%3 == 0 {
					status = schemas.EvalResolved
				}
				atts = append(atts, attempt{id: t.InstanceID, run: 1, n: a, status: status, f1: 0.5, excluded: t.ExcludedFromScoring})
				entries := []any{map[string]any{"role": "user", "content": "Task (attempt 1 of 2):\n{\"instance_id\": \"" + t.InstanceID + "\"}"}}
				for i := 0; i < turns; i++ {
					id := fmt.Sprintf("c%d", i)
					entries = append(entries,
						map[string]any{"role": "assistant", "model": "m", "usage": map[string]any{"input_tokens": 1000 + i, "output_tokens": 50},
							"text": "Next I run the build.", "tool_calls": []any{map[string]any{"id": id, "name": "bash", "input": map[string]any{"command": "pip install -e . 2>&1 | tail -40"}}}},
						map[string]any{"role": "tool", "tool_call_id": id, "name": "bash", "output": out, "is_error": false})
				}
				entries = append(entries, map[string]any{"type": "stop", "status": "finished", "num_turns": turns,
					"tokens": map[string]any{"input": 1000 * turns, "output": 50 * turns}, "cost_usd": 0.01})
				doc := atif.Build(atif.Attempt{SessionID: rel.CorpusID + "/" + t.InstanceID + "/run-1", AgentName: agent, AgentVersion: "1", Model: "m",
					Entries: entries, Verdict: atif.Verdict{InstanceID: t.InstanceID, Run: 1, Attempt: a, Agent: agent, Status: status, Resolved: status == schemas.EvalResolved}})
				b, err := atif.Marshal(doc)
				if err != nil {
					tb.Fatal(err)
				}
				p := atif.AttemptPath(dir, t.InstanceID, 1, a)
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, b, 0o644); err != nil {
					tb.Fatal(err)
				}
				fmt.Fprintf(&log, "=== %s  run 1 attempt %d  (%s, repair task)\nstatus: %s\n%s\n", t.InstanceID, a, t.Source, status, out)
			}
			os.MkdirAll(filepath.Join(dir, schemas.EvalLogsDir), 0o755)
			if err := os.WriteFile(filepath.Join(dir, schemas.EvalLogsDir, t.InstanceID+".log"), []byte(log.String()), 0o644); err != nil {
				tb.Fatal(err)
			}
		}
		dirs = append(dirs, resultFolder(tb, dir, agent, "full", "run", rel.CorpusID, 2, atts))
	}
	return dirs
}

// cpuSeconds is the process's user and system CPU time so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func treeSize(tb testing.TB, dir string) (files int, bytes int64) {
	tb.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files++
		bytes += info.Size()
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return files, bytes
}

// BenchmarkSiteRuns: the site of a 1,000-task release with 3 agents' run folders (one or
// two attempts a task, each a 12-turn trajectory with 1.5 KB outputs), trajectory viewer
// included: time per build, and the site's files and size on disk (site-MB), against the
// result folders' size (results-MB).
func BenchmarkSiteRuns(b *testing.B) {
	rel, _ := syntheticRelease(4100, 0)
	if len(rel.Tasks) < 1000 {
		b.Fatalf("%d tasks", len(rel.Tasks))
	}
	root := b.TempDir()
	dirs := syntheticRuns(b, rel, filepath.Join(root, "results"), 1000, 3, 12, 1500)
	res, err := LoadResults(dirs)
	if err != nil {
		b.Fatal(err)
	}
	_, inBytes := treeSize(b, filepath.Join(root, "results"))
	for _, c := range []struct {
		name string
		res  []*Results
	}{{"no-results", nil}, {"3-agents", res}} {
		b.Run(c.name, func(b *testing.B) {
			var rep *Report
			out := filepath.Join(b.TempDir(), "site")
			cpu0, n := cpuSeconds(), 0
			for b.Loop() {
				if rep, err = Build(Input{Release: rel, Results: c.res}, out); err != nil {
					b.Fatal(err)
				}
				n++
			}
			// CPU time is steadier than wall time on a shared machine.
			b.ReportMetric((cpuSeconds()-cpu0)/float64(n), "cpu-s/op")
			files, size := treeSize(b, out)
			b.ReportMetric(float64(files), "files")
			b.ReportMetric(float64(rep.RunPages), "run-pages")
			b.ReportMetric(float64(size)/1e6, "site-MB")
			if c.res != nil {
				_, runs := treeSize(b, filepath.Join(out, RunsDir))
				b.ReportMetric(float64(runs)/1e6, "runs-MB")
				b.ReportMetric(float64(inBytes)/1e6, "results-MB")
			}
		})
	}
}

// BenchmarkRunPagesInBrowser: in Chromium, the run page of one agent's 1,000-task run
// (1,500 attempt links) and one of its attempt pages (12 turns): load time (navigation
// start to the load event) as load-run-ms and load-attempt-ms, and each page's size.
func BenchmarkRunPagesInBrowser(b *testing.B) {
	br := newBrowser(b)
	rel, _ := syntheticRelease(4100, 0)
	root := b.TempDir()
	dirs := syntheticRuns(b, rel, filepath.Join(root, "results"), 1000, 1, 12, 1500)
	res, err := LoadResults(dirs)
	if err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(root, "site")
	if _, err := Build(Input{Release: rel, Results: res}, out); err != nil {
		b.Fatal(err)
	}
	slug := runSlugs(res)[res[0]]
	run := runLink(slug)
	att := RunsDir + "/" + slug + "/" + attemptPage(rel.Tasks[1].InstanceID, 1, 1)
	var loadRun, loadAtt float64
	n := 0
	for b.Loop() {
		v := br.open(b, fileURL(out, run))
		if links := eval[int](b, v, `document.querySelectorAll("table.runs tbody td:nth-child(2) a").length`); links != 1500 {
			b.Fatalf("the run page links %d attempts, want 1500", links)
		}
		loadRun += eval[float64](b, v, `performance.getEntriesByType("navigation")[0].loadEventEnd`)
		v.clean(b, run, out)
		v.close()
		v = br.open(b, fileURL(out, att))
		if steps := eval[int](b, v, `document.querySelectorAll("#steps > li").length`); steps != 13 {
			b.Fatalf("the attempt page shows %d steps, want 13", steps)
		}
		loadAtt += eval[float64](b, v, `performance.getEntriesByType("navigation")[0].loadEventEnd`)
		v.clean(b, att, out)
		v.close()
		n++
	}
	b.ReportMetric(loadRun/float64(n), "load-run-ms")
	b.ReportMetric(loadAtt/float64(n), "load-attempt-ms")
	for name, p := range map[string]string{"run-KB": run, "attempt-KB": att} {
		fi, err := os.Stat(filepath.Join(out, filepath.FromSlash(p)))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(fi.Size())/1e3, name)
	}
}
