package harbor

import (
	"bytes"
	"context"
	"errors"
	"github.com/envgap/envgap/core/shell"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/data/demo"
	"github.com/envgap/envgap/internal/testenv"
	"github.com/envgap/envgap/lib/agent"
	"github.com/envgap/envgap/schemas"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
)

const (
	statsPy = "from tabulate import tabulate\nprint(tabulate([[1, 2.5]], headers=['n', 'mean']))\n"
	broken  = "tabulate==0.9.1\n"
	fixed   = "tabulate==0.9.0\n"
)

// commitFiles makes a git repository in dir with one commit of files at a fixed time.
func commitFiles(dir string, files map[string]string) (string, error) {
	r, err := git.PlainInit(dir, false)
	if err != nil {
		return "", err
	}
	w, err := r.Worktree()
	if err != nil {
		return "", err
	}
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			return "", err
		}
		if _, err := w.Add(p); err != nil {
			return "", err
		}
	}
	at := time.Date(2022, 12, 1, 10, 0, 0, 0, time.UTC)
	sig := &object.Signature{Name: "t", Email: "t@example.org", When: at}
	h, err := w.Commit("initial", &git.CommitOptions{Author: sig, Committer: sig})
	return h.String(), err
}

var projectFiles = map[string]string{"requirements.txt": broken, "stats.py": statsPy, "README.md": "# stats\n"}

// testTasks returns a repair task, a control task and an excluded task of one project,
// and the materializer of its project.
func testTasks(t testing.TB) ([]schemas.Task, func(context.Context, *schemas.Task, string) error) {
	base, err := commitFiles(t.TempDir(), projectFiles)
	if err != nil {
		t.Fatal(err)
	}
	controlFiles := map[string]string{"requirements.txt": fixed, "stats.py": statsPy, "README.md": "# stats\n"}
	controlBase, err := commitFiles(t.TempDir(), controlFiles)
	if err != nil {
		t.Fatal(err)
	}
	byBase := map[string]map[string]string{base: projectFiles, controlBase: controlFiles}
	s := func(v string) *string { return &v }
	mk := func(id string, control bool) schemas.Task {
		tk := schemas.Task{Ident: schemas.Ident{InstanceID: id}}
		tk.Repo, tk.BaseCommit = "acme/stats", base
		tk.ProblemStatement = "stats does not install\n\nERROR: No matching distribution found for tabulate==0.9.1"
		tk.RegistryDate, tk.Ecosystem, tk.Image = "2023-01-01T00:00:00Z", schemas.EcosystemPython, "envgap-python-eval"
		tk.ManifestPath, tk.ManifestPaths = "requirements.txt", []string{"requirements.txt"}
		tk.ResolveCommand = "python3 -m pip install -r requirements.txt"
		tk.ReproCommand = "python3 -m pip install -r requirements.txt && python3 stats.py"
		tk.RunCommand = "python3 stats.py"
		tk.Source = schemas.SourceRepaired
		tk.GoldFiles = []schemas.File{{Path: "requirements.txt", Content: s(fixed)}}
		tk.IssueURL = s("https://github.com/acme/stats/issues/1")
		tk.RepoLicense = s("MIT")
		tk.IsControl = control
		return tk
	}
	ex := mk("envgap__acme__stats-7", false)
	ex.ExcludedFromScoring = true
	control := mk("envgap__acme__stats-5", true)
	control.BaseCommit, control.Source, control.GoldFiles = controlBase, schemas.SourceReported, []schemas.File{}
	tasks := []schemas.Task{mk("envgap__acme__stats-1", false), ex, control}
	mat := func(_ context.Context, tk *schemas.Task, dir string) error {
		h, err := commitFiles(dir, byBase[tk.BaseCommit])
		if err == nil && h != tk.BaseCommit {
			err = errors.New("materialized another commit")
		}
		return err
	}
	return tasks, mat
}

func buildTest(t testing.TB) (map[string][]byte, *Report) {
	tasks, mat := testTasks(t)
	files, rep, err := Build(context.Background(), tasks, Options{Materialize: mat, Source: os.DirFS("../.."), Meta: Meta{CorpusID: "sha256:test", Repo: "envgap/EnvGap"}})
	if err != nil {
		t.Fatal(err)
	}
	return files, rep
}

