package lite

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/internal/testenv"
	"github.com/envgap/envgap/schemas"
)

func str(s string) *string { return &s }

func files(kv ...string) []schemas.File {
	var out []schemas.File
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, schemas.File{Path: kv[i], Content: str(kv[i+1])})
	}
	return out
}

// gitCLI runs git with a clean configuration and returns its trimmed output.
func gitCLI(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	home := t.TempDir()
	cmd.Env = append([]string{"HOME=" + home, "XDG_CONFIG_HOME=" + home, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null", "PATH=" + os.Getenv("PATH"), "LC_ALL=C", "TZ=America/Chicago"}, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func needGit(t *testing.T) {
	t.Helper()
	testenv.Tool(t, "git")
}

// gitCLICommit makes the base commit with the git CLI the way doc.go documents it.
func gitCLICommit(t *testing.T, fs []schemas.File, created time.Time, executable bool) string {
	t.Helper()
	dir := t.TempDir()
	gitCLI(t, dir, nil, "init", "-q", "-b", "main")
	for _, f := range fs {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if executable {
			mode = 0o755 // core.fileMode=false must still record 100644
		}
		if err := os.WriteFile(p, []byte(*f.Content), mode); err != nil {
			t.Fatal(err)
		}
	}
	date := created.UTC().Format("2006-01-02T15:04:05+00:00")
	env := []string{"GIT_AUTHOR_NAME=envgap", "GIT_AUTHOR_EMAIL=envgap@invalid", "GIT_AUTHOR_DATE=" + date,
		"GIT_COMMITTER_NAME=envgap", "GIT_COMMITTER_EMAIL=envgap@invalid", "GIT_COMMITTER_DATE=" + date}
	gitCLI(t, dir, env, "-c", "core.fileMode=false", "add", "-A")
	gitCLI(t, dir, env, "-c", "core.fileMode=false", "-c", "commit.gpgSign=false", "commit", "-q", "-m", "project as written")
	return gitCLI(t, dir, nil, "rev-parse", "HEAD")
}

var commitCases = []struct {
	name    string
	files   []schemas.File
	created time.Time
	exec    bool
}{
	{"one file", files("main.py", "print('hi')\n"), time.Date(2026, 3, 2, 10, 15, 0, 0, time.UTC), false},
	{"nested and tricky order", files(
		"a.b", "1", "a/b", "2", "a-b", "3", "a/c/d.txt", "4", "ab", "", "src/main/java/App.java", "class App {}",
		"README.md", "no trailing newline", "données/é.txt", "utf-8 name\n"),
		time.Date(2025, 12, 31, 23, 59, 59, 0, time.UTC), false},
	{"offset time is normalised to UTC", files("CMakeLists.txt", "project(x)\n"),
		time.Date(2026, 7, 1, 9, 0, 0, 0, time.FixedZone("CEST", 2*3600)), false},
	{"executable bits on disk are ignored", files("run.sh", "#!/bin/sh\necho hi\n", "lib/x.js", "module.exports = 1;\n"),
		time.Date(2024, 2, 29, 12, 0, 0, 0, time.UTC), true},
}

func TestBaseCommitMatchesGitCLI(t *testing.T) {
	needGit(t)
	for _, tc := range commitCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := BaseCommit(tc.files, tc.created)
			if err != nil {
				t.Fatal(err)
			}
			want := gitCLICommit(t, tc.files, tc.created, tc.exec)
			if got != want {
				t.Errorf("BaseCommit = %s, git CLI = %s", got, want)
			}
			// Same inputs in another order give the same hash.
			rev := append([]schemas.File(nil), tc.files...)
			for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
				rev[i], rev[j] = rev[j], rev[i]
			}
			if again, _ := BaseCommit(rev, tc.created); again != got {
				t.Errorf("file order changed the hash: %s vs %s", again, got)
			}
		})
	}
}

