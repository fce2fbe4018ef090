package propose

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/core/untrusted"
	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/lib/agent"
	"github.com/envgap/envgap/lib/envfiles"
	"github.com/envgap/envgap/schemas"
)

// Version names the rules that turn an agent's work into a proposal. It is part of the
// memo key: an unchanged candidate, reproduction and agent command are not asked again
// under the same version.
const Version = "envgap-propose/1"

// The files an agent gets besides the run --agent protocol's (docs/agents.md,
// "Reference fixes by an agent").
const (
	// EnvFailureLog names a file holding the failing log of the reproduction: every step
	// of the run before the fix, with its command, output and exit code.
	EnvFailureLog = "ENVGAP_FAILURE_LOG"
	// EnvCommandsFile names a file the agent may write to propose commands (a JSON object
	// with any of bootstrap_command, resolve_command, repro_command, run_command,
	// expected_failure_regex) where the generated ones are wrong.
	EnvCommandsFile = "ENVGAP_COMMANDS_FILE"
	// EnvRecipeFile names a file holding the commands the reproduction ran (JSON).
	EnvRecipeFile = "ENVGAP_RECIPE_FILE"

	failureLogName = "failure.log"
	commandsName   = "commands.json"
	recipeName     = "recipe.json"
)

// maxFailureLog bounds the failing log given to the agent (the end of each step's
// output is kept: that is where errors are).
const maxFailureLog = 256 << 10

// PatchFunc returns a fix as a unified diff in the card's form against the project's
// files (the crawl's; cmd wires it in).
type PatchFunc func(project, fix []schemas.File) (string, error)

// Env is what a propose run works on: the store, and the evaluation core's runner (which
// runs the repro command's specs, within Limits) and checkout (a GitHub candidate's base
// commit alone).
type Env struct {
	Store    catalog.Store
	Runner   core.SpecRunner
	Limits   sandbox.Limits
	Checkout core.ProjectSource
}

// Options configure a propose run. Open, Materialize, Agent and Patch are required.
type Options struct {
	// Open opens the environment (the store, verify's engines and registry proxy) and what
	// closes it, first.
	Open        func() (*Env, io.Closer, error)
	Materialize agent.MaterializeFunc
	Patch       PatchFunc
	// Agent is the agent command, run with sh -c in the workspace.
	Agent string
	// Model, when set, returns envgap's own model agent (propose --agent
	// openai|bedrock; nil when Agent names none), acting in a box: then Agent is ignored
	// and the Runner must open boxes (agent.BoxOpener). Called once Open has opened.
	Model func(context.Context) (*agent.ModelAgent, error)
	// Contained, when set, returns how the agent command runs in a box (--agent-image;
	// nil: on this host). Called once Open has opened, with its Env's Runner when that
	// checks agent images (else nil).
	Contained func(ctx context.Context, checker agent.ImageChecker) (*agent.Contained, error)
	Timeout   time.Duration
	// IDs restricts the run to these candidates; empty: every Reported candidate whose
	// failure reproduces and that has no fix.
	IDs []string
	// WorkDir holds the workspaces while they run; OutDir keeps each agent's stdout,
	// stderr and trajectory (empty: not kept).
	WorkDir, OutDir string
	// ReproCommand is how the agent runs repro_command (envgap agent-repro); empty: none.
	ReproCommand string
	Now          func() time.Time
	Progress     func(Result)
}

// job is a propose run opened: its options, its environment and its agent.
type job struct {
	Options
	*Env
	Model     *agent.ModelAgent
	Contained *agent.Contained
}

// Result is what propose did for one candidate.
type Result struct {
	InstanceID string         `json:"instance_id"`
	Proposal   schemas.Digest `json:"proposal,omitzero"`
	MadeBy     string         `json:"made_by,omitempty"`
	Files      []string       `json:"files,omitempty"`
	// Refused says why the proposal cannot be checked (recorded on the proposal).
	Refused string `json:"refused,omitempty"`
	// Cached: the same agent was asked before for this candidate; not asked again.
	Cached bool `json:"cached"`
	// Error is a fault (no proposal was recorded; the next run asks again).
	Error string `json:"error,omitempty"`
}

