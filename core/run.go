package core

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"time"

	"github.com/envgap/envgap/core/egress"
	"github.com/envgap/envgap/core/registry"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/schemas"
)

// Step names of a run. Evidence steps gather D2 and never decide an outcome.
const (
	StepBootstrap = "bootstrap"
	StepResolve   = "resolve"
	StepRepro     = "repro"
	StepRun       = "run"
	StepD2Before  = "evidence:d2-before"
	StepD2After   = "evidence:d2-after"
)

// EvidenceDir is where evidence steps and the trace write inside the container.
const EvidenceDir = "/evidence"

// Run executes one spec and stores the run record (and every step's captured output) in
// the store. Errors: ErrOverlay (wrapped) for a refused overlay, a plain error for a spec
// that cannot run (bad recipe, bad date), *InfraError for faults of the engine, the image
// or the registry upstream, and the context's error when cancelled.
func (c *Core) Run(ctx context.Context, spec Spec) (*schemas.Run, schemas.Digest, error) {
	r := spec.Recipe
	if err := r.Ecosystem.Valid(); err != nil {
		return nil, schemas.Digest{}, fmt.Errorf("%s: recipe ecosystem: %w", spec.InstanceID, err)
	}
	if r.Image == "" {
		r.Image = r.Ecosystem.Image()
	}
	if err := checkCommands(spec.Side, r); err != nil {
		return nil, schemas.Digest{}, fmt.Errorf("%s: %w", spec.InstanceID, err)
	}
	var re interface{ MatchString(string) bool }
	if r.ExpectedFailureRegex != "" {
		compiled, err := schemas.CompileFailureRegex(r.ExpectedFailureRegex)
		if err != nil {
			return nil, schemas.Digest{}, fmt.Errorf("%s: %w", spec.InstanceID, err)
		}
		re = compiled
	}
	cutoff := spec.Cutoff
	if cutoff.IsZero() {
		return nil, schemas.Digest{}, fmt.Errorf("%s: no registry cut-off given", spec.InstanceID)
	}
	files, err := ApplyOverlay(spec.Project, spec.Overlay)
	if err != nil {
		return nil, schemas.Digest{}, fmt.Errorf("%s: %w", spec.InstanceID, err)
	}
	key, err := Key(spec)
	if err != nil {
		return nil, schemas.Digest{}, err
	}
	ev := evidenceFor(r.Ecosystem)
	d1, _ := ev.declared(files, spec.ManifestPaths)

	steps := c.steps(spec.Side, r, ev)
	lim := spec.Limits.WithDefaults()
	sbFiles, skippedLinks := sandboxFiles(files)
	// The door's allowlist is that of the image id last seen for r.Image, without asking
	// the engine again: the run reports the id it ran on, checked below.
	var door *egress.Session
	var doorEnv []string
	var doorFiles []sandbox.File
	doorImage := ""
	var doorErr error
	if c.Door != nil {
		var allow []string
		if allow, doorImage, doorErr = c.allowlistOf(ctx, r.Image, spec.Gate); doorErr == nil {
			door, doorEnv, doorFiles, doorErr = c.openDoor(allow, nil)
		}
	}
	if err := doorErr; err != nil {
		if ctx.Err() != nil {
			return nil, schemas.Digest{}, ctx.Err()
		}
		return nil, schemas.Digest{}, &InfraError{fmt.Errorf("%s: egress door: %w", spec.InstanceID, err)}
	}
	// The before side's evidence is not read (D2 and D3 are the after side's): nothing is
	// collected from its container.
	var collect []string
	if spec.Side != SideBefore {
		collect = []string{EvidenceDir}
	}
	var gate, prepare func(context.Context) (func(), error)
	if spec.Gate != nil {
		gate, prepare = spec.Gate.Enter, spec.Gate.prepare(c)
	}
	sess := c.Proxy.NewSession(cutoff)
	started := c.now()
	res, runErr := c.Runner.Run(ctx, sandbox.Spec{
		Image:       c.ImageRef(r.Image),
		Files:       sbFiles,
		SystemFiles: doorFiles,
		Env:         append(append(sess.Env(c.ProxyURL), doorEnv...), "ENVGAP_EVIDENCE="+EvidenceDir),
		Network:     sandbox.NetworkDefault,
		Steps:       steps,
		Collect:     collect,
		Limits:      spec.Limits,
		Gate:        gate,
		Prepare:     prepare,
		RemoveLater: spec.Gate != nil && spec.Gate.later,
		Labels:      map[string]string{"org.envgap.instance": spec.InstanceID, "org.envgap.side": string(spec.Side)},
		Started:     c.bindSession(sess),
	})
	if runErr == nil && res.Removed != nil {
		// The container is still being removed: the gate's Wait waits for it.
		what := fmt.Sprintf("removing the %s side's container", spec.Side)
		if spec.Gate != nil && spec.Gate.later {
			spec.Gate.removing(spec.InstanceID+": "+what, res.Removed)
		} else if err := <-res.Removed; err != nil {
			runErr = fmt.Errorf("%s: %w", what, err)
		}
	}
	regRec := sess.Close()
	var refused []schemas.ConnectionCount
	if door != nil {
		if rec := door.Close(); len(rec.Refused) > 0 {
			refused = rec.Refused
		}
	}
	if runErr != nil {
		if ctx.Err() != nil {
			return nil, schemas.Digest{}, ctx.Err()
		}
		return nil, schemas.Digest{}, &InfraError{fmt.Errorf("%s: %w", spec.InstanceID, runErr)}
	}
	if doorImage != "" && res.ImageID != doorImage {
		c.forgetImage(r.Image)
		return nil, schemas.Digest{}, &InfraError{fmt.Errorf("%s: %s was rebuilt since its package sources were read for the egress door (%s, then %s): run again", spec.InstanceID, r.Image, shortImageID(doorImage), shortImageID(res.ImageID))}
	}
	if len(regRec.Errors) > 0 {
		e := regRec.Errors[0]
		return nil, schemas.Digest{}, &InfraError{fmt.Errorf("%s: registry upstream fault (%d) while serving %s %s: %s; the run is not a clean run of the project", spec.InstanceID, len(regRec.Errors), e.Ecosystem, e.Package, e.Reason)}
	}
	run := &schemas.Run{
		Kind: schemas.KindRun, InstanceID: spec.InstanceID, Side: string(spec.Side), Key: key, Recipe: r,
		RegistryDate: spec.Cutoff.String(), Image: r.Image, ImageID: res.ImageID, CoreVersion: Version,
		StartedAt: started.UTC().Format(time.RFC3339), FinishedAt: c.now().UTC().Format(time.RFC3339),
		D1: d1, SkippedLinks: skippedLinks, RefusedConnections: refused, RegistryRefused: registryRefused(regRec),
		UserNamespace: res.UserNS,
		Limits: schemas.RunLimits{StepTimeoutMS: lim.StepTimeout.Milliseconds(), MemoryBytes: lim.MemoryBytes,
			PIDs: lim.PIDs, CPUs: lim.CPUs, OutputBytes: lim.OutputBytes},
	}
	exit := map[string]sandbox.StepResult{}
	for _, st := range res.Steps {
		exit[st.Name] = st
		sr, err := c.stepRecord(st)
		if err != nil {
			return nil, schemas.Digest{}, err
		}
		run.Steps = append(run.Steps, sr)
		if re != nil && !run.FailureMatched && IsProjectStep(st.Name) && failed(st) && re.MatchString(string(StripANSI(st.Output))) {
			run.FailureMatched, run.MatchedStep = true, st.Name
		}
	}
	if spec.Side != SideBefore {
		run.Resolved = !failed(exit[StepResolve]) && !failed(exit[StepRun]) && exit[StepRun].Name != ""
		run.D2 = ev.installed(res.Collected, d1)
		if run.Resolved {
			run.D3 = ev.traced(res.Collected, run.D2)
		} else {
			run.D3 = schemas.DepSet{Deps: []schemas.Dependency{}, Unreadable: "not traced: the project did not run"}
		}
	} else {
		run.D2 = schemas.DepSet{Deps: []schemas.Dependency{}, Unreadable: "not measured on the before side"}
		run.D3 = run.D2
	}
	regJSON, err := json.Marshal(regRec)
	if err != nil {
		return nil, schemas.Digest{}, err
	}
	if run.Registry, err = c.Store.Put(regJSON); err != nil {
		return nil, schemas.Digest{}, &InfraError{err}
	}
	d, err := c.Store.PutJSON(run)
	if err != nil {
		return nil, schemas.Digest{}, &InfraError{err}
	}
	return run, d, nil
}

