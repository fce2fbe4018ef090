package submit

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/envgap/envgap/harness/eval"
	"github.com/envgap/envgap/harness/report"
	"github.com/envgap/envgap/harness/tasks"
	"github.com/envgap/envgap/schemas"
	"github.com/sourcegraph/conc/pool"
)

// The status of a check line.
const (
	StatusOK         = "ok"
	StatusFail       = "FAIL"
	StatusNotChecked = "not checked" // an infrastructure fault stopped the check: no verdict
)

// Line is one check of a bundle: its name, ok / FAIL / not checked, and why.
type Line struct {
	Check  string `json:"check"`
	Status string `json:"status"`
	Why    string `json:"why"`
}

// Verdict is what Check found.
type Verdict struct {
	Lines []Line `json:"lines"`
	// Fair is true when every line is ok.
	Fair bool `json:"fair"`
	// Failed counts FAIL lines, NotChecked the lines a fault left without a verdict.
	Failed     int `json:"failed"`
	NotChecked int `json:"not_checked"`
}

func (v *Verdict) add(check, status, why string) {
	v.Lines = append(v.Lines, Line{check, status, why})
	switch status {
	case StatusFail:
		v.Failed++
	case StatusNotChecked:
		v.NotChecked++
	}
}

// CheckOptions configure Check.
type CheckOptions struct {
	Bundle *Bundle
	// Release is every task of the release the leaderboard ranks (its full config).
	Release []schemas.Task
	// ReleaseWhere names where Release was read, for the lines.
	ReleaseWhere string
	// Evaluator re-scores the predictions (the real evaluation core).
	Evaluator *eval.Evaluator
	Jobs      int
	// Progress, when set, is told of each attempt re-scored.
	Progress func(eval.Event)
}

// folderData is one result folder of the bundle, read.
type folderData struct {
	rel   string // results/<split>, slash-separated
	dir   string
	f     *eval.Folder
	preds []PredictionLine
	err   error
}

