package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/strslice"
	"github.com/envgap/envgap/internal/testenv"
)

// defaultTestImage is created by images/setup-engine.sh on machines without
// a registry; ENVGAP_SANDBOX_TEST_IMAGE overrides it (any image with bash,
// coreutils and GNU tail).
const defaultTestImage = "localhost/envgap-base:bookworm"

// needEngine connects to the engine of DOCKER_HOST, skipping the test when
// none answers, or failing it when ENVGAP_REQUIRE_ENGINE=1 (testenv).
func needEngine(t testing.TB) (*Engine, string) {
	t.Helper()
	ctx := context.Background()
	e, err := Connect(ctx, "")
	if err != nil {
		testenv.Missing(t, "no container engine: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	img := os.Getenv("ENVGAP_SANDBOX_TEST_IMAGE")
	if img == "" {
		img = defaultTestImage
	}
	if _, err := e.cli.ImageInspect(ctx, img); err != nil {
		testenv.Missing(t, "test image %s: %v (run images/setup-engine.sh)", img, err)
	}
	return e, img
}

// testLabels returns a label set unique to this test, to find its containers.
func testLabels(t testing.TB) map[string]string {
	b := make([]byte, 6)
	rand.Read(b)
	return map[string]string{"org.envgap.test": hex.EncodeToString(b)}
}

// containersWith lists the sandbox containers carrying labels.
func containersWith(t testing.TB, e *Engine, labels map[string]string) []container.Summary {
	t.Helper()
	f := filters.NewArgs(filters.Arg("label", Label+"=1"))
	for k, v := range labels {
		f.Add("label", k+"="+v)
	}
	list, err := e.cli.ContainerList(context.Background(), container.ListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatalf("listing containers: %v", err)
	}
	return list
}

func run(t *testing.T, e *Engine, spec Spec) *Result {
	t.Helper()
	if spec.Labels == nil {
		spec.Labels = testLabels(t)
	}
	res, err := e.Run(context.Background(), spec)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if left := containersWith(t, e, spec.Labels); len(left) != 0 {
		t.Fatalf("Run left %d container(s) behind", len(left))
	}
	return res
}

func TestRunExitCodes(t *testing.T) {
	e, img := needEngine(t)
	tests := []struct {
		cmd      string
		exit     int
		notFound bool
		output   string
	}{
		{"echo hi", 0, false, "hi\n"},
		{"echo out; echo err >&2; exit 3", 3, false, "out\nerr\n"},
		{"false", 1, false, ""},
		{"kill -TERM $$", 143, false, ""},
		{"no-such-program --version", 127, true, "no-such-program: command not found"},
		{"pwd; echo $FOO", 0, false, "/work\nbar\n"},
	}
	steps := make([]Step, len(tests))
	for i, tt := range tests {
		steps[i] = Step{Name: fmt.Sprint("s", i), Command: tt.cmd}
	}
	res := run(t, e, Spec{Image: img, Steps: steps, Env: []string{"FOO=bar"}})
	if len(res.Steps) != len(tests) || res.ImageID == "" {
		t.Fatalf("got %d step results, image %q", len(res.Steps), res.ImageID)
	}
	for i, tt := range tests {
		sr := res.Steps[i]
		if sr.ExitCode != tt.exit || sr.CommandNotFound != tt.notFound || sr.TimedOut || sr.Skipped || sr.OOMKilled ||
			!strings.Contains(string(sr.Output), tt.output) || sr.Name != steps[i].Name || sr.Command != tt.cmd {
			t.Errorf("%q: got exit %d notFound %v timedOut %v skipped %v oom %v output %q", tt.cmd, sr.ExitCode, sr.CommandNotFound, sr.TimedOut, sr.Skipped, sr.OOMKilled, sr.Output)
		}
		sum := sha256.Sum256(sr.Output)
		if !sr.Truncated && (sr.OutputSHA256 != hex.EncodeToString(sum[:]) || sr.OutputSize != int64(len(sr.Output))) {
			t.Errorf("%q: digest/size do not match the untruncated output", tt.cmd)
		}
	}
}

func TestRunCapsHugeOutputWithFullDigest(t *testing.T) {
	if testing.Short() {
		t.Skip("prints 200 MB")
	}
	e, img := needEngine(t)
	const size = 200_000_000
	const limit = 64 << 10
	// What `yes | head -c size` prints.
	h := sha256.New()
	chunk := bytes.Repeat([]byte("y\n"), 1<<15)
	for left := size; left > 0; left -= min(left, len(chunk)) {
		h.Write(chunk[:min(left, len(chunk))])
	}
	want := hex.EncodeToString(h.Sum(nil))

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res := run(t, e, Spec{Image: img, Steps: []Step{{Name: "flood", Command: fmt.Sprintf("yes | head -c %d", size)}},
		Limits: Limits{OutputBytes: limit}})
	runtime.ReadMemStats(&after)

	sr := res.Steps[0]
	if sr.ExitCode != 0 || sr.OutputSize != size || !sr.Truncated || sr.OutputSHA256 != want {
		t.Fatalf("got exit %d size %d truncated %v digest %s; want 0 %d true %s", sr.ExitCode, sr.OutputSize, sr.Truncated, sr.OutputSHA256, size, want)
	}
	marker := fmt.Sprintf("\n[envgap: %d bytes omitted]\n", size-limit)
	if len(sr.Output) != limit+len(marker) || !bytes.HasPrefix(sr.Output, []byte("y\ny\n")) || !bytes.Contains(sr.Output, []byte(marker)) || !bytes.HasSuffix(sr.Output, []byte("y\ny\n")) {
		t.Fatalf("output is not head + marker + tail: %d bytes", len(sr.Output))
	}
	// Memory must not follow the output: 200 MB went through; the heap and
	// the memory taken from the OS may grow by buffers only.
	if grew := int64(after.Sys) - int64(before.Sys); grew > 64<<20 {
		t.Fatalf("process memory grew by %d MiB while capturing %d MB", grew>>20, size/1_000_000)
	}
}

func TestRunTimeoutKillsAndSkipsLaterSteps(t *testing.T) {
	e, img := needEngine(t)
	res := run(t, e, Spec{Image: img, Steps: []Step{
		{Name: "ok", Command: "echo first"},
		{Name: "hang", Command: "echo started; echo partial > log.txt; sleep 600", Timeout: 2 * time.Second},
		{Name: "after", Command: "echo never"},
	}, Collect: []string{"log.txt"}})
	// Files are still collected from the killed container.
	if got := string(res.Collected["/work/log.txt"]); got != "partial\n" {
		t.Errorf("collected log.txt after the kill = %q, want %q", got, "partial\n")
	}
	first, hang, after := res.Steps[0], res.Steps[1], res.Steps[2]
	if first.ExitCode != 0 || first.TimedOut || string(first.Output) != "first\n" {
		t.Fatalf("first step: %+v", first)
	}
	if !hang.TimedOut || hang.OOMKilled || hang.Skipped || !strings.Contains(string(hang.Output), "started") {
		t.Fatalf("hanging step: timedOut %v oom %v skipped %v output %q", hang.TimedOut, hang.OOMKilled, hang.Skipped, hang.Output)
	}
	if !after.Skipped || after.ExitCode != -1 || len(after.Output) != 0 {
		t.Fatalf("step after the timeout: %+v", after)
	}
}

func TestRunPIDsLimitStopsForkBomb(t *testing.T) {
	e, img := needEngine(t)
	res := run(t, e, Spec{Image: img, Limits: Limits{PIDs: 64}, Steps: []Step{
		// Each subshell forks two more forever; only the pids limit stops it.
		{Name: "bomb", Command: "bomb() { bomb | bomb & }; bomb; sleep 5", Timeout: 20 * time.Second},
		{Name: "count", Command: "ls /proc | grep -c '^[0-9]'"},
	}})
	bomb := res.Steps[0]
	t.Logf("bomb: exit %d timedOut %v; processes after it: %q", bomb.ExitCode, bomb.TimedOut, res.Steps[1].Output)
	if !strings.Contains(string(bomb.Output), "Resource temporarily unavailable") {
		t.Fatalf("fork bomb output does not show the pids limit: exit %d timedOut %v %q", bomb.ExitCode, bomb.TimedOut, bomb.Output[:min(len(bomb.Output), 500)])
	}
}

func TestRunInfersOOM(t *testing.T) {
	e, img := needEngine(t)
	res := run(t, e, Spec{Image: img, Limits: Limits{MemoryBytes: 64 << 20}, Steps: []Step{
		{Name: "hog", Command: "tail /dev/zero"}, // buffers an endless line
		{Name: "after", Command: "echo still here"},
	}})
	hog, after := res.Steps[0], res.Steps[1]
	if hog.ExitCode != 137 || !hog.OOMKilled || hog.TimedOut {
		t.Fatalf("memory hog: exit %d oom %v timedOut %v output %q", hog.ExitCode, hog.OOMKilled, hog.TimedOut, hog.Output)
	}
	if after.ExitCode != 0 || after.OOMKilled || string(after.Output) != "still here\n" {
		t.Fatalf("step after the OOM kill: %+v", after)
	}
}

func TestRunWritesFilesAndCollects(t *testing.T) {
	e, img := needEngine(t)
	res := run(t, e, Spec{
		Image:   img,
		WorkDir: "/work/proj",
		Files: []File{
			{Path: "run.sh", Content: []byte("#!/bin/sh\necho \"$1\" > out.txt\nmkdir -p /evidence/d && cp data/in.txt /evidence/d/copy.txt\n"), Mode: 0o755},
			{Path: "data/in.txt", Content: []byte("input\n")},
		},
		Steps:   []Step{{Name: "run", Command: "./run.sh hello && stat -c %a run.sh data/in.txt"}},
		Collect: []string{"out.txt", "/evidence", "missing.txt"},
	})
	if sr := res.Steps[0]; sr.ExitCode != 0 || string(sr.Output) != "755\n644\n" {
		t.Fatalf("step: exit %d output %q", sr.ExitCode, sr.Output)
	}
	want := map[string]string{"/work/proj/out.txt": "hello\n", "/evidence/d/copy.txt": "input\n"}
	if len(res.Collected) != len(want) {
		t.Fatalf("collected %d files, want %d: %v", len(res.Collected), len(want), keys(res.Collected))
	}
	for p, w := range want {
		if string(res.Collected[p]) != w {
			t.Errorf("collected %s = %q, want %q", p, res.Collected[p], w)
		}
	}
	if len(res.Missing) != 1 || res.Missing[0] != "missing.txt" {
		t.Errorf("missing = %v, want [missing.txt]", res.Missing)
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestRunRefusesEscapingPathsBeforeCreatingAnything(t *testing.T) {
	e, img := needEngine(t)
	for _, p := range []string{"../outside", "/etc/passwd", "a/../../outside", "./x/../../y"} {
		t.Run(p, func(t *testing.T) {
			labels := testLabels(t)
			_, err := e.Run(context.Background(), Spec{Image: img, Labels: labels, Files: []File{{Path: p, Content: []byte("x")}},
				Steps: []Step{{Name: "s", Command: "true"}}})
			if !errors.Is(err, ErrBadSpec) {
				t.Fatalf("Run with file %q: got %v, want ErrBadSpec", p, err)
			}
			if n := len(containersWith(t, e, labels)); n != 0 {
				t.Fatalf("%d container(s) exist for a refused spec", n)
			}
		})
	}
}

func TestRunMissingImage(t *testing.T) {
	e, _ := needEngine(t)
	_, err := e.Run(context.Background(), Spec{Image: "localhost/envgap-no-such-image:latest", Steps: []Step{{Name: "s", Command: "true"}}})
	if !errors.Is(err, ErrImageMissing) || !strings.Contains(err.Error(), "envgap build-images") {
		t.Fatalf("got %v, want ErrImageMissing telling to run envgap build-images", err)
	}
}

func TestRunNetworkNoneAndDefault(t *testing.T) {
	e, img := needEngine(t)
	addr, err := e.HostAddress(context.Background())
	if err != nil {
		t.Fatalf("HostAddress: %v", err)
	}
	ln, err := ListenHost(net.JoinHostPort(addr, "0"))
	if err != nil {
		t.Fatalf("listening on the host address %s: %v", addr, err)
	}
	token := hex.EncodeToString(testLabelsBytes())
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, token) })}
	go srv.Serve(ln)
	defer srv.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	fetch := fmt.Sprintf("exec 3<>/dev/tcp/%s/%d && printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3", addr, port)
	tests := []struct {
		network string
		reach   bool
	}{{NetworkNone, false}, {NetworkDefault, true}, {"", false}}
	for _, tt := range tests {
		t.Run("network="+tt.network, func(t *testing.T) {
			res := run(t, e, Spec{Image: img, Network: tt.network, Steps: []Step{{Name: "fetch", Command: fetch, Timeout: 30 * time.Second}}})
			sr := res.Steps[0]
			got := sr.ExitCode == 0 && strings.Contains(string(sr.Output), token)
			if got != tt.reach || sr.TimedOut {
				t.Fatalf("reached the host server: %v, want %v (exit %d, timedOut %v, output %q)", got, tt.reach, sr.ExitCode, sr.TimedOut, sr.Output)
			}
		})
	}
}

