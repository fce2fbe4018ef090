package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
	"github.com/envgap/envgap/verify/core"
	"github.com/envgap/envgap/verify/eval"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
)

func str(s string) *string { return &s }

// gitMaterialize writes the task's project_files as one commit per entry of extra+1
// (extra > 0 leaves later history in the repository) and sets base_commit to the first.
func gitMaterialize(extra int) MaterializeFunc {
	return func(_ context.Context, t *schemas.Task, dir string) error {
		r, err := git.PlainInit(dir, false)
		if err != nil {
			return err
		}
		wt, _ := r.Worktree()
		for _, f := range t.ProjectFiles {
			p := filepath.Join(dir, f.Path)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(*f.Content), 0o644); err != nil {
				return err
			}
			wt.Add(f.Path)
		}
		sig := &object.Signature{Name: "t", Email: "t@invalid", When: time.Unix(1e9, 0)}
		h, err := wt.Commit("base", &git.CommitOptions{Author: sig, Committer: sig})
		if err != nil {
			return err
		}
		t.BaseCommit = h.String()
		for i := 0; i < extra; i++ {
			os.WriteFile(filepath.Join(dir, "later.txt"), []byte{byte('a' + i)}, 0o644)
			wt.Add("later.txt")
			if _, err := wt.Commit("later", &git.CommitOptions{Author: sig, Committer: sig}); err != nil {
				return err
			}
		}
		if extra > 0 {
			return wt.Reset(&git.ResetOptions{Commit: h, Mode: git.HardReset})
		}
		return nil
	}
}

func task() *schemas.Task {
	pr := int64(2)
	return &schemas.Task{
		Ident: schemas.Ident{InstanceID: "envgap__o__r-1"},
		Spec: schemas.Spec{
			Repo: "o/r", Ecosystem: schemas.EcosystemPython,
			ProblemStatement: "it does not install", FailureSignature: "No matching distribution", ReproCommand: "pip install -r requirements.txt",
			ResolveCommand: "pip install -r requirements.txt", RunCommand: "python3 app.py", RegistryDate: "2023-01-01T00:00:00Z",
			Patch:     "secret patch",
			GoldFiles: []schemas.File{{Path: "requirements.txt", Content: str("x==1\n")}},
			ProjectFiles: []schemas.File{{Path: "requirements.txt", Content: str("x==2\n")}, {Path: "app.py", Content: str("print(1)\n")},
				{Path: ".gitignore", Content: str("*.log\n")}},
		},
		Source: schemas.SourceRepaired,
		Origin: schemas.Origin{PullRequest: str("https://github.com/o/r/pull/2"), PRNumber: &pr},
	}
}

