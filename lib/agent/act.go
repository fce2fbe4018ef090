package agent

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/core/shell"
	"github.com/envgap/envgap/core/untrusted"
	"github.com/envgap/envgap/lib/atif"
	"github.com/envgap/envgap/schemas"
)

// Action is what one run of an agent command did to its workspace.
type Action struct {
	// Files is the workspace's changes as a files object (nil when refused before they
	// could be read).
	Files      map[string]*string
	Trajectory []any
	CostUSD    *float64
	// ATIF is the trajectory when the agent wrote it in ATIF (lib/atif), validated; nil
	// otherwise. ATIFError says why a file that claimed to be ATIF was not (its text is
	// then kept as one entry, not inspected).
	ATIF      *atif.Trajectory
	ATIFError string
	// Refusals are the targets the box's egress door refused.
	Refusals []schemas.ConnectionCount
	// Info is how the command ran (nil for the built-in agents).
	Info *schemas.AgentAttempt
	// Refused says why the changes cannot be used (the agent's fault): it timed out,
	// removed its workspace, wrote outside it, or left something that is not a text file.
	// Empty when they can.
	Refused string
}

// ActOptions say how Act runs an agent command.
type ActOptions struct {
	// Command is the agent command, run with sh -c in the workspace.
	Command string
	// Env is added to the protocol's environment.
	Env []string
	// Timeout stops the command (its process group killed) and refuses the attempt.
	Timeout time.Duration
	// Keep is where the command's output, trajectory and cost are kept (a path prefix:
	// Keep.stdout, Keep.stderr, Keep.trajectory).
	Keep string
	// Writable are further files of the run directory the agent may write (besides the
	// trajectory and cost files).
	Writable []string
	// Repro is the run's repro server (nil: none). On this host ENVGAP_REPRO runs
	// ReproCommand (envgap agent-repro); in a box, a client of its own (BoxEnv).
	Repro        *ReproServer
	ReproCommand string
	// Box, when set, runs the command in a box instead of on this host.
	Box *BoxRun
}

// BoxRun is an agent command's box (run --agent CMD --agent-image IMAGE): a container
// from Image (an agent CLI's image built on the task's evaluation image) with the run
// directory mounted at its own path, the task's registry cut-off, and the egress door of
// the evaluation image plus AllowHosts.
type BoxRun struct {
	Opener     BoxOpener
	Image      string   // the engine reference of the agent image
	AllowHosts []string // "host:port"
	Limits     sandbox.Limits
}

