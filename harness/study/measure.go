package study

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/core/recipe"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/lib/studylayout"
	"github.com/envgap/envgap/schemas"
)

// MemoStage is the store's memo stage of measured layers: key the digest of the run's
// spec and image, value the digest of a studylayout.Layers.
const MemoStage = "study-layers"

// Store is what the study needs of the store.
type Store interface {
	data.ObjectReader
	data.ObjectWriter
	data.Memos
	// Missing lists what is lost at or below an object (catalog.Catalog has it): a
	// memoised run with lost parts is run again.
	Missing(d schemas.Digest) []string
}

// Executor runs a study project's state in the clean image through the core: the
// resolve steps, then the run under trace (the core's "after" side), so a successful run
// carries D2 and D3.
type Executor struct {
	Core   *core.Core
	Store  Store
	Limits sandbox.Limits
	// Gate, when set, bounds how many of its runs execute their steps at once (core.Gate);
	// their containers are made ready outside it.
	Gate *core.Gate
	// RunSpec runs a spec the memo does not answer (nil: Core.Run); tests and benchmarks
	// replace it.
	RunSpec func(ctx context.Context, spec core.Spec) (*schemas.Run, schemas.Digest, error)

	mu     sync.Mutex
	images map[string]string
}

// Exec is one execution of a project state.
type Exec struct {
	Run    *schemas.Run
	Digest schemas.Digest
	Cached bool
}

// Recipe returns the commands of a study project: the default recipe of its files (which
// runs a setup.sh first), with the study's run and resolve commands when it has them.
func Recipe(eco schemas.Ecosystem, files []core.File, run, resolve string) (schemas.Recipe, error) {
	r, err := recipe.Default(eco, core.FS(files), recipe.Options{RunCommand: run})
	if err != nil {
		return r, err
	}
	if resolve != "" {
		r.ResolveCommand = resolve
		if hasFile(files, studylayout.SetupScriptPath) {
			r.ResolveCommand = "bash " + studylayout.SetupScriptPath + " && " + resolve
		}
	}
	r.ReproCommand = r.ResolveCommand + " && " + r.RunCommand
	return r, nil
}

func hasFile(files []core.File, p string) bool {
	for _, f := range files {
		if f.Path == p {
			return true
		}
	}
	return false
}

// WithSetup returns files with a setup.sh that installs the system packages (the
// project's own setup.sh runs after the installation), as a Lite fix carries them.
func WithSetup(files []core.File, packages []string) ([]core.File, error) {
	if len(packages) == 0 {
		return files, nil
	}
	existing := ""
	out := make([]core.File, 0, len(files)+1)
	for _, f := range files {
		if f.Path == studylayout.SetupScriptPath {
			existing = string(f.Content)
			continue
		}
		out = append(out, f)
	}
	s, err := studylayout.SetupScript(packages, existing)
	if err != nil {
		return nil, err
	}
	return append(out, core.File{Path: studylayout.SetupScriptPath, Content: []byte(s), Mode: 0o755}), nil
}

func (e *Executor) imageID(ctx context.Context, name string) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if id, ok := e.images[name]; ok {
		return id, nil
	}
	id, err := e.Core.ImageID(ctx, name)
	if err != nil {
		return "", &core.InfraError{Err: fmt.Errorf("image %s: %w (run envgap build-images)", name, err)}
	}
	if e.images == nil {
		e.images = map[string]string{}
	}
	e.images[name] = id
	return id, nil
}

// Execute runs one project state, memoised in the store by the run's spec and image (the
// memo verify uses for its runs), so a resumed study or a second report runs nothing again.
func (e *Executor) Execute(ctx context.Context, id string, files []core.File, rec schemas.Recipe, cutoff schemas.Cutoff) (*Exec, error) {
	spec := core.Spec{InstanceID: id, Side: core.SideAfter, Project: files, Recipe: rec, Cutoff: cutoff, Limits: e.Limits, Gate: e.Gate}
	if rec.Image == "" {
		rec.Image = rec.Ecosystem.Image()
	}
	img, err := e.imageID(ctx, rec.Image)
	if err != nil {
		return nil, err
	}
	run := e.RunSpec
	if run == nil {
		run = e.Core.Run
	}
	r, d, cached, err := core.Memoised(ctx, e.Store, run, spec, img, "", 0)
	if err != nil {
		return nil, err
	}
	return &Exec{Run: r, Digest: d, Cached: cached}, nil
}

