package site

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/envgap/envgap/core/untrusted"
	"github.com/envgap/envgap/lib/atif"
	"github.com/envgap/envgap/schemas"
)

// The trajectory viewer: a page per result folder (RunsDir/<run>/index.html, its tasks
// and attempts) and a page per task and attempt (RunsDir/<run>/<task>.r<k>a<n>.html): the
// attempt's steps from its ATIF file (messages, tool calls, outputs), tokens, cost,
// refused connections, the evaluation's verdict and log, leak evidence marked. Every text
// of a trajectory is escaped by html/template and the pages carry the site's CSP (no
// inline script, nothing from outside): hostile text is shown, never run. A run page
// reads only its own attempt's files, when it is written (lazy pages), so a 1,000-task
// run never holds every trajectory in memory.
const RunsDir = "runs"

// Caps of what an attempt page shows.
const (
	// ViewTextBytes is the most of one text (message, arguments, output) a page shows:
	// the head and the tail, with a note of what was cut.
	ViewTextBytes = 16 << 10
	// ViewSteps is the most steps a page shows; the rest are counted.
	ViewSteps = 400
	// ViewLogBytes is the most of an attempt's evaluation log a page shows.
	ViewLogBytes = 64 << 10
	// maxLogBytes bounds the task log read from a result folder.
	maxLogBytes = 32 << 20
)

// lazy are pages made when they are written: path -> maker.
type lazy map[string]func() ([]byte, error)

// runSlugs names each result folder's run pages folder: its name made a file name, or a
// hash of it; a repeated one gets a suffix.
func runSlugs(results []*Results) map[*Results]string {
	out := map[*Results]string{}
	used := map[string]bool{}
	for _, r := range results {
		n := strings.Trim(strings.NewReplacer("/", "_", "\\", "_", " ", "_").Replace(r.Name), "._")
		if !safeName.MatchString(n) {
			s := sha256.Sum256([]byte(r.Name))
			n = "run-" + hex.EncodeToString(s[:8])
		}
		name := n
		for k := 2; used[strings.ToLower(name)]; k++ {
			name = fmt.Sprintf("%s-%d", n, k)
		}
		used[strings.ToLower(name)] = true
		out[r] = name
	}
	return out
}

// RunLink is the path of a result folder's run page, relative to the site's root.
func runLink(slug string) string { return RunsDir + "/" + slug + "/index.html" }

// attemptPage is the file name of an attempt's page in its run's folder.
func attemptPage(id string, run, attempt int) string {
	n := id
	if !safeName.MatchString(n) || len(n) > 120 {
		s := sha256.Sum256([]byte(id))
		n = "id-" + hex.EncodeToString(s[:8])
	}
	return fmt.Sprintf("%s.r%da%d.html", n, run, attempt)
}

type runTask struct {
	ID, TaskPage string
	Excluded     bool
	Attempts     []runAttemptLink
}

type runAttemptLink struct {
	Page, Label, Status string
	Resolved            bool
	Leaked              bool
}

type runPage struct {
	page
	R        *Results
	Setting  string
	Tasks    []runTask
	Attempts int
	NoDir    bool
}