// Report is what a propose run did.
type Report struct {
	Results  []Result `json:"results"`
	Proposed int      `json:"proposed"`
	Refused  int      `json:"refused"`
	Cached   int      `json:"cached"`
	Failed   int      `json:"failed"`
}

// memoKey is the memo key of asking one agent for one candidate's fix (stage "propose").
type memoKey struct {
	Version      string         `json:"version"`
	Candidate    schemas.Digest `json:"candidate"`
	Reproduction schemas.Digest `json:"reproduction"`
	Agent        string         `json:"agent"`
}

// target is a candidate that can be given to an agent, with its reproduction.
type target struct {
	cand  catalog.CandidateEntry
	repro schemas.Verdict
	rd    schemas.Digest
}

// Run asks the agent for a reference fix of every selected candidate and records each
// answer as a proposal. A candidate asked before with the same agent, candidate and
// reproduction is not asked again. A fault leaves the candidate without a proposal
// (Result.Error) and the next run asks again.
func Run(ctx context.Context, o Options) (*Report, error) {
	env, closer, err := o.Open()
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	opts := &job{Options: o, Env: env}
	if o.Model != nil {
		if opts.Model, err = o.Model(ctx); err != nil {
			return nil, err
		}
	}
	if o.Contained != nil {
		checker, _ := env.Runner.(agent.ImageChecker)
		if opts.Contained, err = o.Contained(ctx, checker); err != nil {
			return nil, err
		}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 20 * time.Minute
	}
	targets, err := selectTargets(opts.Store, opts.IDs)
	if err != nil {
		return nil, err
	}
	rep := &Report{Results: []Result{}}
	// A provider fault no candidate can escape (credentials, unknown model) ends the asking:
	// the candidates after it get it as their fault, without a box.
	var giveUp agent.GiveUp
	for _, tg := range targets {
		if ctx.Err() != nil {
			break
		}
		var r Result
		if stop := giveUp.Held(); stop != nil {
			r = Result{InstanceID: tg.cand.InstanceID, Error: stop.Error()}
		} else {
			var err error
			r, err = one(ctx, tg, opts)
			giveUp.Note(err)
		}
		switch {
		case r.Error != "":
			rep.Failed++
		case r.Cached:
			rep.Cached++
		case r.Refused != "":
			rep.Refused++
		default:
			rep.Proposed++
		}
		rep.Results = append(rep.Results, r)
		if opts.Progress != nil {
			opts.Progress(r)
		}
	}
	return rep, ctx.Err()
}

// Eligible reports whether a candidate can be given to an agent: a Reported candidate
// with no reference fix whose failure reproduced (a reproduction is recorded), and no
// verdict yet. The reason says why not.
func Eligible(st catalog.Store, c *catalog.CandidateEntry) (schemas.Verdict, schemas.Digest, string, error) {
	var v schemas.Verdict
	switch {
	case c.Set != schemas.SourceReported:
		return v, schemas.Digest{}, fmt.Sprintf("it is a %s candidate; propose writes fixes for Reported issues", c.Set), nil
	case len(c.GoldFiles) > 0:
		return v, schemas.Digest{}, "it has a reference fix already", nil
	}
	// The reproduction: a reproductions/<id> record, or a not_checked verdict of a failure
	// that reproduced without a fix (a verdict is no reproduction when it decided anything
	// else).
	v, d, err := st.Verdict(c.InstanceID)
	switch {
	case err == nil && v.Outcome != schemas.OutcomeNotChecked:
		return v, d, "it has a verdict already (" + string(v.Outcome) + ")", nil
	case err != nil && !errors.Is(err, data.ErrNotFound):
		return v, d, "", err
	case err != nil:
		d, err = st.Ref(data.ReproductionRef(c.InstanceID))
		if errors.Is(err, data.ErrNotFound) {
			return v, d, "its failure has not been reproduced (run envgap verify first)", nil
		} else if err != nil {
			return v, d, "", err
		}
		if err := st.GetJSON(d, &v); err != nil {
			return v, d, "", fmt.Errorf("reproduction of %s: %w", c.InstanceID, err)
		}
	}
	if len(v.Before) == 0 {
		return v, d, "its verdict records no run before the fix", nil
	}
	if v.Candidate != c.Digest {
		return v, d, "its reproduction was made for another version of the candidate (run envgap verify again)", nil
	}
	return v, d, "", nil
}