// RunKey is the memo key of a run: its spec's digest and the image's id (the memo key of
// core.Memoised, first repeat, no salt).
func RunKey(spec core.Spec, imageID string) (schemas.Digest, error) {
	return core.MemoKey(spec, imageID, "", 0)
}

// Failure returns the failing step of a run and its output's tail (at most
// studylayout.MaxErrorBytes), the error e(i) the agent gets back; ok false when the run
// resolved and ran.
func (e *Executor) Failure(r *schemas.Run) (step, text string, ok bool, err error) {
	if r.Resolved {
		return "", "", false, nil
	}
	for _, st := range r.Steps {
		if !core.IsProjectStep(st.Name) || !st.Failed() {
			continue
		}
		out, err := e.Store.Get(st.Output)
		if err != nil {
			return "", "", false, err
		}
		s := string(out)
		if len(s) > studylayout.MaxErrorBytes {
			s = "[... " + fmt.Sprint(len(s)-studylayout.MaxErrorBytes) + " bytes before this cut ...]\n" + s[len(s)-studylayout.MaxErrorBytes:]
		}
		words := fmt.Sprintf("exit %d", st.ExitCode)
		if st.TimedOut {
			words = "timed out"
		}
		return st.Name, fmt.Sprintf("$ %s\n%s\n[%s %s]", st.Command, strings.TrimRight(s, "\n"), st.Name, words), true, nil
	}
	return "run", "the project did not run: no step of it failed, but the run step is missing", true, nil
}

// LayersOf returns D2 and D3 of a successful run as a layers record.
func LayersOf(r *schemas.Run, d schemas.Digest) *studylayout.Layers {
	names := func(ds schemas.DepSet) []string {
		out := []string{}
		for _, x := range ds.Deps {
			out = append(out, x.Name)
		}
		sort.Strings(out)
		return out
	}
	return &studylayout.Layers{D2: names(r.D2), D3: names(r.D3), D2Unreadable: r.D2.Unreadable, D3Unreadable: r.D3.Unreadable, Run: d}
}

// CoreMeasurer measures D2 and D3 of successful projects by running their final state
// through the core (memoised: see Executor.Execute).
type CoreMeasurer struct {
	Exec *Executor
	// Progress, when set, is told each project measured and whether the memo answered.
	Progress func(rel string, cached bool)
}

// Measure runs the final project and returns its layers. A final project that does not
// run now (a registry that changed, a project that depended on the study's machine) is a
// NotMeasuredError naming the failing step.
func (m *CoreMeasurer) Measure(ctx context.Context, f Final) (*studylayout.Layers, error) {
	files, err := core.ReadDir(f.Dir)
	if err != nil {
		return nil, &NotMeasuredError{Reason: "the final project cannot be read: " + err.Error()}
	}
	files, err = WithSetup(files, f.SystemPackages)
	if err != nil {
		return nil, &NotMeasuredError{Reason: err.Error()}
	}
	rec, err := Recipe(f.Ecosystem, files, f.RunCommand, f.ResolveCommand)
	if err != nil {
		return nil, &NotMeasuredError{Reason: "no commands to run the final project: " + err.Error()}
	}
	ex, err := m.Exec.Execute(ctx, "study:"+f.Rel, files, rec, f.Cutoff)
	if err != nil {
		return nil, err
	}
	if m.Progress != nil {
		m.Progress(f.Rel, ex.Cached)
	}
	step, text, failed, err := m.Exec.Failure(ex.Run)
	if err != nil {
		return nil, err
	}
	if failed {
		line := failureLine(text)
		return nil, &NotMeasuredError{Reason: fmt.Sprintf("the final project did not run when measured (step %s failed: %s; run %s)", step, line, ex.Digest.Short())}
	}
	return LayersOf(ex.Run, ex.Digest), nil
}

// failureLine is the line of a failure text that names the error: the last one with
// something besides terminal colour codes.
func failureLine(text string) string { return lastLine(string(core.StripANSI([]byte(text)))) }

// lastLine returns the last non-empty line of a failure text before its closing
// "[step exit N]" line: where the error usually is.
func lastLine(text string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if n := len(lines); n > 1 && strings.HasPrefix(lines[n-1], "[") {
		lines = lines[:n-1]
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	return ""
}