// Check checks a bundle, one line a check (see the package doc). The error is the
// context's; a fault of the engine while re-scoring is a "not checked" line.
func Check(ctx context.Context, o CheckOptions) (*Verdict, error) {
	v := &Verdict{}
	b := o.Bundle
	md := b.Metadata
	// metadata
	var folders []*folderData
	dirs, derr := b.Folders()
	for _, d := range dirs {
		fd := &folderData{dir: d, rel: ResultsDir + "/" + filepath.Base(d)}
		if fd.f, fd.err = eval.ReadFolder(d); fd.err == nil {
			fd.preds, fd.err = ReadPredictions(filepath.Join(d, PredictionsFile))
		}
		folders = append(folders, fd)
	}
	switch {
	case b.MetadataErr != nil:
		v.add("metadata", StatusFail, b.MetadataErr.Error())
	case derr != nil:
		v.add("metadata", StatusFail, derr.Error())
	default:
		if why := metadataAgrees(md, folders); why != "" {
			v.add("metadata", StatusFail, why)
		} else {
			v.add("metadata", StatusOK, fmt.Sprintf("%s %s by %s; models %s; open source: agent %s, model %s; prepared %s",
				md.Agent.Name, md.Agent.Version, md.Organisation, strings.Join(md.Models, ", "), yesNo(md.OpenSource.Agent), yesNo(md.OpenSource.Model), md.Date))
		}
	}
	var good []*folderData
	for _, fd := range folders {
		if fd.err != nil {
			v.add("results ("+fd.rel+")", StatusFail, fd.err.Error())
			continue
		}
		if why := predictionsMatch(fd); why != "" {
			v.add("predictions ("+fd.rel+")", StatusFail, why)
			continue
		}
		good = append(good, fd)
	}
	if len(good) == 0 {
		v.add("results", StatusFail, "no readable result folder in the bundle")
		return v.done(), nil
	}

	// corpus
	releaseID, err := schemas.CorpusID(o.Release)
	if err != nil {
		return nil, fmt.Errorf("the release's corpus id: %w", err)
	}
	var bad []string
	for _, fd := range good {
		s := fd.f.Summary
		switch {
		case s.Subset != nil:
			bad = append(bad, fmt.Sprintf("%s is a subset (%s), not a leaderboard entry", fd.rel, s.Subset.Label(s.Tasks)))
		case s.CorpusID != releaseID:
			bad = append(bad, fmt.Sprintf("%s was scored on corpus %s", fd.rel, orNone(s.CorpusID)))
		}
	}
	if md != nil && md.CorpusID != releaseID && len(bad) == 0 {
		bad = append(bad, fmt.Sprintf("%s says corpus %s", MetadataFile, orNone(md.CorpusID)))
	}
	if len(bad) > 0 {
		v.add("corpus", StatusFail, fmt.Sprintf("%s; the release is corpus %s (%s): score the release's tasks", strings.Join(bad, "; "), releaseID, o.ReleaseWhere))
	} else {
		v.add("corpus", StatusOK, fmt.Sprintf("corpus %s, the release's (%s)", releaseID, o.ReleaseWhere))
	}

	// complete, per split
	byID := make(map[string]*schemas.Task, len(o.Release))
	for i := range o.Release {
		byID[o.Release[i].InstanceID] = &o.Release[i]
	}
	for _, fd := range good {
		status, why := complete(fd, o.Release)
		v.add("complete ("+fd.f.Summary.Split+")", status, why)
	}

	// attempts, per split
	for _, fd := range good {
		status, why := attemptsLine(fd)
		v.add("attempts ("+fd.f.Summary.Split+")", status, why)
	}

	// setting
	set := settingOf(good[0].f.Summary)
	label := ""
	if md != nil {
		label = md.Setting.Label
	}
	differ := ""
	for _, fd := range good[1:] {
		if s := settingOf(fd.f.Summary); s != set {
			differ = fmt.Sprintf("%s has %s, %s has %s: one entry is one setting", good[0].rel, set.Text(), fd.rel, s.Text())
		}
	}
	switch ok, diff := set.Leaderboard(); {
	case differ != "":
		v.add("setting", StatusFail, differ)
	case ok:
		v.add("setting", StatusOK, set.Text()+": the leaderboard's")
	case label != "":
		v.add("setting", StatusOK, fmt.Sprintf("%s, labelled %q: another setting than the leaderboard's (%s), shown apart, not ranked with it", set.Text(), label, diff))
	default:
		v.add("setting", StatusFail, fmt.Sprintf("%s is not the leaderboard's: %s; run with --k %d --max-attempts %d --attempt-timeout %s, or label the setting (setting.label in the meta file)",
			set.Text(), diff, LeaderboardK, LeaderboardMaxAttempts, fmt.Sprintf("%dm", int(LeaderboardTimeout.Minutes()))))
	}

	// trajectories
	status, why := trajectories(good)
	v.add("trajectories", status, why)

	// leaks
	status, why = leaks(good)
	v.add("leaks", status, why)

	// re-scoring, per split
	for _, fd := range good {
		status, why, err := rescore(ctx, o, fd, byID)
		if err != nil {
			return nil, err
		}
		v.add("rescore ("+fd.f.Summary.Split+")", status, why)
	}
	return v.done(), nil
}

func (v *Verdict) done() *Verdict {
	v.Fair = v.Failed == 0 && v.NotChecked == 0
	return v
}

func yesNo(b *bool) string {
	if b != nil && *b {
		return "yes"
	}
	return "no"
}

func orNone(s string) string {
	if s == "" {
		return "(none recorded)"
	}
	return s
}

// metadataAgrees says how metadata.yaml disagrees with the result folders ("" when it
// does not): the splits, the setting and the corpus id.
func metadataAgrees(md *Metadata, folders []*folderData) string {
	var probs []string
	have := map[string]bool{}
	for _, fd := range folders {
		have[fd.rel] = true
		if fd.f == nil {
			continue
		}
		s := fd.f.Summary
		set := settingOf(s)
		set.Label = md.Setting.Label
		if set != md.Setting {
			probs = append(probs, fmt.Sprintf("it says setting %s, %s has %s", md.Setting.Text(), fd.rel, set.Text()))
		}
		if s.CorpusID != md.CorpusID {
			probs = append(probs, fmt.Sprintf("it says corpus %s, %s has %s", md.CorpusID, fd.rel, s.CorpusID))
		}
	}
	listed := map[string]bool{}
	for _, e := range md.Results {
		listed[e.Folder] = true
		if !have[e.Folder] {
			probs = append(probs, fmt.Sprintf("it lists %s, which the bundle does not hold", e.Folder))
		}
	}
	for _, fd := range folders {
		if !listed[fd.rel] {
			probs = append(probs, fmt.Sprintf("it does not list %s", fd.rel))
		}
	}
	if len(probs) == 0 {
		return ""
	}
	return MetadataFile + " does not match the results: " + strings.Join(probs, "; ")
}

