package sandbox

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/containerd/errdefs"
	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/strslice"
	"github.com/docker/docker/pkg/stdcopy"
)

// drainGrace is how long output may still arrive after a step's process
// exited (background children holding the output open are cut off then).
const drainGrace = 2 * time.Second

// Run runs spec in one fresh container and removes it afterwards. See the
// package doc for what is a result and what is an error.
func (e *Engine) Run(ctx context.Context, spec Spec) (res *Result, err error) {
	spec, err = validate(spec)
	if err != nil {
		return nil, err
	}
	tarball, err := filesTar(spec.WorkDir, spec.Files, spec.SystemFiles)
	if err != nil {
		return nil, fmt.Errorf("packing files: %w", err)
	}
	ct := callTimeout(spec.Limits.StepTimeout)
	prepared := func() {}
	if spec.Prepare != nil {
		done, err := spec.Prepare(ctx)
		if err != nil {
			return nil, err
		}
		if done != nil {
			var once sync.Once
			prepared = func() { once.Do(done) }
		}
	}
	defer prepared()
	var id, userns string
	if err := e.twice(ctx, func() (err error) {
		id, userns, err = e.ready(ctx, ct, spec, tarball)
		return err
	}); err != nil {
		return nil, err
	}
	defer func() {
		prepared()
		if err == nil && spec.RemoveLater {
			// The results are complete: the removal goes on in the background, with the
			// time of a run that ended well (the caller may end ctx once Run returned).
			removed := make(chan error, 1)
			res.Removed = removed
			go func() { removed <- e.removeInBackground(id) }()
			return
		}
		if rerr := e.remove(ctx, id, err); rerr != nil {
			res, err = nil, errors.Join(err, rerr)
		}
	}()
	disk, err := e.watchDisk(ctx, id, spec.Limits.DiskBytes, nil)
	if err != nil {
		return nil, err
	}
	defer disk.close()
	if err := e.started(id, spec, disk.ins); err != nil {
		return nil, err
	}
	prepared()
	leave := func() {}
	if spec.Gate != nil {
		if leave, err = spec.Gate(ctx); err != nil {
			return nil, err
		}
		if leave == nil {
			leave = func() {}
		}
		if e.unanswered.Load() {
			// The engine stopped answering while this run waited (another run's call):
			// its steps would only wait for deadlines too.
			leave()
			return nil, fmt.Errorf("%w at %s: a call of another run got no answer while this one waited to start its steps (frozen or overloaded? the next envgap command that opens it removes what this run left behind)", ErrEngineUnresponsive, e.host)
		}
	}
	res = &Result{ImageID: disk.ins.Image, ContainerID: id, Collected: map[string][]byte{}, UserNS: userns}
	killed := false
	for _, st := range spec.Steps {
		if killed {
			res.Steps = append(res.Steps, StepResult{Name: st.Name, Command: st.Command, ExitCode: -1, Skipped: true})
			continue
		}
		sr, err := e.step(ctx, ct, id, spec, st)
		sr, err = disk.judge(sr, err)
		if err != nil {
			leave()
			return nil, fmt.Errorf("step %q: %w", st.Name, err)
		}
		res.Steps = append(res.Steps, sr)
		killed = sr.TimedOut || sr.DiskExceeded
	}
	leave()
	if err := e.collect(ctx, ct, id, spec, res); err != nil {
		return nil, err
	}
	return res, nil
}

// ready creates spec's container, copies the files in and starts it. A copy or start that
// fails removes the container and returns a *prepareError (see prepareAgain).
func (e *Engine) ready(ctx context.Context, ct time.Duration, spec Spec, tarball []byte) (id, userns string, err error) {
	// The image is not inspected first: a missing one fails the create, and the image the
	// container runs is read from the container's inspection (one call less a run).
	id, userns, err = e.create(ctx, ct, spec)
	if err != nil {
		return "", "", e.missingImage(ctx, ct, spec.Image, err)
	}
	// In a user namespace WorkDir comes from the copy even without files: Podman makes a
	// missing working directory owned by the host's root, which the container's is not.
	if len(spec.Files) > 0 || len(spec.SystemFiles) > 0 || userns != UserNSNone {
		err = e.call(ctx, ct, time.Time{}, "copying files into the container", func(ctx context.Context) error {
			return e.cli.CopyToContainer(ctx, id, "/", bytes.NewReader(tarball), container.CopyToContainerOptions{})
		})
	}
	if err == nil && e.prepareFault != nil {
		err = e.prepareFault(id)
	}
	if err == nil {
		err = e.start(ctx, ct, id, "the container")
	}
	if err != nil {
		if rerr := e.remove(ctx, id, err); rerr != nil {
			return "", "", errors.Join(err, rerr)
		}
		return "", "", &prepareError{err}
	}
	return id, userns, nil
}