func TestBuildIsDeterministicAndChecks(t *testing.T) {
	a, rep := buildTest(t)
	b, _ := buildTest(t)
	if !bytes.Equal(a[ParquetPath], b[ParquetPath]) || !bytes.Equal(a[DatasetPath], b[DatasetPath]) {
		t.Fatal("two builds of the same tasks differ")
	}
	if rep.Tasks != 2 || rep.Excluded != 1 {
		t.Fatalf("report %+v, want 2 tasks and 1 excluded", rep)
	}
	p := filepath.Join(t.TempDir(), "tasks.parquet")
	if err := os.WriteFile(p, a[ParquetPath], 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Check(context.Background(), nil, p, CheckOptions{CorpusID: "sha256:test", NoTrials: true})
	if err != nil {
		t.Fatal(err)
	}
	if !got.OK() || got.Tasks != 2 {
		t.Fatalf("check: %+v", got)
	}
	tasks, _ := Load(p)
	by := map[string]File{}
	for _, f := range tasks[0].Files {
		by[f.Path] = f
	}
	for _, want := range []string{"name = \"envgap/envgap__acme__stats-1\"", "schema_version = \"1.1\"", "timeout_sec = 1200.0", "corpus_id = \"sha256:test\""} {
		if !strings.Contains(string(by[ConfigPath].Content), want) {
			t.Errorf("task.toml lacks %s:\n%s", want, by[ConfigPath].Content)
		}
	}
	if !strings.Contains(string(by[InstructionPath].Content), "python3 -m pip install -r requirements.txt && python3 stats.py") ||
		strings.Contains(string(by[InstructionPath].Content), fixed) {
		t.Errorf("instruction.md shows the wrong things:\n%s", by[InstructionPath].Content)
	}
	if _, ok := by["environment/project/.git/HEAD"]; !ok {
		t.Error("no git repository in the environment")
	}
	// The registry service serves the task's cut-off alone: the one its clients are given.
	df := string(by[DockerfilePath].Content)
	m := regexp.MustCompile(`ENV PIP_INDEX_URL="[^"]*/c/([^/"]+)/pypi/simple/"`).FindStringSubmatch(df)
	if m == nil || !strings.Contains(df, `"--cutoff", "`+m[1]+`"]`) {
		t.Errorf("the registry service is not started at the clients' cut-off:\n%s", df)
	}
	// Another corpus id is a disagreement.
	if got, _ := Check(context.Background(), nil, p, CheckOptions{CorpusID: "sha256:other", NoTrials: true}); got.OK() {
		t.Error("a task of another release passed")
	}
}

func TestTamperedTaskBinaryIsRefused(t *testing.T) {
	a, _ := buildTest(t)
	rows, err := ReadParquet(a[ParquetPath])
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		tamper func([]byte) []byte
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }},
		{"flipped byte", func(b []byte) []byte { c := bytes.Clone(b); c[len(c)/2] ^= 0xff; return c }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := []Row{{Path: rows[0].Path, TaskBinary: tt.tamper(rows[0].TaskBinary)}}
			var buf bytes.Buffer
			if err := WriteParquet(&buf, r); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(t.TempDir(), "tasks.parquet")
			os.WriteFile(p, buf.Bytes(), 0o644)
			rep, err := Check(context.Background(), nil, p, CheckOptions{NoTrials: true})
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK() || len(rep.Problems) == 0 || rep.Problems[0].Task != rows[0].Path {
				t.Fatalf("tampered task_binary: %+v, want a problem naming %s", rep.Problems, rows[0].Path)
			}
		})
	}
}

