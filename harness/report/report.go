package report

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"io"
	"sort"
	"strings"

	"github.com/envgap/envgap/lib/chart"
	"github.com/envgap/envgap/schemas"
)

// ResultFolder is one result folder of envgap eval or envgap run, as read back: its
// summary and, of each result line, the fields the report reads.
type ResultFolder struct {
	Dir     string
	Summary schemas.EvalSummary
	Results []ResultFigures
	// selected are the instance ids Select kept (nil when it kept the whole folder).
	selected []string
}

// ResultFigures are the fields of a schemas.EvalResult the report reads.
type ResultFigures struct {
	InstanceID string `json:"instance_id"`
	IsControl  bool   `json:"is_control"`
	Excluded   bool   `json:"excluded"`
	Run        int    `json:"run"`
	Attempt    int    `json:"attempt"`
	Status     string `json:"status"`
	Resolved   bool   `json:"resolved"`
	Trajectory string `json:"trajectory"`
	ManifestF1 struct {
		Measured bool    `json:"measured"`
		F1       float64 `json:"f1"`
	} `json:"manifest_f1"`
	Safe struct {
		Measured bool    `json:"measured"`
		Share    float64 `json:"share"`
	} `json:"safe_install"`
	CostUSD *float64 `json:"cost_usd"`
	// Agent is what run recorded of the agent (envgap's own agents: model and tokens).
	Agent *struct {
		Model        string `json:"model"`
		InputTokens  int64  `json:"input_tokens"`
		OutputTokens int64  `json:"output_tokens"`
	} `json:"agent"`
}

// ReadResultFolder reads summary.json and results.jsonl of a result folder.
func ReadResultFolder(dir string) (*ResultFolder, error) {
	sum, rs, err := schemas.ReadEvalFolder[ResultFigures](dir)
	if err != nil {
		return nil, err
	}
	return &ResultFolder{Dir: dir, Summary: sum, Results: rs}, nil
}

// Rate is a count of a total, with the share (0 when the total is 0).
type Rate struct {
	N     float64 `json:"n"`
	Of    int     `json:"of"`
	Share float64 `json:"share"`
}

func rate(n float64, of int) Rate {
	r := Rate{N: n, Of: of}
	if of > 0 {
		r.Share = n / float64(of)
	}
	return r
}

// Mean is the mean of a score over the tasks where it was measured.
type Mean struct {
	Mean     float64 `json:"mean"`
	Measured int     `json:"measured"`
}

// ReportRow is one result folder's figures: one agent on one split. Every figure leaves
// excluded tasks out; tasks an infrastructure fault left without a result are counted
// apart (Faults) and are not in any figure either.
type ReportRow struct {
	Folder      string           `json:"folder"`
	Agent       string           `json:"agent"`
	Split       string           `json:"split"`
	Mode        schemas.EvalMode `json:"mode"`
	K           int              `json:"k"`
	MaxAttempts int              `json:"max_attempts"`
	CorpusID    string           `json:"corpus_id"`
	Tasks       int              `json:"tasks"`
	Excluded    int              `json:"excluded"`
	Scored      int              `json:"scored"`
	Faults      int              `json:"faults"`
	// Resolved is the first attempt (the ranked score), Best the best within the
	// attempts; each is averaged over the k runs of a task.
	Resolved         Rate    `json:"resolved"`
	Best             Rate    `json:"best_within_attempts"`
	RepairsResolved  Rate    `json:"repairs_resolved"`
	ControlsResolved Rate    `json:"controls_resolved"`
	ManifestF1       Mean    `json:"manifest_f1"`
	SafeInstall      Mean    `json:"safe_install"`
	Rejected         int     `json:"rejected"`
	Leaked           int     `json:"leaked"`
	NotInspected     int     `json:"not_inspected"`
	CostUSD          float64 `json:"cost_usd"`
	// CostReported counts the attempts that reported a cost.
	CostReported int `json:"cost_reported"`
	// Model and the tokens of every attempt (envgap's own agents; empty and 0 otherwise).
	Model        string `json:"model,omitempty"`
	InputTokens  int64  `json:"input_tokens"`
	OutputTokens int64  `json:"output_tokens"`
	// Date is the UTC day the folder was scored (summary.json's scored_on), when recorded.
	Date string `json:"date,omitempty"`
	// Subset is set when the folder scored part of its split (--ids, --limit): not a
	// leaderboard entry; CorpusID and Tasks are the subset's own.
	Subset *schemas.EvalSubset `json:"subset,omitempty"`
	// PassAtK is set when the folder has more than one run per task (run --k above 1):
	// pass@1, pass@k and pass^k on the first attempts, with 95% intervals.
	PassAtK *PassAtK `json:"pass_at_k,omitempty"`
}