// addRunPages adds every result folder's run page (in memory) and its attempt pages
// (lazy). taskPages maps an instance id to its task page's file name.
func addRunPages(fs files, lz lazy, results []*Results, slugs map[*Results]string, taskPages map[string]string, base func(title, nav, root string) page) error {
	for _, r := range results {
		slug := slugs[r]
		dir := RunsDir + "/" + slug + "/"
		byTask := map[string][]int{}
		var order []string
		for i, a := range r.Attempts {
			if _, ok := byTask[a.InstanceID]; !ok {
				order = append(order, a.InstanceID)
			}
			byTask[a.InstanceID] = append(byTask[a.InstanceID], i)
		}
		sort.Strings(order)
		sum := r.Folder.Summary
		rp := runPage{page: base(r.Name, "leaderboard", "../../"), R: r, Attempts: len(r.Attempts), NoDir: r.Dir == ""}
		rp.Setting = "eval, 1 attempt"
		if sum.Mode == schemas.ModeRun {
			rp.Setting = fmt.Sprintf("run, k=%d, up to %d attempts", sum.K, sum.MaxAttempts)
		}
		for _, id := range order {
			idx := byTask[id]
			sort.SliceStable(idx, func(i, j int) bool {
				a, b := r.Attempts[idx[i]], r.Attempts[idx[j]]
				if a.Run != b.Run {
					return a.Run < b.Run
				}
				return a.Attempt < b.Attempt
			})
			rt := runTask{ID: id, TaskPage: taskPages[id]}
			pagesOf := make([]string, len(idx))
			for j, i := range idx {
				a := r.Attempts[i]
				pagesOf[j] = attemptPage(id, a.Run, a.Attempt)
				rt.Excluded = rt.Excluded || a.Excluded
				rt.Attempts = append(rt.Attempts, runAttemptLink{Page: pagesOf[j], Label: fmt.Sprintf("run %d attempt %d", a.Run, a.Attempt),
					Status: a.Status, Resolved: a.Resolved, Leaked: len(a.Leaks) > 0})
			}
			for j, i := range idx {
				a := &r.Attempts[i]
				prev, next := "", ""
				if j > 0 {
					prev = pagesOf[j-1]
				}
				if j+1 < len(idx) {
					next = pagesOf[j+1]
				}
				p := base(fmt.Sprintf("%s run %d attempt %d · %s", id, a.Run, a.Attempt, sum.Agent), "leaderboard", "../../")
				av := attemptView{page: p, R: r, A: a, TaskPage: rt.TaskPage, Prev: prev, Next: next, MaxAttempts: sum.MaxAttempts}
				lz[dir+pagesOf[j]] = func() ([]byte, error) { return renderAttempt(av) }
			}
			rp.Tasks = append(rp.Tasks, rt)
		}
		if err := fs.page(dir+"index.html", "run.html", rp); err != nil {
			return err
		}
	}
	return nil
}

type attemptView struct {
	page
	R                  *Results
	A                  *Attempt
	TaskPage           string
	Prev, Next         string
	MaxAttempts        int
	File               string // the ATIF file, relative to the result folder
	DocErr             string
	Doc                *atif.Trajectory
	Verdict            *atif.Verdict
	Steps              []stepView
	MoreSteps          int
	Leaks              []leakView
	Refused            []atif.Refused
	RefusedCount       int
	Tokens, Cost, Took string
	Log                template.HTML
	LogNote            string
}

type stepView struct {
	ID                 int
	Source, Model      string
	Message, Reasoning template.HTML
	Calls              []callView
	Results            []resultView
	Metrics            string
	Leak, Raw          bool
	Refused            string
}

type callView struct {
	ID, Name string
	Args     template.HTML
}

type resultView struct {
	CallID  string
	Content template.HTML
}

type leakView struct {
	Rule, Evidence string
	Step           int // the ATIF step id (0: not found)
}

