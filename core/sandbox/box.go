package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
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
// regular file is refused (ErrBadSpec), and so, in a user namespace (userns), is a
// read-only one that others cannot read (a directory without r and x for others, a file
// without r): the container's root is not its owner there.
func (bs BoxSpec) binds(workDir, opts string, userns bool) ([]string, error) {
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
		if userns && !m.Writable {
			need, fix := fs.FileMode(0o004), "o+r"
			if st.IsDir() {
				need, fix = 0o005, "o+rx"
			}
			if st.Mode().Perm()&need != need {
				return nil, fmt.Errorf("%w: box mount %s (read-only, mode %04o) is not readable by others: the box's root, in a user namespace, is not its owner; make it readable (chmod %s)", ErrBadSpec, m.Source, st.Mode().Perm(), fix)
			}
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
	// userns is the box's user namespace mode; ids its maps (nil without one, or for an
	// engine on another host, whose mounts are that host's).
	userns string
	ids    *ids
}

// unready removes the box whose copy or start failed (err) and returns the error: a
// *prepareError once the box is gone.
func (b *Box) unready(err error) error {
	if cerr := b.Close(); cerr != nil {
		return errors.Join(err, cerr)
	}
	return &prepareError{err}
}

// ErrBoxGone means the box's container was killed (a command outlived its backstop) and
// takes no more commands.
var ErrBoxGone = errors.New("the box's container is gone")

// OpenBox creates and starts a box. Close removes it. A box whose container could not be
// started (the copy of its files or its start failed) is removed and opened once more, as a
// run's container is (see prepareAgain).
func (e *Engine) OpenBox(ctx context.Context, bs BoxSpec) (b *Box, err error) {
	err = e.twice(ctx, func() (err error) {
		b, err = e.openBox(ctx, bs)
		return err
	})
	return b, err
}

func (e *Engine) openBox(ctx context.Context, bs BoxSpec) (*Box, error) {
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
	binds, err := bs.binds(spec.WorkDir, opts, e.usernsMode() != UserNSNone)
	if err != nil {
		return nil, err
	}
	id, userns, err := e.create(ctx, ct, spec, binds...)
	if err != nil {
		return nil, err
	}
	b := &Box{e: e, id: id, spec: spec, ct: ct, userns: userns}
	if len(spec.SystemFiles) > 0 {
		// No working directory entries: WorkDir is the mounted directory.
		tarball, err := filesTar("", nil, spec.SystemFiles)
		if err == nil {
			err = e.call(ctx, ct, time.Time{}, "copying files into the box", func(ctx context.Context) error {
				return e.cli.CopyToContainer(ctx, id, "/", bytes.NewReader(tarball), container.CopyToContainerOptions{})
			})
		}
		if err != nil {
			return nil, b.unready(err)
		}
	}
	// Podman says the box's id maps before it starts: its writable mounts are its root's
	// before the engine enters them (a 0700 directory of the host's root would be closed
	// to it).
	if err := b.givePodmanMounts(ctx, bs); err != nil {
		b.Close()
		return nil, err
	}
	if e.prepareFault != nil {
		if err := e.prepareFault(id); err != nil {
			return nil, b.unready(err)
		}
	}
	if err := e.start(ctx, ct, id, "the box"); err != nil {
		return nil, b.unready(err)
	}
	// The bound covers the box's writable layer and the mounted directory.
	if b.disk, err = e.watchDisk(ctx, id, spec.Limits.DiskBytes, []string{bs.Dir}); err != nil {
		b.Close()
		return nil, err
	}
	if err := b.giveMounts(bs); err != nil {
		b.Close()
		return nil, err
	}
	if err := e.started(id, spec, b.disk.ins); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// givePodmanMounts gives, on Podman (on this host, in a user namespace), what is mounted
// writable in the created box to its root, as the engine says its id maps are.
func (b *Box) givePodmanMounts(ctx context.Context, bs BoxSpec) error {
	if b.userns == UserNSNone || !b.e.local() || !b.e.isPodman() {
		return nil
	}
	uid, gid, err := b.e.podmanIDMaps(ctx, b.id)
	if err != nil {
		return fmt.Errorf("the box's user namespace: %w", err)
	}
	b.ids = &ids{uid: uid, gid: gid}
	return b.ids.giveMounts(bs)
}

// giveMounts reads the started box's id maps (an engine on this host, in a user namespace)
// from its process and, unless Podman's were given before the start (they must be the
// same), gives what is mounted writable to the box's root (ids.giveTree), before any
// command.
func (b *Box) giveMounts(bs BoxSpec) error {
	if b.userns == UserNSNone || !b.e.local() {
		return nil
	}
	ins := b.disk.ins
	if ins.State == nil || ins.State.Pid <= 0 {
		return fmt.Errorf("the box %s has no process to read its user namespace from", shortID(b.id))
	}
	uid, err := readIDMap(ins.State.Pid, "uid_map")
	if err != nil {
		return fmt.Errorf("the box's user namespace: %w", err)
	}
	gid, err := readIDMap(ins.State.Pid, "gid_map")
	if err != nil {
		return fmt.Errorf("the box's user namespace: %w", err)
	}
	if b.ids != nil {
		if !slices.Equal(b.ids.uid, uid) || !slices.Equal(b.ids.gid, gid) {
			return fmt.Errorf("the box's user namespace: its process maps uids %v and gids %v, the engine said %v and %v", uid, gid, b.ids.uid, b.ids.gid)
		}
		return nil
	}
	b.ids = &ids{uid: uid, gid: gid}
	return b.ids.giveMounts(bs)
}

// UserNS is the box's user namespace mode (UserNSAuto, UserNSRemap or UserNSNone).
func (b *Box) UserNS() string { return b.userns }

// HostIDs returns the host ids of the box's uid and gid (the same ids without a user
// namespace, or for an engine on another host).
func (b *Box) HostIDs(uid, gid int) (int, int, error) {
	if b.ids == nil {
		return uid, gid, nil
	}
	if uid < 0 || gid < 0 {
		return 0, 0, fmt.Errorf("ids %d:%d", uid, gid)
	}
	u, uok := b.ids.uid.host(uint32(uid))
	g, gok := b.ids.gid.host(uint32(gid))
	if !uok || !gok {
		return 0, 0, fmt.Errorf("the box's ids %d:%d are not mapped to host ids", uid, gid)
	}
	return int(u), int(g), nil
}

// Own gives rel (a slash-separated path below dir, a directory mounted writable in the
// box) and each directory on the way to it to the box's root, where their owner is not one
// of the box's: for a file the harness wrote there while the box is open (it writes as the
// host's root, which the box's root is not in a user namespace). Nothing on the way may
// be a link. Without a user namespace (or for an engine on another host) it does nothing.
func (b *Box) Own(dir, rel string) error {
	if b.ids == nil || b.ids.uid.identity() {
		return nil
	}
	if err := b.ids.givePath(dir, rel); err != nil {
		return fmt.Errorf("giving %s in %s to the box's root: %w", rel, dir, err)
	}
	return nil
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
		return b.e.removeContainer(cctx, b.id)
	})
	if err != nil && !errdefs.IsNotFound(err) {
		return err
	}
	return nil
}
