package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// MaxAgentOutput is how much of an agent's stdout and stderr (each) the harness keeps;
// the rest is counted and dropped.
const MaxAgentOutput = 4 << 20

// CommandResult is what running the agent command once did.
type CommandResult struct {
	ExitCode int           `json:"exit_code"`
	TimedOut bool          `json:"timed_out"`
	Duration time.Duration `json:"duration_ns"`
	// Stdout and Stderr are the first MaxAgentOutput bytes; the sizes count everything.
	Stdout     []byte `json:"-"`
	Stderr     []byte `json:"-"`
	StdoutSize int64  `json:"stdout_size"`
	StderrSize int64  `json:"stderr_size"`
}

// capped keeps the first n bytes written to it and counts the rest.
type capped struct {
	mu    sync.Mutex
	buf   []byte
	n     int
	total int64
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += int64(len(p))
	if room := c.n - len(c.buf); room > 0 {
		if len(p) < room {
			room = len(p)
		}
		c.buf = append(c.buf, p[:room]...)
	}
	return len(p), nil
}

// RunCommand runs command with sh -c in dir, with env added to the harness's
// environment, in a process group of its own. When timeout passes (or ctx ends) the
// whole group is killed; when the command exits, whatever it left running in its group
// is killed too. Output beyond MaxAgentOutput per stream is counted and dropped.
func RunCommand(ctx context.Context, command, dir string, env []string, timeout time.Duration) (CommandResult, error) {
	var res CommandResult
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = nil
	out, errOut := &capped{n: MaxAgentOutput}, &capped{n: MaxAgentOutput}
	cmd.Stdout, cmd.Stderr = out, errOut
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Output pipes stay open while a child of the group holds them: do not wait for them
	// after the group is killed.
	cmd.WaitDelay = 2 * time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return res, fmt.Errorf("starting the agent: %w", err)
	}
	pgid := cmd.Process.Pid
	killGroup := func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) }
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	var err error
	select {
	case err = <-done:
	case <-timer:
		res.TimedOut = true
		killGroup()
		err = <-done
	case <-ctx.Done():
		killGroup()
		<-done
		return res, ctx.Err()
	}
	killGroup()
	res.Duration = time.Since(start)
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		res.ExitCode = exitErr.ExitCode()
	case errors.Is(err, exec.ErrWaitDelay):
	default:
		if !res.TimedOut {
			return res, fmt.Errorf("running the agent: %w", err)
		}
	}
	res.Stdout, res.StdoutSize = out.buf, out.total
	res.Stderr, res.StderrSize = errOut.buf, errOut.total
	return res, nil
}

var _ io.Writer = (*capped)(nil)
