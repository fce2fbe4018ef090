package study

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/envgap/envgap/core/deps"
	"github.com/envgap/envgap/lib/studylayout"
	"github.com/envgap/envgap/schemas"
)

// MainTrial is the trial of the study's primary instances (each agent once per task and
// language); later trials are the stochastic repeats of Table 5.
const MainTrial = 1

// Project is one project of a study with what the metrics need.
type Project struct {
	Rel      string            `json:"project"`
	Agent    string            `json:"agent"`
	Language schemas.Ecosystem `json:"language"`
	Trial    int               `json:"trial"`
	Problem  int64             `json:"problem"`
	Domain   string            `json:"domain"`
	// WorkedFirst is first-attempt success (e(0) empty); MadeToWork final success.
	WorkedFirst bool `json:"worked_first_time"`
	MadeToWork  bool `json:"made_to_work"`
	// Rounds is i* for a project made to work (the round it first ran), the rounds spent
	// for one that was not; nil when the study did not record it.
	Rounds *int `json:"repair_rounds"`
	// FirstError is e(0) as recorded; ErrorClass its class for a C++ project that failed
	// at round 0 (annotated, or classified by ClassifyCPPError).
	FirstError string `json:"first_error,omitempty"`
	ErrorClass string `json:"error_class,omitempty"`
	// D1 is the declared set of the project as written, as comparison keys (deps.Key);
	// D1Unreadable says why it is not measured.
	D1           []string `json:"d1"`
	D1Unreadable string   `json:"d1_unreadable,omitempty"`
	// D2 and D3 are the final project's installed and traced sets (successful projects);
	// LayersReason says why they are not measured.
	D2           []string `json:"d2"`
	D3           []string `json:"d3"`
	HasLayers    bool     `json:"layers_measured"`
	LayersReason string   `json:"layers_reason,omitempty"`
	// D2FromD1 says why D2 is D1 (a C++ project whose CMake configure could not be
	// read: the paper's D2 := D1); empty when D2 was measured.
	D2FromD1 string `json:"d2_from_d1,omitempty"`
}

// Skip is a project (or folder) the report left out of everything, or of some metrics,
// and why.
type Skip struct {
	Ref     string `json:"ref"`
	Reason  string `json:"reason"`
	Metrics string `json:"metrics"` // "all", or the metrics it is left out of
}

// Study is a study folder read for the report.
type Study struct {
	Dir      string
	Projects []Project
	Skipped  []Skip
	Problems map[int64]studylayout.Problem
	// Paper is set when the study was read the paper's way (LoadOptions.Paper).
	Paper bool
}

// Final is the final state of a successful project, for a Measurer.
type Final struct {
	Rel       string
	Ecosystem schemas.Ecosystem
	// Dir is repaired/ (or written/ when the project worked first time).
	Dir            string
	RunCommand     string
	ResolveCommand string
	SystemPackages []string
	// Cutoff is the registry cut-off: when the repair was saved (when the project was
	// written, for one that worked first time).
	Cutoff schemas.Cutoff
}

// Measurer measures D2 and D3 of a successful project's final state (through the core,
// memoised in the store: see CoreMeasurer).
type Measurer interface {
	Measure(ctx context.Context, f Final) (*studylayout.Layers, error)
}

// LoadOptions configure Load.
type LoadOptions struct {
	// Problems is the problem list (data/problems.json); the study's problems.json fills or
	// overrides it.
	Problems []studylayout.Problem
	// Measure measures the successful projects that have no layers.json; nil leaves them
	// out of the metrics that need D2 and D3, saying so.
	Measure Measurer
	// Progress, when set, is told each project measured.
	Progress func(rel string, cached bool)
	// Paper reads D1 and compares names the paper's way (see Options.Paper).
	Paper bool
	// Jobs is how many projects are measured at once (default 1). With an Executor
	// whose Gate admits fewer, the others have their containers made ready meanwhile.
	Jobs int
}

