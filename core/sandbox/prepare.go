package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/docker/docker/errdefs"
)

// prepareError is the error of a container that was created but could not be made ready
// (the copy of its files or its start failed); the container was removed.
type prepareError struct{ err error }

func (p *prepareError) Error() string { return p.err.Error() }
func (p *prepareError) Unwrap() error { return p.err }

// prepareRetryPause is the pause before a run's container is prepared a second time.
var prepareRetryPause = time.Second

// twice runs try, the making ready of a container, and runs it once more when prepareAgain
// says so; a second failure names the first.
func (e *Engine) twice(ctx context.Context, try func() error) error {
	err := try()
	if err != nil && e.prepareAgain(ctx, err) {
		first := err
		if err = try(); err != nil {
			err = fmt.Errorf("%w (a second container; the first: %v)", err, first)
		}
	}
	return err
}

// prepareAgain reports whether a run whose container could not be made ready (err, a
// *prepareError) gets a second container, after a short pause. No step has run, so a second
// container cannot change what the run records, and an engine's passing fault (an overlay
// mount refused under load, a runtime that lost its sync pipe) does not become an
// infrastructure fault of the item. Not when ctx ended or the engine stopped answering; and
// when the sandbox network had no free address left, only if addresses held for removed
// containers could be given back (reclaimLeases). A second failure is the run's error.
func (e *Engine) prepareAgain(ctx context.Context, err error) bool {
	var pe *prepareError
	if !errors.As(err, &pe) || ctx.Err() != nil || errors.Is(err, ErrEngineUnresponsive) {
		return false
	}
	if networkFull(err) {
		if n, rerr := e.reclaimLeases(ctx); rerr != nil || n == 0 {
			return false
		}
	}
	t := time.NewTimer(prepareRetryPause)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// networkFull reports whether err is an engine's "no free address on the network" (the CNI
// host-local plugin's words).
func networkFull(err error) bool {
	return err != nil && strings.Contains(err.Error(), "no IP addresses available")
}

// networkFullHint adds what to do to the error of a start that found no free address on
// the sandbox network (what prepareAgain could give back is already given back then).
func networkFullHint(err error, network string) error {
	if !networkFull(err) {
		return err
	}
	return fmt.Errorf("%w (the sandbox network %s has no free address left, and none is held for a removed container: run fewer containers at once)", err, network)
}

// cniNetworksDir holds the CNI host-local plugin's leases, a folder per network (Podman
// with CNI on this host).
var cniNetworksDir = "/var/lib/cni/networks"

// leaseName is the name of a lease file: the IPv4 address it holds.
var leaseName = regexp.MustCompile(`^[0-9]{1,3}(\.[0-9]{1,3}){3}$`)

// containerIDText is a container id as a lease file's first line holds it.
var containerIDText = regexp.MustCompile(`^[0-9a-f]{12,64}$`)

// reclaimLeases gives back the sandbox network's addresses that the engine still holds for
// containers that no longer exist, and returns how many. Podman with CNI keeps a lease per
// address (a file named by the address, holding the container's id) and releases it when it
// tears down a container's network; seen here, some removals under load never do, and once
// a network's 253 addresses are all held every start fails. Only an engine on this host
// (a unix socket) with the lease folder is looked at; a lease goes only when the engine
// says its container is not found, and under the plugin's own lock, read again there.
// Links and files not named by an address are left alone.
func (e *Engine) reclaimLeases(ctx context.Context) (int, error) {
	if e.network == "" || !strings.HasPrefix(e.host, "unix://") {
		return 0, nil
	}
	dir := filepath.Join(cniNetworksDir, e.network)
	held, err := leasesIn(dir)
	if err != nil || len(held) == 0 {
		return 0, err
	}
	// The leases are read before the engine is asked: a container whose lease was read
	// existed before its start wrote it, so "not found" now means removed.
	gone := map[string]bool{}
	for file, id := range held {
		ierr := e.call(ctx, minCallTimeout, time.Time{}, "inspecting container "+shortID(id), func(ctx context.Context) error {
			_, err := e.cli.ContainerInspect(ctx, id)
			return err
		})
		switch {
		case ierr == nil:
		case errdefs.IsNotFound(ierr):
			gone[file] = true
		default:
			return 0, ierr
		}
	}
	if len(gone) == 0 {
		return 0, nil
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return 0, fmt.Errorf("the lease folder %s: %w", dir, err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return 0, fmt.Errorf("locking %s: %w", lock.Name(), err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	n := 0
	for file := range gone {
		if id, ok := leaseHolder(filepath.Join(dir, file)); !ok || id != held[file] {
			continue // given back, or taken again, meanwhile
		}
		if err := os.Remove(filepath.Join(dir, file)); err == nil {
			n++
		}
	}
	return n, nil
}

// leasesIn returns the leases of the folder dir, file name to container id; none when dir
// does not exist.
func leasesIn(dir string) (map[string]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	held := map[string]string{}
	for _, ent := range ents {
		if !ent.Type().IsRegular() || !leaseName.MatchString(ent.Name()) {
			continue
		}
		if id, ok := leaseHolder(filepath.Join(dir, ent.Name())); ok {
			held[ent.Name()] = id
		}
	}
	return held, nil
}

// leaseHolder reads the container id on the first line of the lease file path (opened
// without following a link).
func leaseHolder(path string) (string, bool) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return "", false
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	id := strings.TrimSpace(line)
	return id, containerIDText.MatchString(id)
}
