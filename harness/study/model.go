package study

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/core/untrusted"
	"github.com/envgap/envgap/lib/agent"
	"github.com/envgap/envgap/lib/agent/loop"
	"github.com/envgap/envgap/lib/agent/model"
	"github.com/envgap/envgap/schemas"
)

// StudySystem is the system prompt of a model agent in the study: a developer's
// coding agent asked for a project. The task text is the paper's prompt.
const StudySystem = `You are a coding agent. Write the complete project the user asks for into your working
directory (the workspace), with the tools: bash runs a command in a container of the language's
clean image with the workspace as working directory; write_file writes a file of the workspace.
When the project is complete, call finish, with the one shell command that runs the program
(from the workspace, after its dependencies are installed) on the first line of the summary as
"RUN: <command>". The project is then built and run in a fresh clean container; if it fails, you
get the error and repair the project.`

// StudyTools are the tools of the study's model agent: the loop's, without run_repro (the
// harness runs the project after each turn, as the paper's protocol does).
func StudyTools() []model.Tool {
	var out []model.Tool
	for _, t := range loop.Tools {
		if t.Name != "run_repro" {
			out = append(out, t)
		}
	}
	return out
}

// ModelAgent is a model agent (lib/agent/loop) acting in the box: a container of
// the language's evaluation image on the workspace, with the registry proxy and the egress
// door as runs have them. Each turn is one loop attempt in a fresh box; the conversation
// goes on across rounds as the paper's agents' did: Gen starts it with the prompt, and each
// Repair round continues it (every earlier message kept) with the round's error as the
// next user message (RepairText).
type ModelAgent struct {
	Loop    *loop.Agent
	Core    *core.Core
	Limits  sandbox.Limits
	Timeout time.Duration
	Now     func() time.Time
}

// trajectoryFile is the trajectory of a project's turns in the agent's folder (JSON Lines,
// appended each turn; read back up to maxTrajectoryBytes).
const (
	trajectoryFile     = "trajectory.jsonl"
	maxTrajectoryBytes = 64 << 20
)

// ConversationFile is where a project's conversation is kept between rounds, in the
// agent's folder (Turn.Dir).
const ConversationFile = "conversation.json"

// RepairText is the user message of a Repair round: the last round's error, verbatim.
func RepairText(t Turn) string {
	return "The project you wrote (in the workspace as you left it) was built and run in a clean container, and it failed:\n" +
		t.Feedback + "\n\nRepair the project so that it builds and runs in the clean container; call finish with RUN: <command>.\n"
}

// Turn runs one loop attempt in a fresh box.
func (m *ModelAgent) Turn(ctx context.Context, t Turn) (TurnResult, error) {
	now := time.Now
	if m.Now != nil {
		now = m.Now
	}
	box, err := m.Core.OpenBox(ctx, core.BoxSpec{InstanceID: fmt.Sprintf("study:%s-p%d-r%d", t.Language, t.Problem.Number, t.Round),
		Image: t.Language.Image(), Cutoff: schemas.CutoffAt(now().Truncate(time.Second)), Dir: t.Workspace, Limits: m.Limits})
	if err != nil {
		return TurnResult{}, err
	}
	defer box.Close()
	if m.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, m.Timeout)
		defer cancel()
	}
	repro := func(context.Context) (string, int, error) {
		return "run_repro is not part of the study: finish, and the project is run in a clean container", 2, nil
	}
	conv := filepath.Join(t.Dir, ConversationFile)
	var res *loop.Result
	if t.Round == 0 {
		res, err = m.Loop.Run(ctx, t.Prompt, &boxAdapter{box: box, dir: t.Workspace}, repro)
	} else {
		var prior []model.Message
		b, rerr := os.ReadFile(conv)
		if rerr != nil {
			return TurnResult{}, fmt.Errorf("the conversation of the earlier rounds: %w", rerr)
		}
		if rerr := json.Unmarshal(b, &prior); rerr != nil {
			return TurnResult{}, fmt.Errorf("the conversation of the earlier rounds %s: %w", conv, rerr)
		}
		res, err = m.Loop.Continue(ctx, prior, RepairText(t), &boxAdapter{box: box, dir: t.Workspace}, repro)
	}
	if err != nil {
		return TurnResult{}, err
	}
	if err := writeJSON(conv, res.Messages); err != nil {
		return TurnResult{}, err
	}
	out := TurnResult{Note: fmt.Sprintf("model agent stopped: %s after %d turn(s)", res.Stop, res.Turns), RunCommand: runFromTrajectory(res.Trajectory)}
	if b, err := jsonLines(res.Trajectory); err == nil {
		// Appended by a new file over the old one (core/untrusted), never through a link.
		prior, _ := untrusted.ReadFile(t.Dir, trajectoryFile, maxTrajectoryBytes)
		untrusted.WriteFile(t.Dir, trajectoryFile, append(prior, b...), 0o644)
	}
	return out, nil
}

// runFromTrajectory returns the command of the last finish call's "RUN: " line.
func runFromTrajectory(traj []any) string {
	run := ""
	for _, e := range traj {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		calls, _ := m["tool_calls"].([]any)
		for _, c := range calls {
			cm, _ := c.(map[string]any)
			if cm["name"] != "finish" {
				continue
			}
			in, _ := cm["input"].(map[string]any)
			s, _ := in["summary"].(string)
			for _, l := range strings.Split(s, "\n") {
				if r, ok := strings.CutPrefix(strings.TrimSpace(l), "RUN:"); ok && strings.TrimSpace(r) != "" {
					run = strings.TrimSpace(r)
				}
			}
		}
	}
	return run
}

// boxAdapter is a core box as the loop's Box.
type boxAdapter struct {
	box *core.Box
	dir string
}

func (b *boxAdapter) Exec(ctx context.Context, command string, timeout time.Duration) (loop.Exec, error) {
	r, err := b.box.Exec(ctx, command, timeout)
	if err != nil {
		return loop.Exec{}, err
	}
	return loop.Exec{ExitCode: r.ExitCode, TimedOut: r.TimedOut, Output: r.Output, OutputSize: r.OutputSize}, nil
}

func (b *boxAdapter) WriteFile(p string, content []byte) error {
	if err := agent.WriteWorkspaceFile(b.dir, p, content); err != nil {
		return err
	}
	// Given to the box's root (in a user namespace it is not this host's root).
	return b.box.Own(b.dir, p)
}

func jsonLines(items []any) ([]byte, error) {
	var b []byte
	for _, it := range items {
		x, err := json.Marshal(it)
		if err != nil {
			return nil, err
		}
		b = append(append(b, x...), '\n')
	}
	return b, nil
}