func TestWorkspaceHistoryTaskFileAndFiles(t *testing.T) {
	tk := task()
	if _, err := Prepare(context.Background(), tk, t.TempDir(), gitMaterialize(1)); err == nil || !strings.Contains(err.Error(), "later history") && !strings.Contains(err.Error(), "besides base_commit") {
		t.Fatalf("a workspace with later history: %v", err)
	}
	tk = task()
	ws, err := Prepare(context.Background(), tk, t.TempDir(), gitMaterialize(0))
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

// fakeRunner resolves a run when requirements.txt pins x==1.
type fakeRunner struct {
	st   *catalog.Catalog
	runs atomic.Int64
}

func (f *fakeRunner) ImageID(context.Context, string) (string, error) { return "sha256:img", nil }
func (f *fakeRunner) RunSpec(_ context.Context, spec core.Spec, _ string) (*schemas.Run, schemas.Digest, bool, error) {
	f.runs.Add(1)
	files, err := core.ApplyOverlay(spec.Project, spec.Overlay)
	if err != nil {
		return nil, schemas.Digest{}, false, err
	}
	ok := false
	for _, fl := range files {
		ok = ok || fl.Path == "requirements.txt" && string(fl.Content) == "x==1\n"
	}
	r := &schemas.Run{Kind: "run", InstanceID: spec.InstanceID, Resolved: ok, D1: schemas.DepSet{Deps: []schemas.Dependency{}}, D3: schemas.DepSet{Deps: []schemas.Dependency{}}}
	out, err := f.st.Put([]byte("pip says no\n"))
	if err != nil {
		return nil, schemas.Digest{}, false, err
	}
	r.Steps = []schemas.StepRecord{{Name: core.StepResolve, Command: "pip install", Output: out}}
	if !ok {
		r.Steps[0].ExitCode = 1
	}
	d, err := f.st.PutJSON(r)
	return r, d, false, err
}

func harness(t *testing.T, agentCmd string, maxAttempts int, timeout time.Duration) (*Outcome, *fakeRunner) {
	t.Helper()
	st, err := catalog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fr := &fakeRunner{st: st}
	ev := &eval.Evaluator{Store: st, Runner: fr, IsEnvFile: func(p string) bool { return p == "requirements.txt" || p == "setup.sh" }}
	tk := task()
	out, err := Run(context.Background(), []schemas.Task{*tk}, Options{Evaluator: ev, Materialize: gitMaterialize(0), Agent: agentCmd,
		K: 1, MaxAttempts: maxAttempts, AttemptTimeout: timeout, WorkDir: t.TempDir(), OutDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return out, fr
}

func TestHarnessAgents(t *testing.T) {
	// Fixes on the second attempt, after reading the feedback; writes a trajectory.
	fixer := `if [ "$ENVGAP_ATTEMPT" = 1 ]; then echo 'x==3' > requirements.txt; else grep -q 'status: unresolved' "$ENVGAP_FEEDBACK_FILE" && echo 'x==1' > requirements.txt; fi; echo '[{"action": "edit requirements.txt"}]' > "$ENVGAP_TRAJECTORY_FILE"; echo 0.5 > "$ENVGAP_COST_FILE"`
	out, _ := harness(t, fixer, 3, time.Minute)
	if len(out.Faults) != 0 || len(out.Results) != 2 || out.Results[0].Resolved || !out.Results[1].Resolved || out.Results[1].Attempt != 2 ||
		*out.Results[1].CostUSD != 0.5 || out.Results[1].Trajectory != "inspected (steps)" {
		t.Fatalf("fixer: %+v", out)
	}
	for _, tc := range []struct {
		name, cmd, status, reason string
		attempts                  int
	}{
		{"hangs", "sleep 600", schemas.EvalUnresolved, "did not finish within", 2},
		{"edits source", "echo 'print(2)' > app.py; echo 'x==1' > requirements.txt", schemas.EvalRejected, "changes source file app.py", 2},
		{"writes outside", `echo 'x==1' > requirements.txt; echo hacked > "$ENVGAP_TASK_FILE.new"`, schemas.EvalRejected, "outside its workspace", 2},
		{"deletes the manifest", "rm requirements.txt", schemas.EvalUnresolved, "deletes requirements.txt", 2},
		{"crashes after the fix", "echo 'x==1' > requirements.txt; kill -SEGV $$", schemas.EvalResolved, "", 1},
		{"links outside", "ln -s /etc/passwd passwd.txt", schemas.EvalRejected, "symbolic link", 2},
	} {
		out, _ := harness(t, tc.cmd, 2, 300*time.Millisecond)
		if len(out.Faults) != 0 || len(out.Results) != tc.attempts {
			t.Errorf("%s: %d results, faults %+v", tc.name, len(out.Results), out.Faults)
			continue
		}
		r := out.Results[0]
		if r.Status != tc.status || !strings.Contains(r.Reason, tc.reason) || r.Agent == nil {
			t.Errorf("%s: %s (%s), want %s (%s)", tc.name, r.Status, r.Reason, tc.status, tc.reason)
		}
	}
	// Built-in agents: gold resolves, noop does not; neither runs a command.
	out, _ = harness(t, AgentGold, 1, time.Minute)
	if !out.Results[0].Resolved || out.Results[0].Agent != nil {
		t.Errorf("gold: %+v", out.Results[0])
	}
	out, _ = harness(t, AgentNoop, 2, time.Minute)
	if len(out.Results) != 2 || out.Results[0].Resolved {
		t.Errorf("noop: %+v", out.Results)
	}
}

func TestReproServer(t *testing.T) {
	st, _ := catalog.Open(t.TempDir())
	fr := &fakeRunner{st: st}
	ev := &eval.Evaluator{Store: st, Runner: fr}
	ws, err := Prepare(context.Background(), task(), t.TempDir(), gitMaterialize(0))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := StartRepro(context.Background(), ws, ev)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
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
	if err != nil || code != 1 || !strings.Contains(out.String(), "=== resolve: pip install") || fr.runs.Load() != 1 {
		t.Fatalf("repro: %d %v %q", code, err, out.String())
	}
}