func checkCommands(side Side, r schemas.Recipe) error {
	need := map[string]string{"resolve_command": r.ResolveCommand}
	if side == SideBefore {
		need["repro_command"] = r.ReproCommand
	} else {
		need["run_command"] = r.RunCommand
	}
	for name, v := range need {
		if strings.TrimSpace(v) == "" {
			return fmt.Errorf("recipe has no %s; give one or let the default recipe generator fill it", name)
		}
	}
	return nil
}

// steps lists a side's steps in order.
func (c *Core) steps(side Side, r schemas.Recipe, ev *evidence) []sandbox.Step {
	var steps []sandbox.Step
	add := func(name, cmd string) {
		if strings.TrimSpace(cmd) != "" {
			steps = append(steps, sandbox.Step{Name: name, Command: cmd})
		}
	}
	add(StepBootstrap, r.BootstrapCommand)
	if side == SideBefore {
		add(StepResolve, r.ResolveCommand)
		add(StepRepro, r.ReproCommand)
		return steps
	}
	before, after := ev.d2Commands(r)
	add(StepD2Before, before)
	add(StepResolve, r.ResolveCommand)
	add(StepD2After, after)
	add(StepRun, ev.traceCommand(r.RunCommand))
	return steps
}

// IsProjectStep reports whether a step is one of the recipe's (not an evidence step).
func IsProjectStep(name string) bool {
	return name == StepBootstrap || name == StepResolve || name == StepRepro || name == StepRun
}

