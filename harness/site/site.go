package site

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/envgap/envgap/lib/publish"
	"html/template"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/envgap/envgap/harness/report"
	"github.com/envgap/envgap/lib/scoring"
	"github.com/envgap/envgap/schemas"
	"golang.org/x/sync/errgroup"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets/site.css assets/site.js
var assetFS embed.FS

// CSP is every page's Content-Security-Policy: scripts, styles and images from the site's
// own folder only; nothing else (no inline script or style, no frame, no connection).
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'"

// Files of the site, relative to its folder.
const (
	IndexPage      = "index.html"
	TasksPage      = "tasks.html"
	ScoringPage    = "scoring.html"
	EvaluationPage = "evaluation.html"
	TasksData      = "assets/tasks-data.js"
	TaskDir        = "tasks"
	HarnessZip     = "harness/envgap-source.zip"
)

var pages = template.Must(template.New("site").Funcs(template.FuncMap{
	"pct": func(share float64) string { return fmt.Sprintf("%.1f%%", 100*share) },
	"num": func(n float64) string {
		if n == float64(int64(n)) {
			return fmt.Sprintf("%d", int64(n))
		}
		return fmt.Sprintf("%.2f", n)
	},
	"passk": func(p *report.PassAtK) string { return p.Text() },
	"setting": func(r report.ReportRow) string {
		if r.Mode == schemas.ModeRun {
			return fmt.Sprintf("run, k=%d, up to %d attempts", r.K, r.MaxAttempts)
		}
		return "eval, 1 attempt"
	},
}).ParseFS(templateFS, "templates/*.html"))

// page is what the layout reads; each page adds its own fields.
type page struct {
	Title, Nav, Root, CorpusID string
	CSP                        string
	Chroma                     bool
	Scripts                    []string
	Generated                  string
}

// Input is what a site is built from.
type Input struct {
	Release *Release
	Results []*Results
}

// Report says what Build wrote.
type Report struct {
	Out        string `json:"out"`
	CorpusID   string `json:"corpus_id"`
	Candidates int    `json:"candidates"`
	TaskPages  int    `json:"task_pages"`
	// RunPages counts the trajectory viewer's pages: a page per result folder and per
	// attempt (runs.go).
	RunPages int `json:"run_pages"`
	Boards   []struct {
		Set  string `json:"set"`
		Rows int    `json:"rows"`
	} `json:"boards"`
	OtherCorpus []string `json:"other_corpus"`
	Files       int      `json:"files"`
}

// files is the site being built: path -> bytes.
type files map[string][]byte

func (fs files) page(name, tmpl string, data any) error {
	var b bytes.Buffer
	if err := pages.ExecuteTemplate(&b, tmpl, data); err != nil {
		return fmt.Errorf("site: page %s: %w", name, err)
	}
	fs[name] = b.Bytes()
	return nil
}

// Build writes the site of in to out: out must not exist, be empty, or be a folder an
// earlier Build wrote (it has index.html and assets/tasks-data.js); its contents are
// replaced. The same input gives the same bytes.
func Build(in Input, out string) (*Report, error) {
	fs, lz, rep, err := render(in)
	if err != nil {
		return nil, err
	}
	if err := writeFolder(out, fs, lz); err != nil {
		return nil, err
	}
	rep.Out = out
	return rep, nil
}

// Render builds the site in memory: every file by its slash-separated path.
func Render(in Input) (map[string][]byte, *Report, error) {
	fs, lz, rep, err := render(in)
	if err != nil {
		return nil, nil, err
	}
	for name, mk := range lz {
		if fs[name], err = mk(); err != nil {
			return nil, nil, err
		}
	}
	return fs, rep, nil
}

