package gitfetch_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/crawl/gitfetch"
	"github.com/envgap/envgap/crawl/gittest"
)

var t0 = time.Date(2023, 1, 2, 3, 4, 5, 0, time.UTC)

// history builds base -> fix on main, plus an unreachable commit that only existed on a
// branch that was force-pushed away.
func history(t *testing.T) (dir, base, fix, gone string) {
	t.Helper()
	dir = t.TempDir()
	r := gittest.Init(t, dir)
	base = r.Commit("", t0, "base", map[string]*string{
		"setup.py":        gittest.S("from setuptools import setup\nsetup(name='x', install_requires=['cython'])\n"),
		"x/__init__.py":   gittest.S("VALUE = 1\n"),
		"docs/README.md":  gittest.S("# docs\n"),
		"tests/test_x.py": gittest.S("def test(): pass\n"),
	})
	fix = r.Commit(base, t0.Add(time.Hour), "pin cython", map[string]*string{
		"setup.py":       gittest.S("from setuptools import setup\nsetup(name='x', install_requires=['cython<3'])\n"),
		"docs/README.md": nil,
	})
	gone = r.Commit(base, t0.Add(2*time.Hour), "force-pushed away", map[string]*string{"x/__init__.py": gittest.S("VALUE = 2\n")})
	r.SetRef("refs/heads/main", fix)
	return dir, base, fix, gone
}

