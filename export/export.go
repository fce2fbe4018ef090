package export

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/lib/release"
	"github.com/envgap/envgap/schemas"
)

// ErrNoTasks is returned by Export when the store has no task: there is nothing to
// publish, and no folder is written.
var ErrNoTasks = errors.New("the store has no tasks (verify candidates with envgap verify, then admit them with envgap admit); nothing was written")

// Options configure Export.
type Options struct {
	// Out is the export folder. It must not exist, be empty, or be a folder an earlier
	// export wrote (its README.md carries the generated-card marker).
	Out string
	// Repo is the Hub dataset the card's snippets load from; empty means DefaultRepo.
	Repo string
	// Limits bound row groups and files; the zero value means release.DefaultLimits.
	Limits release.Limits
	// Reviewer is the credential-scan review the export publishes under (scan.Reviewer).
	// It is required: an export without it fails.
	Reviewer Reviewer
	// Audits (nil: StoreAudits) is checked against the task rows: a task whose audit says
	// other categories or security flags than its row stops the export (run envgap admit
	// again). An export in which no task has an audit is refused unless NoAudit is set:
	// the secure config would be empty for want of an audit, not for want of risk.
	Audits AuditSource
	// NoAudit publishes without a registry audit; the card then says that no task was
	// audited, so secure and security_flags say nothing about risk.
	NoAudit bool
	// Meta gives the card's links and citation and eval.yaml's evaluation framework; empty
	// fields get defaults from Repo (ReleaseConfig).
	Meta ReleaseConfig
	// Source is envgap's source tree (envgap.Source), written with the task rows into the
	// harness zip (HarnessPath). It is required: a release ships its harness.
	Source fs.FS
	// Harbor, when set, makes the Harbor files of the folder (envgap export --harbor:
	// harbor/tasks.parquet and harbor/dataset.toml) from the published task rows and their
	// corpus id; the card then has a section on running EnvGap in Harbor.
	Harbor func(pub []schemas.Task, corpusID string) (*HarborOutput, error)
	// Release, when set (e.g. 2026-09-29), records the exported task set in the store as
	// ref releases/<Release>. A release name is never reused for another task set.
	Release string
}

// HarborOutput is what Options.Harbor made: the files (path in the folder -> bytes), the
// number of tasks in them and the version of Harbor's task config they follow.
type HarborOutput struct {
	Files         map[string][]byte
	Tasks         int
	SchemaVersion string
}

// ConfigReport describes one written config.
type ConfigReport struct {
	Name  string             `json:"name"`
	Rows  int                `json:"rows"`
	Files []release.FileInfo `json:"files"`
}

// Report says what Export wrote.
type Report struct {
	Out string `json:"out"`
	// CorpusID is the id of the published rows (what envgap corpus-id prints on the
	// folder); StoreCorpusID that of the store's task set. They differ only when secrets
	// were redacted.
	CorpusID      string `json:"corpus_id"`
	StoreCorpusID string `json:"store_corpus_id"`
	// Redacted counts the secrets replaced in published text.
	Redacted   int            `json:"redacted"`
	Tasks      int            `json:"tasks"`
	Candidates int            `json:"candidates"`
	Excluded   int            `json:"excluded"`
	Configs    []ConfigReport `json:"configs"`
	// Other lists README.md, LICENSE.md, the chart and the harness zip.
	Other   []release.FileInfo `json:"other"`
	Release string             `json:"release,omitempty"`
}

// Export writes the Hub folder of the store's task set: data/<config>/*.parquet for the
// six configs (a config with no rows has no file), README.md (YAML front matter and the
// dataset card), LICENSE.md, eval.yaml, the funnel chart and the harness zip (envgap's
// source with its copy of the task rows).
// It checks every row first and writes nothing when a row is bad, when the credential
// review is not done, or when there is no task. The same store gives byte-identical files.
func Export(st catalog.Store, opts Options) (*Report, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	abs, unlock, err := claimOut(opts.Out)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rel, err := collect(st, &opts)
	if err != nil {
		return nil, err
	}
	// Write everything into a temporary sibling folder, then publish it by one rename.
	tmp, err := outFolder(abs).Temp()
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	defer os.RemoveAll(tmp)
	rep, err := rel.write(tmp, &opts)
	if err != nil {
		return nil, err
	}
	if err := publishExport(tmp, abs); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if rel.release != nil {
		d, err := st.PutJSON(rel.release)
		if err == nil {
			err = st.SetRef(data.ReleaseRef(opts.Release), d)
		}
		if err != nil {
			return nil, fmt.Errorf("export: the files were written, but recording release %s failed: %w", opts.Release, err)
		}
		rep.Release = data.ReleaseRef(opts.Release)
	}
	return rep, nil
}

