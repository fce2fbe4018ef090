package study

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/envgap/envgap/lib/publish"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/core/untrusted"
	"github.com/envgap/envgap/lib/agent"
	"github.com/envgap/envgap/lib/studylayout"
	"github.com/envgap/envgap/schemas"
)

// Turn is one agent interaction of the protocol: Gen (round 0) or a Repair round.
type Turn struct {
	Round     int
	Language  schemas.Ecosystem
	Problem   studylayout.Problem
	Prompt    string // the Gen prompt (Figure 3), the same every round
	Feedback  string // e(round-1) verbatim; empty at round 0
	Errors    []string
	Workspace string // the project; the agent's working directory
	Dir       string // a folder of the agent's own outside the workspace (home, notes)
}

// TurnResult is what an agent's turn left besides the workspace.
type TurnResult struct {
	// RunCommand is the command that runs the program, when the agent said it (else the
	// default recipe's entry point is used).
	RunCommand string
	// Note says how the turn ended (exit code, a timeout), in words.
	Note string
	// Refused, when set, says why what the turn left cannot be used (the agent's fault: a
	// file of its folder that is a link, a FIFO, a device or over its bound): the round
	// fails with it as its error, without running the project.
	Refused string
}

// Agent is a coding agent the protocol drives. An error is an infrastructure fault (the
// agent could not be started, a provider outage): the project is not recorded.
type Agent interface {
	Turn(ctx context.Context, t Turn) (TurnResult, error)
}

// Environment variables of a command agent's turn (CommandAgent).
const (
	EnvPrompt         = "ENVGAP_STUDY_PROMPT"     // file: the Gen prompt
	EnvRound          = "ENVGAP_STUDY_ROUND"      // 0 (Gen), 1.. (Repair)
	EnvFeedback       = "ENVGAP_STUDY_FEEDBACK"   // file: e(round-1) verbatim; empty at round 0
	EnvErrors         = "ENVGAP_STUDY_ERRORS"     // folder: error-0.txt, error-1.txt, ... so far
	EnvLanguage       = "ENVGAP_STUDY_LANGUAGE"   // python, javascript, java, cpp
	EnvProblem        = "ENVGAP_STUDY_PROBLEM"    // the problem's number
	EnvRunCommandFile = "ENVGAP_RUN_COMMAND_FILE" // file the agent may write its run command to
	EnvWorkspace      = "ENVGAP_WORKSPACE"        // the project; also the working directory
	EnvTrajectoryFile = "ENVGAP_TRAJECTORY_FILE"  // where the agent may append its trajectory
	envHome           = "HOME"
)

// CommandRunner runs a shell command in dir with env added, killing it (and its process
// group) at timeout; it returns the exit code and whether it timed out. cmd wires the agent
// protocol's runner (lib/agent.RunCommand).
type CommandRunner func(ctx context.Context, command, dir string, env []string, timeout time.Duration) (exit int, timedOut bool, err error)

// CommandAgent is an agent command run in the workspace, one process per turn, with the
// ENVGAP_STUDY_* variables above: on the host (Run), or in a box per turn (Box).
type CommandAgent struct {
	Command string
	Run     CommandRunner
	Timeout time.Duration
	// Box, when set, runs each turn in a fresh box instead of on the host.
	Box *CommandBox
}

// CommandBox runs a command agent's turns in boxes (study run --agent-image): a container
// per turn from the agent image of the turn's language (built on its evaluation image),
// with the turn's folder (the workspace and the agent's folder) mounted at its own path,
// the registries at the turn's date, and the evaluation image's door plus the allowed
// hosts.
type CommandBox struct {
	Core      *core.Core
	Contained *agent.Contained
	Limits    sandbox.Limits
	Now       func() time.Time
}