func testLabelsBytes() []byte {
	b := make([]byte, 8)
	rand.Read(b)
	return b
}

func TestRunCancelRemovesContainer(t *testing.T) {
	e, img := needEngine(t)
	labels := testLabels(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := e.Run(ctx, Spec{Image: img, Labels: labels, Steps: []Step{{Name: "long", Command: "sleep 600"}}})
		errc <- err
	}()
	// Cancel once the container runs (checked, not timed).
	for running := false; !running; {
		select {
		case err := <-errc:
			t.Fatalf("Run ended before it was cancelled: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
		for _, c := range containersWith(t, e, labels) {
			running = running || c.State == "running"
		}
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Run returned %v, want context.Canceled", err)
	}
	if n := len(containersWith(t, e, labels)); n != 0 {
		t.Fatalf("%d container(s) left after cancel", n)
	}
}

func TestSweepRemovesLeftovers(t *testing.T) {
	e, img := needEngine(t)
	ctx := context.Background()
	labels := testLabels(t)
	all := map[string]string{Label: "1"}
	for k, v := range labels {
		all[k] = v
	}
	for range 2 {
		c, err := e.cli.ContainerCreate(ctx, &container.Config{Image: img, Cmd: strslice.StrSlice{"true"}, Labels: all},
			&container.HostConfig{NetworkMode: "none"}, &network.NetworkingConfig{}, nil, "")
		if err != nil {
			t.Fatalf("creating a leftover: %v", err)
		}
		t.Cleanup(func() {
			err := e.cli.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true})
			if err != nil && !errdefs.IsNotFound(err) {
				t.Errorf("cleanup: %v", err)
			}
		})
	}
	if n, err := e.Sweep(ctx, SweepOptions{Labels: labels, OlderThan: time.Hour}); err != nil || n != 0 {
		t.Fatalf("Sweep(OlderThan 1h) removed %d (%v), want 0: the leftovers are new", n, err)
	}
	n, err := e.Sweep(ctx, SweepOptions{Labels: labels})
	if err != nil || n != 2 {
		t.Fatalf("Sweep removed %d (%v), want 2", n, err)
	}
	if left := containersWith(t, e, labels); len(left) != 0 {
		t.Fatalf("%d leftover(s) after Sweep", len(left))
	}
}