// predictionsMatch says how a folder's predictions.jsonl differs from its results ("" when
// each result line has its prediction, with the digest the result records).
func predictionsMatch(fd *folderData) string {
	rs := fd.f.Results
	if len(fd.preds) != len(rs) {
		return fmt.Sprintf("%s has %d lines for %d results: envgap submit prepare writes one a result", PredictionsFile, len(fd.preds), len(rs))
	}
	for i := range rs {
		r, p := &rs[i], &fd.preds[i]
		at := fmt.Sprintf("%s line %d (%s run %d attempt %d)", PredictionsFile, i+1, r.InstanceID, r.Run, r.Attempt)
		if p.InstanceID != r.InstanceID || p.Run != r.Run || p.Attempt != r.Attempt || p.Digest != r.Prediction {
			return at + ": another result's prediction (the lines follow results.jsonl)"
		}
		if p.Prediction == nil {
			if !StoppedBeforeScoring(r) {
				return at + ": no prediction, and the attempt was scored"
			}
			continue
		}
		if d, err := schemas.DigestOf(p.Prediction); err != nil || d != r.Prediction {
			return at + ": the prediction is not the one scored (its digest differs from the result's)"
		}
		if p.Prediction.InstanceID != r.InstanceID {
			return at + ": the prediction is of " + p.Prediction.InstanceID
		}
	}
	return ""
}

// complete checks that every non-excluded task of the folder's split has a result for
// each run's first attempt, that no result is of another task, and that the excluded
// flags are the release's.
func complete(fd *folderData, release []schemas.Task) (string, string) {
	s := fd.f.Summary
	split, err := tasks.OfConfig(release, s.Split)
	if err != nil {
		return StatusFail, err.Error()
	}
	k := max(s.K, 1)
	inSplit := map[string]*schemas.Task{}
	for i := range split {
		inSplit[split[i].InstanceID] = &split[i]
	}
	first := map[string]bool{}
	var unknown, flags []string
	for _, r := range fd.f.Results {
		t := inSplit[r.InstanceID]
		if t == nil {
			unknown = append(unknown, r.InstanceID)
			continue
		}
		if r.Excluded != t.ExcludedFromScoring || r.IsControl != t.IsControl {
			flags = append(flags, r.InstanceID)
		}
		if r.Attempt == 1 {
			first[r.InstanceID+"\x00"+strconv.Itoa(r.Run)] = true
		}
	}
	var missing []string
	scored, excluded := 0, 0
	for _, t := range split {
		if t.ExcludedFromScoring {
			excluded++
			continue
		}
		ok := true
		for run := 1; run <= k; run++ {
			if !first[t.InstanceID+"\x00"+strconv.Itoa(run)] {
				ok = false
				missing = append(missing, fmt.Sprintf("%s run %d", t.InstanceID, run))
			}
		}
		if ok {
			scored++
		}
	}
	var probs []string
	if len(missing) > 0 {
		probs = append(probs, fmt.Sprintf("%d task run(s) without a first attempt: %s", len(missing), few(missing)))
	}
	if len(s.Faults) > 0 {
		var ids []string
		for _, f := range s.Faults {
			ids = append(ids, f.InstanceID)
		}
		probs = append(probs, fmt.Sprintf("%d fault(s) left tasks without a result: %s (run the same command again to retry them)", len(s.Faults), few(ids)))
	}
	if len(unknown) > 0 {
		probs = append(probs, fmt.Sprintf("results of tasks not in split %s of the release: %s", s.Split, few(unique(unknown))))
	}
	if len(flags) > 0 {
		probs = append(probs, fmt.Sprintf("results whose excluded or control flag is not the release's: %s", few(unique(flags))))
	}
	if len(probs) > 0 {
		return StatusFail, strings.Join(probs, "; ")
	}
	return StatusOK, fmt.Sprintf("%d of %d tasks scored, %d run(s) each (%d excluded, left out)", scored, len(split)-excluded, k, excluded)
}