// run runs the turn's command in a box; it returns the exit code, whether it timed out,
// and the connections the door refused.
func (b *CommandBox) run(ctx context.Context, t Turn, command string, env []string, timeout time.Duration) (int, bool, int, error) {
	now := time.Now
	if b.Now != nil {
		now = b.Now
	}
	// The turn's paths hold in the box as they are: the workspace and the agent's folder
	// are mounted read-write at their own paths (and nothing else of the host: the
	// project's staging folder beside them is not the agent's).
	root := filepath.Dir(t.Workspace)
	if !filepath.IsAbs(t.Workspace) || filepath.Dir(t.Dir) != root {
		return 0, false, 0, fmt.Errorf("a box needs the workspace %s absolute, with the agent's folder %s beside it", t.Workspace, t.Dir)
	}
	card := t.Language.Image()
	img, err := b.Contained.Image(ctx, card, b.Core)
	if err != nil {
		return 0, false, 0, err
	}
	res, refused, err := agent.RunInBox(ctx, agent.BoxCommand{Opener: b.Core,
		Spec: core.BoxSpec{InstanceID: fmt.Sprintf("study:%s-p%d-r%d", t.Language, t.Problem.Number, t.Round), Image: card,
			Cutoff: schemas.CutoffAt(now().Truncate(time.Second)), Dir: t.Workspace, WorkDir: t.Workspace,
			Mounts: []sandbox.Mount{{Source: t.Dir, Target: t.Dir, Writable: true}}, AgentImage: img, AllowHosts: b.Contained.AllowHosts, Limits: b.Limits},
		Dir: t.Workspace, Command: command, Env: env, Timeout: timeout, Own: root})
	if err != nil {
		return 0, false, 0, err
	}
	return res.ExitCode, res.TimedOut, agent.CountRefused(refused), nil
}

// runCommandFile is where a command agent may write its run command, in its folder; it
// is read up to maxRunCommandBytes.
const (
	runCommandFile     = "run_command.txt"
	maxRunCommandBytes = 64 << 10
)

// Turn runs the command once.
func (a *CommandAgent) Turn(ctx context.Context, t Turn) (TurnResult, error) {
	prompt := filepath.Join(t.Dir, "prompt.txt")
	feedback := filepath.Join(t.Dir, "feedback.txt")
	errs := filepath.Join(t.Dir, "errors")
	runFile := filepath.Join(t.Dir, runCommandFile)
	home := filepath.Join(t.Dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return TurnResult{}, err
	}
	// The agent's folder is its own: what the harness writes there replaces whatever the
	// last turn left at those names (a link to a host file, a FIFO), never through it.
	if err := untrusted.RemoveAll(t.Dir, "errors"); err != nil {
		return TurnResult{}, err
	}
	if err := os.Mkdir(errs, 0o755); err != nil {
		return TurnResult{}, err
	}
	for i, e := range t.Errors {
		if err := untrusted.WriteFile(t.Dir, fmt.Sprintf("errors/error-%d.txt", i), []byte(e), 0o644); err != nil {
			return TurnResult{}, err
		}
	}
	if err := untrusted.WriteFile(t.Dir, "prompt.txt", []byte(t.Prompt), 0o644); err != nil {
		return TurnResult{}, err
	}
	if err := untrusted.WriteFile(t.Dir, "feedback.txt", []byte(t.Feedback), 0o644); err != nil {
		return TurnResult{}, err
	}
	if err := untrusted.RemoveAll(t.Dir, runCommandFile); err != nil {
		return TurnResult{}, err
	}
	env := []string{
		EnvPrompt + "=" + prompt, EnvRound + "=" + fmt.Sprint(t.Round), EnvFeedback + "=" + feedback,
		EnvErrors + "=" + errs, EnvLanguage + "=" + string(t.Language), EnvProblem + "=" + fmt.Sprint(t.Problem.Number),
		EnvRunCommandFile + "=" + runFile, EnvWorkspace + "=" + t.Workspace,
		EnvTrajectoryFile + "=" + filepath.Join(t.Dir, trajectoryFile),
		envHome + "=" + home, "TMPDIR=" + home,
	}
	var (
		exit, refused int
		timedOut      bool
		err           error
	)
	if a.Box != nil {
		exit, timedOut, refused, err = a.Box.run(ctx, t, a.Command, env, a.Timeout)
	} else {
		exit, timedOut, err = a.Run(ctx, a.Command, t.Workspace, env, a.Timeout)
	}
	if err != nil {
		return TurnResult{}, fmt.Errorf("agent command: %w", err)
	}
	res := TurnResult{Note: fmt.Sprintf("agent exited %d", exit)}
	if timedOut {
		res.Note = fmt.Sprintf("agent timed out after %s", a.Timeout)
	}
	if refused > 0 {
		res.Note += fmt.Sprintf("; the box's door refused %d connection(s)", refused)
	}
	b, err := untrusted.ReadFile(t.Dir, runCommandFile, maxRunCommandBytes)
	switch {
	case errors.Is(err, untrusted.ErrUnsafe):
		res.Refused = "the agent's " + err.Error()
	case err == nil:
		res.RunCommand = strings.TrimSpace(string(b))
	}
	return res, nil
}

