package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/docker/docker/api/types/container"
	"golang.org/x/sys/unix"
)

// ErrHostDiskLow means the engine's storage ran short of free space (below HostDiskFloor)
// while a container ran: an infrastructure fault (the host's, not the project's); the
// container was stopped before the disk filled.
var ErrHostDiskLow = errors.New("the engine's disk is nearly full")

// HostDiskFloor is the free space a run leaves on the engine's storage (an engine on this
// host): below it, the container is killed and the run ends with ErrHostDiskLow.
var HostDiskFloor int64 = 2 << 30

// Disk watching. Podman's overlay storage on ext4 (this project's machines) cannot bound
// a container's writable layer (storage-opt size needs xfs project quotas), so a watcher
// measures and kills instead: every diskPoll it reads the free space of the filesystem that
// holds the container's writable layer (one statfs), and walks the layer (and a box's
// mounted directory) only when that free space fell by more than a quarter of the bound
// since the container started, or diskWalkEvery passed: a walk costs about 13 µs a file
// here, a statfs about 40 µs (BenchmarkDiskWatch). A
// container over Limits.DiskBytes is killed and its step marked DiskExceeded (the
// project's outcome, like running out of memory). For an engine on another host, whose
// layer is not on this filesystem, the engine's own measure (ContainerInspect with sizes)
// is asked every diskWalkEvery, and no floor applies.
const (
	diskPoll      = time.Second
	diskWalkEvery = time.Minute
)

// diskWatch watches one container's disk use.
type diskWatch struct {
	e      *Engine
	id     string
	limit  int64
	upper  string   // the writable layer on this host ("" for a remote engine)
	mounts []string // host directories mounted read-write (a box's)
	start  int64    // free bytes when the watch started

	mu       sync.Mutex
	used     int64 // bytes at the last measure
	lastWalk time.Time
	exceeded bool
	low      bool
	avail    int64
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
	// ins is the container's inspection when the watch started (the Started hook reads
	// the container's address from it: no second inspect).
	ins container.InspectResponse
}

// watchDisk starts watching container id (created, started or not). Stop it with stop.
func (e *Engine) watchDisk(ctx context.Context, id string, limit int64, mounts []string) (*diskWatch, error) {
	w := &diskWatch{e: e, id: id, limit: limit, mounts: mounts, stop: make(chan struct{}), done: make(chan struct{}), lastWalk: time.Now()}
	var ins container.InspectResponse
	err := e.call(ctx, maxCallTimeout, time.Time{}, "inspecting container "+shortID(id), func(ctx context.Context) (err error) {
		ins, err = e.cli.ContainerInspect(ctx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	w.ins = ins
	if up := ins.GraphDriver.Data["UpperDir"]; up != "" && e.local() {
		if fi, err := os.Stat(up); err == nil && fi.IsDir() {
			w.upper = up
			if w.start, err = freeBytes(up); err != nil {
				return nil, fmt.Errorf("free space of the engine's storage: %w", err)
			}
		}
	}
	go w.loop()
	return w, nil
}

func (w *diskWatch) loop() {
	defer close(w.done)
	t := time.NewTicker(diskPoll)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			if over, _ := w.check(false); over {
				// Kill the container: the step in progress ends, and step() reads why.
				w.e.call(context.Background(), maxCallTimeout, time.Time{}, "killing container "+shortID(w.id)+" over its disk bound", func(ctx context.Context) error {
					return w.e.cli.ContainerKill(ctx, w.id, "KILL")
				})
				return
			}
		}
	}
}

// check measures (walking when due, or always when force) and reports whether the
// container is over its bound or the host's disk below its floor.
func (w *diskWatch) check(force bool) (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.exceeded || w.low {
		return true, nil
	}
	if w.upper == "" {
		if !force && time.Since(w.lastWalk) < diskWalkEvery {
			return false, nil
		}
		w.lastWalk = time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), maxCallTimeout)
		defer cancel()
		ins, _, err := w.e.cli.ContainerInspectWithRaw(ctx, w.id, true)
		if err != nil || ins.SizeRw == nil {
			return false, err
		}
		w.used = *ins.SizeRw
		w.exceeded = w.used > w.limit
		return w.exceeded, nil
	}
	avail, err := freeBytes(w.upper)
	if err != nil {
		return false, err
	}
	w.avail = avail
	if avail < HostDiskFloor {
		w.low = true
		return true, nil
	}
	if !force && w.start-avail <= w.limit/4 && time.Since(w.lastWalk) < diskWalkEvery {
		return false, nil
	}
	w.lastWalk = time.Now()
	used := int64(0)
	for _, root := range append([]string{w.upper}, w.mounts...) {
		used += duBytes(root)
	}
	w.used = used
	w.exceeded = used > w.limit
	return w.exceeded, nil
}

// state measures once more (a step that wrote fast may have ended between two polls) and
// returns the result: exceeded (the project's), or an error wrapping ErrHostDiskLow.
func (w *diskWatch) state() (exceeded bool, err error) {
	if w.upper != "" {
		// Cheap unless the free space fell by a quarter of the bound: then walk.
		w.check(false)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.low {
		return false, fmt.Errorf("%w: %d MiB free on the engine's storage, below the floor of %d MiB: the container was stopped; free space, then run again", ErrHostDiskLow, w.avail>>20, HostDiskFloor>>20)
	}
	return w.exceeded, nil
}

// judge turns a step's result (or the error of a step whose container the watcher killed)
// into what the disk says: a step over the bound is DiskExceeded (and not out of memory);
// a host below its floor is an error wrapping ErrHostDiskLow.
func (w *diskWatch) judge(sr StepResult, err error) (StepResult, error) {
	exceeded, derr := w.state()
	switch {
	case derr != nil:
		return sr, derr
	case !exceeded:
		return sr, err
	}
	if err != nil { // the kill ended the exec before its exit code was read
		sr.ExitCode, sr.Output, sr.OutputSize = 137, nil, 0
		sr.OutputSHA256 = emptySHA256
	}
	sr.DiskExceeded, sr.OOMKilled = true, false
	return sr, nil
}

// emptySHA256 is the SHA-256 of no bytes.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

func (w *diskWatch) close() {
	w.once.Do(func() { close(w.stop) })
	<-w.done
}

// freeBytes is the space left to unprivileged writers of the filesystem holding path.
func freeBytes(path string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * st.Bsize, nil
}

// duBytes is the disk space used below root: allocated blocks (a sparse file counts what
// it really holds), links not followed.
func duBytes(root string) int64 {
	var n int64
	filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				n += st.Blocks * 512
			}
		}
		return nil
	})
	return n
}