// renderAttempt reads the attempt's ATIF file and log from the result folder (as
// untrusted files: bounded, no link followed) and renders its page.
func renderAttempt(v attemptView) ([]byte, error) {
	a := v.A
	v.File = atif.AttemptPath("", a.InstanceID, a.Run, a.Attempt)
	if v.R.Dir == "" {
		v.DocErr = "this site was built without the result folder on disk: no trajectory to show"
	} else if b, err := untrusted.ReadFile(v.R.Dir, v.File, atif.MaxBytes); errors.Is(err, fs.ErrNotExist) {
		v.DocErr = "the result folder holds no ATIF trajectory for this attempt (a folder written before envgap wrote ATIF: envgap trajectories converts it)"
	} else if err != nil {
		v.DocErr = "the trajectory file could not be read: " + err.Error()
	} else if doc, err := atif.Parse(b); err != nil {
		v.DocErr = "the trajectory file is not valid ATIF: " + err.Error()
	} else {
		v.Doc, v.Verdict = doc, atif.VerdictOf(doc)
	}
	needles := leakNeedles(a.Leaks)
	leakSteps := map[int]bool{}
	for _, l := range a.Leaks {
		lv := leakView{Rule: l.Rule, Evidence: l.Evidence}
		if v.Doc != nil {
			k := atif.StepOfEntry(v.Doc, l.Step)
			if v.Verdict != nil && v.Verdict.Form == atif.FormAgent {
				k = l.Step // the rules read the agent's ATIF steps themselves
			}
			if k >= 0 && k < len(v.Doc.Steps) {
				lv.Step = v.Doc.Steps[k].StepID
				leakSteps[k] = true
			}
		}
		v.Leaks = append(v.Leaks, lv)
	}
	if v.Doc != nil {
		for k, s := range v.Doc.Steps {
			if k >= ViewSteps {
				v.MoreSteps = len(v.Doc.Steps) - k
				break
			}
			v.Steps = append(v.Steps, viewStep(s, needles, leakSteps[k]))
		}
		if p, c, cost, ok := v.Doc.Totals(); ok {
			v.Tokens = fmt.Sprintf("%d in / %d out", p, c)
			if cost != nil {
				v.Cost = fmt.Sprintf("$%.4f", *cost)
			}
		}
		if v.Verdict != nil {
			v.Refused = v.Verdict.Refused
			for _, r := range v.Refused {
				v.RefusedCount += r.Count
			}
		}
	}
	if ag := a.Agent; ag != nil {
		v.RefusedCount = max(v.RefusedCount, ag.RefusedConnections)
		v.Took = (time.Duration(ag.DurationMS) * time.Millisecond).String()
		if v.Tokens == "" && (ag.InputTokens > 0 || ag.OutputTokens > 0) {
			v.Tokens = fmt.Sprintf("%d in / %d out", ag.InputTokens, ag.OutputTokens)
		}
	}
	if v.Cost == "" && a.CostUSD != nil {
		v.Cost = fmt.Sprintf("$%.4f", *a.CostUSD)
	}
	v.Log, v.LogNote = attemptLog(v.R.Dir, a, needles)
	var b bytes.Buffer
	if err := pages.ExecuteTemplate(&b, "attempt.html", v); err != nil {
		return nil, fmt.Errorf("site: attempt page of %s: %w", a.InstanceID, err)
	}
	return b.Bytes(), nil
}

func viewStep(s atif.Step, needles []string, leak bool) stepView {
	sv := stepView{ID: s.StepID, Source: s.Source, Model: s.ModelName, Leak: leak, Raw: s.Extra[atif.RawKey] == true}
	sv.Message = mark(s.Message.Text, needles)
	sv.Reasoning = mark(s.ReasoningContent, needles)
	for _, c := range s.ToolCalls {
		args, _ := json.MarshalIndent(c.Arguments, "", "  ")
		if len(c.Arguments) == 1 {
			for _, x := range c.Arguments {
				if str, ok := x.(string); ok {
					args = []byte(str) // one string argument (a command): shown as it is
				}
			}
		}
		sv.Calls = append(sv.Calls, callView{ID: c.ToolCallID, Name: c.FunctionName, Args: mark(string(args), needles)})
	}
	if s.Observation != nil {
		for _, r := range s.Observation.Results {
			text := ""
			if r.Content != nil {
				text = r.Content.Text
			}
			sv.Results = append(sv.Results, resultView{CallID: r.SourceCallID, Content: mark(text, needles)})
		}
	}
	if m := s.Metrics; m != nil {
		var parts []string
		if m.PromptTokens != nil {
			parts = append(parts, fmt.Sprintf("%d prompt tokens", *m.PromptTokens))
		}
		if m.CompletionTokens != nil {
			parts = append(parts, fmt.Sprintf("%d completion tokens", *m.CompletionTokens))
		}
		if m.CostUSD != nil {
			parts = append(parts, fmt.Sprintf("$%.4f", *m.CostUSD))
		}
		sv.Metrics = strings.Join(parts, ", ")
	}
	if rc, ok := s.Extra["refused_connection"].(map[string]any); ok {
		sv.Refused = fmt.Sprintf("%v:%v refused %v time(s)", rc["host"], rc["port"], rc["count"])
	}
	return sv
}

