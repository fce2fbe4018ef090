package site

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/envgap/envgap/internal/testenv"
	"github.com/envgap/envgap/schemas"
)

// Chromium is the browser the tests drive: the OS package (make browser installs it).
const Chromium = "/usr/bin/chromium"

// browser is one headless Chromium for a test.
type browser struct {
	ctx context.Context
}

func newBrowser(tb testing.TB) *browser {
	tb.Helper()
	if fi, err := os.Stat(Chromium); err != nil || fi.Mode()&0o111 == 0 {
		testenv.Missing(tb, "no browser at %s (make browser installs the OS package chromium): %v", Chromium, err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(Chromium), chromedp.NoSandbox,
		chromedp.Headless, chromedp.DisableGPU, chromedp.WindowSize(1280, 900))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	tb.Cleanup(func() { cancelB(); cancelA() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		tb.Fatalf("start %s: %v", Chromium, err)
	}
	return &browser{ctx: ctx}
}

// tab is one page opened in its own tab, with what the console, the page and the network
// said since it was opened.
type tab struct {
	ctx      context.Context
	cancel   context.CancelFunc
	mu       sync.Mutex
	errors   []string
	requests []string
}

func (v *tab) add(list *[]string, s string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	*list = append(*list, s)
}

func (v *tab) listen(ev any) {
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			var parts []string
			for _, a := range ev.Args {
				parts = append(parts, string(a.Value)+a.Description)
			}
			v.add(&v.errors, fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(parts, " ")))
		}
	case *runtime.EventExceptionThrown:
		v.add(&v.errors, fmt.Sprintf("exception: %s %s:%d", ev.ExceptionDetails.Text, ev.ExceptionDetails.URL, ev.ExceptionDetails.LineNumber))
	case *log.EventEntryAdded:
		if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
			v.add(&v.errors, fmt.Sprintf("log %s %s: %s %s", ev.Entry.Source, ev.Entry.Level, ev.Entry.Text, ev.Entry.URL))
		}
	case *network.EventRequestWillBeSent:
		v.add(&v.requests, ev.Request.URL)
	}
}

// open loads url in a new tab and waits for its body; close the tab when done.
func (b *browser) open(tb testing.TB, url string) *tab {
	tb.Helper()
	v := &tab{}
	v.ctx, v.cancel = chromedp.NewContext(b.ctx, chromedp.WithListener(v.listen))
	if _, err := chromedp.Call(v.ctx, network.Enable, network.EnableParams{}); err != nil {
		tb.Fatalf("%s: network.enable: %v", url, err)
	}
	if _, err := chromedp.Call(v.ctx, log.Enable, cdp.Empty{}); err != nil {
		tb.Fatalf("%s: log.enable: %v", url, err)
	}
	ctx, cancel := context.WithTimeout(v.ctx, 2*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
		tb.Fatalf("%s: %v", url, err)
	}
	return v
}

func (v *tab) close() { v.cancel() }

// eval evaluates a JavaScript expression on the page.
func eval[T any](tb testing.TB, v *tab, js string) T {
	tb.Helper()
	ctx, cancel := context.WithTimeout(v.ctx, time.Minute)
	defer cancel()
	r, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		tb.Fatalf("evaluate %s: %v", js, err)
	}
	return r
}

// clean fails the test when the page logged an error or asked for anything outside dir.
func (v *tab) clean(tb testing.TB, page, dir string) {
	tb.Helper()
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, e := range v.errors {
		tb.Errorf("%s: %s", page, e)
	}
	prefix := "file://" + filepath.ToSlash(dir) + "/"
	if len(v.requests) == 0 {
		tb.Errorf("%s: no request seen (the network listener does not work)", page)
	}
	for _, r := range v.requests {
		if !strings.HasPrefix(r, prefix) {
			tb.Errorf("%s requested %s, outside the site folder", page, r)
		}
	}
}

func fileURL(dir, page string) string { return "file://" + filepath.ToSlash(filepath.Join(dir, page)) }