// Reviewer is the credential-scan review an export publishes under. scan.Reviewer is the
// one envgap uses; Export calls Check before anything else of it.
type Reviewer interface {
	// Check refuses the export while findings wait for a person's review, or while the
	// latest scan does not cover the store.
	Check(st catalog.Store) error
	// RedactTask and RedactCandidate replace reviewed secrets in a published row's text
	// and return how many they replaced. A redacted task set has its own corpus id: the
	// card and Report.CorpusID give the published one, Report.StoreCorpusID the store's.
	RedactTask(st catalog.Store, t *schemas.Task) (int, error)
	RedactCandidate(st catalog.Store, c *schemas.Candidate) (int, error)
	// CardSection returns the card's credential-scan paragraph given the exported task
	// ids; "" gives a plain sentence.
	CardSection(st catalog.Store, taskIDs []string) (string, error)
}

// check refuses options an export cannot run with and fills in the defaults.
func (opts *Options) check() error {
	if opts.Out == "" {
		return errors.New("export: no output folder given")
	}
	if opts.Reviewer == nil {
		return errors.New("export: no credential-scan reviewer is wired in (Options.Reviewer); refusing to publish unreviewed text")
	}
	if opts.Source == nil {
		return errors.New("export: no source tree for the harness zip is wired in (Options.Source)")
	}
	if opts.Repo == "" {
		opts.Repo = DefaultRepo
	}
	if opts.Limits == (release.Limits{}) {
		opts.Limits = release.DefaultLimits
	}
	if opts.Release != "" && !releaseNameRe.MatchString(opts.Release) {
		return fmt.Errorf("export: release name %q: use a date like 2026-09-29 (letters, digits, ._-)", opts.Release)
	}
	return nil
}

// claimOut locks the export folder out (absolute: abs), recovers an interrupted export
// of it and checks that an export may write there.
func claimOut(out string) (abs string, unlock func(), err error) {
	abs, err = filepath.Abs(out)
	if err != nil {
		return "", nil, fmt.Errorf("export: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return "", nil, fmt.Errorf("export: %w", err)
	}
	unlock, err = outFolder(abs).Lock()
	if err != nil {
		return "", nil, fmt.Errorf("export: %w", err)
	}
	if err := outFolder(abs).Recover(); err != nil {
		unlock()
		return "", nil, fmt.Errorf("export: %w", err)
	}
	if err := checkOutFolder(out); err != nil {
		unlock()
		return "", nil, err
	}
	return abs, unlock, nil
}

// contents is what an export publishes, read from the store and checked before anything
// is written.
type contents struct {
	storeID, pubID string
	// pub are the published rows: copies of the store's, with reviewed secrets redacted.
	pub      []schemas.Task
	cands    []schemas.Candidate
	redacted int
	audited  int
	funnel   *catalog.Funnel
	excluded []ExcludedTask
	release  *schemas.Release
	notes    string
}

// collect reads the task set and the candidates, checks the review, the audits and every
// row, and redacts the reviewed secrets.
func collect(st catalog.Store, opts *Options) (*contents, error) {
	tasks, err := st.Tasks()
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("export: %w", ErrNoTasks)
	}
	rv := opts.Reviewer
	if err := rv.Check(st); err != nil {
		return nil, fmt.Errorf("export: credential scan: %w", err)
	}
	if opts.Audits == nil {
		opts.Audits = StoreAudits(st)
	}
	c := &contents{}
	if c.audited, err = checkAudits(tasks, opts.Audits); err != nil {
		return nil, err
	}
	if c.audited == 0 && !opts.NoAudit {
		return nil, fmt.Errorf("export: %w: none of the %d tasks has a registry audit, so the secure config would be empty for want of one; run envgap audit (then envgap admit), or give --no-audit to publish without one (the card then says so)", ErrNoAudit, len(tasks))
	}
	if c.storeID, err = schemas.CorpusID(tasks); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	c.pub = make([]schemas.Task, len(tasks))
	for i := range tasks {
		c.pub[i] = cloneTask(&tasks[i])
		n, err := rv.RedactTask(st, &c.pub[i])
		if err != nil {
			return nil, fmt.Errorf("export: redacting %s: %w", c.pub[i].InstanceID, err)
		}
		c.redacted += n
	}
	// Rows, checked before anything is written.
	for i := range c.pub {
		if err := checkRow(release.ConfigFull, c.pub[i].InstanceID, &c.pub[i]); err != nil {
			return nil, err
		}
		if ps := c.pub[i].Validate(); len(ps) > 0 {
			return nil, &RowError{Config: release.ConfigFull, InstanceID: c.pub[i].InstanceID, Field: ps[0].Field, Msg: ps[0].Msg + " (fix the record and run envgap admit again)"}
		}
	}
	if err := checkRoundTrip(c.pub); err != nil {
		return nil, err
	}
	c.pubID = c.storeID
	if c.redacted > 0 {
		if c.pubID, err = schemas.CorpusID(c.pub); err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
	}
	candRows, redC, err := candidateRows(st, c.pub, func(cand *schemas.Candidate) (int, error) { return rv.RedactCandidate(st, cand) })
	if err != nil {
		return nil, err
	}
	c.cands = candRows
	c.redacted += redC
	for i := range candRows {
		if err := checkRow(release.ConfigCandidates, candRows[i].InstanceID, &candRows[i]); err != nil {
			return nil, err
		}
	}
	c.funnel = funnelOf(candRows, c.pub)
	if c.excluded, err = exclusionsOf(st, tasks); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if opts.Release != "" {
		if c.release, err = prepareRelease(st, opts.Release, c.pubID, tasks); err != nil {
			return nil, err
		}
	}
	ids := make([]string, len(c.pub))
	for i := range c.pub {
		ids[i] = c.pub[i].InstanceID
	}
	if c.notes, err = rv.CardSection(st, ids); err != nil {
		return nil, fmt.Errorf("export: credential notes: %w", err)
	}
	return c, nil
}