// render builds the site: the files in memory, and the attempt pages (lazy) made when
// they are written.
func render(in Input) (files, lazy, *Report, error) {
	rel := in.Release
	if rel == nil {
		return nil, nil, nil, fmt.Errorf("site: no release")
	}
	fs, lz := files{}, lazy{}
	lb := BuildLeaderboard(rel, in.Results)
	slugs := runSlugs(in.Results)
	slugOf := map[string]string{}
	for r, slug := range slugs {
		slugOf[r.Name] = slug
	}
	for i := range lb.Boards {
		for j := range lb.Boards[i].Rows {
			lb.Boards[i].Rows[j].Run = runLink(slugOf[lb.Boards[i].Rows[j].Name])
		}
	}
	for j := range lb.Other {
		lb.Other[j].Run = runLink(slugOf[lb.Other[j].Name])
	}
	rep := &Report{CorpusID: rel.CorpusID, Candidates: len(rel.Candidates)}
	base := func(title, nav, root string) page {
		return page{Title: title, Nav: nav, Root: root, CorpusID: rel.CorpusID, CSP: CSP}
	}

	// Leaderboard.
	type boardView struct {
		Set   schemas.Source
		Rows  []BoardRow
		Tasks int
		Chart template.HTML
	}
	var boards []boardView
	for _, b := range lb.Boards {
		boards = append(boards, boardView{Set: b.Set, Rows: b.Rows, Tasks: b.Tasks, Chart: template.HTML(Chart(b))})
		rep.Boards = append(rep.Boards, struct {
			Set  string `json:"set"`
			Rows int    `json:"rows"`
		}{string(b.Set), len(b.Rows)})
	}
	for _, o := range lb.Other {
		rep.OtherCorpus = append(rep.OtherCorpus, o.Name)
	}
	if err := fs.page(IndexPage, "index.html", struct {
		page
		Boards []boardView
		Other  []BoardRow
	}{base("Leaderboard", "leaderboard", ""), boards, lb.Other}); err != nil {
		return nil, nil, nil, err
	}

	// Tasks and a page per candidate.
	tasks := map[string]*schemas.Task{}
	for i := range rel.Tasks {
		tasks[rel.Tasks[i].InstanceID] = &rel.Tasks[i]
	}
	cands := append([]schemas.Candidate(nil), rel.Candidates...)
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].InstanceID < cands[j].InstanceID })
	names := pageNames(cands)
	byTask := attemptsByTask(lb, in.Results)
	for id, trs := range byTask {
		for k := range trs {
			if slug, ok := slugOf[trs[k].Name]; ok && trs[k].Attempts > 0 {
				trs[k].Run = "../" + RunsDir + "/" + slug + "/" + attemptPage(id, 1, 1)
			}
		}
	}
	var data tasksData
	data.Columns = []string{"instance_id", "set", "outcome", "reason", "ecosystem", "repo", "made_by", "registry_date", "excluded", "page"}
	opts := [3]map[string]bool{{}, {}, {}}
	for i := range cands {
		c := &cands[i]
		t := tasks[c.InstanceID]
		excl := ""
		if t != nil && t.ExcludedFromScoring {
			excl = "excluded"
			if t.ExcludedSince != nil {
				excl += " since " + *t.ExcludedSince
			}
			if t.ExclusionReason != nil {
				excl += ": " + *t.ExclusionReason
			}
		}
		data.Rows = append(data.Rows, []string{c.InstanceID, string(c.Set), string(c.Outcome), c.Reason, string(c.Ecosystem),
			c.Repo, c.MadeBy, c.RegistryDate, excl, names[i]})
		opts[0][string(c.Set)], opts[1][string(c.Outcome)], opts[2][string(c.Ecosystem)] = true, true, true
		p, err := taskPageOf(c, t, byTask[c.InstanceID])
		if err != nil {
			return nil, nil, nil, fmt.Errorf("site: task page of %s: %w", c.InstanceID, err)
		}
		p.page = base(c.InstanceID, "tasks", "../")
		p.Chroma = true
		if err := fs.page(TaskDir+"/"+names[i], "task.html", p); err != nil {
			return nil, nil, nil, err
		}
	}
	rep.TaskPages = len(cands)
	taskPages := map[string]string{}
	for i := range cands {
		taskPages[cands[i].InstanceID] = names[i]
	}
	if err := addRunPages(fs, lz, in.Results, slugs, taskPages, base); err != nil {
		return nil, nil, nil, err
	}
	rep.RunPages = len(lz) + len(in.Results)
	js, err := data.script()
	if err != nil {
		return nil, nil, nil, err
	}
	fs[TasksData] = js
	tp := base("Tasks", "tasks", "")
	tp.Scripts = []string{TasksData, "assets/site.js"}
	if err := fs.page(TasksPage, "tasks.html", struct {
		page
		Count                                        int
		SetOptions, OutcomeOptions, EcosystemOptions []string
	}{tp, len(cands), sortedKeys(opts[0]), sortedKeys(opts[1]), sortedKeys(opts[2])}); err != nil {
		return nil, nil, nil, err
	}

	// How runs are scored.
	body, err := scoringHTML()
	if err != nil {
		return nil, nil, nil, err
	}
	if err := fs.page(ScoringPage, "scoring.html", struct {
		page
		Body      template.HTML
		Estimator string
	}{base("How runs are scored", "scoring", ""), body, report.PassEstimator}); err != nil {
		return nil, nil, nil, err
	}

	// Evaluation code.
	ev := struct {
		page
		Zip, ZipSHA, ZipCorpusID, HarnessTasks, HarnessDir string
		ZipSize                                            int
		Sets                                               []schemas.Source
	}{page: base("Evaluation code", "evaluation", ""), HarnessTasks: "release/tasks.jsonl", HarnessDir: "envgap-source", Sets: Sets}
	if h := rel.Harness; h != nil {
		if h.CorpusID != rel.CorpusID {
			return nil, nil, nil, fmt.Errorf("site: the harness zip holds corpus %s, the release's task rows are %s: not one release", h.CorpusID, rel.CorpusID)
		}
		sum := sha256.Sum256(h.Zip)
		ev.Zip, ev.ZipSHA, ev.ZipSize, ev.ZipCorpusID = HarnessZip, hex.EncodeToString(sum[:]), len(h.Zip), h.CorpusID
		if h.Dir != "" {
			ev.HarnessDir = h.Dir
		}
		if h.Tasks != "" {
			ev.HarnessTasks = h.Tasks
		}
		fs[HarnessZip] = h.Zip
	}
	if err := fs.page(EvaluationPage, "evaluation.html", ev); err != nil {
		return nil, nil, nil, err
	}

	// Assets.
	for _, a := range []string{"assets/site.css", "assets/site.js"} {
		b, err := assetFS.ReadFile(a)
		if err != nil {
			return nil, nil, nil, err
		}
		fs[a] = b
	}
	css, err := chromaCSS()
	if err != nil {
		return nil, nil, nil, err
	}
	fs["assets/chroma.css"] = []byte(css)
	rep.Files = len(fs) + len(lz)
	return fs, lz, rep, nil
}

