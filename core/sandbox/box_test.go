package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestBox(t *testing.T) {
	e, img := needEngine(t)
	ctx := context.Background()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("from the host\n"), 0o644)
	labels := testLabels(t)
	b, err := e.OpenBox(ctx, BoxSpec{Image: img, Dir: dir, Env: []string{"BOXVAR=1"}, Labels: labels,
		SystemFiles: []File{{Path: "/etc/envgap-box-test.conf", Content: []byte("system\n")}}})
	if err != nil {
		t.Fatal(err)
	}
	// One container, kept between commands: what one command leaves, the next sees.
	if _, err := b.Exec(ctx, "echo made > /tmp/state && cat a.txt > copy.txt", 0); err != nil {
		t.Fatal(err)
	}
	sr, err := b.Exec(ctx, "pwd; cat /tmp/state; echo $BOXVAR; cat /etc/envgap-box-test.conf; exit 3", 0)
	if err != nil {
		t.Fatal(err)
	}
	if sr.ExitCode != 3 || string(sr.Output) != "/work\nmade\n1\nsystem\n" {
		t.Fatalf("exit %d output %q", sr.ExitCode, sr.Output)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "copy.txt")); string(got) != "from the host\n" {
		t.Fatalf("the workspace on the host holds %q", got)
	}
	// A command past its timeout is stopped, and the box goes on.
	sr, err = b.Exec(ctx, "sleep 60 & sleep 60; echo never", 2*time.Second)
	if err != nil || !sr.TimedOut || strings.Contains(string(sr.Output), "never") {
		t.Fatalf("%+v %v", sr, err)
	}
	if sr, err := b.Exec(ctx, "echo still", 0); err != nil || string(sr.Output) != "still\n" {
		t.Fatalf("after a timeout: %q %v", sr.Output, err)
	}
	if n := len(containersWith(t, e, labels)); n != 1 {
		t.Fatalf("%d containers while open, want 1", n)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(containersWith(t, e, labels)); n != 0 {
		t.Fatalf("%d containers left after Close", n)
	}
	if _, err := e.OpenBox(ctx, BoxSpec{Image: img, Dir: "relative"}); err == nil {
		t.Fatal("a relative box directory was taken")
	}
}

// A tool call's 1 GiB output is streamed, not kept: the step keeps the head and the tail
// (Limits.OutputBytes in all) and counts the whole.
func TestBoxOutputCapped(t *testing.T) {
	e, img := needEngine(t)
	ctx := context.Background()
	labels := testLabels(t)
	b, err := e.OpenBox(ctx, BoxSpec{Image: img, Dir: t.TempDir(), Labels: labels, Limits: Limits{OutputBytes: 64 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const whole = 1 << 30
	sr, err := b.Exec(ctx, "printf HEAD; head -c "+strconv.Itoa(whole-8)+" /dev/zero | tr '\\0' x; printf TAIL", 10*time.Minute)
	if err != nil || sr.ExitCode != 0 || sr.TimedOut {
		t.Fatalf("%v exit %d timed out %v", err, sr.ExitCode, sr.TimedOut)
	}
	if sr.OutputSize != whole || int64(len(sr.Output)) > 64<<10+256 || !strings.HasPrefix(string(sr.Output), "HEAD") || !strings.HasSuffix(string(sr.Output), "TAIL") {
		t.Fatalf("output: size %d, kept %d bytes, head %q, tail %q", sr.OutputSize, len(sr.Output), sr.Output[:min(8, len(sr.Output))], sr.Output[max(0, len(sr.Output)-8):])
	}
}

// TestBoxMounts: a box's further mounts hold at their paths, read-only unless writable
// (a file mount can be written, not replaced), nosuid and nodev on Podman; a link or a
// missing path as a mount's source is refused before any container.
func TestBoxMounts(t *testing.T) {
	e, img := needEngine(t)
	ctx := context.Background()
	run := t.TempDir()
	ws, home := filepath.Join(run, "workspace"), filepath.Join(run, "home")
	os.Mkdir(ws, 0o755)
	os.Mkdir(home, 0o755)
	os.WriteFile(filepath.Join(run, "task.json"), []byte("{}\n"), 0o444)
	traj := filepath.Join(run, "trajectory.json")
	os.WriteFile(traj, nil, 0o644)
	labels := testLabels(t)
	b, err := e.OpenBox(ctx, BoxSpec{Image: img, Dir: ws, WorkDir: ws, Labels: labels, Mounts: []Mount{
		{Source: home, Target: home, Writable: true}, {Source: run, Target: run}, {Source: traj, Target: traj, Writable: true}}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	sr, err := b.Exec(ctx, `set -u
echo w > made.txt && echo ws-ok
echo h > "`+home+`/h" && echo home-ok
echo '[1]' > "`+traj+`" && echo traj-ok
cat "`+run+`/task.json"
touch "`+run+`/new" 2>/dev/null || echo run-ro
ln -sf /etc/passwd "`+traj+`" 2>/dev/null || echo traj-not-replaced
grep " `+run+` " /proc/mounts`, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := string(sr.Output)
	for _, want := range []string{"ws-ok", "home-ok", "traj-ok", "{}", "run-ro", "traj-not-replaced"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("the box said %q, want %q in it", out, want)
		}
	}
	if opts, _ := e.mountOptions(ctx, time.Minute); opts != "" && !strings.Contains(out, "ro,nosuid,nodev") {
		t.Errorf("the run directory's mount: %q, want ro,nosuid,nodev", out)
	}
	if b, _ := os.ReadFile(traj); string(b) != "[1]\n" {
		t.Errorf("the trajectory on the host: %q", b)
	}
	if _, err := os.Stat(filepath.Join(run, "new")); err == nil {
		t.Error("the box created a file in the read-only run directory")
	}
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink("/etc/passwd", link)
	for _, m := range []Mount{{Source: link, Target: "/x"}, {Source: filepath.Join(run, "absent"), Target: "/x"}, {Source: home, Target: "rel"}} {
		if _, err := e.OpenBox(ctx, BoxSpec{Image: img, Dir: ws, Labels: labels, Mounts: []Mount{m}}); !errors.Is(err, ErrBadSpec) {
			t.Errorf("mount %+v: %v, want ErrBadSpec", m, err)
		}
	}
}