// missingImage is the error of a create that failed (err): ErrImageMissing when the image
// is not on the engine (a create's "not found" may also be the network's, so the image is
// asked), else err.
func (e *Engine) missingImage(ctx context.Context, ct time.Duration, ref string, err error) error {
	if !errdefs.IsNotFound(err) {
		return err
	}
	ierr := e.call(ctx, ct, time.Time{}, "inspecting image "+ref, func(ctx context.Context) error {
		_, err := e.cli.ImageInspect(ctx, ref)
		return err
	})
	if errdefs.IsNotFound(ierr) {
		return fmt.Errorf("%w: %s is not on the engine at %s: run `envgap build-images`", ErrImageMissing, ref, e.host)
	}
	return err
}

// removeInBackground removes the container of a run that ended well, after Run returned:
// as remove, with the time of a run that ended well, but it gives up once a call of any
// run finds the engine unresponsive (a frozen engine does not keep the stage, which waits
// for its removals, a minute longer; the container is left to the next command's sweep).
func (e *Engine) removeInBackground(id string) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if e.unanswered.Load() {
					cancel()
					return
				}
			}
		}
	}()
	err := e.removeWithin(ctx, cleanupTimeout, id)
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("removing container %s: given up, as another call found the engine unresponsive: %w at %s (the next envgap command that opens it removes the container)", shortID(id), ErrEngineUnresponsive, e.host)
	}
	return err
}

// remove removes a run's container (gone already is no error). A cancelled run (ctx
// ended) or a frozen engine (runErr, the run's error, wraps ErrEngineUnresponsive) does not
// wait long for the removal: the container is left to the next command's sweep (its
// owner is gone by then).
func (e *Engine) remove(ctx context.Context, id string, runErr error) error {
	d := cleanupTimeout
	if ctx.Err() != nil || errors.Is(runErr, ErrEngineUnresponsive) {
		d = abandonTimeout
	}
	return e.removeWithin(context.Background(), d, id)
}

// removeWithin removes container id, waiting at most d (or until parent ends); a
// container already gone is no error.
func (e *Engine) removeWithin(parent context.Context, d time.Duration, id string) error {
	err := e.call(parent, d, time.Time{}, "removing container "+shortID(id), func(cctx context.Context) error {
		return e.removeContainer(cctx, id)
	})
	if err != nil && !errdefs.IsNotFound(err) {
		return err
	}
	return nil
}

// create creates spec's container and returns its id and its user namespace mode (see
// userns.go): Podman's own range for each container where it has subordinate ids.
func (e *Engine) create(ctx context.Context, ct time.Duration, spec Spec, binds ...string) (string, string, error) {
	labels := map[string]string{}
	for k, v := range spec.Labels {
		labels[k] = v
	}
	for k, v := range ownerLabels(Self()) {
		labels[k] = v
	}
	labels[Label] = "1"
	cfg := &container.Config{
		Image:      spec.Image,
		Entrypoint: strslice.StrSlice{"sleep"},
		Cmd:        strslice.StrSlice{"infinity"},
		WorkingDir: spec.WorkDir,
		Env:        spec.Env,
		Labels:     labels,
	}
	pids := spec.Limits.PIDs
	init := true
	hc := &container.HostConfig{
		Binds: binds,
		Init:  &init,
		// Only what the images' steps need as root (apt drops to _apt with setuid and
		// setgid, dpkg and npm chown and keep modes, pip and Maven write as root), and
		// SYS_PTRACE for the trace; no NET_RAW, MKNOD, SYS_CHROOT, SETFCAP, AUDIT_WRITE,
		// ... of the engine's defaults. No process gains privileges by exec (setuid
		// binaries, file capabilities).
		CapDrop:     strslice.StrSlice{"ALL"},
		CapAdd:      strslice.StrSlice(Capabilities),
		SecurityOpt: []string{"no-new-privileges"},
		// No IPv6 inside: the wall is IPv4 (the host drops IPv6 from the network too).
		Sysctls: map[string]string{"net.ipv6.conf.all.disable_ipv6": "1", "net.ipv6.conf.default.disable_ipv6": "1"},
		Resources: container.Resources{
			Memory:     spec.Limits.MemoryBytes,
			MemorySwap: spec.Limits.MemoryBytes,
			PidsLimit:  &pids,
			NanoCPUs:   int64(spec.Limits.CPUs * 1e9),
		},
		// No Ulimits: Podman refuses any Ulimits list that lacks nproc; add
		// nproc alongside if ulimits are ever set here.
	}
	switch {
	case spec.Network == NetworkNone:
		hc.NetworkMode = "none"
	case e.network == "":
		// Fail closed: never the engine's default bridge.
		return "", "", fmt.Errorf("%w: the engine at %s was opened without its sandbox network (build only), so no container with network starts", ErrNoWall, e.host)
	default:
		hc.NetworkMode = container.NetworkMode(e.network)
	}
	mode := e.usernsMode()
	if mode == UserNSAuto {
		hc.UsernsMode = usernsAuto
	}
	var created container.CreateResponse
	do := func() error {
		return e.call(ctx, ct, time.Time{}, "creating the container", func(ctx context.Context) (err error) {
			created, err = e.cli.ContainerCreate(ctx, cfg, hc, &network.NetworkingConfig{}, nil, "")
			return err
		})
	}
	err := do()
	if mode == UserNSAuto && e.noSubordinateIDs(err) {
		// Podman without subordinate ids: this engine's containers go without (recorded).
		mode, hc.UsernsMode = UserNSNone, ""
		err = do()
	}
	return created.ID, mode, err
}

