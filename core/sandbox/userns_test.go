package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/envgap/envgap/internal/testenv"
)

// needUserNS is needEngine for an engine that gives containers a user namespace (missing
// otherwise: a failure under ENVGAP_REQUIRE_ENGINE=1).
func needUserNS(t *testing.T) (*Engine, string) {
	e, img := needEngine(t)
	if u := e.UserNS(); u.Mode == UserNSNone {
		testenv.Missing(t, "the engine gives no user namespace: %s", u.Why)
	}
	return e, img
}

func ownerOfPath(t *testing.T, p string) (uint32, uint32) {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return st.Uid, st.Gid
}

// notIdentity checks a uid_map's first line as a container printed it.
func notIdentity(t *testing.T, out string) {
	t.Helper()
	f := strings.Fields(out)
	if len(f) < 3 || (f[0] == "0" && f[1] == "0") {
		t.Fatalf("uid_map %q: the container's root is the host's", out)
	}
}

// TestRunIsInAUserNamespace: a run's container has a uid_map that is not the identity,
// and its result says so.
func TestRunIsInAUserNamespace(t *testing.T) {
	e, img := needUserNS(t)
	res := run(t, e, Spec{Image: img, Steps: []Step{{Name: "map", Command: "head -n 1 /proc/self/uid_map; id -u"}}})
	out := string(res.Steps[0].Output)
	notIdentity(t, out)
	if !strings.HasSuffix(out, "\n0\n") {
		t.Errorf("id -u: %q, want root inside", out)
	}
	if res.UserNS != e.UserNS().Mode {
		t.Errorf("Result.UserNS %q, the engine's %q", res.UserNS, e.UserNS().Mode)
	}
}