// write writes the configs, the card, the license, eval.yaml, the chart and the harness
// zip into the folder tmp.
func (c *contents) write(tmp string, opts *Options) (*Report, error) {
	rep := &Report{Out: opts.Out, CorpusID: c.pubID, StoreCorpusID: c.storeID, Redacted: c.redacted,
		Tasks: len(c.pub), Candidates: len(c.cands), Excluded: len(c.excluded)}
	rowsOf := map[string]int{}
	for _, cfg := range release.Configs {
		var infos []release.FileInfo
		var n int
		var err error
		if cfg == release.ConfigCandidates {
			n = len(c.cands)
			infos, err = release.WriteConfig(tmp, cfg, c.cands, release.CandidateLayout, opts.Limits)
		} else {
			rows := release.SelectConfig(c.pub, cfg)
			if n = len(rows); n > 0 { // a config with no rows gets no file (and no YAML entry)
				infos, err = release.WriteConfig(tmp, cfg, rows, release.TaskLayout, opts.Limits)
			}
		}
		if err != nil {
			return nil, err
		}
		rowsOf[cfg] = n
		rep.Configs = append(rep.Configs, ConfigReport{Name: cfg, Rows: n, Files: infos})
	}
	dsInfos, err := datasetInfos(tmp, rep.Configs)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	meta := opts.Meta.withDefaults(opts.Repo, c.pubID)
	var harbor *HarborOutput
	if opts.Harbor != nil {
		if harbor, err = opts.Harbor(c.pub, c.pubID); err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
	}
	chart, err := FunnelChart(c.funnel)
	if err != nil {
		return nil, fmt.Errorf("export: chart: %w", err)
	}
	card, err := renderCard(&cardData{Repo: opts.Repo, CorpusID: c.pubID, Tasks: c.pub, Candidates: c.cands,
		Funnel: c.funnel, Excluded: c.excluded, ConfigRows: rowsOf, Credentials: c.notes, Infos: dsInfos, Meta: meta,
		NotAudited: c.audited == 0, Harbor: harbor})
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	evalYAML, err := marshalYAML(evalFileOf(meta.EvaluationFramework, rowsOf))
	if err != nil {
		return nil, fmt.Errorf("export: %s: %w", EvalPath, err)
	}
	var harness bytes.Buffer
	if _, err := WriteHarness(&harness, opts.Source, c.pub, release.HarnessManifest{CorpusID: c.pubID, Repo: opts.Repo, Release: opts.Release}); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	for _, f := range []struct {
		rel string
		b   []byte
	}{{"README.md", card}, {LicensePath, renderLicense(c.pub, c.cands)}, {EvalPath, evalYAML}, {FunnelChartPath, chart}, {release.HarnessPath, harness.Bytes()}} {
		if err := writeSmallFile(filepath.Join(tmp, filepath.FromSlash(f.rel)), f.b); err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		rep.Other = append(rep.Other, release.FileInfo{Path: f.rel, Bytes: int64(len(f.b)), SHA256: schemas.Hash(f.b).Hex()})
	}
	if harbor != nil {
		paths := make([]string, 0, len(harbor.Files))
		for p := range harbor.Files {
			paths = append(paths, p)
		}
		slices.Sort(paths)
		for _, p := range paths {
			b := harbor.Files[p]
			if err := writeSmallFile(filepath.Join(tmp, filepath.FromSlash(p)), b); err != nil {
				return nil, fmt.Errorf("export: %w", err)
			}
			rep.Other = append(rep.Other, release.FileInfo{Path: p, Bytes: int64(len(b)), SHA256: schemas.Hash(b).Hex()})
		}
	}
	return rep, nil
}