func selectTargets(st catalog.Store, ids []string) ([]target, error) {
	all, err := st.Candidates()
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	var out []target
	var problems []string
	for i := range all {
		c := &all[i]
		if len(ids) > 0 && !want[c.InstanceID] {
			continue
		}
		delete(want, c.InstanceID)
		v, d, why, err := Eligible(st, c)
		if err != nil {
			return nil, err
		}
		if why != "" {
			if len(ids) > 0 {
				problems = append(problems, fmt.Sprintf("%s: %s", c.InstanceID, why))
			}
			continue
		}
		out = append(out, target{cand: *c, repro: v, rd: d})
	}
	for id := range want {
		problems = append(problems, fmt.Sprintf("%s: no such candidate in the store (envgap status lists them)", id))
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, fmt.Errorf("propose: cannot ask for a fix of:\n  %s", strings.Join(problems, "\n  "))
	}
	return out, nil
}

// one asks for one candidate's fix; the error is the fault in Result.Error, if any.
func one(ctx context.Context, tg target, opts *job) (Result, error) {
	c := &tg.cand
	res := Result{InstanceID: c.InstanceID}
	fail := func(err error) (Result, error) {
		res.Error = err.Error()
		return res, err
	}
	key, err := schemas.DigestOf(memoKey{Version, c.Digest, tg.rd, agentName(opts)})
	if err != nil {
		return fail(err)
	}
	if d, err := opts.Store.Memo("propose", key); err == nil {
		var p schemas.Proposal
		if err := opts.Store.GetJSON(d, &p); err == nil && p.Kind == schemas.KindProposal {
			if err := opts.Store.SetRef(Ref(p.InstanceID, d), d); err != nil {
				return fail(err)
			}
			return resultOf(p, d, true), nil
		}
	}
	p, err := ask(ctx, tg, opts)
	if err != nil {
		return fail(err)
	}
	d, err := opts.Store.PutJSON(p)
	if err != nil {
		return fail(err)
	}
	if err := opts.Store.SetRef(Ref(p.InstanceID, d), d); err != nil {
		return fail(err)
	}
	if err := opts.Store.SetMemo("propose", key, d); err != nil {
		return fail(err)
	}
	return resultOf(*p, d, false), nil
}

func resultOf(p schemas.Proposal, d schemas.Digest, cached bool) Result {
	r := Result{InstanceID: p.InstanceID, Proposal: d, MadeBy: p.MadeBy, Refused: p.Refused, Cached: cached}
	for _, f := range p.GoldFiles {
		r.Files = append(r.Files, f.Path)
	}
	return r
}

// Ref is the ref of one proposal: proposals/<instance_id>/<12 hex of its digest>.
func Ref(id string, d schemas.Digest) string { return data.ProposalRef(id, d) }