// RunOptions configure Run.
type RunOptions struct {
	Agent      Agent
	AgentName  string // the study's agent folder
	Model      string
	Languages  []schemas.Ecosystem
	Problems   []studylayout.Problem
	Trials     int
	MaxRepairs int
	Variant    string
	Out        string
	Jobs       int
	Exec       *Executor
	Now        func() time.Time
	// Progress, when set, is told each project finished (or skipped as done).
	Progress func(rel string, p *Protocol, skipped bool)
}

// Protocol is what one project's protocol came to.
type Protocol struct {
	WorkedFirst bool
	MadeToWork  bool
	Rounds      int // i* when made to work; the rounds spent otherwise
}

// RunResult counts a study run's projects.
type RunResult struct {
	Done, Skipped int
	Failed        []string // projects not recorded (an infrastructure fault), with the error
}

var agentNameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Job is one project of a study run: its folder in the study and what it runs.
type Job struct {
	Rel      string // <agent>/<language>-t<trial>/p<NN>
	Language schemas.Ecosystem
	Trial    int
	Problem  studylayout.Problem
}

// Plan checks o, makes its study folder absolute (the agent runs in its workspace: every
// path it is given must hold from there) and returns every project of the run, done or not.
func Plan(o *RunOptions) ([]Job, error) {
	switch {
	case !agentNameRe.MatchString(o.AgentName):
		return nil, fmt.Errorf("agent name %q: letters, digits, '.', '_' and '-' only (it names the study's folder)", o.AgentName)
	case o.Trials < 1:
		return nil, fmt.Errorf("trials %d: at least 1", o.Trials)
	case o.MaxRepairs < 0:
		return nil, fmt.Errorf("max repairs %d: 0 or more", o.MaxRepairs)
	case o.Variant != VariantExplicit && o.Variant != VariantImplicit:
		return nil, fmt.Errorf("variant %q: want %s or %s", o.Variant, VariantExplicit, VariantImplicit)
	case len(o.Problems) == 0 || len(o.Languages) == 0:
		return nil, errors.New("no problems or no languages")
	}
	out, err := filepath.Abs(o.Out)
	if err != nil {
		return nil, fmt.Errorf("study folder %s: %w", o.Out, err)
	}
	o.Out = out
	var ps []Job
	for _, l := range o.Languages {
		for t := 1; t <= o.Trials; t++ {
			for _, p := range o.Problems {
				ps = append(ps, Job{Rel: fmt.Sprintf("%s/%s-t%d/p%02d", o.AgentName, l, t, p.Number), Language: l, Trial: t, Problem: p})
			}
		}
	}
	return ps, nil
}

// Done says whether a project's folder is written whole (meta.json is written last).
func Done(o RunOptions, p Job) bool {
	_, err := os.Stat(filepath.Join(o.Out, filepath.FromSlash(p.Rel), studylayout.MetaFile))
	return err == nil
}

// ClearWork removes the leftovers of a run killed while writing a project. Only the run's
// starter calls it, before any project starts (workers of a --slurm run share the folder).
func ClearWork(o RunOptions) error {
	return os.RemoveAll(filepath.Join(o.Out, ".work"))
}

// RunJob runs the protocol for one project of Plan (o as Plan left it) and writes its
// folder whole; an error is an infrastructure fault and leaves no folder.
func RunJob(ctx context.Context, o RunOptions, p Job) (*Protocol, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	return runProject(ctx, o, p.Rel, p.Language, p.Problem)
}