// TestHarborCheckOnEngine runs the smoke-test trials of a task on the real engine, with
// the fixture index as the registry service's upstream.
func TestHarborCheckOnEngine(t *testing.T) {
	if os.Getenv("DOCKER_HOST") == "" {
		testenv.Missing(t, "no DOCKER_HOST")
	}
	ctx := context.Background()
	eng, err := Connect(ctx)
	if err != nil {
		testenv.Missing(t, "engine: %v", err)
		return
	}
	defer eng.Close()
	if _, err := eng.cli.ImageInspect(ctx, "localhost/envgap-python-eval:latest"); err != nil {
		testenv.Missing(t, "image envgap-python-eval: %v (make images)", err)
	}
	gw, err := eng.HostAddress(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: demo.PyPIHandler(demo.PyPIFS())}
	go srv.Serve(ln)
	defer srv.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	a, _ := buildTest(t)
	p := filepath.Join(t.TempDir(), "tasks.parquet")
	os.WriteFile(p, a[ParquetPath], 0o644)
	var log bytes.Buffer
	isEnv := func(p string) bool { return p == "requirements.txt" || p == "README.md" }
	// The given change pins a version published after the cut-off: it must not install.
	late := []File{{Path: "requirements.txt", Content: []byte(broken + "# pinned by the test\n")}}
	rep, err := Check(ctx, eng, p, CheckOptions{CorpusID: "sha256:test", Trial: TrialOptions{
		PyPIUpstream: "http://" + net.JoinHostPort(gw, port) + "/simple/", IsEnvFile: isEnv, Log: &log, Change: late}})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	var table bytes.Buffer
	rep.WriteTable(&table)
	t.Logf("\n%s", table.String())
	// Two tasks, six scenarios each, and the given change on each.
	if !rep.OK() || len(rep.Results) != 14 {
		t.Fatalf("smoke table disagrees:\n%s\n%s", table.String(), log.String())
	}
	const pipRefusal = "No matching distribution found for tabulate==0.9.1"
	for _, r := range rep.Results {
		if r.Scenario == ScenarioChange && (r.Got != 0 || r.Step != "resolve" || !strings.Contains(r.Reason, pipRefusal)) {
			t.Errorf("%s: tabulate 0.9.1 (published after the cut-off) got reward %v (%s), want 0 from a failed resolve quoting pip's error line", r.Task, r.Got, r.Reason)
		}
		// The repair task unfixed: the environment touched, resolve fails as at base_commit,
		// and the reason quotes pip's error line (not only "resolve failed (exit 1)").
		if r.Scenario == ScenarioStillFailing && !r.Control && (r.Step != "resolve" || !strings.Contains(r.Reason, pipRefusal)) {
			t.Errorf("%s still failing: step %q reason %q, want resolve quoting %q", r.Task, r.Step, r.Reason, pipRefusal)
		}
		if r.Scenario == ScenarioBreaksBuild && (r.Step != "resolve" || !strings.Contains(r.Reason, "this is not a manifest")) {
			t.Errorf("%s breaks the build: step %q reason %q, want resolve quoting pip's refusal of the junk line", r.Task, r.Step, r.Reason)
		}
		if r.Scenario == ScenarioEmpty && !strings.Contains(r.Reason, "stats.py") {
			t.Errorf("%s empty workspace: reason %q, want the deleted source file named", r.Task, r.Reason)
		}
	}
	// Seed 001's aggregate tables: every scenario row as expected, and the signals of
	// the two tasks against their unfixed project.
	for _, row := range rep.Scenarios {
		if row.Expected != "-" && row.Agree != row.Trials {
			t.Errorf("scenario row %+v: not every trial as expected", row)
		}
	}
	sig := map[string]int{}
	for _, s := range rep.Signals {
		sig[s.Signal] = s.Count
	}
	if sig[SignalResolve] != 1 || sig[SignalControl] != 1 || len(sig) != 2 {
		t.Errorf("signals %+v, want one task failing in resolve and one control", rep.Signals)
	}
	for _, s := range []string{"| Scenario | Tasks | Expected | Result | Trials as expected |", "| empty workspace | all tasks | 0 | 0 | 2/2 |", "| Signal | Count | % |"} {
		if !strings.Contains(table.String(), s) {
			t.Errorf("the table lacks %q", s)
		}
	}
	if !strings.Contains(log.String(), "No matching distribution found for tabulate==0.9.1") {
		t.Errorf("the log does not show pip refusing tabulate 0.9.1:\n%s", log.String())
	}
}

