package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
)

// BoxSpec is a box: one long-lived container in which an agent acts, command after
// command, on a project directory of the host mounted at WorkDir.
type BoxSpec struct {
	Image string
	// Dir is the host directory mounted read-write at WorkDir (absolute).
	Dir     string
	WorkDir string   // absolute; default /work
	Env     []string // KEY=VALUE for every command
	Network string   // NetworkNone (default) or NetworkDefault
	// SystemFiles are written at their absolute paths before the box starts (a proxy's
	// settings; see Spec.SystemFiles).
	SystemFiles []File
	Limits      Limits // StepTimeout is the default timeout of one command
	Labels      map[string]string
}

// Box is an open box. It is owned like Run's containers (the owner labels of this
// process), so a box left by a killed process is removed by the next Connect or Sweep.
type Box struct {
	e    *Engine
	id   string
	spec Spec
	ct   time.Duration
	// Dead is set once a command's backstop timeout killed the container: later
	// commands fail.
	dead bool
}

// ErrBoxGone means the box's container was killed (a command outlived its backstop) and
// takes no more commands.
var ErrBoxGone = errors.New("the box's container is gone")

// OpenBox creates and starts a box. Close removes it.
func (e *Engine) OpenBox(ctx context.Context, bs BoxSpec) (*Box, error) {
	if !filepath.IsAbs(bs.Dir) {
		return nil, fmt.Errorf("%w: box directory %q is not absolute", ErrBadSpec, bs.Dir)
	}
	spec, err := validate(Spec{Image: bs.Image, WorkDir: bs.WorkDir, Env: bs.Env, Network: bs.Network,
		SystemFiles: bs.SystemFiles, Steps: []Step{{Name: "box", Command: "true"}}, Limits: bs.Limits, Labels: bs.Labels})
	if err != nil {
		return nil, err
	}
	ct := callTimeout(spec.Limits.StepTimeout)
	err = e.call(ctx, ct, time.Time{}, "inspecting image "+spec.Image, func(ctx context.Context) error {
		_, err := e.cli.ImageInspect(ctx, spec.Image)
		return err
	})
	if err != nil {
		if errdefs.IsNotFound(err) {
			return nil, fmt.Errorf("%w: %s is not on the engine at %s: run `envgap build-images`", ErrImageMissing, spec.Image, e.host)
		}
		return nil, err
	}
	id, err := e.create(ctx, ct, spec, bs.Dir+":"+spec.WorkDir+":rw")
	if err != nil {
		return nil, err
	}
	b := &Box{e: e, id: id, spec: spec, ct: ct}
	if len(spec.SystemFiles) > 0 {
		tarball, err := filesTar(spec.WorkDir, nil, spec.SystemFiles)
		if err == nil {
			err = e.call(ctx, ct, time.Time{}, "copying files into the box", func(ctx context.Context) error {
				return e.cli.CopyToContainer(ctx, id, "/", bytes.NewReader(tarball), container.CopyToContainerOptions{})
			})
		}
		if err != nil {
			b.Close()
			return nil, err
		}
	}
	if err := e.call(ctx, ct, time.Time{}, "starting the box", func(ctx context.Context) error {
		return e.cli.ContainerStart(ctx, id, container.StartOptions{})
	}); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// ID is the container's id.
func (b *Box) ID() string { return b.id }

// Exec runs command with bash -c in WorkDir. The command is stopped at timeout (0: the
// box's StepTimeout) by coreutils timeout, which kills its process group and answers
// exit 124 (TimedOut is set); the engine call itself has a backstop a little later,
// which kills the whole container (then the box is gone: ErrBoxGone next time). Output
// is captured as Run's steps are (head and tail kept past Limits.OutputBytes).
func (b *Box) Exec(ctx context.Context, command string, timeout time.Duration) (StepResult, error) {
	return b.ExecEnv(ctx, command, timeout, nil)
}

// ExecEnv is Exec with env (KEY=VALUE) added to the command's environment.
func (b *Box) ExecEnv(ctx context.Context, command string, timeout time.Duration, env []string) (StepResult, error) {
	if b.dead {
		return StepResult{}, ErrBoxGone
	}
	if timeout <= 0 {
		timeout = b.spec.Limits.StepTimeout
	}
	secs := int((timeout + time.Second - 1) / time.Second)
	spec := b.spec
	spec.Shell = []string{"timeout", "-k", "5", strconv.Itoa(secs), "bash", "-c"}
	sr, err := b.e.step(ctx, b.ct, b.id, spec, Step{Name: "box", Command: command, Timeout: timeout + 20*time.Second, Env: env})
	if err != nil {
		return sr, err
	}
	if sr.TimedOut {
		b.dead = true
		return sr, fmt.Errorf("%w: a command outlived its %s timeout and the box was killed", ErrBoxGone, timeout)
	}
	sr.Command = command
	sr.TimedOut = sr.ExitCode == 124
	sr.OOMKilled = false
	return sr, nil
}

// Close removes the box's container (with a fresh context, as Run does).
func (b *Box) Close() error {
	err := b.e.call(context.Background(), cleanupTimeout, time.Time{}, "removing box "+shortID(b.id), func(cctx context.Context) error {
		return b.e.cli.ContainerRemove(cctx, b.id, container.RemoveOptions{Force: true, RemoveVolumes: true})
	})
	if err != nil && !errdefs.IsNotFound(err) {
		return err
	}
	return nil
}