// start starts the created container id (what names it in the error: "the container",
// "the box").
func (e *Engine) start(ctx context.Context, ct time.Duration, id, what string) error {
	err := e.call(ctx, ct, time.Time{}, "starting "+what, func(ctx context.Context) error {
		return e.cli.ContainerStart(ctx, id, container.StartOptions{})
	})
	return networkFullHint(err, e.network)
}

// started calls spec.Started, if any, with the started container's address on the
// sandbox network (the zero Addr without network), read from ins, an inspection made
// after the start (the disk watch's).
func (e *Engine) started(id string, spec Spec, ins container.InspectResponse) error {
	if spec.Started == nil {
		return nil
	}
	var addr netip.Addr
	if spec.Network != NetworkNone {
		var ip string
		if ins.NetworkSettings != nil {
			if n := ins.NetworkSettings.Networks[e.network]; n != nil {
				ip = n.IPAddress
			}
		}
		a, err := netip.ParseAddr(ip)
		if err != nil {
			return fmt.Errorf("%w: the container %s has no address on %s (%q)", ErrStartedHook, shortID(id), e.network, ip)
		}
		addr = a.Unmap()
	}
	if err := spec.Started(addr); err != nil {
		return fmt.Errorf("%w: %w", ErrStartedHook, err)
	}
	return nil
}