// few lists up to 5 items, and how many more.
func few(s []string) string {
	if len(s) <= 5 {
		return strings.Join(s, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(s[:5], ", "), len(s)-5)
}

func unique(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// The files of an attempt's trajectory under a run's result folder: ATIF (Harbor's Agent
// Trajectory Interchange Format) and the agent's own.
const (
	ATIFSuffix = ".atif.json"
	RawSuffix  = ".trajectory"
)

// AttemptPath is an attempt's files' path without suffix in a result folder:
// agent/<id>/run-<k>/attempt-<n>.
func AttemptPath(id string, run, attempt int) string {
	return filepath.Join("agent", id, "run-"+strconv.Itoa(run), "attempt-"+strconv.Itoa(attempt))
}

// trajectories checks that every attempt has a trajectory: for envgap run, the ATIF file or
// the agent's own beside its output; for envgap eval, a non-empty trajectory in its
// prediction.
func trajectories(folders []*folderData) (string, string) {
	var missing []string
	atif, raw, inPred := 0, 0, 0
	for _, fd := range folders {
		for i := range fd.f.Results {
			r := &fd.f.Results[i]
			p := fd.preds[i].Prediction
			if fd.f.Summary.Mode != schemas.ModeRun {
				if p != nil && len(p.Trajectory) > 0 {
					inPred++
				} else {
					missing = append(missing, fmt.Sprintf("%s %s (empty trajectory in its prediction)", fd.rel, r.InstanceID))
				}
				continue
			}
			base := filepath.Join(fd.dir, AttemptPath(r.InstanceID, r.Run, r.Attempt))
			form := ""
			if nonEmptyFile(base + ATIFSuffix) {
				form = atifForm(base + ATIFSuffix)
			}
			switch {
			case form != "" && form != FormNone && form != FormRaw:
				atif++
			case form == FormRaw || nonEmptyFile(base+RawSuffix):
				raw++
			case form == FormNone:
				missing = append(missing, fmt.Sprintf("%s run %d attempt %d (the agent wrote none: its ATIF file says form %q)", r.InstanceID, r.Run, r.Attempt, FormNone))
			default:
				rel := fd.rel + "/" + filepath.ToSlash(AttemptPath(r.InstanceID, r.Run, r.Attempt))
				missing = append(missing, fmt.Sprintf("%s run %d attempt %d (no %s or %s)", r.InstanceID, r.Run, r.Attempt, rel+ATIFSuffix, path.Base(rel)+RawSuffix))
			}
		}
	}
	if len(missing) > 0 {
		return StatusFail, fmt.Sprintf("%d attempt(s) without a trajectory: %s", len(missing), few(missing))
	}
	var parts []string
	if atif > 0 {
		parts = append(parts, fmt.Sprintf("%d in ATIF", atif))
	}
	if raw > 0 {
		parts = append(parts, fmt.Sprintf("%d raw only (the agent's own file, or its text kept whole in ATIF: not read step by step)", raw))
	}
	if inPred > 0 {
		parts = append(parts, fmt.Sprintf("%d in the predictions (envgap eval)", inPred))
	}
	return StatusOK, fmt.Sprintf("every attempt has one: %s", strings.Join(parts, ", "))
}

// The forms envgap run records of an attempt's ATIF file (extra.envgap.form, lib/atif):
// FormRaw is a trajectory envgap cannot read kept whole in one step, FormNone an attempt
// whose agent wrote no trajectory. Other forms ("envgap", "agent") are read trajectories.
const (
	FormRaw  = "raw"
	FormNone = "none"
)

// atifForm returns the form an ATIF file's envgap verdict records, or "ATIF" when it
// records none (a file written by another tool), or "" when it is not JSON.
func atifForm(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	var doc struct {
		Extra struct {
			Envgap struct {
				Form string `json:"form"`
			} `json:"envgap"`
		} `json:"extra"`
	}
	if json.Unmarshal(b, &doc) != nil {
		return ""
	}
	if f := doc.Extra.Envgap.Form; f != "" {
		return f
	}
	return "ATIF"
}

func nonEmptyFile(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Size() > 0
}

// leaks checks that no attempt read the later history and that every trajectory was
// inspected (one the rules could not read cannot be cleared).
func leaks(folders []*folderData) (string, string) {
	var leaked, blind []string
	n := 0
	for _, fd := range folders {
		for _, r := range fd.f.Results {
			n++
			if r.Status == schemas.EvalLeaked || len(r.Leaks) > 0 {
				var rules []string
				for _, l := range r.Leaks {
					rules = append(rules, fmt.Sprintf("%s at step %d", l.Rule, l.Step))
				}
				leaked = append(leaked, fmt.Sprintf("%s run %d attempt %d (%s)", r.InstanceID, r.Run, r.Attempt, strings.Join(rules, ", ")))
			}
			if strings.HasPrefix(r.Trajectory, "not inspected") {
				blind = append(blind, fmt.Sprintf("%s run %d attempt %d (%s)", r.InstanceID, r.Run, r.Attempt, r.Trajectory))
			}
		}
	}
	var probs []string
	if len(leaked) > 0 {
		probs = append(probs, fmt.Sprintf("%d attempt(s) read the later history: %s", len(leaked), few(leaked)))
	}
	if len(blind) > 0 {
		probs = append(probs, fmt.Sprintf("%d attempt(s) have a trajectory the later-history rules cannot read, so a leak cannot be ruled out: %s (write ATIF or a shape docs/scoring.md lists)", len(blind), few(blind)))
	}
	if len(probs) > 0 {
		return StatusFail, strings.Join(probs, "; ")
	}
	return StatusOK, fmt.Sprintf("no attempt read the later history (%d trajectories inspected)", n)
}

// rescore scores the folder's predictions again with the evaluator and compares the
// results: each attempt's status, checks, manifest F1 and safe install (when measured
// again), and the report's figures. A fault makes the line "not checked".
func rescore(ctx context.Context, o CheckOptions, fd *folderData, byID map[string]*schemas.Task) (string, string, error) {
	claimed := fd.f.Results
	again := make([]schemas.EvalResult, len(claimed))
	errs := make([]error, len(claimed))
	cached := make([]bool, len(claimed))
	stopped := 0
	jobs := max(o.Jobs, 1)
	var mu sync.Mutex
	done := 0
	p := pool.New().WithContext(ctx).WithMaxGoroutines(jobs)
	for i := range claimed {
		r := &claimed[i]
		pl := fd.preds[i]
		t := byID[r.InstanceID]
		if t == nil {
			errs[i] = fmt.Errorf("%s is no task of the release", r.InstanceID)
			continue
		}
		if StoppedBeforeScoring(r) {
			stopped++
			// The harness stopped it before the evaluation: not resolved whatever the files;
			// the trajectory is read again when the prediction was kept.
			if pl.Prediction == nil {
				again[i] = *r
			} else {
				nr := eval.NewResult(t, pl.Prediction, r.Status, r.Reason)
				nr.Agent = r.Agent
				again[i] = *nr
			}
			again[i].Run, again[i].Attempt = r.Run, r.Attempt
			cached[i] = true
			continue
		}
		p.Go(func(ctx context.Context) error {
			nr, c, err := o.Evaluator.Score(ctx, t, pl.Prediction)
			if err == nil {
				again[i], cached[i] = *nr, c
				again[i].Run, again[i].Attempt, again[i].Agent = r.Run, r.Attempt, r.Agent
			}
			errs[i] = err
			mu.Lock()
			done++
			ev := eval.Event{InstanceID: r.InstanceID, Done: done, Total: len(claimed), Result: nr, Cached: c, Err: err}
			mu.Unlock()
			if o.Progress != nil {
				o.Progress(ev)
			}
			return nil
		})
	}
	_ = p.Wait()
	if err := ctx.Err(); err != nil {
		return "", "", err
	}
	var faults []string
	ran, reused := 0, 0
	for i, err := range errs {
		if err != nil {
			faults = append(faults, fmt.Sprintf("%s run %d attempt %d: %v", claimed[i].InstanceID, claimed[i].Run, claimed[i].Attempt, err))
		} else if cached[i] {
			reused++
		} else {
			ran++
		}
	}
	if len(faults) > 0 {
		return StatusNotChecked, fmt.Sprintf("%d attempt(s) could not be re-scored (infrastructure fault, not a verdict; run the check again): %s", len(faults), few(faults)), nil
	}
	var diffs []string
	safeAgain := true
	for i := range claimed {
		c, a := &claimed[i], &again[i]
		at := fmt.Sprintf("%s run %d attempt %d", c.InstanceID, c.Run, c.Attempt)
		if c.Status != a.Status || c.Resolved != a.Resolved {
			d := fmt.Sprintf("%s: claimed %s, re-scored %s", at, c.Status, a.Status)
			if a.Reason != "" {
				d += " (" + a.Reason + ")"
			}
			diffs = append(diffs, d)
			continue
		}
		if c.ChecksPassed != a.ChecksPassed {
			diffs = append(diffs, fmt.Sprintf("%s: checks passed claimed %v, re-scored %v", at, c.ChecksPassed, a.ChecksPassed))
		}
		if c.ManifestF1.Measured != a.ManifestF1.Measured || !near(c.ManifestF1.F1, a.ManifestF1.F1) {
			diffs = append(diffs, fmt.Sprintf("%s: manifest F1 claimed %s, re-scored %s", at, f1Text(c.ManifestF1), f1Text(a.ManifestF1)))
		}
		switch {
		case !a.Safe.Measured:
			safeAgain = false
		case c.Safe.Measured != a.Safe.Measured || !near(c.Safe.Share, a.Safe.Share):
			diffs = append(diffs, fmt.Sprintf("%s: safe install claimed %s, re-scored %s", at, safeText(c.Safe), safeText(a.Safe)))
		}
	}
	cr, ar := row(fd, claimed), row(fd, again)
	if !safeAgain {
		cr.SafeInstall, ar.SafeInstall = report.Mean{}, report.Mean{}
	}
	var figs []string
	figure := func(name string, c, a float64) {
		if !near(c, a) {
			figs = append(figs, fmt.Sprintf("%s claimed %.4g, re-scored %.4g", name, c, a))
		}
	}
	figure("first-attempt resolved", cr.Resolved.N, ar.Resolved.N)
	figure("best within attempts", cr.Best.N, ar.Best.N)
	figure("repairs resolved", cr.RepairsResolved.N, ar.RepairsResolved.N)
	figure("controls resolved", cr.ControlsResolved.N, ar.ControlsResolved.N)
	figure("mean manifest F1", cr.ManifestF1.Mean, ar.ManifestF1.Mean)
	figure("mean safe install", cr.SafeInstall.Mean, ar.SafeInstall.Mean)
	figure("rejected", float64(cr.Rejected), float64(ar.Rejected))
	figure("leaked", float64(cr.Leaked), float64(ar.Leaked))
	if len(diffs) > 0 || len(figs) > 0 {
		return StatusFail, fmt.Sprintf("re-scoring gives other numbers: %s", strings.Join(append(figs, few(diffs)), "; ")), nil
	}
	why := fmt.Sprintf("%d attempt(s) re-scored (%d run now, %d reused from this store", len(claimed), ran, reused-stopped)
	if stopped > 0 {
		why += fmt.Sprintf(", %d stopped by the harness before scoring: not resolved either way", stopped)
	}
	why += fmt.Sprintf("): the same numbers, first attempt %s, best within attempts %s, manifest F1 %.3f", rateText(cr.Resolved), rateText(cr.Best), cr.ManifestF1.Mean)
	if !safeAgain {
		why += "; safe install not measured again (--no-safe-install, or the registries did not answer), so not compared"
	}
	return StatusOK, why, nil
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9 }

func f1Text(m schemas.ManifestScore) string {
	if !m.Measured {
		return "not measured"
	}
	return fmt.Sprintf("%.4f", m.F1)
}

func safeText(s schemas.SafeInstallScore) string {
	if !s.Measured {
		return "not measured"
	}
	return fmt.Sprintf("%d/%d", s.Safe, s.Total)
}

func rateText(r report.Rate) string {
	return fmt.Sprintf("%.4g/%d", r.N, r.Of)
}

// row is the report's row of a folder's summary with the given results.
func row(fd *folderData, rs []schemas.EvalResult) report.ReportRow {
	f := &report.ResultFolder{Dir: fd.rel, Summary: fd.f.Summary}
	for i := range rs {
		b, _ := json.Marshal(&rs[i])
		var x report.ResultFigures
		_ = json.Unmarshal(b, &x)
		f.Results = append(f.Results, x)
	}
	return report.BuildReport([]*report.ResultFolder{f}).Rows[0]
}

// attemptSlack is how much longer than the attempt timeout an agent's recorded duration may
// be (stopping the agent and its box takes time).
const attemptSlack = 2 * time.Minute

// attemptsLine checks the shape of each run of a task as envgap run makes it: attempts
// 1..n, none after a resolved one, n at most max_attempts and n == max_attempts when the
// last is not resolved; one agent command; no attempt longer than the attempt timeout
// allows; and no attempt kept under agent/ without its result (an attempt dropped from
// results.jsonl).
func attemptsLine(fd *folderData) (string, string) {
	s := fd.f.Summary
	type key struct {
		id  string
		run int
	}
	runs := map[key][]*schemas.EvalResult{}
	var order []key
	commands := map[string]bool{}
	var probs, long []string
	limit := time.Duration(s.AttemptTimeoutS)*time.Second + attemptSlack
	for i := range fd.f.Results {
		r := &fd.f.Results[i]
		k := key{r.InstanceID, r.Run}
		if _, ok := runs[k]; !ok {
			order = append(order, k)
		}
		runs[k] = append(runs[k], r)
		if r.Agent != nil {
			commands[r.Agent.Command] = true
			if s.AttemptTimeoutS > 0 && time.Duration(r.Agent.DurationMS)*time.Millisecond > limit {
				long = append(long, fmt.Sprintf("%s run %d attempt %d (%s)", r.InstanceID, r.Run, r.Attempt, time.Duration(r.Agent.DurationMS)*time.Millisecond))
			}
		}
		if r.Run < 1 || r.Run > max(s.K, 1) {
			probs = append(probs, fmt.Sprintf("%s has run %d, the folder's k is %d", r.InstanceID, r.Run, s.K))
		}
	}
	var shape []string
	for _, k := range order {
		rs := runs[k]
		sort.Slice(rs, func(i, j int) bool { return rs[i].Attempt < rs[j].Attempt })
		at := fmt.Sprintf("%s run %d", k.id, k.run)
		for i, r := range rs {
			if r.Attempt != i+1 {
				shape = append(shape, fmt.Sprintf("%s: attempts %s, not 1 to %d", at, attemptList(rs), len(rs)))
				break
			}
			if r.Resolved && i < len(rs)-1 {
				shape = append(shape, fmt.Sprintf("%s: attempt %d after a resolved one", at, rs[i+1].Attempt))
				break
			}
		}
		last := rs[len(rs)-1]
		switch {
		case len(rs) > max(s.MaxAttempts, 1):
			shape = append(shape, fmt.Sprintf("%s: %d attempts, the folder allows %d", at, len(rs), s.MaxAttempts))
		case s.Mode == schemas.ModeRun && !last.Resolved && len(rs) < s.MaxAttempts:
			shape = append(shape, fmt.Sprintf("%s: stops unresolved after %d of %d attempts", at, len(rs), s.MaxAttempts))
		}
		if s.Mode == schemas.ModeRun {
			if extra := strayAttempts(fd.dir, k.id, k.run, len(rs)); extra != "" {
				shape = append(shape, fmt.Sprintf("%s: %s kept under agent/ without a result", at, extra))
			}
		}
	}
	if len(shape) > 0 {
		probs = append(probs, fmt.Sprintf("%d run(s) not as envgap run makes them: %s", len(shape), few(shape)))
	}
	if len(commands) > 1 {
		var cs []string
		for c := range commands {
			cs = append(cs, strconv.Quote(c))
		}
		sort.Strings(cs)
		probs = append(probs, fmt.Sprintf("attempts of %d agent commands: %s (one entry is one agent)", len(cs), few(cs)))
	}
	if len(long) > 0 {
		probs = append(probs, fmt.Sprintf("%d attempt(s) took longer than the attempt timeout (%s) allows: %s", len(long), time.Duration(s.AttemptTimeoutS)*time.Second, few(long)))
	}
	if len(probs) > 0 {
		return StatusFail, strings.Join(probs, "; ")
	}
	return StatusOK, fmt.Sprintf("%d attempt(s) in %d run(s), each run as envgap run makes it", len(fd.f.Results), len(order))
}

func attemptList(rs []*schemas.EvalResult) string {
	var s []string
	for _, r := range rs {
		s = append(s, strconv.Itoa(r.Attempt))
	}
	return strings.Join(s, ",")
}

// strayAttempts names the attempt files kept under agent/<id>/run-<k>/ of attempts past
// the n that have results ("" when there are none).
func strayAttempts(dir, id string, run, n int) string {
	ents, err := os.ReadDir(filepath.Join(dir, "agent", id, "run-"+strconv.Itoa(run)))
	if err != nil {
		return ""
	}
	var extra []string
	for _, e := range ents {
		name := strings.TrimPrefix(e.Name(), "attempt-")
		if name == e.Name() {
			continue
		}
		num, _, _ := strings.Cut(name, ".")
		if a, err := strconv.Atoi(num); err == nil && (a > n || a < 1) {
			extra = append(extra, e.Name())
		}
	}
	return strings.Join(extra, ", ")
}