// checkRoundTrip checks that the rows read back as exactly the published tasks. The one
// value that would not is a null list (parquet reads it back as []), which would change
// the corpus id of the release; it is caught here rather than by a reader of the release.
func checkRoundTrip(pub []schemas.Task) error {
	for i := range pub {
		v := reflect.ValueOf(&pub[i]).Elem()
		for _, c := range schemas.TaskColumns() {
			if c.List() && v.FieldByIndex(c.Index).IsNil() {
				return &RowError{Config: release.ConfigFull, InstanceID: pub[i].InstanceID, Field: c.Name,
					Msg: "does not survive the parquet round trip (a null list?); run envgap admit again to rewrite the row"}
			}
		}
	}
	return nil
}

// funnelOf counts the funnel of the exported rows: candidates by set and outcome (the
// outcomes the candidates config shows), tasks and exclusions by set.
func funnelOf(cands []schemas.Candidate, tasks []schemas.Task) *catalog.Funnel {
	f := &catalog.Funnel{Candidates: map[schemas.Source]map[schemas.Outcome]int{}, Tasks: map[schemas.Source]int{}, Excluded: map[schemas.Source]int{}}
	for _, c := range cands {
		if f.Candidates[c.Set] == nil {
			f.Candidates[c.Set] = map[schemas.Outcome]int{}
		}
		f.Candidates[c.Set][c.Outcome]++
		f.Total++
	}
	for i := range tasks {
		f.Tasks[tasks[i].Source]++
		f.TaskTotal++
		if tasks[i].ExcludedFromScoring {
			f.Excluded[tasks[i].Source]++
		}
	}
	return f
}

var releaseNameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// candidateRows builds the candidates config: every candidate with its current outcome,
// sorted by instance id, redacted when a redactor is given. tasks are the published task
// rows.
func candidateRows(st catalog.Store, tasks []schemas.Task, redact func(*schemas.Candidate) (int, error)) ([]schemas.Candidate, int, error) {
	cands, err := st.Candidates()
	if err != nil {
		return nil, 0, fmt.Errorf("export: %w", err)
	}
	byID := make(map[string]*schemas.Task, len(tasks))
	for i := range tasks {
		byID[tasks[i].InstanceID] = &tasks[i]
	}
	out := make([]schemas.Candidate, 0, len(cands))
	redacted := 0
	for i := range cands {
		status, err := st.CurrentOutcome(cands[i].Candidate)
		if err != nil {
			return nil, 0, fmt.Errorf("export: candidate %s: %w", cands[i].InstanceID, err)
		}
		c := cloneCandidate(&cands[i].Candidate)
		if redact != nil {
			n, err := redact(&c)
			if err != nil {
				return nil, 0, fmt.Errorf("export: redacting candidate %s: %w", c.InstanceID, err)
			}
			redacted += n
		}
		var t *schemas.Task
		if status.Outcome == schemas.OutcomeTask {
			t = byID[c.InstanceID]
			// made_by says how the task's fix and commands were made.
			if v, _, err := st.Verdict(c.InstanceID); err == nil {
				checked, err := checkedCandidate(st, c, &v)
				if err != nil {
					return nil, 0, fmt.Errorf("export: %w", err)
				}
				c.MadeBy = checked.MadeBy
			} else if !errors.Is(err, data.ErrNotFound) {
				return nil, 0, fmt.Errorf("export: candidate %s: %w", c.InstanceID, err)
			}
		}
		out = append(out, release.CandidateRow(&c, status.Outcome, status.Reason, t))
	}
	return out, redacted, nil
}