// step runs one command as an exec; a timeout kills the container. Every engine call of
// the step ends by the step's timeout plus killGrace, so a frozen engine is an error then.
func (e *Engine) step(ctx context.Context, ct time.Duration, id string, spec Spec, st Step) (StepResult, error) {
	sr := StepResult{Name: st.Name, Command: st.Command}
	timeout := st.Timeout
	if timeout == 0 {
		timeout = spec.Limits.StepTimeout
	}
	start := time.Now()
	limit := start.Add(timeout + killGrace)
	cmd := append(append([]string{}, spec.Shell...), st.Command)
	var ex container.ExecCreateResponse
	err := e.call(ctx, ct, limit, "creating exec", func(ctx context.Context) (err error) {
		ex, err = e.cli.ContainerExecCreate(ctx, id, container.ExecOptions{
			Cmd: cmd, AttachStdout: true, AttachStderr: true, WorkingDir: spec.WorkDir, Env: st.Env,
		})
		return err
	})
	if err != nil {
		return sr, err
	}
	var hr types.HijackedResponse
	err = e.call(ctx, ct, limit, "starting exec", func(cctx context.Context) (err error) {
		// The attach hijacks the connection and does not give up when cctx ends.
		hr, err = background(cctx, func() (types.HijackedResponse, error) {
			return e.cli.ContainerExecAttach(cctx, ex.ID, container.ExecAttachOptions{})
		}, func(hr types.HijackedResponse) { hr.Close() })
		return err
	})
	if err != nil {
		return sr, err
	}
	defer hr.Close()
	capt := newCapture(spec.Limits.OutputBytes)
	copied := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(capt, capt, hr.Reader)
		copied <- err
	}()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()

	var streamDone, exited bool
	var streamErr error
	var exitCode int
	var exitedAt time.Time
	// The end of the output says when to ask for the exit code (at once, as the docker CLI
	// does); polling only catches a command that exited while a background child holds
	// its output open, so it starts late and asks the engine nothing during a short
	// command (each inspect takes the container's lock on Podman, slowing the exec).
	poll := 250 * time.Millisecond
	ticker := time.NewTimer(poll)
	defer ticker.Stop()
	for !(streamDone && exited) {
		select {
		case streamErr = <-copied:
			streamDone = true
			copied = nil
			if !exited {
				// The output ended: the command has (all but) exited. Ask now, as the
				// docker CLI does, instead of at the next poll of a backing-off ticker.
				poll = time.Millisecond
				ticker.Reset(0)
			}
		case <-ticker.C:
			if !exited {
				var ins container.ExecInspect
				err := e.call(ctx, ct, limit, "inspecting exec", func(ctx context.Context) (err error) {
					ins, err = e.cli.ContainerExecInspect(ctx, ex.ID)
					return err
				})
				if err != nil {
					hr.Close()
					if copied != nil {
						<-copied
					}
					return sr, err
				}
				if !ins.Running {
					exited, exitCode, exitedAt = true, ins.ExitCode, time.Now()
				}
			}
			if exited && !streamDone && time.Since(exitedAt) > drainGrace {
				hr.Close() // a background child holds the output open
			}
			poll = min(poll*2, 250*time.Millisecond)
			if streamDone {
				poll = min(poll, 20*time.Millisecond)
			}
			if exited {
				poll = 50 * time.Millisecond
			}
			ticker.Reset(poll)
		case <-deadline.C:
			sr.TimedOut = true
			kerr := e.call(ctx, ct, limit, fmt.Sprintf("killing the container after the step's %s timeout", timeout), func(ctx context.Context) error {
				return e.cli.ContainerKill(ctx, id, "KILL")
			})
			hr.Close()
			if copied != nil {
				<-copied
			}
			if kerr != nil && !errdefs.IsNotFound(kerr) && !errdefs.IsConflict(kerr) {
				return sr, kerr
			}
			streamDone, exited, exitCode, streamErr = true, true, 137, nil
		case <-ctx.Done():
			hr.Close()
			if copied != nil {
				<-copied
			}
			return sr, ctx.Err()
		}
	}
	sr.Duration = time.Since(start)
	if streamErr != nil && !sr.TimedOut && !(exited && time.Since(exitedAt) > drainGrace) {
		return sr, fmt.Errorf("reading output: %w", streamErr)
	}
	sr.ExitCode = exitCode
	sr.Output, sr.Truncated = capt.output()
	sr.OutputSize = capt.size()
	sr.OutputSHA256 = capt.digest()
	sr.CommandNotFound = exitCode == 127
	sr.OOMKilled = exitCode == 137 && !sr.TimedOut && spec.Limits.MemoryBytes > 0
	return sr, nil
}

// collect copies spec.Collect out of the container.
func (e *Engine) collect(ctx context.Context, ct time.Duration, id string, spec Spec, res *Result) error {
	budget := spec.Limits.CollectBytes
	for _, c := range spec.Collect {
		p := c
		if !path.IsAbs(p) {
			p = path.Join(spec.WorkDir, p)
		}
		p = path.Clean(p)
		// One deadline for the copy and the reading of its tar stream.
		cctx, cancel := context.WithTimeout(ctx, ct)
		rc, _, err := e.cli.CopyFromContainer(cctx, id, p)
		if errdefs.IsNotFound(err) {
			cancel()
			res.Missing = append(res.Missing, c)
			continue
		}
		if err != nil {
			cancel()
			return fmt.Errorf("collecting %s: %w", p, e.callErr(ctx, cctx, ct, err))
		}
		err = func() error {
			defer cancel()
			defer rc.Close()
			tr := tar.NewReader(rc)
			for {
				hdr, err := tr.Next()
				if err == io.EOF {
					return nil
				}
				if err != nil {
					return err
				}
				if hdr.Typeflag != tar.TypeReg {
					continue
				}
				if hdr.Size > budget {
					res.CollectTruncated = true
					continue
				}
				b, err := io.ReadAll(io.LimitReader(tr, hdr.Size))
				if err != nil {
					return err
				}
				budget -= int64(len(b))
				// Entries are named from the base name of p downwards.
				res.Collected[path.Join(path.Dir(p), hdr.Name)] = b
			}
		}()
		if err != nil {
			return fmt.Errorf("collecting %s: %w", p, e.callErr(ctx, cctx, ct, err))
		}
	}
	return nil
}

