package sandbox

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/envgap/envgap/internal/testenv"
)

func trivialSpec(img string) Spec {
	return Spec{Image: img, Steps: []Step{{Name: "true", Command: "true"}}}
}

// BenchmarkRunVsDockerCLI measures one Run of a trivial step against
// `docker run --rm --network none IMAGE bash -c true` on the same engine, and
// reports both and their ratio (run-ms / cli-ms).
func BenchmarkRunVsDockerCLI(b *testing.B) {
	e, img := needEngine(b)
	docker := testenv.Tool(b, "docker")
	ctx := context.Background()
	var runTotal, cliTotal time.Duration
	for b.Loop() {
		t0 := time.Now()
		res, err := e.Run(ctx, trivialSpec(img))
		if err != nil || res.Steps[0].ExitCode != 0 {
			b.Fatalf("Run: %v %+v", err, res)
		}
		t1 := time.Now()
		cmd := exec.Command(docker, "run", "--rm", "--network", "none", img, "bash", "-c", "true")
		cmd.Env = append(cmd.Environ(), "DOCKER_HOST="+e.Host())
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("docker run: %v: %s", err, out)
		}
		t2 := time.Now()
		runTotal += t1.Sub(t0)
		cliTotal += t2.Sub(t1)
	}
	n := float64(b.N)
	b.ReportMetric(float64(runTotal.Milliseconds())/n, "run-ms")
	b.ReportMetric(float64(cliTotal.Milliseconds())/n, "cli-ms")
	b.ReportMetric(float64(runTotal)/float64(cliTotal), "ratio")
}