// Leaderboard is the report over one or more result folders.
type Leaderboard struct {
	SchemaVersion int         `json:"schema_version"`
	Rows          []ReportRow `json:"rows"`
}

// BuildReport computes one row a result folder, in the order given.
func BuildReport(folders []*ResultFolder) *Leaderboard {
	lb := &Leaderboard{SchemaVersion: schemas.EvalSchemaVersion, Rows: []ReportRow{}}
	for _, f := range folders {
		lb.Rows = append(lb.Rows, reportRow(f))
	}
	return lb
}

// taskRuns are one task's attempts, by run.
type taskRuns struct {
	first   *ResultFigures
	control bool
	runs    map[int][]*ResultFigures
}

func reportRow(f *ResultFolder) ReportRow {
	s := f.Summary
	row := ReportRow{Folder: f.Dir, Agent: s.Agent, Split: s.Split, Mode: s.Mode, K: s.K, MaxAttempts: s.MaxAttempts,
		CorpusID: s.CorpusID, Tasks: s.Tasks, Excluded: len(s.ExcludedIDs), Faults: len(s.Faults), Date: s.ScoredOn, Subset: s.Subset}
	byTask := map[string]*taskRuns{}
	var order []string
	var f1Sum, safeSum float64
	for i := range f.Results {
		r := &f.Results[i]
		if r.CostUSD != nil {
			row.CostUSD += *r.CostUSD
			row.CostReported++
		}
		if r.Agent != nil {
			row.InputTokens += r.Agent.InputTokens
			row.OutputTokens += r.Agent.OutputTokens
			if r.Agent.Model != "" {
				row.Model = r.Agent.Model
			}
		}
		if r.Excluded {
			continue
		}
		tr := byTask[r.InstanceID]
		if tr == nil {
			tr = &taskRuns{control: r.IsControl, runs: map[int][]*ResultFigures{}}
			byTask[r.InstanceID] = tr
			order = append(order, r.InstanceID)
		}
		tr.runs[r.Run] = append(tr.runs[r.Run], r)
		if r.Run == 1 && r.Attempt == 1 {
			tr.first = r
		}
	}
	var resolved, best, repairs, controls float64
	nRepairs, nControls := 0, 0
	var passRuns [][2]int
	for _, id := range order {
		tr := byTask[id]
		passRuns = append(passRuns, firstAttempts(tr))
		var first, within float64
		for _, attempts := range tr.runs {
			anyOK := false
			for _, a := range attempts {
				if a.Attempt == 1 && a.Resolved {
					first++
				}
				anyOK = anyOK || a.Resolved
			}
			if anyOK {
				within++
			}
		}
		n := float64(len(tr.runs))
		first, within = first/n, within/n
		row.Scored++
		resolved += first
		best += within
		if tr.control {
			nControls++
			controls += first
		} else {
			nRepairs++
			repairs += first
		}
		if r := tr.first; r != nil {
			switch r.Status {
			case schemas.EvalRejected:
				row.Rejected++
			case schemas.EvalLeaked:
				row.Leaked++
			}
			if strings.HasPrefix(r.Trajectory, "not inspected") {
				row.NotInspected++
			}
		}
		// Manifest F1 and safe install, as the ranked score: each run's first attempt,
		// averaged over the task's runs where measured, then over the tasks.
		var f1, safe []float64
		for _, attempts := range tr.runs {
			for _, a := range attempts {
				if a.Attempt != 1 {
					continue
				}
				if a.ManifestF1.Measured {
					f1 = append(f1, a.ManifestF1.F1)
				}
				if a.Safe.Measured {
					safe = append(safe, a.Safe.Share)
				}
			}
		}
		if len(f1) > 0 {
			f1Sum += sum(f1) / float64(len(f1))
			row.ManifestF1.Measured++
		}
		if len(safe) > 0 {
			safeSum += sum(safe) / float64(len(safe))
			row.SafeInstall.Measured++
		}
	}
	row.PassAtK = passAtK(s.K, passRuns)
	row.Resolved, row.Best = rate(resolved, row.Scored), rate(best, row.Scored)
	row.RepairsResolved, row.ControlsResolved = rate(repairs, nRepairs), rate(controls, nControls)
	if row.ManifestF1.Measured > 0 {
		row.ManifestF1.Mean = f1Sum / float64(row.ManifestF1.Measured)
	}
	if row.SafeInstall.Measured > 0 {
		row.SafeInstall.Mean = safeSum / float64(row.SafeInstall.Measured)
	}
	return row
}

