package sandbox

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestRunDiskBoundEndsTheStep: a step that writes past Limits.DiskBytes is killed and
// marked DiskExceeded (not out of memory), the steps after it are skipped, and a step that
// stays below the bound is untouched.
func TestRunDiskBoundEndsTheStep(t *testing.T) {
	e, img := needEngine(t)
	res := run(t, e, Spec{Image: img, Limits: Limits{DiskBytes: 64 << 20}, Steps: []Step{
		{Name: "small", Command: "dd if=/dev/urandom of=small bs=1M count=8 status=none && echo wrote", Timeout: time.Minute},
		// Writes until killed (at most 512 MiB): the watcher ends it.
		{Name: "big", Command: "for i in $(seq 64); do dd if=/dev/urandom of=big$i bs=1M count=8 status=none; done; sleep 30; echo survived", Timeout: 2 * time.Minute},
		{Name: "after", Command: "echo never"},
	}})
	small, big, after := res.Steps[0], res.Steps[1], res.Steps[2]
	if small.ExitCode != 0 || small.DiskExceeded || !strings.Contains(string(small.Output), "wrote") {
		t.Fatalf("small step: %+v", small)
	}
	if !big.DiskExceeded || big.OOMKilled || big.TimedOut || strings.Contains(string(big.Output), "survived") {
		t.Fatalf("big step: exit %d diskExceeded %v oom %v timedOut %v output %q", big.ExitCode, big.DiskExceeded, big.OOMKilled, big.TimedOut, big.Output)
	}
	if !after.Skipped {
		t.Fatalf("step after the disk bound: %+v", after)
	}
}

// TestBoxDiskBoundCoversTheMountedDirectory: a box command that fills the mounted
// directory (on the host) past the bound is killed and the box is gone.
func TestBoxDiskBoundCoversTheMountedDirectory(t *testing.T) {
	e, img := needEngine(t)
	b, err := e.OpenBox(context.Background(), BoxSpec{Image: img, Dir: t.TempDir(), Limits: Limits{DiskBytes: 64 << 20}, Labels: testLabels(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	sr, err := b.Exec(context.Background(), "for i in $(seq 64); do dd if=/dev/urandom of=f$i bs=1M count=8 status=none; done; sleep 30; echo survived", time.Minute)
	if !errors.Is(err, ErrBoxGone) || !sr.DiskExceeded || strings.Contains(string(sr.Output), "survived") {
		t.Fatalf("box command over the bound: err %v, diskExceeded %v, output %q", err, sr.DiskExceeded, sr.Output)
	}
	if _, err := b.Exec(context.Background(), "true", 0); !errors.Is(err, ErrBoxGone) {
		t.Fatalf("a command after the box went over its bound: %v, want ErrBoxGone", err)
	}
}

// TestRunStopsWhenTheHostDiskIsLow: with less free space on the engine's storage than the
// floor (the floor raised above what is free, rather than the disk filled), a run ends
// with ErrHostDiskLow, an infrastructure fault, not a step result.
func TestRunStopsWhenTheHostDiskIsLow(t *testing.T) {
	e, img := needEngine(t)
	if !e.local() {
		t.Skip("the engine is on another host: no floor applies")
	}
	floor := HostDiskFloor
	t.Cleanup(func() { HostDiskFloor = floor })
	HostDiskFloor = 1 << 62
	_, err := e.Run(context.Background(), Spec{Image: img, Labels: testLabels(t), Steps: []Step{{Name: "x", Command: "echo hi"}}})
	if !errors.Is(err, ErrHostDiskLow) || !strings.Contains(err.Error(), "free space") {
		t.Fatalf("Run with the host below its disk floor: %v, want ErrHostDiskLow", err)
	}
}