func gitCLI(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestCheckoutHoldsOnlyTheBaseCommit(t *testing.T) {
	src, base, fix, _ := history(t)
	dst := filepath.Join(t.TempDir(), "work")
	if err := gitfetch.Checkout(context.Background(), "file://"+src, base, dst); err != nil {
		t.Fatal(err)
	}
	out, err := gitCLI(t, dst, "log", "--format=%H")
	if err != nil {
		t.Fatalf("git log: %v\n%s", err, out)
	}
	if got := strings.Fields(out); len(got) != 1 || got[0] != base {
		t.Fatalf("git log = %q, want exactly the base commit %s", got, base)
	}
	if out, err := gitCLI(t, dst, "cat-file", "-e", fix); err == nil {
		t.Fatalf("the fix commit %s is present in the checkout (%s)", fix, out)
	}
	refs, _ := gitCLI(t, dst, "for-each-ref")
	if strings.TrimSpace(refs) != "" {
		t.Errorf("checkout keeps refs: %s", refs)
	}
	remotes, _ := gitCLI(t, dst, "remote")
	if strings.TrimSpace(remotes) != "" {
		t.Errorf("checkout keeps remotes: %s", remotes)
	}
	b, err := os.ReadFile(filepath.Join(dst, "setup.py"))
	if err != nil || !strings.Contains(string(b), "['cython']") {
		t.Errorf("setup.py at base = %q, %v", b, err)
	}
	if status, _ := gitCLI(t, dst, "status", "--porcelain"); strings.TrimSpace(status) != "" {
		t.Errorf("work tree differs from the base commit:\n%s", status)
	}
}

func TestCheckoutMissingCommit(t *testing.T) {
	src, _, _, gone := history(t)
	err := gitfetch.Checkout(context.Background(), "file://"+src, gone, filepath.Join(t.TempDir(), "w"))
	if !errors.Is(err, gitfetch.ErrCommitNotFound) {
		t.Fatalf("err = %v, want ErrCommitNotFound", err)
	}
	err = gitfetch.Checkout(context.Background(), "file://"+src, "nothex", filepath.Join(t.TempDir(), "w"))
	if err == nil {
		t.Fatal("a malformed commit id was accepted")
	}
}

func TestSnapshotsReadAndDiff(t *testing.T) {
	src, base, fix, _ := history(t)
	s, err := gitfetch.Open(filepath.Join(t.TempDir(), "snap"), "file://"+src)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []string{base, fix, base} {
		if err := s.Fetch(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if s.Fetches != 2 {
		t.Errorf("fetches = %d, want 2 (a present commit is not fetched again)", s.Fetches)
	}
	paths, err := s.Paths(base)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(paths, ","); got != "docs/README.md,setup.py,tests/test_x.py,x/__init__.py" {
		t.Errorf("paths = %s", got)
	}
	f, ok, err := s.ReadFile(fix, "setup.py")
	if err != nil || !ok || !strings.Contains(string(f.Content), "cython<3") || f.Binary {
		t.Errorf("ReadFile = %q %v %v", f.Content, ok, err)
	}
	if _, ok, err := s.ReadFile(fix, "docs/README.md"); ok || err != nil {
		t.Errorf("deleted file: ok=%v err=%v", ok, err)
	}
	d, err := s.Diff(ctx, base, fix, []string{"setup.py", "docs/README.md"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"diff --git a/docs/README.md b/docs/README.md", "deleted file mode", "diff --git a/setup.py b/setup.py", "-setup(name='x', install_requires=['cython'])", "+setup(name='x', install_requires=['cython<3'])"} {
		if !strings.Contains(d, want) {
			t.Errorf("diff lacks %q:\n%s", want, d)
		}
	}
	only, err := s.Diff(ctx, base, fix, []string{"setup.py"})
	if err != nil || strings.Contains(only, "README") {
		t.Errorf("diff limited to setup.py mentions other paths: %v\n%s", err, only)
	}
}

func TestURL(t *testing.T) {
	for _, tc := range []struct{ tmpl, repo, want string }{
		{gitfetch.DefaultURLTemplate, "acme/widgets", "https://github.com/acme/widgets.git"},
		{"file:///srv/git/{owner}/{name}", "acme/widgets", "file:///srv/git/acme/widgets"},
		{"https://ghe.example/{repo}", "a/b", "https://ghe.example/a/b"},
	} {
		got, err := gitfetch.URL(tc.tmpl, tc.repo)
		if err != nil || got != tc.want {
			t.Errorf("URL(%q, %q) = %q, %v; want %q", tc.tmpl, tc.repo, got, err, tc.want)
		}
	}
	for _, bad := range [][2]string{{"https://x/{owner}", "a/b"}, {gitfetch.DefaultURLTemplate, "nodash"}} {
		if _, err := gitfetch.URL(bad[0], bad[1]); err == nil {
			t.Errorf("URL(%q, %q) accepted", bad[0], bad[1])
		}
	}
}

func TestReadCommit(t *testing.T) {
	src, base, _, _ := history(t)
	files, err := gitfetch.ReadCommit(context.Background(), "file://"+src, base, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Path)
		if f.Mode != 0o644 || f.Link != "" {
			t.Errorf("%s: mode %v link %q", f.Path, f.Mode, f.Link)
		}
	}
	if got := strings.Join(names, ","); got != "docs/README.md,setup.py,tests/test_x.py,x/__init__.py" {
		t.Errorf("files %s", got)
	}
	if string(files[1].Content) != "from setuptools import setup\nsetup(name='x', install_requires=['cython'])\n" {
		t.Errorf("setup.py = %q", files[1].Content)
	}
}

// The card's patch form: no index lines, bare hunk headers; git applies it.
func TestDiffInTheCardsForm(t *testing.T) {
	dir := t.TempDir()
	r := gittest.Init(t, dir)
	var setup strings.Builder
	for i := 1; i <= 80; i++ {
		if i == 75 {
			setup.WriteString("    setup_requires=['cython'],\n")
			continue
		}
		setup.WriteString("line " + strings.Repeat("x", i%7) + "\n")
	}
	before := setup.String()
	after := strings.Replace(before, "['cython']", "['cython<3.0.0']", 1)
	base := r.Commit("", t0, "base", map[string]*string{"setup.py": gittest.S(before), "old.cfg": gittest.S("[x]\n")})
	head := r.Commit(base, t0.Add(time.Hour), "pin", map[string]*string{"setup.py": gittest.S(after), "old.cfg": nil, "new.toml": gittest.S("[y]\n")})
	r.SetRef("refs/heads/main", head)
	s, err := gitfetch.Open(filepath.Join(t.TempDir(), "snap"), "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []string{base, head} {
		if err := s.Fetch(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	d, err := s.Diff(ctx, base, head, []string{"new.toml", "old.cfg", "setup.py"})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(d, "\n") {
		if strings.HasPrefix(l, "index ") || strings.HasPrefix(l, "@@") && !strings.HasSuffix(l, " @@") {
			t.Errorf("line %q is not in the card's form:\n%s", l, d)
		}
	}
	if !strings.Contains(d, "diff --git a/setup.py b/setup.py\n--- a/setup.py\n+++ b/setup.py\n@@ -72,7 +72,7 @@\n") ||
		!strings.Contains(d, "new file mode 100644\n--- /dev/null\n+++ b/new.toml\n") || !strings.Contains(d, "deleted file mode 100644\n--- a/old.cfg\n+++ /dev/null\n") {
		t.Errorf("diff:\n%s", d)
	}
	work := t.TempDir()
	if out, err := gitCLI(t, work, "init", "-q"); err != nil {
		t.Fatal(out)
	}
	os.WriteFile(filepath.Join(work, "setup.py"), []byte(before), 0o644)
	os.WriteFile(filepath.Join(work, "old.cfg"), []byte("[x]\n"), 0o644)
	pf := filepath.Join(t.TempDir(), "fix.patch")
	os.WriteFile(pf, []byte(d), 0o644)
	if out, err := gitCLI(t, work, "apply", pf); err != nil {
		t.Fatalf("git apply: %v\n%s", err, out)
	}
	got, _ := os.ReadFile(filepath.Join(work, "setup.py"))
	if string(got) != after {
		t.Error("git apply did not give the head's setup.py")
	}
	if _, err := os.Stat(filepath.Join(work, "old.cfg")); !os.IsNotExist(err) {
		t.Error("old.cfg was not deleted")
	}
}

func TestCardPatch(t *testing.T) {
	in := "diff --git a/setup.py b/setup.py\nindex 0123abc..4567def 100644\n--- a/setup.py\n+++ b/setup.py\n@@ -72,7 +72,7 @@ setup(\n     version=VERSION,\n-index = 1\n+index = 2\n@@ -1 +1 @@\n-a\n+b\n"
	want := "diff --git a/setup.py b/setup.py\n--- a/setup.py\n+++ b/setup.py\n@@ -72,7 +72,7 @@\n     version=VERSION,\n-index = 1\n+index = 2\n@@ -1 +1 @@\n-a\n+b\n"
	if got := gitfetch.CardPatch(in); got != want {
		t.Errorf("CardPatch =\n%s\nwant\n%s", got, want)
	}
	if gitfetch.CardPatch("") != "" {
		t.Error("empty diff")
	}
}