// Act runs an agent command once in a prepared workspace, with the protocol's
// environment (task file, workspace, trajectory and cost files, HOME, the repro server)
// plus o.Env, on this host or in o.Box, and reads back what it did. run --agent and
// propose both call it; an error is a fault of the harness, never the agent's.
func Act(ctx context.Context, ws *Workspace, o ActOptions) (*Action, error) {
	if err := resetState(ws, o.Writable); err != nil {
		return nil, err
	}
	var (
		res     CommandResult
		refused []schemas.ConnectionCount
		before  map[string][32]byte
		err     error
	)
	if o.Box != nil {
		res, refused, before, err = actInBox(ctx, ws, o)
	} else {
		env := protocolEnv(ws, ws.Dir, o.Env)
		if o.Repro != nil {
			renv, err := o.Repro.Env(o.ReproCommand)
			if err != nil {
				return nil, err
			}
			env = append(env, renv...)
		}
		if before, err = runDirState(ws); err != nil {
			return nil, err
		}
		res, err = RunCommand(ctx, o.Command, ws.Dir, env, o.Timeout)
	}
	if err != nil {
		return nil, err
	}
	act := &Action{Info: &schemas.AgentAttempt{Command: o.Command, ExitCode: res.ExitCode, TimedOut: res.TimedOut,
		DurationMS: res.Duration.Milliseconds(), StdoutSize: res.StdoutSize, StderrSize: res.StderrSize}}
	if o.Box != nil {
		act.Info.AgentImage = o.Box.Image
	}
	if err := os.MkdirAll(filepath.Dir(o.Keep), 0o755); err != nil {
		return nil, err
	}
	if err := writeFile(o.Keep+".stdout", res.Stdout); err != nil {
		return nil, err
	}
	if err := writeFile(o.Keep+".stderr", res.Stderr); err != nil {
		return nil, err
	}
	var unsafe string
	act.Trajectory, act.CostUSD, unsafe = readState(ws, o.Keep)
	act.Refusals = refused
	if len(act.Trajectory) == 1 {
		act.ATIF, act.ATIFError = readATIF(act.Trajectory[0], o.Keep+".trajectory")
		if act.ATIFError != "" {
			act.Trajectory = []any{act.ATIFError}
		}
	}
	if act.ATIF != nil {
		// The agent's own ATIF: its tokens and cost are the attempt's (a cost file, when
		// written too, is overruled by the trajectory's total).
		p, c, cost, ok := act.ATIF.Totals()
		if ok {
			act.Info.InputTokens, act.Info.OutputTokens = p, c
		}
		if cost != nil {
			act.CostUSD = cost
		}
	} else if len(act.Trajectory) > 0 {
		// A trajectory the agent did not write is not made up: refusals go into the
		// agent's own, and are always counted.
		act.Trajectory = withRefusals(act.Trajectory, refused)
	}
	act.Info.RefusedConnections = CountRefused(refused)
	if why := workspaceGone(ws); why != "" {
		act.Refused = why
		return act, nil
	}
	if unsafe != "" {
		act.Refused = unsafe
		return act, nil
	}
	if res.TimedOut {
		if files, err := ws.Files(); err == nil {
			act.Files = files
		}
		act.Refused = fmt.Sprintf("the agent did not finish within %s and was stopped (its process group killed); the attempt is not evaluated", o.Timeout)
		return act, nil
	}
	if outside := changedOutside(ws, before, o.Writable...); outside != "" {
		act.Refused = "the agent wrote outside its workspace: " + outside
		return act, nil
	}
	return readBack(ws, act)
}

// protocolEnv is the protocol's environment for an agent in ws (paths as given, dir the
// workspace), then extra.
func protocolEnv(ws *Workspace, dir string, extra []string) []string {
	return append([]string{
		EnvTaskFile + "=" + ws.TaskFile(), EnvWorkspace + "=" + dir,
		EnvTrajectoryFile + "=" + ws.TrajectoryFile(), EnvCostFile + "=" + ws.CostFile(),
		"HOME=" + ws.Home(), "TMPDIR=" + ws.Home(),
	}, extra...)
}

// actInBox runs o.Command in o.Box: what the protocol's paths name is mounted at those
// (absolute) paths, so every path of the protocol holds in the box too; the repro server
// listens where the box reaches this host. It returns the command's result (stdout and
// stderr are one stream in a box, kept as stdout), the connections the door refused, and
// the run directory's state before the command ran.
func actInBox(ctx context.Context, ws *Workspace, o ActOptions) (CommandResult, []schemas.ConnectionCount, map[string][32]byte, error) {
	abs, err := absWorkspace(ws)
	if err != nil {
		return CommandResult{}, nil, nil, err
	}
	t := ws.Task
	cutoff, err := t.Cutoff()
	if err != nil {
		return CommandResult{}, nil, nil, fmt.Errorf("%s: %w", t.InstanceID, err)
	}
	var before map[string][32]byte
	// The box mounts what the protocol's paths name, at those paths: the workspace and
	// HOME read-write, the run directory read-only (the task file, the feedback, the
	// repro script), and over it the files the agent may write (their content only: a
	// mounted file cannot be replaced by a link).
	mounts := []sandbox.Mount{{Source: abs.RunDir, Target: abs.RunDir}, {Source: abs.Home(), Target: abs.Home(), Writable: true}}
	for _, p := range append([]string{abs.TrajectoryFile(), abs.CostFile()}, o.Writable...) {
		if p, err = filepath.Abs(p); err != nil {
			return CommandResult{}, nil, nil, err
		}
		mounts = append(mounts, sandbox.Mount{Source: p, Target: p, Writable: true})
	}
	res, refused, err := RunInBox(ctx, BoxCommand{Opener: o.Box.Opener,
		Spec: core.BoxSpec{InstanceID: t.InstanceID, Image: core.TaskRecipe(t).Image, Cutoff: cutoff,
			Dir: abs.Dir, WorkDir: abs.Dir, Mounts: mounts, AgentImage: o.Box.Image, AllowHosts: o.Box.AllowHosts, Limits: o.Box.Limits},
		Dir: abs.Dir, Command: o.Command, Env: protocolEnv(abs, abs.Dir, o.Env), Timeout: o.Timeout, Own: abs.RunDir,
		Ready: func(box *core.Box) ([]string, func(), error) {
			var env []string
			stop := func() {}
			if o.Repro != nil {
				var err error
				if env, stop, err = o.Repro.BoxEnv(box.HostAddr()); err != nil {
					return nil, nil, err
				}
			}
			b, err := runDirState(ws)
			if err != nil {
				stop()
				return nil, nil, err
			}
			before = b
			return env, stop, nil
		}})
	return res, refused, before, err
}

