package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/lib/agent/agenttest"
	"github.com/envgap/envgap/schemas"
)

func TestWorkspaceHistoryTaskFileAndFiles(t *testing.T) {
	tk := agenttest.Task()
	if _, err := Prepare(context.Background(), tk, t.TempDir(), agenttest.GitMaterialize(1)); err == nil || !strings.Contains(err.Error(), "later history") && !strings.Contains(err.Error(), "besides base_commit") {
		t.Fatalf("a workspace with later history: %v", err)
	}
	tk = agenttest.Task()
	ws, err := Prepare(context.Background(), tk, t.TempDir(), agenttest.GitMaterialize(0))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(ws.TaskFile())
	for _, never := range []string{"patch", "gold_files", "pull_request", "pr_number", "secret", "resolve_command", "run_command", "is_control"} {
		if strings.Contains(string(b), never) {
			t.Errorf("the task file shows %q:\n%s", never, b)
		}
	}
	if !strings.Contains(string(b), `"repro_command"`) || !strings.Contains(string(b), `"registry_date"`) {
		t.Errorf("task file: %s", b)
	}
	write := func(p, s string) {
		os.MkdirAll(filepath.Dir(filepath.Join(ws.Dir, p)), 0o755)
		os.WriteFile(filepath.Join(ws.Dir, p), []byte(s), 0o644)
	}
	write("requirements.txt", "x==1\n")
	write("node_modules/x/index.js", "module.exports = 1\n")
	write("debug.log", "ignored by .gitignore\n")
	write("setup.sh", "apt-get install -y libx\n")
	os.Remove(filepath.Join(ws.Dir, "app.py"))
	files, err := ws.Files()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 || *files["requirements.txt"] != "x==1\n" || *files["setup.sh"] == "" || files["app.py"] != nil {
		t.Errorf("files: %v", files)
	}
	if _, ok := files["app.py"]; !ok {
		t.Error("the deleted app.py is not in the files object")
	}
	os.Symlink("/etc/passwd", filepath.Join(ws.Dir, "link.txt"))
	if _, err := ws.Files(); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "link.txt") {
		t.Errorf("a link to outside: %v", err)
	}
	os.Remove(filepath.Join(ws.Dir, "link.txt"))
	write("data.bin", "a\x00b")
	if _, err := ws.Files(); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "data.bin") {
		t.Errorf("binary file: %v", err)
	}
}

func TestRunCommandContainsHostileAgents(t *testing.T) {
	dir := t.TempDir()
	// Hangs, with a child in the background holding the output open.
	start := time.Now()
	res, err := RunCommand(context.Background(), "sleep 60 & sleep 60", dir, nil, 500*time.Millisecond)
	if err != nil || !res.TimedOut || time.Since(start) > 10*time.Second {
		t.Fatalf("hang: %+v %v after %s", res, err, time.Since(start))
	}
	// Prints far more than the cap.
	res, err = RunCommand(context.Background(), "head -c 20000000 /dev/zero; echo done >&2", dir, nil, time.Minute)
	if err != nil || res.StdoutSize != 20000000 || len(res.Stdout) != MaxAgentOutput || string(res.Stderr) != "done\n" {
		t.Fatalf("big output: %d kept of %d, %v", len(res.Stdout), res.StdoutSize, err)
	}
	// Crashes.
	res, err = RunCommand(context.Background(), "echo $ENVGAP_X; exit 3", dir, []string{"ENVGAP_X=seen"}, time.Minute)
	if err != nil || res.ExitCode != 3 || string(res.Stdout) != "seen\n" {
		t.Fatalf("crash: %+v %v", res, err)
	}
}

// startRepro starts a repro server on a workspace of the test task, its runner a fake.
func startRepro(t *testing.T) (*ReproServer, *Workspace, *agenttest.FakeRunner) {
	t.Helper()
	st, _ := catalog.Open(t.TempDir())
	fr := &agenttest.FakeRunner{Store: st}
	ws, err := Prepare(context.Background(), agenttest.Task(), t.TempDir(), agenttest.GitMaterialize(0))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := StartRepro(context.Background(), ws, ReproConfig{Runner: fr, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, ws, fr
}

func TestReproServer(t *testing.T) {
	srv, _, fr := startRepro(t)
	env := map[string]string{}
	vars, err := srv.Env("envgap agent-repro")
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range vars {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	if b, err := os.ReadFile(env[EnvRepro]); err != nil || !strings.Contains(string(b), "exec envgap agent-repro") {
		t.Errorf("repro script: %q %v", b, err)
	}
	var out strings.Builder
	if _, err := ReproClient(context.Background(), env[EnvReproURL], "wrong", &out); err == nil {
		t.Error("a wrong token was answered")
	}
	code, err := ReproClient(context.Background(), env[EnvReproURL], env[EnvReproToken], &out)
	if err != nil || code != 1 || !strings.Contains(out.String(), "=== resolve: pip install") || fr.Runs.Load() != 1 {
		t.Fatalf("repro: %d %v %q", code, err, out.String())
	}
}

// TestTaskFileIsTheLayoutsAgentColumns: the task file holds exactly the columns the record
// layout declares agent-visible (schemas.AgentColumns), with the task's values.
func TestTaskFileIsTheLayoutsAgentColumns(t *testing.T) {
	tk := agenttest.Task()
	b, err := json.Marshal(View(tk))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range schemas.AgentColumns() {
		names = append(names, c.Name)
		if _, ok := got[c.Name]; !ok {
			t.Errorf("the task file lacks the agent-visible column %s", c.Name)
		}
	}
	if len(got) != len(names) {
		t.Errorf("the task file holds %d columns, the layout declares %d agent-visible: %v", len(got), len(names), names)
	}
	if got["instance_id"] != tk.InstanceID || got["repro_command"] != tk.ReproCommand || got["registry_date"] != tk.RegistryDate {
		t.Errorf("task file values: %s", b)
	}
}