// screenshot saves a PNG of the page as a test artefact (go test -artifacts keeps them).
func screenshot(t *testing.T, v *tab, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(v.ctx, time.Minute)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(t.ArtifactDir(), strings.ReplaceAll(name, "/", "_")+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// selectAndCount sets a filter control and returns the count the page shows.
func selectAndCount(id, value, event string) string {
	return fmt.Sprintf(`(() => { const e = document.getElementById(%q); e.value = %q; e.dispatchEvent(new Event(%q));
		return +document.getElementById("count").dataset.count; })()`, id, value, event)
}

// hostileCheck is true when nothing a payload would do happened on the page: no flag set,
// no element a payload would add, no event handler attribute.
const hostileCheck = `(() => {
	if (window.__pwned !== undefined) return "window.__pwned = " + window.__pwned;
	const bad = document.querySelectorAll("main script, img, iframe, object, embed, main b");
	if (bad.length) return "found " + bad[0].outerHTML;
	for (const el of document.querySelectorAll("*")) {
		for (const a of el.attributes) {
			if (a.name.startsWith("on")) return "handler " + a.name + " on " + el.tagName;
			if (a.name === "href" && a.value.trim().toLowerCase().startsWith("javascript:")) return "javascript: link";
		}
	}
	return "";
})()`

// Every page opens from file:// with no console error and no request outside the folder;
// the Tasks page's count, filters and search agree with the candidates config; a task page
// shows its patch and results; the hostile candidate's payloads run nothing.
func TestSiteInBrowser(t *testing.T) {
	b := newBrowser(t)
	f := newFixture(t)
	dir, _ := f.build(t)
	cands := f.Release.Candidates

	pages := []string{IndexPage, TasksPage, ScoringPage, EvaluationPage}
	for _, c := range cands {
		pages = append(pages, TaskDir+"/"+c.InstanceID+".html")
	}
	for _, p := range pages {
		v := b.open(t, fileURL(dir, p))
		verdict := eval[string](t, v, hostileCheck)
		screenshot(t, v, p)
		v.clean(t, p, dir)
		v.close()
		if verdict != "" {
			t.Errorf("%s: a payload acted: %s", p, verdict)
		}
	}

	t.Run("tasks page", func(t *testing.T) {
		want := func(keep func(schemas.Candidate) bool) int {
			n := 0
			for _, c := range cands {
				if keep(c) {
					n++
				}
			}
			return n
		}
		v := b.open(t, fileURL(dir, TasksPage))
		defer v.close()
		all := eval[int](t, v, `+document.getElementById("count").dataset.count`)
		shown := eval[int](t, v, `document.querySelectorAll("#rows tr").length`)
		reported := eval[int](t, v, selectAndCount("f-set", "reported", "change"))
		reportedTasks := eval[int](t, v, selectAndCount("f-outcome", "task", "change"))
		eval[int](t, v, selectAndCount("f-set", "", "change"))
		eval[int](t, v, selectAndCount("f-outcome", "", "change"))
		python := eval[int](t, v, selectAndCount("f-eco", "python", "change"))
		eval[int](t, v, selectAndCount("f-eco", "", "change"))
		search := eval[int](t, v, selectAndCount("q", "PYPROJ", "input"))
		none := eval[int](t, v, selectAndCount("q", "no such candidate", "input"))
		reset := eval[int](t, v, selectAndCount("q", "", "input"))
		v.clean(t, TasksPage, dir)
		for _, c := range []struct {
			name      string
			got, want int
		}{
			{"all", all, len(cands)},
			{"rows shown", shown, len(cands)},
			{"set reported", reported, want(func(c schemas.Candidate) bool { return c.Set == schemas.SourceReported })},
			{"reported tasks", reportedTasks, want(func(c schemas.Candidate) bool {
				return c.Set == schemas.SourceReported && c.Outcome == schemas.OutcomeTask
			})},
			{"ecosystem python", python, want(func(c schemas.Candidate) bool { return c.Ecosystem == schemas.EcosystemPython })},
			{"search PYPROJ", search, 1},
			{"search nothing", none, 0},
			{"reset", reset, len(cands)},
		} {
			if c.got != c.want {
				t.Errorf("%s: the page shows %d, want %d", c.name, c.got, c.want)
			}
		}
		if reportedTasks == 0 || reportedTasks == reported || python == 0 || python == len(cands) {
			t.Errorf("the fixture does not tell filters apart: reported %d, reported tasks %d, python %d", reported, reportedTasks, python)
		}
	})

	t.Run("task page", func(t *testing.T) {
		p := TaskDir + "/" + idRepaired + ".html"
		v := b.open(t, fileURL(dir, p))
		defer v.close()
		added := eval[int](t, v, `document.querySelectorAll(".patch .chroma .gi").length`)
		removed := eval[int](t, v, `document.querySelectorAll(".patch .chroma .gd").length`)
		results := eval[int](t, v, `document.querySelectorAll("table.results tbody tr").length`)
		statement := eval[string](t, v, `document.querySelector(".statement strong").textContent`)
		v.clean(t, p, dir)
		if added == 0 || removed == 0 {
			t.Errorf("the patch is not shown highlighted: %d added, %d removed lines", added, removed)
		}
		// gold and noop scored it on this corpus; stale's other corpus is not shown.
		if results != 2 {
			t.Errorf("%d result rows, want 2 (gold, noop)", results)
		}
		if statement != "cython 3.0.0" {
			t.Errorf("the problem statement's Markdown is not rendered: strong = %q", statement)
		}
	})

	t.Run("leaderboard", func(t *testing.T) {
		v := b.open(t, fileURL(dir, IndexPage))
		defer v.close()
		first := eval[string](t, v, `[...document.querySelectorAll("#board-reported tbody tr")].map(r => r.cells[0].textContent + " " + r.cells[1].textContent).join(", ")`)
		tie := eval[string](t, v, `document.querySelectorAll("#board-reported svg text").length + ""`)
		other := eval[string](t, v, `document.querySelector("#other-corpus").textContent`)
		v.clean(t, IndexPage, dir)
		if first != "1 gold, 2= fixer-model-x, 2= noop" {
			t.Errorf("reported board = %q", first)
		}
		if !strings.Contains(other, "stale-agent") || !strings.Contains(other, "not ranked") {
			t.Errorf("the other corpus section = %q", other)
		}
		if tie == "0" {
			t.Error("the chart has no text")
		}
	})
}

// errorsOf records what clean reports instead of failing the test.
type errorsOf struct {
	testing.TB
	got []string
}

func (e *errorsOf) Helper()                        {}
func (e *errorsOf) Errorf(format string, a ...any) { e.got = append(e.got, fmt.Sprintf(format, a...)) }

// The checks above can fail: a page with an inline script, a console error and an outside
// image is caught.
func TestBrowserChecksCatchABadPage(t *testing.T) {
	b := newBrowser(t)
	dir := t.TempDir()
	bad := `<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="` + CSP + `"></head>
<body><p>bad</p><script>console.error("inline ran")</script><img src="https://example.invalid/x.png"><script src="bad.js"></script></body></html>`
	os.WriteFile(filepath.Join(dir, "bad.html"), []byte(bad), 0o644)
	os.WriteFile(filepath.Join(dir, "bad.js"), []byte(`console.error("from the folder"); window.__pwned = 1;`), 0o644)
	v := b.open(t, fileURL(dir, "bad.html"))
	defer v.close()
	verdict := eval[string](t, v, hostileCheck)
	rec := &errorsOf{TB: t}
	v.clean(rec, "bad.html", dir)
	all := strings.Join(rec.got, "\n")
	for _, want := range []string{`console.error: "from the folder"`, "Content Security Policy", "outside the site folder"} {
		if !strings.Contains(all, want) {
			t.Errorf("clean did not report %q; it reported:\n%s", want, all)
		}
	}
	if verdict == "" {
		t.Error("hostileCheck found nothing on a page with an image and a set flag")
	}
}