// BoxCommand is one run of an agent command in a fresh box.
type BoxCommand struct {
	Opener BoxOpener
	// Spec is the box (its Limits' StepTimeout and OutputBytes are set from Timeout and
	// MaxAgentOutput).
	Spec core.BoxSpec
	// Dir is the command's working directory in the box (absolute).
	Dir     string
	Command string // run with sh -c
	Env     []string
	Timeout time.Duration
	// Ready, when set, is called once the box is open, before the command runs: it returns
	// more environment and a function called when the command has ended.
	Ready func(box *core.Box) ([]string, func(), error)
	// Own, when set, is a directory of the host mounted in the box that the box's user
	// must be able to write: when the image runs as another user than root (its USER),
	// everything in it is given to that user first.
	Own string
}

// RunInBox opens bc's box, runs the command in it and removes the box; it returns what
// the command did (its output, stdout and stderr as one stream, in Stdout) and the
// connections the box's door refused. A command that outlives Timeout is stopped
// (TimedOut); an error is a fault of the harness.
func RunInBox(ctx context.Context, bc BoxCommand) (CommandResult, []schemas.ConnectionCount, error) {
	var res CommandResult
	spec := bc.Spec
	spec.Limits.StepTimeout, spec.Limits.OutputBytes = bc.Timeout, MaxAgentOutput
	box, err := bc.Opener.OpenBox(ctx, spec)
	if err != nil {
		return res, nil, err
	}
	defer box.Close()
	if bc.Own != "" {
		if err := ownBy(ctx, box, bc.Own); err != nil {
			return res, nil, err
		}
	}
	env := bc.Env
	if bc.Ready != nil {
		more, done, err := bc.Ready(box)
		if err != nil {
			return res, nil, err
		}
		defer done()
		env = append(append([]string{}, env...), more...)
	}
	start := time.Now()
	sr, err := box.ExecEnv(ctx, "cd "+shell.Quote(bc.Dir)+" && exec /bin/sh -c "+shell.Quote(bc.Command), bc.Timeout, env)
	res.Duration = time.Since(start)
	switch {
	case errors.Is(err, sandbox.ErrBoxGone):
		res.TimedOut, res.ExitCode = true, 137
	case err != nil:
		if ctx.Err() != nil {
			return res, nil, ctx.Err()
		}
		return res, nil, err
	default:
		res.ExitCode = sr.ExitCode
		res.TimedOut = sr.TimedOut && res.Duration >= bc.Timeout
	}
	res.Stdout, res.StdoutSize = sr.Output, sr.OutputSize
	refused, err := box.Close()
	if err != nil {
		return res, nil, err
	}
	return res, refused, nil
}

// ownBy gives dir and everything in it to the box's user when that is not root (an
// agent image whose USER is an unprivileged account), so the agent can write its
// workspace and HOME there.
func ownBy(ctx context.Context, box *core.Box, dir string) error {
	sr, err := box.Exec(ctx, "id -u; id -g", time.Minute)
	if err != nil {
		return fmt.Errorf("the box's user: %w", err)
	}
	f := strings.Fields(string(sr.Output))
	if sr.ExitCode != 0 || len(f) != 2 {
		return fmt.Errorf("the box's user: id exited %d: %q", sr.ExitCode, sr.Output)
	}
	uid, err1 := strconv.Atoi(f[0])
	gid, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || uid < 0 || gid < 0 {
		return fmt.Errorf("the box's user: id said %q", sr.Output)
	}
	if uid == 0 {
		return nil
	}
	// In a user namespace the box's ids are other ids of the host.
	if uid, gid, err = box.HostIDs(uid, gid); err != nil {
		return fmt.Errorf("the box's user: %w", err)
	}
	return filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}