// Run runs the protocol for every agent, language, trial and problem whose project folder
// is not in Out yet (a project is written whole, meta.json last, so an interrupted run
// resumes where it stopped). Projects run --jobs at a time.
func Run(ctx context.Context, o RunOptions) (*RunResult, error) {
	projects, err := Plan(&o)
	if err != nil {
		return nil, err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Jobs < 1 {
		o.Jobs = 1
	}
	if err := ClearWork(o); err != nil {
		return nil, err
	}
	res := &RunResult{}
	var mu sync.Mutex
	ch := make(chan Job)
	var wg sync.WaitGroup
	for w := 0; w < o.Jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				if Done(o, j) {
					mu.Lock()
					res.Skipped++
					mu.Unlock()
					if o.Progress != nil {
						o.Progress(j.Rel, nil, true)
					}
					continue
				}
				p, err := runProject(ctx, o, j.Rel, j.Language, j.Problem)
				mu.Lock()
				if err != nil {
					res.Failed = append(res.Failed, j.Rel+": "+err.Error())
				} else {
					res.Done++
				}
				mu.Unlock()
				if err == nil && o.Progress != nil {
					o.Progress(j.Rel, p, false)
				}
			}
		}()
	}
	for _, j := range projects {
		select {
		case ch <- j:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(ch)
	wg.Wait()
	ClearWork(o)
	sort.Strings(res.Failed)
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return res, nil
}

// runProject runs the protocol for one project and writes its folder.
func runProject(ctx context.Context, o RunOptions, rel string, l schemas.Ecosystem, prob studylayout.Problem) (*Protocol, error) {
	prompt, err := Prompt(prob, l, o.Variant)
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp(filepath.Join(o.Out, ".work"), "")
	if err != nil {
		if err := os.MkdirAll(filepath.Join(o.Out, ".work"), 0o755); err != nil {
			return nil, err
		}
		if work, err = os.MkdirTemp(filepath.Join(o.Out, ".work"), ""); err != nil {
			return nil, err
		}
	}
	defer os.RemoveAll(work)
	ws, agentDir, stage := filepath.Join(work, "workspace"), filepath.Join(work, "agent"), filepath.Join(work, "project")
	for _, d := range []string{ws, agentDir, stage} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	created := o.Now().UTC().Truncate(time.Second)
	date := created.Format(time.RFC3339)
	rec := studylayout.Rounds{Agent: o.AgentName, Model: o.Model, Variant: o.Variant, MaxRepairs: o.MaxRepairs}
	var written, final []core.File
	var errorsSoFar []string
	var layers *studylayout.Layers
	var runCommand string
	var sysPkgs []string
	p := &Protocol{}
	for round := 0; round <= o.MaxRepairs; round++ {
		t := Turn{Round: round, Language: l, Problem: prob, Prompt: prompt, Workspace: ws, Dir: agentDir, Errors: errorsSoFar}
		if round > 0 {
			t.Feedback = errorsSoFar[round-1]
		}
		tr, err := o.Agent.Turn(ctx, t)
		if err != nil {
			return nil, err
		}
		if tr.RunCommand != "" {
			runCommand = tr.RunCommand
		}
		files, err := readWorkspace(ws)
		refused := tr.Refused
		if errors.Is(err, untrusted.ErrUnsafe) {
			// What the agent left cannot be read; the project as it was is kept.
			refused, files, err = "the workspace "+unsafeWords(err), final, nil
		}
		if err != nil {
			return nil, err
		}
		if round == 0 {
			written = files
		}
		final = files
		rd := studylayout.Round{Round: round, Agent: tr.Note}
		sysPkgs = aptPackages(files)
		rd.SystemPackages = sysPkgs
		var (
			ran        bool
			text, step string
			d          schemas.Digest
			run        *schemas.Run
		)
		if refused != "" {
			text, step = refused+"; the project was not run", "agent"
		} else if ran, text, step, d, run, err = execute(ctx, o.Exec, rel, l, files, runCommand, schemas.CutoffAt(created)); err != nil {
			return nil, err
		}
		rd.Ran, rd.Error, rd.Step, rd.Run = ran, text, step, d
		rec.Rounds = append(rec.Rounds, rd)
		if ran {
			i := round
			rec.FirstRan = &i
			p.MadeToWork, p.WorkedFirst, p.Rounds = true, round == 0, round
			layers = LayersOf(run, d)
			break
		}
		errorsSoFar = append(errorsSoFar, text)
		p.Rounds = round
	}
	// The project folder, written in stage and moved into place whole.
	if err := writeFiles(filepath.Join(stage, studylayout.WrittenDir), written); err != nil {
		return nil, err
	}
	if !p.WorkedFirst {
		if err := writeFiles(filepath.Join(stage, studylayout.RepairedDir), final); err != nil {
			return nil, err
		}
	}
	worked, made := p.WorkedFirst, p.MadeToWork
	rounds := p.Rounds
	meta := studylayout.Meta{CreatedAt: date, WorkedFirstTime: &worked, MadeToWork: &made, RepairRounds: &rounds,
		Notes: fmt.Sprintf("envgap study run: agent %s%s, %s prompt, up to %d repair rounds", o.AgentName, modelWords(o.Model), o.Variant, o.MaxRepairs)}
	if !worked {
		meta.RepairedAt = o.Now().UTC().Truncate(time.Second).Format(time.RFC3339)
		meta.Error = errorLine(l, errorsSoFar[0])
		if made {
			meta.SystemPackages = sysPkgs
		}
	}
	if made {
		meta.RunCommand = runCommand
		if meta.RunCommand == "" {
			r, _ := Recipe(l, final, "", "")
			meta.RunCommand = r.RunCommand
		}
	}
	if err := writeJSON(filepath.Join(stage, studylayout.RoundsFile), rec); err != nil {
		return nil, err
	}
	if layers != nil {
		if err := writeJSON(filepath.Join(stage, studylayout.LayersFile), layers); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(stage, studylayout.PromptFile), []byte(prompt), 0o644); err != nil {
		return nil, err
	}
	if err := writeJSON(filepath.Join(stage, studylayout.MetaFile), meta); err != nil {
		return nil, err
	}
	dst := filepath.Join(o.Out, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return nil, err
	}
	// A folder already there (one without meta.json: an unfinished earlier attempt) is
	// swapped out in one step and goes with the work folder.
	if err := (publish.Folder{Out: dst, Tag: "project"}).Publish(stage); err != nil {
		return nil, err
	}
	return p, nil
}

func modelWords(m string) string {
	if m == "" {
		return ""
	}
	return " (model " + m + ")"
}

// execute resolves and runs one project state in the clean image. A project the default
// recipe cannot run (no manifest, no entry point) fails with that reason as its error.
func execute(ctx context.Context, ex *Executor, rel string, l schemas.Ecosystem, files []core.File, run string, cutoff schemas.Cutoff) (ran bool, text, step string, d schemas.Digest, r *schemas.Run, err error) {
	if len(files) == 0 {
		return false, "the workspace is empty: no project was written", "resolve", d, nil, nil
	}
	rec, rerr := Recipe(l, files, run, "")
	if rerr != nil {
		return false, rerr.Error(), "resolve", d, nil, nil
	}
	e, err := ex.Execute(ctx, "study:"+rel, files, rec, cutoff)
	if err != nil {
		return false, "", "", d, nil, err
	}
	step, text, failed, err := ex.Failure(e.Run)
	if err != nil {
		return false, "", "", d, nil, err
	}
	return !failed, text, step, e.Digest, e.Run, nil
}

var aptRe = regexp.MustCompile(`(?m)\bapt(?:-get)?\s+(?:-\S+\s+)*install\s+([^\n;&|]*)`)

// aptPackages returns the Debian packages a project's setup.sh installs with apt.
func aptPackages(files []core.File) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range files {
		if f.Path != studylayout.SetupScriptPath {
			continue
		}
		for _, m := range aptRe.FindAllStringSubmatch(string(f.Content), -1) {
			for _, w := range strings.Fields(m[1]) {
				if strings.HasPrefix(w, "-") || studylayout.CheckPackageName(w) != nil || seen[w] {
					continue
				}
				seen[w] = true
				out = append(out, w)
			}
		}
	}
	sort.Strings(out)
	return out
}