func failed(st sandbox.StepResult) bool {
	return st.Name != "" && (st.ExitCode != 0 || st.TimedOut || st.Skipped || st.DiskExceeded)
}

func (c *Core) stepRecord(st sandbox.StepResult) (schemas.StepRecord, error) {
	out, err := c.Store.Put(st.Output)
	if err != nil {
		return schemas.StepRecord{}, &InfraError{err}
	}
	var full schemas.Digest
	if b, err := hex.DecodeString(st.OutputSHA256); err == nil && len(b) == len(full) {
		copy(full[:], b)
	} else {
		return schemas.StepRecord{}, &InfraError{errors.New("sandbox returned no output digest")}
	}
	return schemas.StepRecord{
		Name: st.Name, Command: st.Command, ExitCode: st.ExitCode, DurationMS: st.Duration.Milliseconds(),
		TimedOut: st.TimedOut, OOMKilled: st.OOMKilled, CommandNotFound: st.CommandNotFound, Skipped: st.Skipped,
		DiskExceeded: st.DiskExceeded, Output: out, FullOutput: full, OutputSize: st.OutputSize, Truncated: st.Truncated,
	}, nil
}

// bindSession is a run's Started hook: it binds the registry session to the started
// container's address (or, when the proxy does not see containers' own addresses,
// SessionsByID, makes the session's id its credential).
func (c *Core) bindSession(sess *registry.Session) func(netip.Addr) error {
	return func(a netip.Addr) error {
		if c.SessionsByID {
			return sess.BindAnyAddress()
		}
		return sess.Bind(a)
	}
}

// registryRefused lists the registry's refusals of a run for its record (at most
// schemas.MaxRegistryRefused, sorted).
func registryRefused(rec registry.Record) []string {
	var out []string
	for _, e := range rec.Refused {
		if len(out) == schemas.MaxRegistryRefused {
			break
		}
		out = append(out, e.Reason)
	}
	sort.Strings(out)
	return out
}

// RefusedText says, for people and agents, which connections a run's sandbox was refused
// and which registry requests (outside the run's session or cut-off) the registry proxy
// refused ("" when none): one line per registry refusal, and one line for the
// connections, naming each host:port, how many times and why.
func RefusedText(run *schemas.Run) string {
	if run == nil {
		return ""
	}
	var b strings.Builder
	for _, r := range run.RegistryRefused {
		b.WriteString("=== registry: request refused: " + r + "\n")
	}
	if len(run.RefusedConnections) == 0 {
		return b.String()
	}
	parts := make([]string, 0, len(run.RefusedConnections))
	for _, c := range run.RefusedConnections {
		if c.Reason != "" {
			parts = append(parts, fmt.Sprintf("%s:%d (%dx, %s)", c.Host, c.Port, c.Count, c.Reason))
		} else {
			parts = append(parts, fmt.Sprintf("%s:%d (%dx)", c.Host, c.Port, c.Count))
		}
	}
	return b.String() + "=== egress: connections refused (the sandbox reaches only the date-limited registry proxy and the image's package sources): " + strings.Join(parts, ", ") + "\n"
}

func shortImageID(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
