package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/core/untrusted"
	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/lib/agent/loop"
	"github.com/envgap/envgap/lib/agent/model"
	"github.com/envgap/envgap/schemas"
)

// ModelAgent is one of envgap's own model agents (run --agent openai|bedrock): the loop
// (lib/agent/loop) with a model, acting in a box per attempt.
type ModelAgent struct {
	// Provider is "openai" or "bedrock"; Model its model (wrapped in model.Retry).
	Provider string
	Model    model.Model
	Limits   loop.Limits
	Price    *model.Price
}

// Label is how results name the agent: provider:model.
func (b *ModelAgent) Label() string { return b.Provider + ":" + b.Model.Name() }

// BoxOpener opens an agent's box (verify.Stage is one).
type BoxOpener interface {
	OpenBox(ctx context.Context, spec core.BoxSpec) (*core.Box, error)
}

// ProviderError is a model provider's fault that ended a run: not an attempt, and no
// result is recorded (the next run retries).
type ProviderError struct{ Err error }

func (e *ProviderError) Error() string {
	return fmt.Sprintf("model provider fault, not an attempt: %v; %s", e.Err, model.Advice(e.Err))
}
func (e *ProviderError) Unwrap() error { return e.Err }

// GiveUp holds the first provider fault that no other task can escape: the provider
// refused the credentials or does not know the model. Once it holds one, every run not
// yet started gets it as its fault, without opening a box (run, propose). The zero value
// holds none; it is safe for concurrent use.
type GiveUp struct{ held atomic.Pointer[ProviderError] }

// Held returns the fault held, or nil.
func (g *GiveUp) Held() *ProviderError { return g.held.Load() }

// Note holds err when it is such a fault (the first one noted stays).
func (g *GiveUp) Note(err error) {
	var pe *ProviderError
	if errors.As(err, &pe) {
		if k, _ := model.KindOf(pe.Err); k == model.Auth || k == model.UnknownModel {
			g.held.CompareAndSwap(nil, pe)
		}
	}
}

// ModelAttempt is what one attempt of a model agent runs with: its number N of
// MaxAttempts, its time limit, and the evaluation core's memoised runner (which must open
// boxes too: a BoxOpener), store and limits, for the box and the repro tool.
type ModelAttempt struct {
	N, MaxAttempts int
	Timeout        time.Duration
	Runner         core.SpecRunner
	Store          data.ObjectReader
	Limits         sandbox.Limits
	// Context is more text for the model after the task (propose: the reproduction's
	// failing log and the commands it ran); empty: none.
	Context string
}