// Load reads a study folder. A project that cannot be read (no meta.json, a malformed
// one, no written/, a folder outside the layout) is left out and named with its path in
// Study.Skipped; the error is for a study that cannot be read at all or for an
// infrastructure fault while measuring.
func Load(ctx context.Context, dir string, opts LoadOptions) (*Study, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("study: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("study %s is not a folder", dir)
	}
	lists := [][]studylayout.Problem{opts.Problems}
	own, err := studylayout.StudyProblems(dir)
	if err != nil {
		return nil, err
	}
	lists = append(lists, own)
	s := &Study{Dir: dir, Problems: studylayout.IndexProblems(lists...), Paper: opts.Paper}
	refs, rejects, err := studylayout.List(dir)
	if err != nil {
		return nil, err
	}
	for _, r := range rejects {
		s.Skipped = append(s.Skipped, Skip{Ref: r.Ref, Reason: r.Reason, Metrics: "all"})
	}
	// A later trial of an agent and language is a repeat of its main run: without the
	// main run's folder it is left out.
	mainRuns := map[string]bool{}
	for _, r := range refs {
		if r.Trial == MainTrial {
			mainRuns[r.Agent+"/"+string(r.Eco)] = true
		}
	}
	for _, r := range refs {
		if r.Trial != MainTrial && !mainRuns[r.Agent+"/"+string(r.Eco)] {
			s.Skipped = append(s.Skipped, Skip{Ref: r.Rel, Metrics: "all",
				Reason: fmt.Sprintf("trial %d of %s in %s has no main run (%s/%s-t%d/ is missing): repeats are compared with the main run", r.Trial, r.Agent, r.Language, r.Agent, r.Language, MainTrial)})
			continue
		}
		p, skip := loadProject(r, s.Problems, opts.Paper)
		if skip != nil {
			s.Skipped = append(s.Skipped, *skip)
			continue
		}
		s.Projects = append(s.Projects, *p)
	}
	if err := s.measure(ctx, opts); err != nil {
		return nil, err
	}
	sort.Slice(s.Skipped, func(i, j int) bool { return s.Skipped[i].Ref < s.Skipped[j].Ref })
	return s, nil
}

func readRegular(path string) ([]byte, bool, error) {
	st, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if !st.Mode().IsRegular() {
		return nil, false, errors.New("is not a regular file (a symbolic link or folder)")
	}
	b, err := os.ReadFile(path)
	return b, err == nil, err
}

// loadProject reads one project folder: meta.json, D1 of written/, and when present
// rounds.json and layers.json.
func loadProject(r studylayout.Project, problems map[int64]studylayout.Problem, paper bool) (*Project, *Skip) {
	skip := func(ref, format string, a ...any) *Skip {
		return &Skip{Ref: ref, Reason: fmt.Sprintf(format, a...), Metrics: "all"}
	}
	metaRel := r.Rel + "/" + studylayout.MetaFile
	b, ok, err := readRegular(filepath.Join(r.Dir, studylayout.MetaFile))
	switch {
	case err != nil:
		return nil, skip(metaRel, "%v", err)
	case !ok:
		return nil, skip(metaRel, "is missing; every project needs its %s (created_at, worked_first_time, made_to_work, ...)", studylayout.MetaFile)
	}
	meta, err := studylayout.ParseMeta(b)
	if err != nil {
		return nil, skip(metaRel, "%v", err)
	}
	written := filepath.Join(r.Dir, studylayout.WrittenDir)
	if st, err := os.Lstat(written); err != nil || !st.IsDir() {
		return nil, skip(r.Rel+"/"+studylayout.WrittenDir, "is missing or not a folder; the project as written (M(0)) goes in %s/", studylayout.WrittenDir)
	}
	p := &Project{Rel: r.Rel, Agent: r.Agent, Language: r.Eco, Trial: r.Trial, Problem: r.Problem,
		WorkedFirst: *meta.WorkedFirstTime, MadeToWork: *meta.MadeToWork, Rounds: meta.RepairRounds,
		FirstError: meta.Error, ErrorClass: meta.ErrorClass}
	if p.WorkedFirst {
		zero := 0
		p.Rounds = &zero
	}
	if prob, ok := problems[r.Problem]; ok {
		p.Domain = prob.Domain
	}
	if b, ok, err := readRegular(filepath.Join(r.Dir, studylayout.RoundsFile)); err != nil {
		return nil, skip(r.Rel+"/"+studylayout.RoundsFile, "%v", err)
	} else if ok {
		rd, err := studylayout.ParseRounds(b)
		if err != nil {
			return nil, skip(r.Rel+"/"+studylayout.RoundsFile, "%v", err)
		}
		switch {
		case rd.FirstRan != nil:
			p.Rounds = rd.FirstRan
		case len(rd.Rounds) > 0:
			n := len(rd.Rounds) - 1
			p.Rounds = &n
		}
		if len(rd.Rounds) > 0 && !rd.Rounds[0].Ran && rd.Rounds[0].Error != "" {
			p.FirstError = rd.Rounds[0].Error
		}
	}
	d1, err := declared(r.Eco, written, paper)
	switch {
	case err != nil:
		p.D1Unreadable = err.Error()
	case d1.Unreadable != "":
		p.D1Unreadable = d1.Unreadable
	default:
		names := make([]string, 0, len(d1.Deps)+len(d1.TestScope))
		for _, d := range d1.Deps {
			names = append(names, d.Name)
		}
		if paper {
			names = append(names, d1.TestScope...)
		}
		p.D1 = keyNames(r.Eco, names, paper)
	}
	if p.Language == schemas.EcosystemCPP && !p.WorkedFirst && p.ErrorClass == "" {
		p.ErrorClass = ClassifyCPPError(p.FirstError)
	}
	if !p.MadeToWork {
		p.LayersReason = "not made to work: D2 and D3 are defined for successful projects only"
		return p, nil
	}
	if b, ok, err := readRegular(filepath.Join(r.Dir, studylayout.LayersFile)); err != nil {
		return nil, skip(r.Rel+"/"+studylayout.LayersFile, "%v", err)
	} else if ok {
		l, err := studylayout.ParseLayers(b)
		if err != nil {
			return nil, skip(r.Rel+"/"+studylayout.LayersFile, "%v", err)
		}
		p.setLayers(l, paper)
	}
	return p, nil
}