// cloneTask copies a task deeply enough that a redactor writing through its pointers
// leaves the original alone.
func cloneTask(t *schemas.Task) schemas.Task {
	c := *t
	c.ProjectFiles, c.GoldFiles = cloneFiles(t.ProjectFiles), cloneFiles(t.GoldFiles)
	c.D2Command = clonePtr(t.D2Command)
	c.ManifestPaths = slices.Clone(t.ManifestPaths)
	c.Splits, c.Categories, c.SecurityFlags = slices.Clone(t.Splits), slices.Clone(t.Categories), slices.Clone(t.SecurityFlags)
	return c
}

func cloneCandidate(t *schemas.Candidate) schemas.Candidate {
	c := *t
	c.ProjectFiles, c.GoldFiles = cloneFiles(t.ProjectFiles), cloneFiles(t.GoldFiles)
	c.D2Command = clonePtr(t.D2Command)
	return c
}

func cloneFiles(fs []schemas.File) []schemas.File {
	if fs == nil {
		return nil
	}
	out := make([]schemas.File, len(fs))
	for i, f := range fs {
		out[i] = schemas.File{Path: f.Path, Content: clonePtr(f.Content)}
	}
	return out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// ErrNoAudit is returned by an export of a task set no registry audit has seen.
var ErrNoAudit = errors.New("no registry audit")

// checkAudits stops an export when a task row disagrees with its audit, and counts the
// audited tasks.
func checkAudits(tasks []schemas.Task, audits AuditSource) (int, error) {
	audited := 0
	for i := range tasks {
		t := &tasks[i]
		res, ok, err := audits.Audit(t.InstanceID)
		if err != nil {
			return 0, fmt.Errorf("export: %w", err)
		}
		if !ok {
			continue
		}
		audited++
		norm, err := res.normalized(t.InstanceID)
		if err != nil {
			return 0, fmt.Errorf("export: %w", err)
		}
		if !slices.Equal(norm.Categories, t.Categories) || !slices.Equal(norm.SecurityFlags, t.SecurityFlags) {
			return 0, &RowError{Config: release.ConfigFull, InstanceID: t.InstanceID, Field: "security_flags",
				Msg: fmt.Sprintf("the audit says categories %v and security flags %v, the task row %v and %v; run envgap admit to take the audit in", norm.Categories, norm.SecurityFlags, t.Categories, t.SecurityFlags)}
		}
	}
	return audited, nil
}

// ownedPaths are the paths of an export folder that Export writes and replaces.
func ownedPaths() []string {
	out := []string{"README.md", LicensePath, EvalPath, FunnelChartPath, release.HarnessPath, "harbor"}
	for _, c := range release.Configs {
		out = append(out, release.DataDir(c))
	}
	return out
}

// checkOutFolder refuses an output folder that holds something other than an export.
func checkOutFolder(out string) error {
	fi, err := os.Stat(out)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("export: %s is a file; give a folder", out)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if len(entries) == 0 {
		return nil
	}
	readme, err := os.ReadFile(filepath.Join(out, "README.md"))
	if err != nil || !bytes.Contains(readme, []byte(cardMarker)) {
		return fmt.Errorf("export: %s is not empty and was not written by envgap export; give a new or empty folder", out)
	}
	return nil
}

func writeSmallFile(dst string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// prepareRelease builds the Release record of the task set and checks that the name is
// free or already names this very set.
func prepareRelease(st catalog.Store, name, corpusID string, tasks []schemas.Task) (*schemas.Release, error) {
	rel := &schemas.Release{Kind: schemas.KindRelease, Date: name, CorpusID: corpusID, Tasks: make([]schemas.SetMember, len(tasks))}
	for i := range tasks {
		d, err := schemas.DigestOf(&tasks[i])
		if err != nil {
			return nil, fmt.Errorf("export: release: %w", err)
		}
		rel.Tasks[i] = schemas.SetMember{InstanceID: tasks[i].InstanceID, Digest: d}
	}
	d, err := schemas.DigestOf(rel)
	if err != nil {
		return nil, fmt.Errorf("export: release: %w", err)
	}
	old, err := st.Ref(data.ReleaseRef(name))
	switch {
	case err == nil && old == d:
		return rel, nil
	case err == nil:
		var prev schemas.Release
		if gerr := st.GetJSON(old, &prev); gerr == nil {
			return nil, fmt.Errorf("export: release %s already names corpus %s, and this task set is %s; pick a new release name (nothing was written)", name, prev.CorpusID, corpusID)
		}
		return nil, fmt.Errorf("export: release %s already names another task set; pick a new release name (nothing was written)", name)
	case !errors.Is(err, data.ErrNotFound):
		return nil, fmt.Errorf("export: release: %w", err)
	}
	return rel, nil
}