// scoringHTML is the scoring page's body: the paragraphs of lib/scoring (the card's text)
// and how the leaderboard shows the best within attempts.
func scoringHTML() (template.HTML, error) {
	var md strings.Builder
	heads := map[string]string{
		"scoring-resolved":      "Resolved, manifest F1 and safe install",
		"scoring-controls":      "Controls",
		"scoring-first-attempt": "The first attempt and the later history",
		"scoring-excluded":      "Excluded tasks",
	}
	for _, name := range scoring.Paragraphs {
		p, err := scoring.Paragraph(name)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&md, "## %s\n\n%s\n\n", heads[name], p)
	}
	md.WriteString("## Best within attempts\n\nAn agent run with `envgap run` may make several attempts at a task, with the evaluation's feedback in between, and may be run k times. The leaderboard shows the share of tasks resolved within the attempts beside the ranked score and never ranks by it. Each figure is averaged over the k runs of a task.\n")
	h, err := Markdown(md.String())
	return template.HTML(h), err
}

// tasksData is assets/tasks-data.js: the Tasks page's rows.
type tasksData struct {
	Columns []string   `json:"columns"`
	Rows    [][]string `json:"rows"`
}

func (d tasksData) script() ([]byte, error) {
	b, err := json.Marshal(d) // escapes <, > and & as \u003c...: safe in a script
	if err != nil {
		return nil, err
	}
	return append(append([]byte("window.ENVGAP_TASKS = "), b...), ";\n"...), nil
}

var safeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,150}$`)

// pageNames gives each candidate its page's file name: its instance id when that is a
// plain file name, else a hash of it; a repeated name gets a suffix.
func pageNames(cands []schemas.Candidate) []string {
	out := make([]string, len(cands))
	used := map[string]bool{}
	for i, c := range cands {
		n := c.InstanceID
		if !safeName.MatchString(n) {
			s := sha256.Sum256([]byte(n))
			n = "id-" + hex.EncodeToString(s[:8])
		}
		name := n + ".html"
		for k := 2; used[strings.ToLower(name)]; k++ {
			name = fmt.Sprintf("%s-%d.html", n, k)
		}
		used[strings.ToLower(name)] = true
		out[i] = name
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		if k != "" {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// taskResult is one leaderboard folder's result on one task.
type taskResult struct {
	Name, Agent     string
	Run             string // the page of run 1's first attempt ("": none)
	First, Best     bool
	Attempts        int
	F1, Status, Why string
	Excluded        bool
}

type taskPage struct {
	page
	C               *schemas.Candidate
	Task            *schemas.Task
	License         string
	IssueURL, PRURL string
	Statement       template.HTML
	Patch           template.HTML
	Results         []taskResult
}

// attemptsByTask gathers, of every folder on this release's boards, each task's attempts.
func attemptsByTask(lb *Leaderboard, results []*Results) map[string][]taskResult {
	out := map[string][]taskResult{}
	for _, r := range results {
		if r.Folder.Summary.CorpusID != lb.CorpusID {
			continue
		}
		byID := map[string][]Attempt{}
		var order []string
		for _, a := range r.Attempts {
			if byID[a.InstanceID] == nil {
				order = append(order, a.InstanceID)
			}
			byID[a.InstanceID] = append(byID[a.InstanceID], a)
		}
		for _, id := range order {
			out[id] = append(out[id], resultOf(r, byID[id]))
		}
	}
	for id := range out {
		sort.SliceStable(out[id], func(i, j int) bool { return out[id][i].Name < out[id][j].Name })
	}
	return out
}

// resultOf sums up one task's attempts in a folder: the first attempt of run 1 decides
// resolved, status and F1; best is any resolved attempt of run 1.
func resultOf(r *Results, atts []Attempt) taskResult {
	tr := taskResult{Name: r.Name, Agent: r.Folder.Summary.Agent, F1: "-"}
	for _, a := range atts {
		if a.Run != 1 {
			continue
		}
		tr.Attempts++
		tr.Best = tr.Best || a.Resolved
		tr.Excluded = tr.Excluded || a.Excluded
		if a.Attempt != 1 {
			continue
		}
		tr.First, tr.Status = a.Resolved, a.Status
		if a.ManifestF1.Measured {
			tr.F1 = fmt.Sprintf("%.2f", a.ManifestF1.F1)
		}
		var why []string
		if a.Rejection != "" {
			why = append(why, "rejected: changed "+a.Rejection)
		}
		for _, l := range a.Leaks {
			why = append(why, "leaked: "+l.Rule)
		}
		if a.Reason != "" {
			why = append(why, a.Reason)
		}
		tr.Why = strings.Join(why, "; ")
	}
	return tr
}

// githubURL returns u when it is an https address on github.com, else "" (the page shows
// no link).
func githubURL(u *string) string {
	if u == nil {
		return ""
	}
	p, err := url.Parse(*u)
	if err != nil || p.Scheme != "https" || p.Host != "github.com" || p.User != nil {
		return ""
	}
	return p.String()
}

func taskPageOf(c *schemas.Candidate, t *schemas.Task, results []taskResult) (taskPage, error) {
	p := taskPage{C: c, Task: t, IssueURL: githubURL(c.IssueURL), PRURL: githubURL(c.PullRequest), Results: results}
	if c.RepoLicense != nil {
		p.License = *c.RepoLicense
	}
	if c.ProblemStatement != "" {
		h, err := Markdown(c.ProblemStatement)
		if err != nil {
			return p, err
		}
		p.Statement = template.HTML(h)
	}
	if c.Patch != "" {
		h, err := Diff(c.Patch)
		if err != nil {
			return p, err
		}
		p.Patch = template.HTML(h)
	}
	return p, nil
}

// writeFolder writes the files to out, replacing an earlier site there in one step
// (lib/publish: a kill at any moment leaves the old site or the new one).
func writeFolder(out string, fs files, lz lazy) error {
	if ents, err := os.ReadDir(out); err == nil && len(ents) > 0 {
		if !isSite(out) {
			return fmt.Errorf("site: %s is not empty and not a site envgap site wrote (no %s and %s): give a new folder", out, IndexPage, TasksData)
		}
	} else if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("site: %w", err)
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return fmt.Errorf("site: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return fmt.Errorf("site: %w", err)
	}
	folder := publish.Folder{Out: abs, Tag: "site"}
	unlock, err := folder.Lock()
	if err != nil {
		return fmt.Errorf("site: %w", err)
	}
	defer unlock()
	if err := folder.Recover(); err != nil {
		return fmt.Errorf("site: %w", err)
	}
	tmp, err := folder.Temp()
	if err != nil {
		return fmt.Errorf("site: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("site: %w", err)
	}
	names := make([]string, 0, len(fs)+len(lz))
	for n := range fs {
		names = append(names, n)
	}
	for n := range lz {
		names = append(names, n)
	}
	sort.Strings(names)
	dirs := map[string]bool{}
	for _, n := range names {
		d := filepath.Dir(filepath.Join(tmp, filepath.FromSlash(path.Clean(n))))
		if !dirs[d] {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return fmt.Errorf("site: %w", err)
			}
			dirs[d] = true
		}
	}
	// The writes wait on the disk more than on the CPU: a few at a time.
	var g errgroup.Group
	g.SetLimit(8)
	for _, n := range names {
		g.Go(func() error {
			b, ok := fs[n]
			if !ok {
				var err error
				if b, err = lz[n](); err != nil { // made now: one page in memory at a time per writer
					return err
				}
			}
			if err := os.WriteFile(filepath.Join(tmp, filepath.FromSlash(path.Clean(n))), b, 0o644); err != nil {
				return fmt.Errorf("site: %w", err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if err := folder.Publish(tmp); err != nil {
		return fmt.Errorf("site: %w", err)
	}
	return nil
}

func isSite(dir string) bool {
	for _, f := range []string{IndexPage, TasksData} {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f))); err != nil {
			return false
		}
	}
	return true
}