// TestToolSourceBuilds builds envgap-task from the source a task carries, offline, with
// the standard library only (as the environment's Dockerfile does).
func TestToolSourceBuilds(t *testing.T) {
	goTool := testenv.Tool(t, "go")
	src, err := ToolSource(os.DirFS("../.."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var files []File
	for p, b := range src {
		files = append(files, File{Path: p, Content: b})
	}
	if err := WriteDir(context.Background(), dir, files); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goTool, "build", "-trimpath", "-o", filepath.Join(dir, "envgap-task"), "./cmd/envgap-task")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build envgap-task: %v\n%s", err, out)
	}
	// The task's registry serves its cut-off alone, whatever a URL names: another date is
	// refused (403, the message saying so) and logged; without --cutoff it does not start.
	bin := filepath.Join(dir, "envgap-task")
	if out, err := exec.Command(bin, "serve", "--addr", "127.0.0.1:0").CombinedOutput(); err == nil || !strings.Contains(string(out), "--cutoff") {
		t.Errorf("serve without --cutoff: %v %s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var stderr bytes.Buffer
	srv := exec.Command(bin, "serve", "--addr", addr, "--cutoff", "2023-07-30")
	srv.Env = append(os.Environ(), "ENVGAP_PYPI_UPSTREAM=http://127.0.0.1:1/simple/", "ENVGAP_NPM_UPSTREAM=http://127.0.0.1:1/")
	srv.Stderr = &stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	getURL := func(u string) (int, string) {
		for i := 0; i < 100; i++ {
			resp, err := http.Get("http://" + addr + u)
			if err != nil {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return resp.StatusCode, string(b)
		}
		t.Fatalf("envgap-task serve does not answer on %s: %s", addr, stderr.String())
		return 0, ""
	}
	if code, body := getURL("/c/2023-07-30/"); code != http.StatusOK {
		t.Errorf("the task's cut-off: %d %s", code, body)
	}
	for _, u := range []string{"/c/2030-01-01/pypi/simple/tabulate/", "/c/2023-07-31/npm/left-pad", "/s/x/c/2023-07-30/npm/left-pad"} {
		if code, body := getURL(u); code != http.StatusForbidden || !strings.Contains(body, "the task's cut-off 2023-07-30T23:59:59.999999999Z only") || !strings.Contains(body, "cut-off is fixed") {
			t.Errorf("%s: %d %s", u, code, body)
		}
	}
	srv.Process.Signal(os.Interrupt)
	srv.Wait()
	if n := strings.Count(stderr.String(), "registry request refused"); n != 3 {
		t.Errorf("the registry's log records %d refusals, want 3:\n%s", n, stderr.String())
	}
}

// TestEnvironmentProjectHistory checks the project in a task's environment: a git
// repository at base_commit holding that commit alone, clean for git itself.
func TestEnvironmentProjectHistory(t *testing.T) {
	a, _ := buildTest(t)
	p := filepath.Join(t.TempDir(), "tasks.parquet")
	os.WriteFile(p, a[ParquetPath], 0o644)
	tasks, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	var proj []File
	for _, f := range tasks[0].Files {
		if rest, ok := strings.CutPrefix(f.Path, ProjectDir+"/"); ok {
			f.Path = rest
			proj = append(proj, f)
		}
	}
	dir := t.TempDir()
	if err := WriteDir(context.Background(), dir, proj); err != nil {
		t.Fatal(err)
	}
	all, _ := testTasks(t)
	if err := agent.CheckHistory(dir, all[0].BaseCommit); err != nil {
		t.Fatal(err)
	}
	gitTool := testenv.Tool(t, "git")
	for _, args := range [][]string{{"status", "--porcelain"}, {"rev-list", "--all"}, {"fsck", "--strict"}} {
		cmd := exec.Command(gitTool, append([]string{"-c", "safe.directory=*"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		switch args[0] {
		case "status":
			if len(bytes.TrimSpace(out)) != 0 {
				t.Errorf("git status is not clean:\n%s", out)
			}
		case "rev-list":
			if strings.TrimSpace(string(out)) != all[0].BaseCommit {
				t.Errorf("git rev-list --all: %q, want base_commit alone", out)
			}
		}
	}
}

// TestScriptsParse checks test.sh and solve.sh with bash -n, and that solve.sh writes the
// gold files byte for byte.
func TestScriptsParse(t *testing.T) {
	bash := testenv.Tool(t, "bash")
	tasks, _ := testTasks(t)
	tk := tasks[0]
	weird := "line 1\n'quoted' $HOME `x`\nENVGAP_EOF\n"
	tk.GoldFiles = append(tk.GoldFiles, schemas.File{Path: "sub dir/it's.txt", Content: &weird}, schemas.File{Path: "README.md"})
	solve, err := solveScript(&tk)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, b := range map[string][]byte{"test.sh": testScript(&tk), "solve.sh": solve} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o755)
		if out, err := exec.Command(bash, "-n", p).CombinedOutput(); err != nil {
			t.Fatalf("bash -n %s: %v\n%s", name, err, out)
		}
	}
	work := t.TempDir()
	os.WriteFile(filepath.Join(work, "README.md"), []byte("x"), 0o644)
	script := strings.Replace(string(solve), "cd /work", "cd "+shell.Quote(work), 1)
	if out, err := exec.Command(bash, "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("solve.sh: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(filepath.Join(work, "sub dir", "it's.txt")); err != nil || string(b) != weird {
		t.Errorf("solve.sh wrote %q (%v), want %q", b, err, weird)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "requirements.txt")); string(b) != fixed {
		t.Errorf("requirements.txt = %q", b)
	}
	if _, err := os.Stat(filepath.Join(work, "README.md")); err == nil {
		t.Error("solve.sh did not delete README.md")
	}
}