// filesTar packs files into a tar to extract at "/", below workDir, with the
// parent directories (workDir and its parents always).
func filesTar(workDir string, files, system []File) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	root := strings.TrimPrefix(workDir, "/")
	dirs := map[string]bool{}
	var addDir func(d string) error
	addDir = func(d string) error {
		if d == "." || d == "" || dirs[d] {
			return nil
		}
		if err := addDir(path.Dir(d)); err != nil {
			return err
		}
		dirs[d] = true
		return tw.WriteHeader(&tar.Header{Name: d + "/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: time.Unix(0, 0)})
	}
	if err := addDir(root); err != nil {
		return nil, err
	}
	sorted := append([]File{}, files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	for _, f := range sorted {
		name := path.Join(root, f.Path)
		if err := addDir(path.Dir(name)); err != nil {
			return nil, err
		}
		mode := int64(f.Mode.Perm())
		if mode == 0 {
			mode = 0o644
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: mode, Size: int64(len(f.Content)), ModTime: time.Unix(0, 0)}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Content); err != nil {
			return nil, err
		}
	}
	// System files: no directory entries, so existing directories keep their mode.
	for _, f := range system {
		mode := int64(f.Mode.Perm())
		if mode == 0 {
			mode = 0o644
		}
		if err := tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(f.Path, "/"), Typeflag: tar.TypeReg, Mode: mode, Size: int64(len(f.Content)), ModTime: time.Unix(0, 0)}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Content); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// SweepOptions select the leftover containers Sweep removes.
type SweepOptions struct {
	// OlderThan applies to containers whose owner cannot be checked from here (another
	// host, or no owner labels): they are removed once created this long ago. Zero
	// removes them all; negative never. Containers of an owner on this host that is gone
	// are removed at once, those of a live owner never.
	OlderThan time.Duration
	// Labels further restrict the sweep to containers carrying all of them.
	Labels map[string]string
}

// Sweep removes the sandbox containers (labelled org.envgap.sandbox=1) left behind by a
// process that died mid-run, and returns how many it removed. A container's owner labels
// (host, pid, process start) tell whether its process still runs: a process of this host
// that is dead, or whose pid now names another process, is gone, and its containers are
// removed at once; the containers of a live process (another verify running at the same
// time) are never touched; those of other hosts or without labels only by age.
func (e *Engine) Sweep(ctx context.Context, opts SweepOptions) (int, error) {
	f := filters.NewArgs(filters.Arg("label", Label+"=1"))
	for k, v := range opts.Labels {
		f.Add("label", k+"="+v)
	}
	var list []container.Summary
	err := e.call(ctx, maxCallTimeout, time.Time{}, "listing sandbox containers", func(ctx context.Context) (err error) {
		list, err = e.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
		return err
	})
	if err != nil {
		return 0, err
	}
	self := Self()
	n := 0
	for _, c := range list {
		if c.Labels[Label] != "1" {
			continue
		}
		state := ownerUnknown
		if o, ok := ownerOf(c.Labels); ok {
			state = o.StateFrom(self)
		}
		switch state {
		case ownerAlive:
			continue
		case ownerUnknown:
			if opts.OlderThan < 0 || (opts.OlderThan > 0 && time.Since(time.Unix(c.Created, 0)) < opts.OlderThan) {
				continue
			}
		}
		err := e.call(ctx, maxCallTimeout, time.Time{}, "removing sandbox container "+shortID(c.ID), func(ctx context.Context) error {
			return e.removeContainer(ctx, c.ID)
		})
		if err != nil && !errdefs.IsNotFound(err) {
			return n, err
		}
		n++
	}
	return n, nil
}

// HostAddress returns the address of the host that containers with network reach (the
// gateway of the sandbox network), e.g. for a server the core runs on the host. A server
// for them listens on this address alone, marked (ListenHost): the host admits nothing
// else from the network.
func (e *Engine) HostAddress(ctx context.Context) (string, error) {
	if e.wall == nil {
		return "", fmt.Errorf("%w: the engine at %s was opened without its sandbox network", ErrNoWall, e.host)
	}
	return e.wall.Gateway, nil
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// removeContainer removes container id (force). Podman 4.3 sometimes answers the removal
// of a container in a user namespace with EBUSY on its /dev/shm ("unlinkat
// .../userdata/shm: device or resource busy"), and the container is gone a moment later:
// the mount is still held as the removal runs (most likely by the engine's own clean-up of
// the exited container, racing with it). Seen in 5 of 10 removals right after a step's
// timeout killed the container (0 of 10 without a user namespace), and on a removal of a
// running one. The removal is then asked again, a little later each time, within ctx (a
// container gone by then was removed).
func (e *Engine) removeContainer(ctx context.Context, id string) error {
	wait := 50 * time.Millisecond
	for retried := false; ; retried = true {
		err := e.cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true, RemoveVolumes: true})
		if retried && errdefs.IsNotFound(err) {
			return nil // the refused removal finished after all
		}
		if err == nil || !strings.Contains(err.Error(), "device or resource busy") {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, time.Second)
	}
}