// BenchmarkRunsPerMinute runs trivial specs with 1 and 2 runs in flight.
func BenchmarkRunsPerMinute(b *testing.B) {
	e, img := needEngine(b)
	for _, par := range []int{1, 2} {
		b.Run(fmt.Sprintf("parallel=%d", par), func(b *testing.B) {
			var next atomic.Int64
			var wg sync.WaitGroup
			errs := make(chan error, par)
			b.ResetTimer()
			start := time.Now()
			for range par {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= int64(b.N) {
						if _, err := e.Run(context.Background(), trivialSpec(img)); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			close(errs)
			for err := range errs {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/elapsed.Minutes(), "runs/min")
		})
	}
}

// BenchmarkBoxExecVsDockerExec measures one command of an agent's box (Box.Exec: the
// exec, the output capture, the timeout wrapper) against `docker exec CONTAINER bash -c
// 'seq 1000'` on the same container (after one untimed command of each, in alternating
// order), and reports both and their ratio (box-ms / cli-ms; the goal is at most 1.0).
func BenchmarkBoxExecVsDockerExec(b *testing.B) {
	e, img := needEngine(b)
	docker := testenv.Tool(b, "docker")
	ctx := context.Background()
	box, err := e.OpenBox(ctx, BoxSpec{Image: img, Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer box.Close()
	const command = "seq 1000"
	boxExec := func() time.Duration {
		t0 := time.Now()
		sr, err := box.Exec(ctx, command, time.Minute)
		if err != nil || sr.ExitCode != 0 || sr.OutputSize != 3893 {
			b.Fatalf("Exec: %v %+v", err, sr)
		}
		return time.Since(t0)
	}
	cliExec := func() time.Duration {
		t0 := time.Now()
		cmd := exec.Command(docker, "exec", box.ID(), "bash", "-c", command)
		cmd.Env = append(cmd.Environ(), "DOCKER_HOST="+e.Host())
		if out, err := cmd.CombinedOutput(); err != nil || len(out) != 3893 {
			b.Fatalf("docker exec: %v: %d bytes", err, len(out))
		}
		return time.Since(t0)
	}
	// One untimed command of each first (the first exec of a container, and the CLI's
	// first start, are slower than any later one), then in alternating order.
	boxExec()
	cliExec()
	var boxTotal, cliTotal time.Duration
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			boxTotal += boxExec()
			cliTotal += cliExec()
		} else {
			cliTotal += cliExec()
			boxTotal += boxExec()
		}
	}
	n := float64(b.N)
	boxMS := float64(boxTotal.Milliseconds()) / n
	cliMS := float64(cliTotal.Milliseconds()) / n
	b.ReportMetric(boxMS, "box-ms/op")
	b.ReportMetric(cliMS, "cli-ms/op")
	if cliMS > 0 {
		b.ReportMetric(boxMS/cliMS, "ratio")
	}
}

// BenchmarkWallCheck measures the sandbox network's check at Connect: uncached (the
// network inspected, the bridge asked of the engine, wall.sh check run) and cached (the
// network inspected, the bridge asked, the record of an earlier check of this boot found),
// and reports each in ms and their ratio. It needs root (the rules are the host's).
func BenchmarkWallCheck(b *testing.B) {
	e, _ := needEngine(b)
	if e.wall == nil || e.wall.Checked == "remote" {
		b.Skip("the engine is not on this host: its rules are not checked from here")
	}
	ctx := context.Background()
	dir := WallDir
	b.Cleanup(func() { WallDir = dir })
	var cached, uncached time.Duration
	for b.Loop() {
		WallDir = b.TempDir()
		wallCache.Clear()
		t0 := time.Now()
		w, err := e.checkWall(ctx, e.network)
		if err != nil || w.Checked == "cached" {
			b.Fatalf("uncached check: %+v %v", w, err)
		}
		t1 := time.Now()
		wallCache.Clear() // the record on disk, as a later command of this boot finds it
		w, err = e.checkWall(ctx, e.network)
		if err != nil || w.Checked != "cached" {
			b.Fatalf("cached check: %+v %v", w, err)
		}
		uncached += t1.Sub(t0)
		cached += time.Since(t1)
	}
	n := float64(b.N)
	b.ReportMetric(float64(uncached.Microseconds())/1000/n, "uncached-ms")
	b.ReportMetric(float64(cached.Microseconds())/1000/n, "cached-ms")
	b.ReportMetric(float64(uncached)/float64(cached), "uncached/cached")
}

// BenchmarkDiskWatch measures the disk watcher's two measures: one statfs of the storage
// (every poll) and one walk of a writable layer of 20,000 small files (only when the free
// space fell by a quarter of the bound, or once a minute), reported per call and per file.
func BenchmarkDiskWatch(b *testing.B) {
	dir := b.TempDir()
	const files = 20000
	for i := range files / 100 {
		sub := fmt.Sprintf("%s/d%d", dir, i)
		if err := os.Mkdir(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		for j := range 100 {
			if err := os.WriteFile(fmt.Sprintf("%s/f%d", sub, j), []byte("x\n"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	var statfs, walk time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := freeBytes(dir); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if n := duBytes(dir); n < files*512 {
			b.Fatalf("walked %d bytes for %d files", n, files)
		}
		statfs += t1.Sub(t0)
		walk += time.Since(t1)
	}
	n := float64(b.N)
	b.ReportMetric(float64(statfs.Nanoseconds())/1000/n, "statfs-µs")
	b.ReportMetric(float64(walk.Microseconds())/1000/n, "walk-ms")
	b.ReportMetric(float64(walk.Nanoseconds())/1000/n/files, "walk-µs/file")
}

// BenchmarkStartedHook measures what the Started hook adds to a run on the sandbox
// network (its address comes from the inspection the disk watch makes anyway): runs with and without it, alternated,
// and their ratio (hook-ms / plain-ms).
func BenchmarkStartedHook(b *testing.B) {
	e, img := needEngine(b)
	ctx := context.Background()
	var hookTotal, plainTotal time.Duration
	for b.Loop() {
		spec := trivialSpec(img)
		spec.Network = NetworkDefault
		t0 := time.Now()
		if _, err := e.Run(ctx, spec); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		spec.Started = func(a netip.Addr) error {
			if !a.IsValid() {
				return fmt.Errorf("no address")
			}
			return nil
		}
		if _, err := e.Run(ctx, spec); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		plainTotal += t1.Sub(t0)
		hookTotal += t2.Sub(t1)
	}
	n := float64(b.N)
	b.ReportMetric(float64(plainTotal.Milliseconds())/n, "plain-ms")
	b.ReportMetric(float64(hookTotal.Milliseconds())/n, "hook-ms")
	b.ReportMetric(float64(hookTotal)/float64(plainTotal), "ratio")
}

// BenchmarkUserNamespace measures one container's create, start and removal (the core's
// create, with its limits and capabilities) in a user namespace (the engine's mode) and
// without one (the same engine asked for none), alternating, and reports both and their
// ratio (userns-ms / plain-ms).
func BenchmarkUserNamespace(b *testing.B) {
	e, img := needEngine(b)
	if e.UserNS().Mode == UserNSNone {
		testenv.Missing(b, "the engine gives no user namespace: %s", e.UserNS().Why)
	}
	ctx := context.Background()
	spec, err := validate(trivialSpec(img))
	if err != nil {
		b.Fatal(err)
	}
	cycle := func(mode string) time.Duration {
		e.usernsMu.Lock()
		saved := e.userns
		e.userns.Mode = mode
		e.usernsMu.Unlock()
		defer func() {
			e.usernsMu.Lock()
			e.userns = saved
			e.usernsMu.Unlock()
		}()
		t0 := time.Now()
		id, got, err := e.create(ctx, maxCallTimeout, spec)
		if err != nil || got != mode {
			b.Fatalf("create: %v (mode %q, want %q)", err, got, mode)
		}
		if err := e.cli.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
			b.Fatal(err)
		}
		if err := e.removeContainer(ctx, id); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	mode := e.UserNS().Mode
	var withNS, plain time.Duration
	for b.Loop() {
		withNS += cycle(mode)
		plain += cycle(UserNSNone)
	}
	n := float64(b.N)
	b.ReportMetric(float64(withNS.Milliseconds())/n, "userns-ms")
	b.ReportMetric(float64(plain.Milliseconds())/n, "plain-ms")
	b.ReportMetric(float64(withNS)/float64(plain), "ratio")
}

// BenchmarkGiveTree measures giving a box's workspace of 10,000 files (100 folders) to a
// container's root (as a Podman range maps it), per file: what a box's open adds in a user
// namespace. Each round gives the tree back to the host's root first (not timed).
func BenchmarkGiveTree(b *testing.B) {
	if os.Geteuid() != 0 {
		testenv.Missing(b, "changing owners needs root")
	}
	dir := b.TempDir()
	const dirs, per = 100, 100
	for i := range dirs {
		d := filepath.Join(dir, fmt.Sprintf("d%03d", i))
		os.Mkdir(d, 0o755)
		for j := range per {
			os.WriteFile(filepath.Join(d, fmt.Sprintf("f%03d", j)), []byte("x"), 0o644)
		}
	}
	x := &ids{uid: idMap{{0, 2147483647, 65536}}, gid: idMap{{0, 2147483647, 65536}}}
	back := &ids{uid: idMap{{0, 0, 1}}, gid: idMap{{0, 0, 1}}} // gives everything to 0 again
	var took time.Duration
	for b.Loop() {
		b.StopTimer()
		if err := back.giveTree(dir); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		if err := x.giveTree(dir); err != nil {
			b.Fatal(err)
		}
		took += time.Since(t0)
	}
	b.ReportMetric(float64(took.Microseconds())/1000/float64(b.N), "tree-ms")
	b.ReportMetric(float64(took.Nanoseconds())/1000/float64(b.N)/(dirs*per), "µs/file")
}