func TestConnectUnreachableSaysHowToStart(t *testing.T) {
	_, err := Connect(context.Background(), "unix://"+t.TempDir()+"/no.sock")
	if !errors.Is(err, ErrEngineUnavailable) || !strings.Contains(err.Error(), "make engine") || !strings.Contains(err.Error(), "setup-engine.sh") {
		t.Fatalf("got %v, want ErrEngineUnavailable saying how to start an engine", err)
	}
}

func TestRunBackgroundChildDoesNotHoldTheStep(t *testing.T) {
	e, img := needEngine(t)
	res := run(t, e, Spec{Image: img, Steps: []Step{
		{Name: "daemon", Command: "sleep 600 & echo started", Timeout: time.Minute},
		{Name: "next", Command: "echo next"},
	}})
	d, n := res.Steps[0], res.Steps[1]
	if d.TimedOut || d.ExitCode != 0 || string(d.Output) != "started\n" || n.Skipped || string(n.Output) != "next\n" {
		t.Fatalf("got %+v / %+v", d, n)
	}
}

func TestRunWritesSystemFiles(t *testing.T) {
	e, img := needEngine(t)
	res := run(t, e, Spec{Image: img,
		Files:       []File{{Path: "a.txt", Content: []byte("work")}},
		SystemFiles: []File{{Path: "/etc/apt/apt.conf.d/99test", Content: []byte("apt conf")}, {Path: "/root/.m2/settings.xml", Content: []byte("<settings/>")}},
		Steps:       []Step{{Name: "read", Command: "cat /etc/apt/apt.conf.d/99test; echo; cat /root/.m2/settings.xml; echo; cat a.txt; echo; stat -c '%a %U' /etc /root"}}})
	out := string(res.Steps[0].Output)
	if res.Steps[0].ExitCode != 0 || out != "apt conf\n<settings/>\nwork\n755 root\n700 root\n" {
		t.Fatalf("exit %d, output %q", res.Steps[0].ExitCode, out)
	}
	if _, err := validate(Spec{Image: img, Steps: []Step{{Name: "x", Command: "true"}}, SystemFiles: []File{{Path: "etc/x"}}}); !errors.Is(err, ErrBadSpec) {
		t.Errorf("a relative system file path: %v", err)
	}
}