// firstAttempts counts a task's runs and those resolved at their first attempt.
func firstAttempts(tr *taskRuns) [2]int {
	n, c := 0, 0
	for _, attempts := range tr.runs {
		n++
		for _, a := range attempts {
			if a.Attempt == 1 && a.Resolved {
				c++
			}
		}
	}
	return [2]int{n, c}
}

func (r Rate) text() string {
	if r.Of == 0 {
		return "-"
	}
	n := fmt.Sprintf("%g", r.N)
	if r.N != float64(int(r.N)) {
		n = fmt.Sprintf("%.2f", r.N)
	}
	return fmt.Sprintf("%.1f%% (%s/%d)", 100*r.Share, n, r.Of)
}

func (m Mean) text() string {
	if m.Measured == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f (%d)", m.Mean, m.Measured)
}

// Markdown writes the leaderboard for people: one row a result folder, repairs and
// controls apart, and the notes that say what the figures leave out.
func (lb *Leaderboard) Markdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# EnvGap results\n\n")
	b.WriteString("| agent | split | setting | scored | resolved (first attempt) | best within attempts | repairs resolved | controls resolved | manifest F1 | safe install | rejected | leaked | not inspected | cost |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range lb.Rows {
		setting := "eval, 1 attempt"
		if r.Mode == schemas.ModeRun {
			setting = fmt.Sprintf("run, k=%d, up to %d attempts", r.K, r.MaxAttempts)
		}
		bestText := r.Best.text()
		if r.MaxAttempts <= 1 {
			bestText = "-"
		}
		cost := "-"
		if r.CostReported > 0 {
			cost = fmt.Sprintf("$%.2f", r.CostUSD)
		}
		split := mdCell(r.Split)
		if r.Subset != nil {
			split += " (subset)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d of %d | %s | %s | %s | %s | %s | %s | %d | %d | %d | %s |\n",
			mdCell(r.Agent), split, setting, r.Scored, r.Tasks, r.Resolved.text(), bestText,
			r.RepairsResolved.text(), r.ControlsResolved.text(), r.ManifestF1.text(), r.SafeInstall.text(),
			r.Rejected, r.Leaked, r.NotInspected, cost)
	}
	b.WriteString("\n")
	for _, r := range lb.Rows {
		if r.PassAtK != nil {
			b.WriteString("With k runs per task: " + PassEstimator + ". The percentile bootstrap over tasks is used because pass@1 and pass@k of a task are shares of its runs, not single successes (a Wilson interval assumes one Bernoulli trial per task), and tasks are the unit sampled.\n\n")
			break
		}
	}
	b.WriteString("The ranked score is the first attempt. Controls are tasks that already work, where the right move is to change nothing: an agent that changes nothing gets every control right, so read the repairs column for repairs. Manifest F1 and safe install are means over the tasks where they were measured (their count in brackets), each task's first attempts averaged over its runs.\n\n")
	for _, r := range lb.Rows {
		var notes []string
		if r.Subset != nil {
			own := "its own corpus id " + r.CorpusID
			if r.CorpusID == "" {
				own = "give --tasks for its own corpus id"
			}
			notes = append(notes, "SUBSET, not a leaderboard entry ("+r.Subset.Label(r.Tasks)+"; "+own+")")
		}
		if r.Excluded > 0 {
			notes = append(notes, fmt.Sprintf("%d excluded task(s) evaluated and dropped from every figure", r.Excluded))
		}
		if r.Model != "" || r.InputTokens+r.OutputTokens > 0 {
			notes = append(notes, fmt.Sprintf("model %s, %d input and %d output tokens over every attempt", mdCell(r.Model), r.InputTokens, r.OutputTokens))
		}
		if r.PassAtK != nil {
			notes = append(notes, r.PassAtK.Text())
		}
		if r.Faults > 0 {
			notes = append(notes, fmt.Sprintf("INCOMPLETE: %d task(s) have no result because of infrastructure faults (run the same command again)", r.Faults))
		}
		if r.NotInspected > 0 {
			notes = append(notes, fmt.Sprintf("%d trajectory(ies) in a shape the later-history rules do not know (not inspected)", r.NotInspected))
		}
		if r.ControlsResolved.Of > 0 && r.RepairsResolved.Of > 0 && r.ControlsResolved.Share > r.RepairsResolved.Share {
			notes = append(notes, "more controls than repairs resolved: the overall rate is mostly controls")
		}
		if len(notes) > 0 {
			where := r.Folder
			if r.CorpusID != "" {
				where += ", corpus " + r.CorpusID
			}
			fmt.Fprintf(&b, "- %s on %s (%s): %s.\n", mdCell(r.Agent), r.Split, where, strings.Join(notes, "; "))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdCell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

// Colours of the report chart's bars (Okabe-Ito, as the funnel's).
var (
	repairColor  = color.RGBA{0x00, 0x72, 0xB2, 0xFF}
	overallColor = color.RGBA{0xE6, 0x9F, 0x00, 0xFF}
)

// ReportChart draws the resolved rate (first attempt) of every row as a PNG: for each
// agent and split, the rate over all scored tasks and the rate over repairs alone. The
// same rows give the same bytes.
func (lb *Leaderboard) ReportChart() ([]byte, error) {
	tw, err := chart.NewText()
	if err != nil {
		return nil, err
	}
	const barH, gap = 16, 4
	rowH := 2*barH + gap + 14
	h := chart.Top + rowH*len(lb.Rows) + chart.Bottom
	img := image.NewRGBA(image.Rect(0, 0, chart.Width, h))
	draw.Draw(img, img.Bounds(), &image.Uniform{chart.Paper}, image.Point{}, draw.Src)
	tw.Draw(img, 20, 20, 16, "resolved rate, first attempt (percent of scored tasks)")
	chart.FillRect(img, 20, 56, 40, 72, overallColor)
	tw.Draw(img, 48, 56, 16, "all scored")
	chart.FillRect(img, 210, 56, 230, 72, repairColor)
	tw.Draw(img, 238, 56, 16, "repairs only")
	chart.FillRect(img, chart.Left-1, chart.Top-6, chart.Left, chart.Top+rowH*len(lb.Rows), chart.Grid)
	for i, r := range lb.Rows {
		y := chart.Top + i*rowH
		label := tw.Fit(r.Agent+" / "+r.Split, chart.Left-24)
		tw.Draw(img, chart.Left-12-tw.Width(label), y+barH-8, 16, label)
		for j, b := range []struct {
			r Rate
			c color.RGBA
		}{{r.Resolved, overallColor}, {r.RepairsResolved, repairColor}} {
			by := y + j*(barH+gap)
			x1 := chart.Left + int(b.r.Share*float64(chart.Right-chart.Left))
			if b.r.N > 0 && x1 <= chart.Left {
				x1 = chart.Left + 1
			}
			chart.FillRect(img, chart.Left, by, x1, by+barH, b.c)
			text := "-"
			if b.r.Of > 0 {
				text = fmt.Sprintf("%.0f", 100*b.r.Share)
			}
			tw.Draw(img, x1+8, by, barH, text)
		}
	}
	return chart.EncodePNG(img)
}

func sum(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t
}

// Select cuts the folder to a subset of its tasks (envgap report --ids, --limit): the
// tasks named by ids (each must be one of the folder's), then the first limit of them by
// instance id. The folder is marked as a subset of its whole (Summary.Subset); its corpus
// id is left empty, since a result folder does not hold the task rows it would be
// computed from. With neither, nothing changes.
func (f *ResultFolder) Select(ids []string, limit int) error {
	if len(ids) == 0 && limit <= 0 {
		return nil
	}
	s := &f.Summary
	have := map[string]bool{}
	for _, r := range f.Results {
		have[r.InstanceID] = true
	}
	for _, id := range s.ExcludedIDs {
		have[id] = true
	}
	for _, x := range s.Faults {
		have[x.InstanceID] = true
	}
	var all []string
	for id := range have {
		all = append(all, id)
	}
	sort.Strings(all)
	keep := all
	if len(ids) > 0 {
		want := map[string]bool{}
		var unknown []string
		for _, id := range ids {
			if !have[id] {
				unknown = append(unknown, id)
			}
			want[id] = true
		}
		if len(unknown) > 0 {
			return fmt.Errorf("result folder %s: --ids: %s: no result of the folder has it", f.Dir, strings.Join(unknown, ", "))
		}
		keep = nil
		for _, id := range all {
			if want[id] {
				keep = append(keep, id)
			}
		}
	}
	if limit > 0 && limit < len(keep) {
		keep = keep[:limit]
	}
	if len(keep) == 0 {
		return fmt.Errorf("result folder %s: the selection holds no task", f.Dir)
	}
	in := map[string]bool{}
	for _, id := range keep {
		in[id] = true
	}
	var rs []ResultFigures
	for _, r := range f.Results {
		if in[r.InstanceID] {
			rs = append(rs, r)
		}
	}
	f.Results = rs
	s.ExcludedIDs = filterIDs(s.ExcludedIDs, in)
	var faults []schemas.EvalFault
	for _, x := range s.Faults {
		if in[x.InstanceID] {
			faults = append(faults, x)
		}
	}
	s.Faults = faults
	sub := &schemas.EvalSubset{IDs: ids, Limit: limit, OfTasks: s.Tasks, OfCorpusID: s.CorpusID}
	if s.Subset != nil {
		sub.OfTasks, sub.OfCorpusID = s.Subset.OfTasks, s.Subset.OfCorpusID
	}
	s.Subset, s.Tasks, s.CorpusID = sub, len(keep), ""
	f.selected = keep
	return nil
}

// SubsetCorpus gives a subset made by Select its own corpus id, the one envgap eval gives
// the same selection: the corpus id of its task rows, taken from the release's tasks (all,
// its full config). The release must be the one the folder scored (its corpus id is the
// subset's OfCorpusID), and must hold every task of the subset. Without a subset it does
// nothing.
func (f *ResultFolder) SubsetCorpus(all []schemas.Task) error {
	s := &f.Summary
	if s.Subset == nil || f.selected == nil {
		return nil
	}
	whole, err := schemas.CorpusID(all)
	if err != nil {
		return fmt.Errorf("result folder %s: --tasks: %w", f.Dir, err)
	}
	if s.Subset.OfCorpusID != "" && whole != s.Subset.OfCorpusID {
		return fmt.Errorf("result folder %s: --tasks is corpus %s, but the folder scored corpus %s: give the release it was scored against", f.Dir, whole, s.Subset.OfCorpusID)
	}
	byID := make(map[string]schemas.Task, len(all))
	for _, t := range all {
		byID[t.InstanceID] = t
	}
	rows := make([]schemas.Task, 0, len(f.selected))
	var missing []string
	for _, id := range f.selected {
		t, ok := byID[id]
		if !ok {
			missing = append(missing, id)
			continue
		}
		rows = append(rows, t)
	}
	if len(missing) > 0 {
		return fmt.Errorf("result folder %s: --tasks has no task %s: give the release the folder was scored against", f.Dir, strings.Join(missing, ", "))
	}
	if s.CorpusID, err = schemas.CorpusID(rows); err != nil {
		return fmt.Errorf("result folder %s: the subset's corpus id: %w", f.Dir, err)
	}
	return nil
}

func filterIDs(ids []string, in map[string]bool) []string {
	out := []string{}
	for _, id := range ids {
		if in[id] {
			out = append(out, id)
		}
	}
	return out
}
