package site

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envgap/envgap/lib/atif"
	"github.com/envgap/envgap/schemas"
)

// payload is text a hostile agent puts in its trajectory: every way it could try to run
// in the viewer.
const payload = `<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"></pre><b>bold</b>` +
	`<a href="javascript:window.__pwned=3">x</a><iframe src="https://example.invalid/"></iframe>{{.CSP}}` + "\x00\u202e"

// hostileATIF is the fixer's first attempt on the hostile task, as an agent could have
// written it (passed through by envgap run): payloads in every text field, and the leak's
// evidence in a command.
func hostileATIF(t testing.TB) []byte {
	t.Helper()
	p, c := int64(1234), int64(56)
	cost := 0.0789
	doc := &atif.Trajectory{SchemaVersion: "ATIF-v1.4", SessionID: "s-" + payload, Agent: atif.Agent{Name: "fixer " + payload, Version: "1"},
		Steps: []atif.Step{
			{StepID: 1, Source: atif.SourceUser, Message: atif.Content{Text: "Task: " + payload}},
			{StepID: 2, Source: atif.SourceAgent, ModelName: "m" + payload, Message: atif.Content{Text: "thinking " + payload},
				ReasoningContent: "why " + payload,
				ToolCalls:        []atif.ToolCall{{ToolCallID: "c1", FunctionName: "bash" + payload, Arguments: map[string]any{"command": "git log --all -- " + payload}}},
				Observation: &atif.Observation{Results: []atif.ObservationResult{{SourceCallID: "c1",
					Content: &atif.Content{Text: "commit deadbeef\n" + payload + strings.Repeat("x", 40000) + "TAIL-END"}}}},
				Metrics: &atif.Metrics{PromptTokens: &p, CompletionTokens: &c, CostUSD: &cost}},
			{StepID: 3, Source: atif.SourceSystem, Message: atif.Content{Text: "the box's egress door refused 2 connection(s) to github.com:443"},
				Extra: map[string]any{"refused_connection": map[string]any{"host": "github.com", "port": 443, "count": 2}}},
		},
		FinalMetrics: &atif.FinalMetrics{TotalPromptTokens: &p, TotalCompletionTokens: &c, TotalCostUSD: &cost},
		Extra: map[string]any{atif.ExtraKey: map[string]any{"instance_id": idHostile, "run": 1, "attempt": 1, "form": "agent",
			"status": "leaked", "refused": []any{map[string]any{"host": "github.com", "port": 443, "count": 2}}}},
	}
	b, err := atif.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// runFixture is the fixture with trajectories: the fixer's attempts on the hostile task
// (the first leaked, with a hostile ATIF file and a log of both attempts), the gold
// folder's attempts with envgap's own ATIF, and noop's without any.
func runFixture(t testing.TB) *fixture {
	t.Helper()
	f := newFixture(t)
	fixer := f.Results[1]
	// Make the fixer's first hostile attempt a leak whose evidence is in the trajectory.
	lines, err := os.ReadFile(filepath.Join(fixer, schemas.EvalResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(lines), `"status":"rejected","resolved":false,"reason":"the prediction changed a source file \u003cscript\u003ewindow.__pwned=7\u003c/script\u003e","checks_passed":false,"rejection":"src/main.cpp","leaks":null`,
		`"status":"leaked","resolved":false,"reason":"the trajectory shows the later history","checks_passed":true,"leaks":[{"rule":"later-history","step":1,"evidence":"git log of every ref: git log --all"}]`, 1)
	if s == string(lines) {
		t.Fatal("the fixture's fixer line was not found")
	}
	os.WriteFile(filepath.Join(fixer, schemas.EvalResultsFile), []byte(s), 0o644)
	write := func(dir, rel string, b []byte) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(fixer, atif.AttemptPath("", idHostile, 1, 1), hostileATIF(t))
	log := "=== " + idHostile + "  run 1 attempt 1  (reported, repair task)\ntrajectory: inspected (ATIF)\n  later history: rule later-history at step 1: git log of every ref: git log --all\nstatus: leaked " + payload + "\n\n" +
		"=== " + idHostile + "  run 1 attempt 2  (reported, repair task)\nstatus: resolved SECOND-ATTEMPT\n"
	write(fixer, "logs/"+idHostile+".log", []byte(log))
	gold := f.Results[0]
	for _, id := range []string{idRepaired, idHostile, idControl} {
		doc := atif.Build(atif.Attempt{SessionID: "x/" + id + "/run-1", AgentName: "gold", AgentVersion: "envgap core test",
			Entries: []any{map[string]any{"type": "note", "note": "envgap's gold agent wrote the reference fix; no model ran"}},
			Verdict: atif.Verdict{InstanceID: id, Run: 1, Attempt: 1, Agent: "gold", Status: "resolved", Resolved: true}})
		b, err := atif.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		write(gold, atif.AttemptPath("", id, 1, 1), b)
	}
	return f
}

func runSlugOf(t testing.TB, fs map[string][]byte, folder string) string {
	t.Helper()
	idx := string(fs[IndexPage])
	name := filepath.ToSlash(filepath.Clean(folder))
	i := strings.Index(idx, "<code>"+name+"</code>")
	j := strings.LastIndex(idx[:max(i, 0)], `<a href="`+RunsDir+"/")
	if i < 0 || j < 0 {
		t.Fatalf("the leaderboard does not link %s to its run", name)
	}
	rest := idx[j+len(`<a href="`+RunsDir+"/"):]
	return rest[:strings.Index(rest, "/")]
}

// Each leaderboard row links to its run; each run has a page listing its tasks and
// attempts and a page per attempt with the steps (payloads as text), tokens, cost, refused
// connections, the verdict, the attempt's own log section and the leak evidence marked.
func TestRunPages(t *testing.T) {
	f := runFixture(t)
	res, err := LoadResults(f.Results)
	if err != nil {
		t.Fatal(err)
	}
	fs, rep, err := Render(Input{Release: f.Release, Results: res})
	if err != nil {
		t.Fatal(err)
	}
	// 4 run pages, and one page per attempt (3 + 3 + 3 + 2).
	if rep.RunPages != 4+11 || rep.Files != len(fs) {
		t.Errorf("run pages %d (want 15), files %d of %d", rep.RunPages, rep.Files, len(fs))
	}
	slug := runSlugOf(t, fs, f.Results[1])
	run := string(fs[RunsDir+"/"+slug+"/index.html"])
	page := attemptPage(idHostile, 1, 1)
	for _, want := range []string{`href="` + page + `"`, "run 1 attempt 1: leaked", "(leak)", `href="../../tasks/` + idHostile + `.html"`, "fixer-model-x"} {
		if !strings.Contains(run, want) {
			t.Errorf("the run page lacks %q", want)
		}
	}
	a := string(fs[RunsDir+"/"+slug+"/"+page])
	for _, want := range []string{
		"&lt;script&gt;window.__pwned=1&lt;/script&gt;", "onerror=&#34;window.__pwned=2&#34;", "{{.CSP}}", // payloads as text
		`<mark class="leak">git log --all</mark>`, `href="#step-2"`, `class="step src-agent leak" id="step-2"`, // the leak marked
		"1234 in / 56 out", "$0.0789", `<code>github.com:443</code> ×2`, "refused connection: github.com:443 refused 2 time(s)",
		"bytes not shown here", "TAIL-END", // a long output cut in the middle
		"status: leaked", // the attempt's log section ...
		"[U+202E]",       // a control that reorders text is shown, not obeyed
		`rel="next"`,
	} {
		if !strings.Contains(a, want) {
			t.Errorf("the attempt page lacks %q", want)
		}
	}
	for _, never := range []string{"<script>window", "<img", "<iframe", "<b>bold", `href="javascript:`, "SECOND-ATTEMPT"} {
		if strings.Contains(a, never) {
			t.Errorf("the attempt page holds %q", never)
		}
	}
	// The second attempt: no trajectory file, its own log section.
	b := string(fs[RunsDir+"/"+slug+"/"+attemptPage(idHostile, 1, 2)])
	if !strings.Contains(b, "holds no ATIF trajectory") || !strings.Contains(b, "SECOND-ATTEMPT") || strings.Contains(b, "git log --all") {
		t.Errorf("second attempt page:\n%s", b)
	}
	// Gold: envgap's own ATIF; its task page links the attempt.
	gslug := runSlugOf(t, fs, f.Results[0])
	g := string(fs[RunsDir+"/"+gslug+"/"+attemptPage(idRepaired, 1, 1)])
	if !strings.Contains(g, "reference fix") || !strings.Contains(g, "ATIF: envgap") {
		t.Errorf("gold attempt page:\n%s", g)
	}
	if task := string(fs[TaskDir+"/"+idRepaired+".html"]); !strings.Contains(task, `href="../`+RunsDir+"/"+gslug+"/"+attemptPage(idRepaired, 1, 1)+`"`) {
		t.Errorf("the task page does not link the gold attempt")
	}
	// Build writes the same pages (made while writing) as Render.
	dir := filepath.Join(t.TempDir(), "site")
	if _, err := Build(Input{Release: f.Release, Results: res}, dir); err != nil {
		t.Fatal(err)
	}
	tree := readTree(t, dir)
	if len(tree) != len(fs) || string(tree[RunsDir+"/"+slug+"/"+page]) != a {
		t.Errorf("Build wrote %d files, Render made %d; the attempt page differs: %v", len(tree), len(fs), string(tree[RunsDir+"/"+slug+"/"+page]) != a)
	}
}

// In Chromium: the leaderboard's row opens its run, the run page its attempt; the attempt
// page shows the hostile trajectory's steps as text and runs none of it, loads nothing
// from outside the folder, and logs no error.
func TestRunPagesInBrowser(t *testing.T) {
	br := newBrowser(t)
	f := runFixture(t)
	res, err := LoadResults(f.Results)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "site")
	if _, err := Build(Input{Release: f.Release, Results: res}, dir); err != nil {
		t.Fatal(err)
	}
	v := br.open(t, fileURL(dir, IndexPage))
	link := eval[string](t, v, `[...document.querySelectorAll("#board-reported a.runlink")].map(a => a.getAttribute("href")).filter(h => h.includes("fixer"))[0] || ""`)
	v.close()
	if link == "" {
		t.Fatal("no leaderboard row links the fixer's run")
	}
	v = br.open(t, fileURL(dir, link))
	attempts := eval[int](t, v, `document.querySelectorAll("table.runs tbody td:nth-child(2) a").length`)
	first := eval[string](t, v, `[...document.querySelectorAll("table.runs tbody td:nth-child(2) a")].map(a => a.getAttribute("href")).filter(h => h.startsWith("`+idHostile+`.r1a1."))[0] || ""`)
	if verdict := eval[string](t, v, hostileCheck); verdict != "" {
		t.Errorf("the run page: a payload acted: %s", verdict)
	}
	screenshot(t, v, link)
	v.clean(t, link, dir)
	v.close()
	if attempts != 3 {
		t.Errorf("the fixer's run page links %d attempts, want 3", attempts)
	}
	p := filepath.ToSlash(filepath.Join(filepath.Dir(link), first))
	for _, page := range []string{p, strings.Replace(p, ".r1a1.", ".r1a2.", 1)} {
		v = br.open(t, fileURL(dir, page))
		verdict := eval[string](t, v, hostileCheck)
		screenshot(t, v, page)
		if page == p {
			steps := eval[int](t, v, `document.querySelectorAll("#steps > li").length`)
			text := eval[string](t, v, `document.querySelector("#step-1 .message").textContent`)
			marked := eval[string](t, v, `[...document.querySelectorAll("#step-2 mark.leak")].map(m => m.textContent).join("|")`)
			facts := eval[string](t, v, `["tokens", "cost", "refused", "status"].map(id => document.getElementById(id).textContent).join(" | ")`)
			if steps != 3 || !strings.Contains(text, "<script>window.__pwned=1</script>") || !strings.Contains(marked, "git log --all") ||
				facts != "1234 in / 56 out | $0.0789 | 2 · github.com:443 ×2 | leaked" {
				t.Errorf("attempt page: %d steps, message %q, marked %q, facts %q", steps, text, marked, facts)
			}
		}
		v.clean(t, page, dir)
		v.close()
		if verdict != "" {
			t.Errorf("%s: a payload acted: %s", page, verdict)
		}
	}
}