// setLayers takes D2 and D3 from a layers record. A C++ D2 is what CMake configured
// (core/deps.CMakeInstalled); where it could not be measured, D2 is D1 (the paper's
// Resolve for CMake) and D2FromD1 says why.
func (p *Project) setLayers(l *studylayout.Layers, paper bool) {
	switch {
	case l.D3Unreadable != "":
		p.LayersReason = "D3 not measured: " + l.D3Unreadable
		return
	case l.D2Unreadable != "" && p.Language != schemas.EcosystemCPP:
		p.LayersReason = "D2 not measured: " + l.D2Unreadable
		return
	}
	p.D3 = keyNames(p.Language, l.D3, paper)
	switch {
	case p.Language != schemas.EcosystemCPP:
		p.D2 = keyNames(p.Language, l.D2, paper)
	case l.D2Unreadable != "":
		p.D2, p.D2FromD1 = append([]string{}, p.D1...), l.D2Unreadable
	case l.D2 == nil:
		p.D2, p.D2FromD1 = append([]string{}, p.D1...), "layers.json has no d2"
	default:
		p.D2 = keyNames(p.Language, l.D2, paper)
	}
	p.HasLayers, p.LayersReason = true, ""
}

// measure fills D2 and D3 of the successful projects that have no layers.json, measuring
// up to opts.Jobs of them at once.
func (s *Study) measure(ctx context.Context, opts LoadOptions) error {
	type job struct {
		p   *Project
		fin Final
	}
	var todo []job
	for i := range s.Projects {
		p := &s.Projects[i]
		if !p.MadeToWork || p.HasLayers || p.LayersReason != "" {
			continue
		}
		if opts.Measure == nil {
			p.LayersReason = "no layers.json and no engine to measure D2 and D3 (run the report with an engine)"
			continue
		}
		dir := filepath.Join(s.Dir, filepath.FromSlash(p.Rel))
		meta, err := readMeta(dir)
		if err != nil {
			return err
		}
		final := filepath.Join(dir, studylayout.RepairedDir)
		if p.WorkedFirst {
			final = filepath.Join(dir, studylayout.WrittenDir)
		} else if st, err := os.Stat(final); err != nil || !st.IsDir() {
			p.LayersReason = "made to work, but no repaired/ copy of the final project was saved: D2 and D3 cannot be measured"
			continue
		}
		field, date := "repaired_at", meta.RepairedAt
		if date == "" {
			field, date = "created_at", meta.CreatedAt
		}
		cutoff, err := schemas.ParseCutoff(date)
		if err != nil {
			return fmt.Errorf("%s: %s %s: %w", p.Rel, studylayout.MetaFile, field, err)
		}
		todo = append(todo, job{p, Final{Rel: p.Rel, Ecosystem: p.Language, Dir: final,
			RunCommand: meta.RunCommand, ResolveCommand: meta.ResolveCommand, SystemPackages: meta.SystemPackages, Cutoff: cutoff}})
	}
	// Measured at once, up to Jobs; the first fault (in the projects' order) stops the rest.
	mctx, cancel := context.WithCancel(ctx)
	defer cancel()
	layers := make([]*studylayout.Layers, len(todo))
	errs := make([]error, len(todo))
	sem := make(chan struct{}, max(opts.Jobs, 1))
	var wg sync.WaitGroup
	for i, j := range todo {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if mctx.Err() != nil {
				errs[i] = mctx.Err()
				return
			}
			layers[i], errs[i] = opts.Measure.Measure(mctx, j.fin)
			var nm *NotMeasuredError
			if errs[i] != nil && !errors.As(errs[i], &nm) {
				cancel()
			}
		}()
	}
	wg.Wait()
	var first error
	for i, j := range todo {
		var nm *NotMeasuredError
		switch err := errs[i]; {
		case err == nil:
			j.p.setLayers(layers[i], opts.Paper)
		case errors.As(err, &nm):
			j.p.LayersReason = nm.Reason
		case first == nil || (errors.Is(first, context.Canceled) && ctx.Err() == nil):
			first = fmt.Errorf("%s: %w", j.p.Rel, err)
		}
	}
	return first
}