// ask runs the agent once in a fresh workspace at base_commit and turns what it did into
// a proposal (refused, with the reason, when it cannot be checked).
func ask(ctx context.Context, tg target, opts *job) (*schemas.Proposal, error) {
	c := &tg.cand
	t := c.ToTask()
	t.BootstrapCommand, t.ResolveCommand = tg.repro.Recipe.BootstrapCommand, tg.repro.Recipe.ResolveCommand
	t.ReproCommand, t.RunCommand = tg.repro.Recipe.ReproCommand, tg.repro.Recipe.RunCommand
	t.D2Command, t.ExpectedFailureRegex = tg.repro.Recipe.D2Command, tg.repro.Recipe.ExpectedFailureRegex
	if tg.repro.FailureSignature != "" {
		t.FailureSignature = tg.repro.FailureSignature
	}
	work := opts.WorkDir
	if work == "" {
		work = os.TempDir()
	}
	runDir, err := os.MkdirTemp(work, "propose-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(runDir)
	// Absolute: a box mounts the run directory at its own path.
	if runDir, err = filepath.Abs(runDir); err != nil {
		return nil, err
	}
	ws, err := agent.Prepare(ctx, &t, runDir, opts.Materialize)
	if err != nil {
		return nil, err
	}
	log, err := failureLog(opts.Store, tg.repro)
	if err != nil {
		return nil, err
	}
	recipe, err := json.MarshalIndent(tg.repro.Recipe, "", "  ")
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{failureLogName: log, recipeName: append(recipe, '\n')}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(runDir, name), b, 0o444); err != nil {
			return nil, err
		}
	}
	commandsFile := filepath.Join(runDir, commandsName)
	env := []string{EnvFailureLog + "=" + filepath.Join(runDir, failureLogName), EnvRecipeFile + "=" + filepath.Join(runDir, recipeName),
		EnvCommandsFile + "=" + commandsFile}
	var repro *agent.ReproServer
	if opts.ReproCommand != "" && opts.Model == nil {
		if repro, err = agent.StartRepro(ctx, ws, agent.ReproConfig{Runner: opts.Runner, Store: opts.Store, Limits: opts.Limits}); err != nil {
			return nil, err
		}
		defer repro.Close()
	}
	// The agent's output is kept outside its run directory (which it may not write).
	keepDir, err := os.MkdirTemp(work, "propose-out-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(keepDir)
	keep := filepath.Join(keepDir, "agent")
	if opts.OutDir != "" {
		keep = filepath.Join(opts.OutDir, c.InstanceID, opts.Now().UTC().Format("20060102T150405Z"))
	}
	// The commands file may be written by the agent: it is part of the run directory
	// the protocol lets it write (like the trajectory): Act creates it empty (ActOptions.Writable).
	var act *agent.Action
	if opts.Model != nil {
		// The model agent reads the failing log and the commands in its task text (it
		// writes only the workspace: its proposal is the fix, made_by model).
		at := agent.ModelAttempt{N: 1, MaxAttempts: 1, Timeout: opts.Timeout, Runner: opts.Runner, Store: opts.Store, Limits: opts.Limits,
			Context: fmt.Sprintf("This failure was reproduced in a clean container. Its failing log:\n%s\nThe commands it ran (the task's recipe):\n%s", log, recipe)}
		act, err = agent.ActModel(ctx, ws, opts.Model, at, keep)
	} else {
		var box *agent.BoxRun
		boxes, _ := opts.Runner.(agent.Boxes)
		if box, err = opts.Contained.Box(ctx, &t, boxes, opts.Limits); err != nil {
			return nil, err
		}
		act, err = agent.Act(ctx, ws, agent.ActOptions{Command: opts.Agent, Env: env, Timeout: opts.Timeout, Keep: keep, Writable: []string{commandsFile},
			Repro: repro, ReproCommand: opts.ReproCommand, Box: box})
	}
	if err != nil {
		return nil, err
	}
	p := &schemas.Proposal{Kind: schemas.KindProposal, InstanceID: c.InstanceID, Candidate: c.Digest, Reproduction: tg.rd,
		Agent: agentName(opts), MadeBy: schemas.MadeByModel, GoldFiles: []schemas.File{}, CostUSD: act.CostUSD, Run: act.Info,
		ProposedAt: opts.Now().UTC().Format(time.RFC3339Nano)}
	if len(act.Trajectory) > 0 {
		b, err := json.Marshal(act.Trajectory)
		if err != nil {
			return nil, err
		}
		if p.Trajectory, err = opts.Store.Put(b); err != nil {
			return nil, err
		}
	}
	if act.Refused != "" {
		p.Refused = act.Refused
		return p, nil
	}
	for path, content := range act.Files {
		p.GoldFiles = append(p.GoldFiles, schemas.File{Path: path, Content: content})
	}
	sort.Slice(p.GoldFiles, func(i, j int) bool { return p.GoldFiles[i].Path < p.GoldFiles[j].Path })
	cmds, why := readCommands(runDir, commandsName)
	if why != "" {
		p.Refused = why
		return p, nil
	}
	if !cmds.Empty() {
		p.Commands, p.MadeBy = cmds, schemas.MadeByAIAssistant
	}
	if len(p.GoldFiles) == 0 {
		p.Refused = "the agent changed nothing: a proposal needs a fix (a reported failure that reproduces is not a control)"
		return p, nil
	}
	base, err := baseOf(ctx, &t, opts)
	if err != nil {
		return nil, err
	}
	if path := envfiles.SourceChange(base, p.GoldFiles); path != "" {
		p.Refused = "changes source file " + path + ": a reference fix changes environment files only (manifests, lockfiles, build and setup files, Dockerfiles, READMEs)"
		return p, nil
	}
	touched := make([]schemas.File, 0, len(p.GoldFiles))
	byPath := map[string]core.File{}
	for _, f := range base {
		byPath[f.Path] = f
	}
	for _, g := range p.GoldFiles {
		if f, ok := byPath[g.Path]; ok && f.Link == "" {
			s := string(f.Content)
			touched = append(touched, schemas.File{Path: f.Path, Content: &s})
		}
	}
	if p.Patch, err = opts.Patch(touched, p.GoldFiles); err != nil {
		return nil, err
	}
	return p, nil
}