// readWorkspace reads the project an agent left (core.ReadAgentDir: links kept as links;
// a hard link, a FIFO, a device or more than the bound is an error wrapping an
// *untrusted.Error).
func readWorkspace(ws string) ([]core.File, error) {
	entries, err := os.ReadDir(ws)
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, nil
	}
	return core.ReadAgentDir(ws)
}

// unsafeWords is the *untrusted.Error in err ("holds P, which is a FIFO ...").
func unsafeWords(err error) string {
	var ue *untrusted.Error
	if errors.As(err, &ue) {
		return "holds " + ue.Path + ", which " + ue.Why
	}
	return err.Error()
}

func writeFiles(dir string, files []core.File) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if f.Link != "" {
			if err := os.Symlink(f.Link, p); err != nil {
				return err
			}
			continue
		}
		mode := f.Mode.Perm()
		if mode == 0 {
			mode = 0o644
		}
		if err := os.WriteFile(p, f.Content, mode); err != nil {
			return err
		}
	}
	return nil
}

func writeJSON(p string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(p, append(b, '\n'), 0o644)
}

// errorLine is the line of a failure that identifies it, for meta.json's error: the
// failure signature when one is recognised, else the last line that says "error" (not
// npm's pointer to its log), else the last line.
func errorLine(l schemas.Ecosystem, text string) string {
	if sig, ok := schemas.FailureSignature(l, text); ok {
		return sig
	}
	lines := strings.Split(text, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		x := strings.TrimSpace(lines[i])
		if strings.Contains(strings.ToLower(x), "error") && !strings.Contains(x, "complete log of this run") && !strings.HasPrefix(x, "[") {
			return x
		}
	}
	return lastLine(text)
}