// NotMeasuredError is a Measurer's answer for a project whose final state did not run
// when measured: the project is left out of the D2/D3 metrics with the reason.
type NotMeasuredError struct{ Reason string }

func (e *NotMeasuredError) Error() string { return e.Reason }

func readMeta(dir string) (*studylayout.Meta, error) {
	b, err := os.ReadFile(filepath.Join(dir, studylayout.MetaFile))
	if err != nil {
		return nil, err
	}
	return studylayout.ParseMeta(b)
}

// declared reads D1 of the project as written: every manifest envgap reads, or with
// paper the one file the paper's ParseManifest reads (requirements.txt, package.json,
// pom.xml, CMakeLists.txt; none: an empty set).
func declared(eco schemas.Ecosystem, dir string, paper bool) (deps.Declared, error) {
	fsys := os.DirFS(dir)
	if !paper {
		return deps.ParseManifests(eco, fsys)
	}
	m := PaperManifest[eco]
	if ok, err := deps.IsFile(fsys, m); err != nil || !ok {
		return deps.Declared{DepSet: schemas.DepSet{Deps: []schemas.Dependency{}}}, err
	}
	return deps.ParseManifestPaths(eco, fsys, []string{m})
}

// PaperManifest is the one manifest file the paper's ParseManifest reads per language.
var PaperManifest = map[schemas.Ecosystem]string{
	schemas.EcosystemPython: "requirements.txt", schemas.EcosystemJavaScript: "package.json",
	schemas.EcosystemJava: "pom.xml", schemas.EcosystemCPP: "CMakeLists.txt",
}

// keyNames returns the sorted, distinct comparison keys of package names: deps.Key, or
// with paper the names as the paper compared them (deps.Key without the C++ mapping of
// CMake package names to libraries: lower case only).
func keyNames(eco schemas.Ecosystem, names []string, paper bool) []string {
	set := map[string]bool{}
	for _, n := range names {
		k := deps.Key(eco, n)
		if paper && eco == schemas.EcosystemCPP {
			k = strings.ToLower(strings.TrimSpace(n))
		}
		if k != "" {
			set[k] = true
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ClassifyCPPError puts the first-round error of a C++ project into one of the paper's
// classes (Table 6): SystemLib, a find_package or pkg-config failure for a system library
// the clean image lacks; FetchFail, a FetchContent network or archive error; Other,
// everything else (compilation, missing header, linker, run time). Empty text is Other.
func ClassifyCPPError(text string) string {
	if strings.Contains(text, "Could NOT find ") { // FindPackageHandleStandardArgs
		return studylayout.ErrorSystemLib
	}
	t := strings.ToLower(text)
	for _, s := range []string{
		"could not find a package configuration file", // find_package in config mode
		"by not providing \"find",
		"required by 'virtual:world', not found", // pkg-config via pkg_check_modules
		"none of the required",                   // pkg_search_module
		"no package '",                           // pkg-config
	} {
		if strings.Contains(t, s) {
			return studylayout.ErrorSystemLib
		}
	}
	for _, s := range []string{
		"fetchcontent", "failed to clone", "could not resolve host", "unable to access",
		"downloading failed", "download failed", "error: downloading", "hash mismatch",
		"failed to download", "ext_download", "couldn't resolve host", "connection timed out",
	} {
		if strings.Contains(t, s) {
			return studylayout.ErrorFetchFail
		}
	}
	return studylayout.ErrorOther
}
