package sandbox

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/strslice"
	"github.com/docker/docker/pkg/stdcopy"
)

// cleanupTimeout bounds the removal of a container after a run.
const cleanupTimeout = 60 * time.Second

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
	tarball, err := filesTar(spec.WorkDir, spec.Files)
	if err != nil {
		return nil, fmt.Errorf("packing files: %w", err)
	}
	img, err := e.cli.ImageInspect(ctx, spec.Image)
	if err != nil {
		if errdefs.IsNotFound(err) {
			return nil, fmt.Errorf("%w: %s is not on the engine at %s: run `envgap build-images`", ErrImageMissing, spec.Image, e.host)
		}
		return nil, fmt.Errorf("inspecting image %s: %w", spec.Image, err)
	}
	id, err := e.create(ctx, spec)
	if err != nil {
		return nil, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		if rerr := e.cli.ContainerRemove(cctx, id, container.RemoveOptions{Force: true, RemoveVolumes: true}); rerr != nil && !errdefs.IsNotFound(rerr) {
			res, err = nil, errors.Join(err, fmt.Errorf("removing container %s: %w", shortID(id), rerr))
		}
	}()
	if len(spec.Files) > 0 {
		if err := e.cli.CopyToContainer(ctx, id, "/", bytes.NewReader(tarball), container.CopyToContainerOptions{}); err != nil {
			return nil, fmt.Errorf("copying files into the container: %w", err)
		}
	}
	if err := e.cli.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		return nil, fmt.Errorf("starting the container: %w", err)
	}
	res = &Result{ImageID: img.ID, ContainerID: id, Collected: map[string][]byte{}}
	killed := false
	for _, st := range spec.Steps {
		if killed {
			res.Steps = append(res.Steps, StepResult{Name: st.Name, Command: st.Command, ExitCode: -1, Skipped: true})
			continue
		}
		sr, err := e.step(ctx, id, spec, st)
		if err != nil {
			return nil, fmt.Errorf("step %q: %w", st.Name, err)
		}
		res.Steps = append(res.Steps, sr)
		killed = sr.TimedOut
	}
	if err := e.collect(ctx, id, spec, res); err != nil {
		return nil, err
	}
	return res, nil
}

func (e *Engine) create(ctx context.Context, spec Spec) (string, error) {
	labels := map[string]string{}
	for k, v := range spec.Labels {
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
		Init:   &init,
		CapAdd: strslice.StrSlice{"SYS_PTRACE"},
		Resources: container.Resources{
			Memory:     spec.Limits.MemoryBytes,
			MemorySwap: spec.Limits.MemoryBytes,
			PidsLimit:  &pids,
			NanoCPUs:   int64(spec.Limits.CPUs * 1e9),
		},
		// No Ulimits: Podman refuses any Ulimits list that lacks nproc; add
		// nproc alongside if ulimits are ever set here.
	}
	if spec.Network == NetworkNone {
		hc.NetworkMode = "none"
	}
	created, err := e.cli.ContainerCreate(ctx, cfg, hc, &network.NetworkingConfig{}, nil, "")
	if err != nil {
		return "", fmt.Errorf("creating the container: %w", err)
	}
	return created.ID, nil
}

