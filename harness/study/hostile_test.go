package study

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/core/untrusted"
	"github.com/envgap/envgap/lib/agent"
	"github.com/envgap/envgap/lib/studylayout"
	"github.com/envgap/envgap/schemas"
)

// TestHostileTurn: a command agent on this host that makes the files of its folder links
// to a host file (the prompt, the feedback, the errors folder, the run command) has its
// next turn's files written as new files, never through the links (the host file and
// folder stay as they were); its linked run command is refused, naming it; a workspace
// holding a FIFO, a hard link or a sparse 1 TiB file is refused as unreadable, naming it,
// without waiting on the FIFO; a link in it is kept as a link, its target never read.
func TestHostileTurn(t *testing.T) {
	const content = "host secret\n"
	hostDir := t.TempDir()
	secret := filepath.Join(hostDir, "secret")
	if err := os.WriteFile(secret, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	ws, dir := filepath.Join(work, "workspace"), filepath.Join(work, "agent")
	os.Mkdir(ws, 0o755)
	os.Mkdir(dir, 0o755)
	run := func(ctx context.Context, command, d string, env []string, timeout time.Duration) (int, bool, error) {
		res, err := agent.RunCommand(ctx, command, d, env, timeout)
		return res.ExitCode, res.TimedOut, err
	}
	a := &CommandAgent{Run: run, Timeout: time.Minute, Command: `for f in prompt.txt feedback.txt run_command.txt; do ln -sf "` + secret + `" "$(dirname "$ENVGAP_STUDY_PROMPT")/$f"; done
rm -rf "$ENVGAP_STUDY_ERRORS"; ln -s "` + hostDir + `" "$ENVGAP_STUDY_ERRORS"`}
	turn := Turn{Round: 0, Language: schemas.EcosystemPython, Problem: studylayout.Problem{Number: 1}, Prompt: "write it", Workspace: ws, Dir: dir}
	tr, err := a.Turn(context.Background(), turn)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tr.Refused, "run_command.txt is a symbolic link to "+secret) || tr.RunCommand != "" {
		t.Errorf("a linked run command: %+v", tr)
	}
	a.Command = "true"
	turn.Round, turn.Feedback, turn.Errors = 1, "it failed", []string{"it failed"}
	if tr, err = a.Turn(context.Background(), turn); err != nil || tr.Refused != "" {
		t.Fatalf("the next turn: %+v %v", tr, err)
	}
	if b, _ := os.ReadFile(secret); string(b) != content {
		t.Errorf("the host file was written through a link: %q", b)
	}
	if entries, _ := os.ReadDir(hostDir); len(entries) != 1 {
		t.Errorf("the host folder the errors link pointed at holds %d entries", len(entries))
	}
	for name, want := range map[string]string{"prompt.txt": "write it", "feedback.txt": "it failed", "errors/error-0.txt": "it failed"} {
		if b, err := untrusted.ReadFile(dir, name, 1<<10); err != nil || string(b) != want {
			t.Errorf("%s: %q %v", name, b, err)
		}
	}

	os.WriteFile(filepath.Join(ws, "main.py"), []byte("print(1)\n"), 0o644)
	for _, c := range []struct{ make, want string }{
		{"mkfifo pipe", "holds pipe, which is a FIFO"},
		{"ln main.py again.py", "holds again.py, which has 2 hard links"},
		{"truncate -s 1T big.py", "holds big.py, which is a sparse file of 1099511627776 bytes"},
	} {
		if _, err := agent.RunCommand(context.Background(), c.make, ws, nil, time.Minute); err != nil {
			t.Fatal(err)
		}
		files, err := readWorkspace(ws)
		if !errors.Is(err, untrusted.ErrUnsafe) || !strings.Contains(unsafeWords(err), c.want) || files != nil {
			t.Errorf("%s: %v (%s)", c.make, err, unsafeWords(err))
		}
		os.Remove(filepath.Join(ws, strings.Fields(c.make)[len(strings.Fields(c.make))-1]))
	}
	os.Symlink(secret, filepath.Join(ws, "link.py"))
	files, err := readWorkspace(ws)
	if err != nil || len(files) != 2 {
		t.Fatalf("a workspace with a link: %+v %v", files, err)
	}
	for _, f := range files {
		if strings.Contains(string(f.Content), "host secret") {
			t.Errorf("%s: the host file was read", f.Path)
		}
	}
}