// leakNeedles are the texts a page marks: each leak's evidence (without the "..." of a
// cut one) and, for a rule that names what it found ("git log of every ref: git log
// --all"), the part after the last ": ".
func leakNeedles(leaks []schemas.Leak) []string {
	var out []string
	for _, l := range leaks {
		e := strings.TrimSuffix(l.Evidence, "...")
		cands := []string{e}
		if i := strings.LastIndex(e, ": "); i >= 0 {
			cands = append(cands, e[i+2:])
		}
		for _, c := range cands {
			if c = strings.TrimSpace(c); len(c) >= 4 {
				out = append(out, c)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// mark returns text for a page: at most ViewTextBytes (head and tail around a note),
// escaped, with every occurrence of a needle in a <mark class="leak">.
func mark(text string, needles []string) template.HTML {
	if text == "" {
		return ""
	}
	text = capView(text, ViewTextBytes)
	var b strings.Builder
	for len(text) > 0 {
		at, n := -1, ""
		for _, nd := range needles {
			if i := strings.Index(text, nd); i >= 0 && (at < 0 || i < at) {
				at, n = i, nd
			}
		}
		if at < 0 {
			b.WriteString(template.HTMLEscapeString(text))
			break
		}
		b.WriteString(template.HTMLEscapeString(text[:at]))
		b.WriteString(`<mark class="leak">`)
		b.WriteString(template.HTMLEscapeString(n))
		b.WriteString(`</mark>`)
		text = text[at+len(n):]
	}
	return template.HTML(b.String())
}

// bidi are the Unicode controls that reorder text on screen: a trajectory's text shows
// them as markers, so that what a page shows is what the text holds.
var bidi = strings.NewReplacer("\u202a", "[U+202A]", "\u202b", "[U+202B]", "\u202c", "[U+202C]", "\u202d", "[U+202D]",
	"\u202e", "[U+202E]", "\u2066", "[U+2066]", "\u2067", "[U+2067]", "\u2068", "[U+2068]", "\u2069", "[U+2069]")

func capView(s string, n int) string {
	s = bidi.Replace(strings.ToValidUTF8(s, "\uFFFD"))
	if len(s) <= n {
		return s
	}
	head := strings.ToValidUTF8(s[:n/2], "")
	tail := strings.ToValidUTF8(s[len(s)-n/2:], "")
	return fmt.Sprintf("%s\n[site: %d bytes not shown here; the whole text is in the ATIF file]\n%s", head, len(s)-len(head)-len(tail), tail)
}

var logHeader = regexp.MustCompile(`(?m)^=== (\S+)  run (\d+) attempt (\d+)  \(`)

// attemptLog is the attempt's part of its task's evaluation log (logs/<id>.log: a
// section per attempt, each from its "=== id  run k attempt n" line), capped and marked.
func attemptLog(dir string, a *Attempt, needles []string) (template.HTML, string) {
	if dir == "" {
		return "", "no result folder on disk"
	}
	b, err := untrusted.ReadFile(dir, schemas.EvalLogsDir+"/"+a.InstanceID+".log", maxLogBytes)
	if err != nil {
		return "", "the result folder holds no evaluation log for this task"
	}
	log := string(b)
	want := fmt.Sprintf("=== %s  run %d attempt %d  (", a.InstanceID, a.Run, a.Attempt)
	i := strings.Index(log, want)
	if i < 0 {
		return "", "the task's evaluation log has no section for this attempt"
	}
	sec := log[i:]
	if locs := logHeader.FindAllStringIndex(sec, 2); len(locs) > 1 {
		sec = sec[:locs[1][0]]
	}
	note := ""
	if len(sec) > ViewLogBytes {
		note = fmt.Sprintf("%d bytes; the middle is cut here (the whole log is logs/%s.log in the result folder)", len(sec), a.InstanceID)
	}
	return mark(capView(sec, ViewLogBytes), needles), note
}