// step runs one command as an exec; a timeout kills the container.
func (e *Engine) step(ctx context.Context, id string, spec Spec, st Step) (StepResult, error) {
	sr := StepResult{Name: st.Name, Command: st.Command}
	timeout := st.Timeout
	if timeout == 0 {
		timeout = spec.Limits.StepTimeout
	}
	cmd := append(append([]string{}, spec.Shell...), st.Command)
	ex, err := e.cli.ContainerExecCreate(ctx, id, container.ExecOptions{
		Cmd: cmd, AttachStdout: true, AttachStderr: true, WorkingDir: spec.WorkDir,
	})
	if err != nil {
		return sr, fmt.Errorf("creating exec: %w", err)
	}
	start := time.Now()
	hr, err := e.cli.ContainerExecAttach(ctx, ex.ID, container.ExecAttachOptions{})
	if err != nil {
		return sr, fmt.Errorf("starting exec: %w", err)
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
	poll := 10 * time.Millisecond
	ticker := time.NewTimer(poll)
	defer ticker.Stop()
	for !(streamDone && exited) {
		select {
		case streamErr = <-copied:
			streamDone = true
			copied = nil
		case <-ticker.C:
			if !exited {
				ins, err := e.cli.ContainerExecInspect(ctx, ex.ID)
				if err != nil {
					hr.Close()
					if copied != nil {
						<-copied
					}
					return sr, fmt.Errorf("inspecting exec: %w", err)
				}
				if !ins.Running {
					exited, exitCode, exitedAt = true, ins.ExitCode, time.Now()
				}
			}
			if exited && !streamDone && time.Since(exitedAt) > drainGrace {
				hr.Close() // a background child holds the output open
			}
			poll = min(poll*2, 250*time.Millisecond)
			if exited {
				poll = 50 * time.Millisecond
			}
			ticker.Reset(poll)
		case <-deadline.C:
			sr.TimedOut = true
			kctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
			kerr := e.cli.ContainerKill(kctx, id, "KILL")
			cancel()
			hr.Close()
			if copied != nil {
				<-copied
			}
			if kerr != nil && !errdefs.IsNotFound(kerr) && !errdefs.IsConflict(kerr) {
				return sr, fmt.Errorf("killing the container after the step's %s timeout: %w", timeout, kerr)
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
	sr.OutputSize = capt.size
	sr.OutputSHA256 = capt.digest()
	sr.CommandNotFound = exitCode == 127
	sr.OOMKilled = exitCode == 137 && !sr.TimedOut && spec.Limits.MemoryBytes > 0
	return sr, nil
}

// collect copies spec.Collect out of the container.
func (e *Engine) collect(ctx context.Context, id string, spec Spec, res *Result) error {
	budget := spec.Limits.CollectBytes
	for _, c := range spec.Collect {
		p := c
		if !path.IsAbs(p) {
			p = path.Join(spec.WorkDir, p)
		}
		p = path.Clean(p)
		rc, _, err := e.cli.CopyFromContainer(ctx, id, p)
		if errdefs.IsNotFound(err) {
			res.Missing = append(res.Missing, c)
			continue
		}
		if err != nil {
			return fmt.Errorf("collecting %s: %w", p, err)
		}
		err = func() error {
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
			return fmt.Errorf("collecting %s: %w", p, err)
		}
	}
	return nil
}

// filesTar packs files into a tar to extract at "/", below workDir, with the
// parent directories.
func filesTar(workDir string, files []File) ([]byte, error) {
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
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// SweepOptions select the leftover containers Sweep removes.
type SweepOptions struct {
	// OlderThan spares containers created less than this long ago (runs
	// that may still be going on); zero removes all that match.
	OlderThan time.Duration
	// Labels further restrict the sweep to containers carrying all of them.
	Labels map[string]string
}

// Sweep removes containers labelled org.envgap.sandbox=1 (left behind by a
// process that died mid-run) and returns how many it removed.
func (e *Engine) Sweep(ctx context.Context, opts SweepOptions) (int, error) {
	f := filters.NewArgs(filters.Arg("label", Label+"=1"))
	for k, v := range opts.Labels {
		f.Add("label", k+"="+v)
	}
	list, err := e.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		return 0, fmt.Errorf("listing sandbox containers: %w", err)
	}
	n := 0
	for _, c := range list {
		if c.Labels[Label] != "1" {
			continue
		}
		if opts.OlderThan > 0 && time.Since(time.Unix(c.Created, 0)) < opts.OlderThan {
			continue
		}
		if err := e.cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !errdefs.IsNotFound(err) {
			return n, fmt.Errorf("removing sandbox container %s: %w", shortID(c.ID), err)
		}
		n++
	}
	return n, nil
}

// HostAddress returns an address of the host that containers on the default
// network reach (the gateway of the engine's default bridge network), e.g.
// for a server the core runs on the host.
func (e *Engine) HostAddress(ctx context.Context) (string, error) {
	nw, err := e.cli.NetworkInspect(ctx, "bridge", network.InspectOptions{})
	if err != nil {
		return "", fmt.Errorf("inspecting the default network: %w", err)
	}
	for _, c := range nw.IPAM.Config {
		if c.Gateway != "" && !strings.Contains(c.Gateway, ":") {
			return c.Gateway, nil
		}
	}
	return "", fmt.Errorf("the default network %q has no IPv4 gateway", nw.Name)
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
