package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/errdefs"
)

// TestNetworkFullHint: a start that found the sandbox network's addresses all taken says
// what to do and keeps the engine's error (still matched by errors.Is); any other error is
// returned as it is.
func TestNetworkFullHint(t *testing.T) {
	engineErr := errors.New(`Error response from daemon: plugin type="bridge" failed (add): failed to allocate for range 0: no IP addresses available in range set: 10.89.0.1-10.89.0.254`)
	err := networkFullHint(engineErr, "envgap")
	if !errors.Is(err, engineErr) {
		t.Errorf("the engine's error is lost: %v", err)
	}
	for _, want := range []string{"no free address left", "sandbox network envgap", "run fewer containers at once"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q is missing from %q", want, err)
		}
	}
	other := errors.New("Error response from daemon: OCI runtime error")
	if got := networkFullHint(other, "envgap"); got != other {
		t.Errorf("another error changed: %v", got)
	}
	if networkFullHint(nil, "envgap") != nil {
		t.Error("no error became one")
	}
}

// TestPrepareAgainAfterAPassingFault: a container that fails after its files were copied
// in (as an overlay mount refused under load does) is removed and the run gets a second
// one, whose steps run as usual; a fault that stays ends the run with both errors and
// leaves no container; a cancelled run is not prepared again.
func TestPrepareAgainAfterAPassingFault(t *testing.T) {
	e, img := needEngine(t)
	defer func(p time.Duration) { prepareRetryPause = p }(prepareRetryPause)
	prepareRetryPause = 10 * time.Millisecond
	spec := func(labels map[string]string) Spec {
		return Spec{Image: img, Labels: labels, Files: []File{{Path: "f.txt", Content: []byte("ok\n")}},
			Steps: []Step{{Name: "cat", Command: "cat f.txt"}}}
	}
	gone := func(id string) bool {
		_, err := e.cli.ContainerInspect(context.Background(), id)
		return errdefs.IsNotFound(err)
	}

	var ids []string
	e.prepareFault = func(id string) error {
		ids = append(ids, id)
		if len(ids) == 1 {
			return errors.New("mounting storage for container: permission denied")
		}
		return nil
	}
	labels := testLabels(t)
	res := run(t, e, spec(labels))
	if len(ids) != 2 || ids[0] == ids[1] {
		t.Fatalf("containers prepared: %v, want two", ids)
	}
	if got := string(res.Steps[0].Output); got != "ok\n" {
		t.Errorf("the step on the second container said %q", got)
	}
	if !gone(ids[0]) {
		t.Errorf("the first container %s was not removed", shortID(ids[0]))
	}

	ids = nil
	e.prepareFault = func(id string) error {
		ids = append(ids, id)
		return errors.New("mounting storage for container: permission denied")
	}
	labels = testLabels(t)
	_, err := e.Run(context.Background(), spec(labels))
	if err == nil || len(ids) != 2 || !strings.Contains(err.Error(), "a second container; the first: ") {
		t.Fatalf("a fault that stays: %v after %d containers", err, len(ids))
	}
	if left := containersWith(t, e, labels); len(left) != 0 {
		t.Errorf("containers left: %d", len(left))
	}

	ids = nil
	ctx, cancel := context.WithCancel(context.Background())
	e.prepareFault = func(id string) error {
		ids = append(ids, id)
		cancel()
		return errors.New("mounting storage for container: permission denied")
	}
	if _, err := e.Run(ctx, spec(testLabels(t))); err == nil || len(ids) != 1 {
		t.Errorf("a cancelled run: %v after %d containers, want an error after one", err, len(ids))
	}
}

// TestBoxOpenedAgainAfterAPassingFault: a box whose container fails before its start is
// removed and opened once more; the second one takes commands.
func TestBoxOpenedAgainAfterAPassingFault(t *testing.T) {
	e, img := needEngine(t)
	defer func(p time.Duration) { prepareRetryPause = p }(prepareRetryPause)
	prepareRetryPause = 10 * time.Millisecond
	var ids []string
	e.prepareFault = func(id string) error {
		ids = append(ids, id)
		if len(ids) == 1 {
			return errors.New("OCI runtime error: read init-p: connection reset by peer")
		}
		return nil
	}
	ctx := context.Background()
	b, err := e.OpenBox(ctx, BoxSpec{Image: img, Dir: t.TempDir(), Labels: testLabels(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if len(ids) != 2 {
		t.Fatalf("containers: %v, want two", ids)
	}
	if _, err := e.cli.ContainerInspect(ctx, ids[0]); !errdefs.IsNotFound(err) {
		t.Errorf("the first container: %v, want it removed", err)
	}
	sr, err := b.Exec(ctx, "echo ok", time.Minute)
	if err != nil || string(sr.Output) != "ok\n" {
		t.Errorf("the box said %q (%v)", sr.Output, err)
	}
}

// TestReclaimLeases: in a lease folder of its own (the CNI host-local plugin's layout), the
// lease of a container the engine has stays, the lease of one it does not have is removed,
// and a link named like an address, the plugin's own files and a file that names no
// container are left alone. A full network whose leases could be given back is prepared
// again; one whose leases are all held is not.
func TestReclaimLeases(t *testing.T) {
	e, img := needEngine(t)
	if !strings.HasPrefix(e.host, "unix://") {
		t.Skip("the leases are read on the engine's host")
	}
	defer func(d string, p time.Duration) { cniNetworksDir, prepareRetryPause = d, p }(cniNetworksDir, prepareRetryPause)
	cniNetworksDir, prepareRetryPause = t.TempDir(), 10*time.Millisecond
	dir := filepath.Join(cniNetworksDir, e.network)
	os.MkdirAll(dir, 0o755)
	ctx := context.Background()
	live, _, err := e.create(ctx, maxCallTimeout, Spec{Image: img, Labels: testLabels(t), Network: NetworkNone, Steps: []Step{{Name: "x", Command: "true"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.removeWithin(ctx, cleanupTimeout, live)
	goneID := strings.Repeat("0123456789abcdef", 4)
	outside := filepath.Join(t.TempDir(), "10.89.0.9")
	write := func(path, text string) {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(outside, goneID+"\r\neth0")
	write(filepath.Join(dir, "lock"), "")
	write(filepath.Join(dir, "last_reserved_ip.0"), "10.89.0.3")
	write(filepath.Join(dir, "10.89.0.2"), live+"\r\neth0")
	write(filepath.Join(dir, "10.89.0.3"), goneID+"\r\neth0")
	write(filepath.Join(dir, "10.89.0.4"), "not a container id")
	if err := os.Symlink(outside, filepath.Join(dir, "10.89.0.9")); err != nil {
		t.Fatal(err)
	}
	full := &prepareError{errors.New("starting the container: failed to allocate for range 0: no IP addresses available in range set: 10.89.0.1-10.89.0.254")}
	if !e.prepareAgain(ctx, full) {
		t.Error("a full network with a lease of a removed container was not prepared again")
	}
	for file, kept := range map[string]bool{"lock": true, "last_reserved_ip.0": true, "10.89.0.2": true, "10.89.0.3": false, "10.89.0.4": true, "10.89.0.9": true} {
		if _, err := os.Lstat(filepath.Join(dir, file)); (err == nil) != kept {
			t.Errorf("%s is there: %v, want %v", file, err == nil, kept)
		}
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("the link's target: %v", err)
	}
	if n, err := e.reclaimLeases(ctx); n != 0 || err != nil {
		t.Errorf("a second reclaim gave back %d (%v)", n, err)
	}
	if e.prepareAgain(ctx, full) {
		t.Error("a full network whose leases are all held was prepared again")
	}
}