// TestRunGate: a run with a gate has its container created, its files in and the container
// started before it enters; its steps run inside; it leaves before its outputs are
// collected; a gate that refuses ends the run with its error and leaves no container.
func TestRunGate(t *testing.T) {
	e, img := needEngine(t)
	labels := testLabels(t)
	var entered, left int
	var running bool
	gate := func(ctx context.Context) (func(), error) {
		entered++
		list := containersWith(t, e, labels)
		running = len(list) == 1 && list[0].State == "running"
		return func() { left++ }, nil
	}
	res := run(t, e, Spec{Image: img, Labels: labels, Gate: gate,
		Files:   []File{{Path: "in.txt", Content: []byte("ready\n")}},
		Steps:   []Step{{Name: "a", Command: "cat in.txt"}, {Name: "b", Command: "mkdir -p /out && echo b > /out/b"}},
		Collect: []string{"/out"}})
	if entered != 1 || left != 1 || !running {
		t.Fatalf("entered %d, left %d, container running when entering: %v", entered, left, running)
	}
	if string(res.Steps[0].Output) != "ready\n" || string(res.Collected["/out/b"]) != "b\n" {
		t.Fatalf("steps behind a gate: %q, collected %q", res.Steps[0].Output, res.Collected)
	}
	refused := errors.New("refused at the gate")
	labels = testLabels(t)
	_, err := e.Run(context.Background(), Spec{Image: img, Labels: labels, Steps: []Step{{Name: "a", Command: "true"}},
		Gate: func(context.Context) (func(), error) { return nil, refused }})
	if !errors.Is(err, refused) {
		t.Fatalf("Run with a refusing gate: %v", err)
	}
	if left := containersWith(t, e, labels); len(left) != 0 {
		t.Fatalf("a refused run left %d container(s)", len(left))
	}
}
