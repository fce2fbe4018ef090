package agent

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/envgap/envgap/schemas"
)

// Action is what one run of an agent command did to its workspace.
type Action struct {
	// Files is the workspace's changes as a files object (nil when refused before they
	// could be read).
	Files      map[string]*string
	Trajectory []any
	CostUSD    *float64
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
}

// Act runs an agent command once in a prepared workspace, with the protocol's
// environment (task file, workspace, trajectory and cost files, HOME) plus o.Env, and
// reads back what it did. run --agent and propose both call it; an error is a fault of
// the harness, never the agent's.
func Act(ctx context.Context, ws *Workspace, o ActOptions) (*Action, error) {
	command, extra, timeout, keep, writable := o.Command, o.Env, o.Timeout, o.Keep, o.Writable
	os.Remove(ws.CostFile())
	before, err := runDirState(ws)
	if err != nil {
		return nil, err
	}
	env := append([]string{
		EnvTaskFile + "=" + ws.TaskFile(), EnvWorkspace + "=" + ws.Dir,
		EnvTrajectoryFile + "=" + ws.TrajectoryFile(), EnvCostFile + "=" + ws.CostFile(),
		"HOME=" + ws.Home(), "TMPDIR=" + ws.Home(),
	}, extra...)
	res, err := RunCommand(ctx, command, ws.Dir, env, timeout)
	if err != nil {
		return nil, err
	}
	act := &Action{Info: &schemas.AgentAttempt{Command: command, ExitCode: res.ExitCode, TimedOut: res.TimedOut,
		DurationMS: res.Duration.Milliseconds(), StdoutSize: res.StdoutSize, StderrSize: res.StderrSize}}
	if err := os.MkdirAll(filepath.Dir(keep), 0o755); err != nil {
		return nil, err
	}
	if err := writeFile(keep+".stdout", res.Stdout); err != nil {
		return nil, err
	}
	if err := writeFile(keep+".stderr", res.Stderr); err != nil {
		return nil, err
	}
	act.Trajectory, act.CostUSD = readState(ws, keep)
	if _, err := os.Stat(ws.Dir); err != nil {
		act.Refused = "the agent removed its workspace"
		return act, nil
	}
	if res.TimedOut {
		if files, err := ws.Files(); err == nil {
			act.Files = files
		}
		act.Refused = fmt.Sprintf("the agent did not finish within %s and was stopped (its process group killed); the attempt is not evaluated", timeout)
		return act, nil
	}
	if outside := changedOutside(ws, before, writable...); outside != "" {
		act.Refused = "the agent wrote outside its workspace: " + outside
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

// runDirState hashes every file of the run directory outside the workspace and HOME.
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
		b, err := os.ReadFile(p)
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

// readState reads the trajectory and cost the agent may have written, and keeps copies
// in keep. A trajectory is a JSON array, or JSON Lines (one entry a line); anything else
// is kept whole as one string entry (which the later-history rules do not inspect).
func readState(ws *Workspace, keep string) ([]any, *float64) {
	var traj []any
	if b, err := readCapped(ws.TrajectoryFile(), maxStateBytes); err == nil && len(bytes.TrimSpace(b)) > 0 {
		writeFile(keep+".trajectory", b)
		if json.Unmarshal(b, &traj) != nil {
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
				traj = []any{string(b)}
			}
		}
	}
	var cost *float64
	if b, err := readCapped(ws.CostFile(), 4096); err == nil {
		if c, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64); err == nil && c >= 0 {
			cost = &c
		}
	}
	return traj, cost
}

func readCapped(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}

func writeFile(path string, b []byte) error {
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("run directory: %w", err)
	}
	return nil
}
