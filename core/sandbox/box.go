package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/containerd/errdefs"
	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
)

// BoxSpec is a box: one long-lived container in which an agent acts, command after
// command, on a project directory of the host mounted at WorkDir.
type BoxSpec struct {
	Image string
	// Dir is the host directory mounted read-write at WorkDir (absolute).
	Dir     string
	WorkDir string // absolute; default /work
	// Mounts are further host paths of the box (an agent's run directory read-only, its
	// HOME and the files it may write read-write).
	Mounts  []Mount
	Env     []string // KEY=VALUE for every command
	Network string   // NetworkNone (default) or NetworkDefault
	// SystemFiles are written at their absolute paths before the box starts (a proxy's
	// settings; see Spec.SystemFiles).
	SystemFiles []File
	Limits      Limits // StepTimeout is the default timeout of one command
	Labels      map[string]string
	// Started is called once the box started, as Spec.Started (an error closes the box).
	Started func(netip.Addr) error
}

// Mount is a host directory or regular file (Source, absolute, not a link: the engine
// would mount what a link points at) mounted at Target (absolute) in a box, read-only
// unless Writable. Every mount of a box is nosuid and nodev where the engine takes
// those options (Podman; a Docker daemon refuses them in a bind, so there the box's
// dropped capabilities are what keeps devices and set-uid files out).
type Mount struct {
	Source, Target string
	Writable       bool
}

// binds returns the box's mounts as the engine's bind strings, a parent before what is
// mounted inside it; a source that is missing, a link, or neither a directory nor a
// regular file is refused (ErrBadSpec).
func (bs BoxSpec) binds(workDir, opts string) ([]string, error) {
	ms := append([]Mount{{Source: bs.Dir, Target: workDir, Writable: true}}, bs.Mounts...)
	sort.SliceStable(ms, func(i, j int) bool {
		return strings.Count(filepath.Clean(ms[i].Target), "/") < strings.Count(filepath.Clean(ms[j].Target), "/")
	})
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		if !filepath.IsAbs(m.Source) || !filepath.IsAbs(m.Target) || strings.ContainsAny(m.Source+m.Target, ":,") {
			return nil, fmt.Errorf("%w: box mount %q at %q: want absolute paths without ':' or ','", ErrBadSpec, m.Source, m.Target)
		}
		st, err := os.Lstat(m.Source)
		if err != nil {
			return nil, fmt.Errorf("%w: box mount: %v", ErrBadSpec, err)
		}
		if !st.IsDir() && !st.Mode().IsRegular() {
			return nil, fmt.Errorf("%w: box mount %s is %s, not a directory or a regular file", ErrBadSpec, m.Source, st.Mode().Type())
		}
		mode := "ro"
		if m.Writable {
			mode = "rw"
		}
		out = append(out, m.Source+":"+m.Target+":"+mode+opts)
	}
	return out, nil
}

// mountOptions returns what a box's binds add to ro/rw on this engine: ",nosuid,nodev"
// on Podman, nothing on a Docker daemon (it refuses them). Asked once per engine (a
// failed question is asked again by the next box).
func (e *Engine) mountOptions(ctx context.Context, ct time.Duration) (string, error) {
	e.bindMu.Lock()
	defer e.bindMu.Unlock()
	if !e.bindKnown {
		var v types.Version
		err := e.call(ctx, ct, time.Time{}, "asking the engine's version", func(ctx context.Context) (err error) {
			v, err = e.cli.ServerVersion(ctx)
			return err
		})
		if err != nil {
			return "", err
		}
		e.bindKnown = true
		for _, c := range v.Components {
			if strings.Contains(c.Name, "Podman") {
				e.bindOpts = ",nosuid,nodev"
			}
		}
	}
	return e.bindOpts, nil
}

// Box is an open box. It is owned like Run's containers (the owner labels of this
// process), so a box left by a killed process is removed by the next Connect or Sweep.
type Box struct {
	e    *Engine
	id   string
	spec Spec
	ct   time.Duration
	// Dead is set once a command's backstop timeout, or the disk bound, killed the
	// container: later commands fail.
	dead bool
	disk *diskWatch
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
		SystemFiles: bs.SystemFiles, Steps: []Step{{Name: "box", Command: "true"}}, Limits: bs.Limits, Labels: bs.Labels,
		Started: bs.Started})
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
	opts, err := e.mountOptions(ctx, ct)
	if err != nil {
		return nil, err
	}
	binds, err := bs.binds(spec.WorkDir, opts)
	if err != nil {
		return nil, err
	}
	id, err := e.create(ctx, ct, spec, binds...)
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
	// The bound covers the box's writable layer and the mounted directory.
	if b.disk, err = e.watchDisk(ctx, id, spec.Limits.DiskBytes, []string{bs.Dir}); err != nil {
		b.Close()
		return nil, err
	}
	if err := e.started(id, spec, b.disk.ins); err != nil {
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
	if b.disk != nil {
		sr, err = b.disk.judge(sr, err)
	}
	if err != nil {
		return sr, err
	}
	if sr.DiskExceeded {
		b.dead = true
		sr.Command = command
		return sr, fmt.Errorf("%w: the box wrote more than its disk bound of %d MiB (writable layer and %s) and was killed", ErrBoxGone, b.spec.Limits.DiskBytes>>20, b.spec.WorkDir)
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
	if b.disk != nil {
		b.disk.close()
	}
	err := b.e.call(context.Background(), cleanupTimeout, time.Time{}, "removing box "+shortID(b.id), func(cctx context.Context) error {
		return b.e.cli.ContainerRemove(cctx, b.id, container.RemoveOptions{Force: true, RemoveVolumes: true})
	})
	if err != nil && !errdefs.IsNotFound(err) {
		return err
	}
	return nil
}