// absWorkspace is ws with absolute paths (the box mounts them).
func absWorkspace(ws *Workspace) (*Workspace, error) {
	runDir, err := filepath.Abs(ws.RunDir)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(ws.Dir)
	if err != nil {
		return nil, err
	}
	return &Workspace{Dir: dir, RunDir: runDir, Task: ws.Task}, nil
}

// readBack finishes an action whose agent ended in time: the workspace's changes, or why
// they cannot be used (it removed its workspace, or left something that is not a text
// file).
func readBack(ws *Workspace, act *Action) (*Action, error) {
	if why := workspaceGone(ws); why != "" {
		act.Refused = why
		return act, nil
	}
	files, err := ws.Files()
	if errors.Is(err, ErrRefused) {
		act.Refused = err.Error()
		return act, nil
	} else if err != nil {
		return nil, err
	}
	act.Files = files
	return act, nil
}

// workspaceGone says how the agent did away with its workspace ("" when it is there, a
// directory and not a link).
func workspaceGone(ws *Workspace) string {
	st, err := os.Lstat(ws.Dir)
	switch {
	case err != nil:
		return "the agent removed its workspace"
	case !st.IsDir():
		return "the agent replaced its workspace with " + st.Mode().Type().String() + " (not a directory)"
	}
	return ""
}

// resetState makes the run directory's files the agent may write ready for an attempt:
// the cost file (and each of writable) is emptied, and the trajectory is kept when it is
// a plain file (the agent writes everything so far) and made empty otherwise. Each is a
// regular file of the harness's, replacing whatever the last attempt left at its name
// (a box mounts them at their paths).
func resetState(ws *Workspace, writable []string) error {
	names := []string{CostFileName}
	for _, p := range writable {
		rel, err := filepath.Rel(ws.RunDir, p)
		if err != nil || !filepath.IsLocal(rel) {
			return fmt.Errorf("%s: a file the agent may write must be in the run directory %s", p, ws.RunDir)
		}
		names = append(names, filepath.ToSlash(rel))
	}
	if _, err := untrusted.ReadFile(ws.RunDir, TrajectoryFileName, maxStateBytes); err != nil {
		names = append(names, TrajectoryFileName)
	}
	for _, n := range names {
		if err := untrusted.WriteFile(ws.RunDir, n, nil, 0o644); err != nil {
			return fmt.Errorf("run directory: %w", err)
		}
	}
	return nil
}

// withRefusals appends one trajectory entry per target the door refused.
func withRefusals(traj []any, refused []schemas.ConnectionCount) []any {
	for _, r := range refused {
		note := fmt.Sprintf("the box's egress door refused %d connection(s) to %s:%d", r.Count, r.Host, r.Port)
		if r.Reason != "" {
			note += " (" + r.Reason + ")"
		}
		traj = append(traj, map[string]any{"type": "refused_connection", "host": r.Host, "port": r.Port, "count": r.Count,
			"reason": r.Reason, "note": note})
	}
	return traj
}

// CountRefused is how many connections the door refused in all.
func CountRefused(refused []schemas.ConnectionCount) int {
	n := 0
	for _, r := range refused {
		n += r.Count
	}
	return n
}

// runDirState hashes every file of the run directory outside the workspace and HOME (read
// as untrusted files: a link, a FIFO or an oversized file hashes as what it is).
func runDirState(ws *Workspace) (map[string][32]byte, error) {
	state := map[string][32]byte{}
	err := filepath.WalkDir(ws.RunDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (p == ws.Dir || p == ws.Home()) {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(ws.RunDir, p)
		if err != nil {
			return err
		}
		b, err := untrusted.ReadFile(ws.RunDir, filepath.ToSlash(rel), maxStateBytes)
		if err != nil {
			b = []byte("unreadable: " + err.Error())
		}
		state[p] = sha256.Sum256(b)
		return nil
	})
	return state, err
}