func TestBaseCommitChangesWithInputs(t *testing.T) {
	base := files("a.txt", "x\n")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h0, err := BaseCommit(base, t0)
	if err != nil {
		t.Fatal(err)
	}
	for name, alt := range map[string]func() (string, error){
		"content": func() (string, error) { return BaseCommit(files("a.txt", "y\n"), t0) },
		"path":    func() (string, error) { return BaseCommit(files("b.txt", "x\n"), t0) },
		"time":    func() (string, error) { return BaseCommit(base, t0.Add(time.Second)) },
	} {
		h, err := alt()
		if err != nil {
			t.Fatal(err)
		}
		if h == h0 {
			t.Errorf("changing the %s kept hash %s", name, h)
		}
	}
}

func TestBaseCommitRejectsBadFiles(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for name, fs := range map[string][]schemas.File{
		"dotdot":         files("../x", "a"),
		"absolute":       files("/etc/passwd", "a"),
		"duplicate":      files("a", "1", "a", "2"),
		"file and dir":   files("a", "1", "a/b", "2"),
		"dir and file":   files("a/b", "1", "a", "2"),
		"nil content":    {{Path: "a"}},
		"unclean":        files("a//b", "1"),
		"backslash name": files(`a\b`, "1"),
	} {
		if h, err := BaseCommit(fs, t0); err == nil {
			t.Errorf("%s: got hash %s, want an error", name, h)
		}
	}
	if _, err := BaseCommit(files("a", "1"), time.Time{}); err == nil {
		t.Error("zero time: want an error")
	}
}

func TestMaterialize(t *testing.T) {
	needGit(t)
	tc := commitCases[1]
	dir := filepath.Join(t.TempDir(), "work")
	h, err := Materialize(dir, tc.files, tc.created)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := BaseCommit(tc.files, tc.created)
	if h != want {
		t.Fatalf("Materialize = %s, BaseCommit = %s", h, want)
	}
	if got := gitCLI(t, dir, nil, "rev-parse", "HEAD"); got != want {
		t.Errorf("git rev-parse HEAD = %s, want %s", got, want)
	}
	if got := gitCLI(t, dir, nil, "symbolic-ref", "--short", "HEAD"); got != "main" {
		t.Errorf("branch = %q, want main", got)
	}
	if got := gitCLI(t, dir, nil, "status", "--porcelain"); got != "" {
		t.Errorf("worktree not clean:\n%s", got)
	}
	if got := gitCLI(t, dir, nil, "log", "--format=%an <%ae>|%cn <%ce>|%aI|%B"); got != "envgap <envgap@invalid>|envgap <envgap@invalid>|2025-12-31T23:59:59+00:00|project as written" {
		t.Errorf("commit metadata = %q", got)
	}
	if got := gitCLI(t, dir, nil, "ls-tree", "-r", "--format=%(objectmode)", "HEAD"); strings.Trim(strings.ReplaceAll(got, "100644", ""), "\n") != "" {
		t.Errorf("modes other than 100644:\n%s", got)
	}
	for _, f := range tc.files {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil || string(b) != *f.Content {
			t.Errorf("%s: worktree has %q (%v), want %q", f.Path, b, err, *f.Content)
		}
	}
	if _, err := Materialize(dir, tc.files, tc.created); err == nil {
		t.Error("materializing into a non-empty directory: want an error")
	}
}

func BenchmarkBaseCommit(b *testing.B) {
	var fs []schemas.File
	for i := 0; i < 200; i++ {
		fs = append(fs, schemas.File{Path: fmt.Sprintf("src/d%02d/f%03d.py", i%26, i), Content: str(strings.Repeat("line\n", 100))})
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := BaseCommit(fs, t0); err != nil {
			b.Fatal(err)
		}
	}
}

// Materialize writes the commit with go-git; BaseCommit computes it from git's object
// format (schemas.LiteBaseCommit): the two agree on every case.
func TestMaterializeAgreesWithBaseCommit(t *testing.T) {
	for _, tc := range commitCases {
		h, err := Materialize(filepath.Join(t.TempDir(), "work"), tc.files, tc.created)
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := BaseCommit(tc.files, tc.created); h != want {
			t.Errorf("%s: Materialize = %s, BaseCommit = %s", tc.name, h, want)
		}
	}
}