// ActModel runs one attempt of a model agent: a box from the task's evaluation image
// on the workspace, the loop until it stops, then the workspace's changes. The agent's
// trajectory is kept at keep.trajectory.
func ActModel(ctx context.Context, ws *Workspace, b *ModelAgent, at ModelAttempt, keep string) (*Action, error) {
	n := at.N
	t := ws.Task
	opener, ok := at.Runner.(BoxOpener)
	if !ok {
		return nil, errors.New("the evaluation runner cannot open agent boxes")
	}
	feedback := ""
	if n > 1 {
		// The harness wrote it; the box never sees the run directory.
		if fb, err := untrusted.ReadFile(ws.RunDir, FeedbackFileName, maxStateBytes); err == nil {
			feedback = string(fb)
		}
	}
	lim := b.Limits
	if lim.OutputBytes <= 0 {
		lim.OutputBytes = loop.DefaultLimits().OutputBytes
	}
	task, err := loop.TaskText(View(t), n, at.MaxAttempts, feedback, 4*lim.OutputBytes)
	if err != nil {
		return nil, err
	}
	if at.Context != "" {
		task += "\n" + loop.Cap([]byte(at.Context), int64(len(at.Context)), 4*lim.OutputBytes) + "\n"
	}
	actx, cancel := context.WithTimeout(ctx, at.Timeout)
	defer cancel()
	start := time.Now()
	boxLimits := at.Limits
	boxLimits.StepTimeout = lim.CommandTimeout
	dir, err := filepath.Abs(ws.Dir)
	if err != nil {
		return nil, err
	}
	cutoff, err := t.Cutoff()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.InstanceID, err)
	}
	box, err := opener.OpenBox(ctx, core.BoxSpec{InstanceID: t.InstanceID, Image: core.TaskRecipe(t).Image, Cutoff: cutoff,
		Dir: dir, Limits: boxLimits})
	if err != nil {
		return nil, err
	}
	defer box.Close()
	repro := &ReproServer{ws: ws, runner: at.Runner, store: at.Store, limits: at.Limits}
	agent := &loop.Agent{Model: b.Model, Limits: lim, Price: b.Price}
	loopStart := time.Now()
	res, runErr := agent.Run(actx, task, &wsBox{box: box, dir: ws.Dir}, func(ctx context.Context) (string, int, error) {
		ans, err := repro.repro(ctx)
		if err != nil {
			return "", 0, err
		}
		return ans.Output, ans.ExitCode, nil
	})
	refused, cerr := box.Close()
	if runErr != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if _, ok := model.KindOf(runErr); ok {
			return nil, &ProviderError{runErr}
		}
		return nil, runErr
	}
	if cerr != nil {
		return nil, cerr
	}
	info := &schemas.AgentAttempt{Command: b.Label(), Model: b.Model.Name(), Turns: res.Turns, InputTokens: res.Usage.InputTokens,
		OutputTokens: res.Usage.OutputTokens, Stop: res.Stop, DurationMS: time.Since(start).Milliseconds(), TimedOut: res.Stop == loop.StopTimeout,
		FirstRequestMS: (loopStart.Sub(start) + res.FirstRequest).Milliseconds()}
	info.RefusedConnections = CountRefused(refused)
	traj := withRefusals(res.Trajectory, refused)
	// The trajectory as JSON values (what eval's rules and the store read).
	raw, err := json.Marshal(traj)
	if err != nil {
		return nil, err
	}
	act := &Action{Info: info, CostUSD: res.CostUSD, Refusals: refused}
	if err := json.Unmarshal(raw, &act.Trajectory); err != nil {
		return nil, err
	}
	if err := writeFile(keep+".trajectory", raw); err != nil {
		return nil, err
	}
	return readBack(ws, act)
}

// wsBox is the loop's box: commands in the container, files written on the host side
// of the mounted workspace without following links (WriteWorkspaceFile).
type wsBox struct {
	box *core.Box
	dir string
}

func (w *wsBox) Exec(ctx context.Context, command string, timeout time.Duration) (loop.Exec, error) {
	sr, err := w.box.Exec(ctx, command, timeout)
	if err != nil && !errors.Is(err, sandbox.ErrBoxGone) {
		return loop.Exec{}, err
	}
	if err != nil {
		return loop.Exec{ExitCode: 137, TimedOut: true, Output: []byte(err.Error()), OutputSize: int64(len(err.Error()))}, nil
	}
	return loop.Exec{ExitCode: sr.ExitCode, TimedOut: sr.TimedOut, Output: sr.Output, OutputSize: sr.OutputSize}, nil
}

func (w *wsBox) WriteFile(p string, content []byte) error {
	if err := WriteWorkspaceFile(w.dir, p, content); err != nil {
		return err
	}
	// Written by this host's root: the box's root (in a user namespace) is given it, and
	// the folders made for it, so its commands can change them.
	return w.box.Own(w.dir, p)
}

// WriteWorkspaceFile writes a model agent's write_file into its workspace dir: p is
// relative and slash-separated, outside .git; whatever the agent left at p (a link to a
// host file, a FIFO) is replaced, never written through (a file of the project keeps its
// mode), and no folder on the way may be a link (core/untrusted). The study's model agent
// writes through it too.
func WriteWorkspaceFile(dir, p string, content []byte) error {
	if err := schemas.CheckRelPath(p); err != nil {
		return err
	}
	if p == ".git" || strings.HasPrefix(p, ".git/") {
		return fmt.Errorf("%s: the repository's own files are not written", p)
	}
	return untrusted.UpdateFile(dir, p, content, 0o644)
}