// changedOutside returns a path of the run directory, outside the workspace and HOME,
// that the agent created, changed or removed (the trajectory and cost files excepted),
// or "".
func changedOutside(ws *Workspace, before map[string][32]byte, writable ...string) string {
	after, err := runDirState(ws)
	if err != nil {
		return ws.RunDir + " (" + err.Error() + ")"
	}
	allowed := map[string]bool{ws.TrajectoryFile(): true, ws.CostFile(): true}
	for _, p := range writable {
		allowed[p] = true
	}
	var paths []string
	for p, h := range after {
		if b, ok := before[p]; (!ok || b != h) && !allowed[p] {
			paths = append(paths, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok && !allowed[p] {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	if len(paths) == 0 {
		return ""
	}
	return paths[0]
}

// readState reads the trajectory and cost the agent may have written, and keeps a copy of
// the trajectory in keep. A trajectory is a JSON array, or JSON Lines (one entry a line);
// anything else is kept whole as one string entry (which the later-history rules do not
// inspect). Both are read as untrusted files (core/untrusted): when either is a link, a
// FIFO, a device or over its bound, nothing of it is read and unsafe says which and why.
func readState(ws *Workspace, keep string) (traj []any, cost *float64, unsafe string) {
	b, err := untrusted.ReadFile(ws.RunDir, TrajectoryFileName, maxStateBytes)
	if errors.Is(err, untrusted.ErrUnsafe) {
		return nil, nil, "the trajectory file " + err.Error()
	}
	if err == nil && len(bytes.TrimSpace(b)) > 0 {
		writeFile(keep+".trajectory", b)
		var obj map[string]any
		if json.Unmarshal(b, &obj) == nil && obj != nil {
			traj = []any{obj} // one JSON object (an ATIF document): one entry
		} else if json.Unmarshal(b, &traj) != nil {
			traj = nil
			sc := bufio.NewScanner(bytes.NewReader(b))
			sc.Buffer(nil, maxStateBytes)
			ok := true
			for sc.Scan() {
				if len(bytes.TrimSpace(sc.Bytes())) == 0 {
					continue
				}
				var v any
				if json.Unmarshal(sc.Bytes(), &v) != nil {
					ok = false
					break
				}
				traj = append(traj, v)
			}
			if !ok {
				// Kept as text: invalid UTF-8 replaced (the store holds canonical JSON).
				traj = []any{string(bytes.ToValidUTF8(b, []byte("\uFFFD")))}
			}
		}
	}
	b, err = untrusted.ReadFile(ws.RunDir, CostFileName, maxCostBytes)
	if errors.Is(err, untrusted.ErrUnsafe) {
		return traj, nil, "the cost file " + err.Error()
	}
	if err == nil {
		if c, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64); err == nil && c >= 0 {
			cost = &c
		}
	}
	return traj, cost, ""
}

// readATIF reads the agent's trajectory as ATIF when its one entry claims to be (a JSON
// object with an "ATIF..." schema_version): the document validated from the kept copy
// (bounded, invalid UTF-8 replaced), or why it is not valid ATIF ("" and nil when it does
// not claim to be).
func readATIF(entry any, kept string) (*atif.Trajectory, string) {
	m, ok := entry.(map[string]any)
	if !ok {
		return nil, ""
	}
	if v, _ := m["schema_version"].(string); !strings.HasPrefix(strings.ToUpper(v), "ATIF") {
		return nil, ""
	}
	b, err := untrusted.ReadFile(filepath.Dir(kept), filepath.Base(kept), atif.MaxBytes)
	if err != nil {
		return nil, "the trajectory file claims to be ATIF and could not be read back: " + err.Error()
	}
	t, err := atif.Parse(b)
	if err != nil {
		return nil, "the trajectory file claims to be ATIF and is not valid ATIF (" + err.Error() + "); its text:\n" + string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
	}
	return t, ""
}

func writeFile(path string, b []byte) error {
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("run directory: %w", err)
	}
	return nil
}