// TestBoxInAUserNamespaceWorksOnItsMounts: a box is in a user namespace, and its root still
// creates, changes and removes files in its workspace and HOME (given to it when the box
// started), which the host reads back, owned there by the box's root, not by the host's. A
// file the harness writes into the workspace while the box is open (Box.Own) can be changed
// by the box; a read-only mount others cannot read is refused before any container.
func TestBoxInAUserNamespaceWorksOnItsMounts(t *testing.T) {
	e, img := needUserNS(t)
	ctx := context.Background()
	run := t.TempDir()
	ws, home := filepath.Join(run, "workspace"), filepath.Join(run, "home")
	os.Mkdir(ws, 0o700) // the box enters it as its root, which the host's root gave it
	os.Mkdir(home, 0o700)
	os.MkdirAll(filepath.Join(ws, "src", "deep"), 0o755)
	os.WriteFile(filepath.Join(ws, "src", "deep", "old.txt"), []byte("old\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "gone.txt"), []byte("x\n"), 0o600)
	os.WriteFile(filepath.Join(run, "task.json"), []byte("{}\n"), 0o444)
	labels := testLabels(t)
	b, err := e.OpenBox(ctx, BoxSpec{Image: img, Dir: ws, WorkDir: ws, Labels: labels, Env: []string{"HOME=" + home},
		Mounts: []Mount{{Source: run, Target: run}, {Source: home, Target: home, Writable: true}}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.UserNS() == UserNSNone {
		t.Fatalf("the box has no user namespace, the engine's mode is %q", e.UserNS().Mode)
	}
	sr, err := b.Exec(ctx, `set -e
head -n 1 /proc/self/uid_map
echo new > new.txt
mkdir -p made/sub && echo in > made/sub/f
echo more >> src/deep/old.txt
rm gone.txt
echo h > "$HOME/.rc" && mkdir "$HOME/.cache" && echo c > "$HOME/.cache/c"
cat "`+run+`/task.json"
setpriv --reuid=_apt --regid=nogroup --clear-groups id -u
echo done`, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := string(sr.Output)
	if sr.ExitCode != 0 || !strings.HasSuffix(out, "{}\n42\ndone\n") {
		t.Fatalf("exit %d: %q", sr.ExitCode, out)
	}
	notIdentity(t, out)
	for p, want := range map[string]string{"workspace/new.txt": "new\n", "workspace/made/sub/f": "in\n",
		"workspace/src/deep/old.txt": "old\nmore\n", "home/.rc": "h\n", "home/.cache/c": "c\n"} {
		got, err := os.ReadFile(filepath.Join(run, p))
		if err != nil || string(got) != want {
			t.Errorf("%s on the host: %q %v, want %q", p, got, err, want)
		}
		if uid, _ := ownerOfPath(t, filepath.Join(run, p)); uid == 0 {
			t.Errorf("%s is owned by the host's root: the box's root is the host's", p)
		}
	}
	if _, err := os.Lstat(filepath.Join(ws, "gone.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("gone.txt is still there: %v", err)
	}
	// The read-only run directory and its task file stay the host's.
	if uid, _ := ownerOfPath(t, filepath.Join(run, "task.json")); uid != 0 {
		t.Errorf("task.json (read-only mount) was given away: uid %d", uid)
	}
	// What the harness writes while the box is open, in a folder it makes, is the box's
	// to change once given.
	os.MkdirAll(filepath.Join(ws, "harness", "dir"), 0o755)
	os.WriteFile(filepath.Join(ws, "harness", "dir", "w.txt"), []byte("from the harness\n"), 0o644)
	if err := b.Own(ws, "harness/dir/w.txt"); err != nil {
		t.Fatal(err)
	}
	sr, err = b.Exec(ctx, "set -e; echo box >> harness/dir/w.txt; touch harness/dir/also; rm harness/dir/also; echo ok", 0)
	if err != nil || string(sr.Output) != "ok\n" {
		t.Fatalf("the box on the harness's file: %q %v", sr.Output, err)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "harness", "dir", "w.txt")); string(got) != "from the harness\nbox\n" {
		t.Errorf("the harness's file: %q", got)
	}
	if u, g, err := b.HostIDs(0, 0); err != nil || u == 0 || g == 0 {
		t.Errorf("HostIDs(0, 0) = %d, %d, %v: want the box's root on the host", u, g, err)
	}
	// A read-only mount others cannot read would be unreadable to the box's root.
	closed := filepath.Join(t.TempDir(), "closed")
	os.Mkdir(closed, 0o700)
	if _, err := e.OpenBox(ctx, BoxSpec{Image: img, Dir: ws, Labels: labels, Mounts: []Mount{{Source: closed, Target: "/closed"}}}); !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), "o+rx") {
		t.Errorf("a read-only mount of mode 0700: %v, want ErrBadSpec saying chmod o+rx", err)
	}
}

// TestBoxLinksAreNotFollowedWhenGiven: links a box plants in its workspace, to a host file
// and to a host directory, are not followed when the next box's mounts are given to its
// root (the link itself is given, what it points at keeps its owner), and Box.Own refuses a
// path through a link.
func TestBoxLinksAreNotFollowedWhenGiven(t *testing.T) {
	e, img := needUserNS(t)
	ctx := context.Background()
	ws := t.TempDir()
	outside := t.TempDir()
	target := filepath.Join(outside, "host-file")
	os.WriteFile(target, []byte("host\n"), 0o644)
	os.Mkdir(filepath.Join(outside, "host-dir"), 0o755)
	inner := filepath.Join(outside, "host-dir", "inner")
	os.WriteFile(inner, []byte("host\n"), 0o644)
	labels := testLabels(t)
	b, err := e.OpenBox(ctx, BoxSpec{Image: img, Dir: ws, Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	sr, err := b.Exec(ctx, "ln -s "+target+" link && ln -s "+filepath.Join(outside, "host-dir")+" dlink && mkdir real && echo ok", 0)
	if err != nil || string(sr.Output) != "ok\n" {
		t.Fatalf("%q %v", sr.Output, err)
	}
	// Box.Own through the planted link to a directory: refused, nothing given.
	if err := b.Own(ws, "dlink/inner"); err == nil {
		t.Error("Own went through a link")
	}
	b.Close()
	// The host's root takes the links back, as a harness writing there would leave them.
	os.Lchown(filepath.Join(ws, "link"), 0, 0)
	os.Lchown(filepath.Join(ws, "dlink"), 0, 0)
	b, err = e.OpenBox(ctx, BoxSpec{Image: img, Dir: ws, Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, p := range []string{target, inner, filepath.Join(outside, "host-dir")} {
		if uid, gid := ownerOfPath(t, p); uid != 0 || gid != 0 {
			t.Errorf("%s (behind a link) was given away: %d:%d", p, uid, gid)
		}
	}
	if uid, _ := ownerOfPath(t, filepath.Join(ws, "link")); uid == 0 {
		t.Error("the link itself was not given to the box's root")
	}
	if uid, _ := ownerOfPath(t, filepath.Join(ws, "real")); uid == 0 {
		t.Error("the box's directory is the host root's")
	}
}

// TestIDMapsAndPodmanWithoutSubordinateIDs: a map's host ids, what it maps, the identity;
// and Podman's refusal for want of subordinate ids turns the engine's containers to none,
// saying why (another error does not).
func TestIDMapsAndPodmanWithoutSubordinateIDs(t *testing.T) {
	m := idMap{{0, 2147483647, 65536}}
	if h, ok := m.host(0); !ok || h != 2147483647 {
		t.Errorf("host(0) = %d %v", h, ok)
	}
	if h, ok := m.host(65535); !ok || h != 2147483647+65535 {
		t.Errorf("host(65535) = %d %v", h, ok)
	}
	if _, ok := m.host(65536); ok {
		t.Error("65536 is mapped")
	}
	if m.mapped(0) || !m.mapped(2147483647) || m.mapped(2147483647+65536) || m.identity() {
		t.Errorf("mapped: %v %v %v, identity %v", m.mapped(0), m.mapped(2147483647), m.mapped(2147483647+65536), m.identity())
	}
	if !(idMap{{0, 0, 4294967295}}).identity() {
		t.Error("the identity is not")
	}
	e := &Engine{host: "unix:///test-" + t.Name(), userns: UserNS{Mode: UserNSAuto}}
	t.Cleanup(func() { usernsCache.Delete(e.host) })
	if e.noSubordinateIDs(errors.New("creating the container: some other failure")) || e.usernsMode() != UserNSAuto {
		t.Fatal("another error turned the user namespace off")
	}
	if !e.noSubordinateIDs(errors.New("creating the container: Error response from daemon: cannot find mappings for user containers: no subuid ranges found for user \"containers\" in /etc/subuid")) {
		t.Fatal("Podman's refusal was not recognised")
	}
	if u := e.UserNS(); u.Mode != UserNSNone || !strings.Contains(u.Why, "setup-engine.sh") {
		t.Errorf("after the refusal: %+v", u)
	}
	if c, ok := usernsCache.Load(e.host); !ok || c.(UserNS).Mode != UserNSNone {
		t.Errorf("not kept for the engine: %+v", c)
	}
}