// agentName is how proposals name the agent: its command, or provider:model.
func agentName(opts *job) string {
	if opts.Model != nil {
		return opts.Model.Label()
	}
	return opts.Agent
}

// baseOf returns the project at base_commit as the evaluation core sees it.
func baseOf(ctx context.Context, t *schemas.Task, opts *job) ([]core.File, error) {
	files, err := core.TaskProject(ctx, t, opts.Checkout)
	if err != nil {
		return nil, &core.InfraError{Err: err}
	}
	return files, nil
}

// readCommands reads the commands file an agent may write (name in the run directory
// dir): empty or absent means none. Unknown fields or bad JSON refuse the proposal, with
// the reason; so does a commands file that is a link, a FIFO, a device or over 1 MiB
// (read as untrusted: nothing of it is read).
func readCommands(dir, name string) (*schemas.ProposedCommands, string) {
	b, err := untrusted.ReadFile(dir, name, 1<<20)
	if errors.Is(err, untrusted.ErrUnsafe) {
		return nil, "the commands file " + err.Error() + "; write a small JSON object"
	}
	if err != nil || len(bytes.TrimSpace(b)) == 0 {
		return nil, ""
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var cm schemas.ProposedCommands
	if err := dec.Decode(&cm); err != nil {
		return nil, "the commands file is not a JSON object of bootstrap_command, resolve_command, repro_command, run_command and expected_failure_regex: " + err.Error()
	}
	if cm.ExpectedFailureRegex != "" {
		if _, err := schemas.CompileFailureRegex(cm.ExpectedFailureRegex); err != nil {
			return nil, "the commands file's " + err.Error()
		}
	}
	return &cm, ""
}

// failureLog writes the reproduction's run before the fix as a person reads it: each
// step's command, the end of its output and its exit code.
func failureLog(st catalog.Store, repro schemas.Verdict) ([]byte, error) {
	var b bytes.Buffer
	if len(repro.Before) == 0 {
		return []byte("(the reproduction recorded no run)\n"), nil
	}
	var run schemas.Run
	if err := st.GetJSON(repro.Before[0], &run); err != nil {
		return nil, fmt.Errorf("reproduction run of %s: %w", repro.InstanceID, err)
	}
	per := maxFailureLog / max(1, len(run.Steps))
	for _, s := range run.Steps {
		out, err := st.Get(s.Output)
		if err != nil {
			return nil, fmt.Errorf("reproduction output of %s: %w", repro.InstanceID, err)
		}
		fmt.Fprintf(&b, "=== %s: %s\n", s.Name, s.Command)
		if len(out) > per {
			fmt.Fprintf(&b, "[... %d earlier bytes left out]\n", len(out)-per)
			out = out[len(out)-per:]
		}
		b.Write(out)
		if len(out) > 0 && out[len(out)-1] != '\n' {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "=== %s exited %d (timed out: %v)\n", s.Name, s.ExitCode, s.TimedOut)
	}
	b.WriteString(core.RefusedText(&run))
	return b.Bytes(), nil
}
