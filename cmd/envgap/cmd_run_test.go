package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/envgap/envgap/data/demo"
	"github.com/envgap/envgap/lib/agent/model/scripted"
	"github.com/envgap/envgap/lib/atif"
	"github.com/envgap/envgap/schemas"
)

// runAgentCLI runs envgap run on the scenario's reported split (the control) with a fresh
// store per test and the given agent.
func (w *evalWorld) runAgent(t *testing.T, store, agentCmd, out string, extra ...string) (string, error) {
	t.Helper()
	args := []string{"--store", store, "run", "--agent", agentCmd, "--name", "scripted", "--split", "reported", "--tasks", w.hub, "--out", out,
		"--git-url-template", w.gitTemplate, "--pypi-upstream", w.pypi + "/simple/", "--pypi", w.pypi,
		"--npm-registry", "http://127.0.0.1:9/", "--osv", w.osv, "--step-timeout", "3m"}
	return runCLI(t, append(args, extra...)...)
}

func TestRunAgentScripted(t *testing.T) {
	requireEngine(t, "envgap-python-eval")
	w := newEvalWorld(t)
	store := filepath.Join(t.TempDir(), "store")
	res := t.TempDir()

	// Runs repro on the project as it is (it works: a control), breaks it on attempt 1,
	// reads the feedback, and puts it right on attempt 2.
	fixer := `set -e
if [ "$ENVGAP_ATTEMPT" = 1 ]; then
  test -z "$ENVGAP_FEEDBACK_FILE"
  grep -q '"repro_command"' "$ENVGAP_TASK_FILE"
  "$ENVGAP_REPRO" > "$HOME/repro.txt"
  grep -q '=== repro exited 0' "$HOME/repro.txt"
  echo 'tabulate==0.9.2' > requirements.txt
else
  grep -q 'No matching distribution found for tabulate==0.9.2' "$ENVGAP_FEEDBACK_FILE"
  echo 'tabulate==0.9.0' > requirements.txt
fi
echo '[{"action": "edit requirements.txt", "output": "ok"}]' > "$ENVGAP_TRAJECTORY_FILE"
echo 0.01 > "$ENVGAP_COST_FILE"`
	out, err := w.runAgent(t, store, fixer, filepath.Join(res, "fixer"), "--max-attempts", "3")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	rf, err := readFolder(t, filepath.Join(res, "fixer"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rf) != 2 || rf[0].Resolved || rf[0].Status != schemas.EvalUnresolved || rf[0].Agent.ExitCode != 0 || !rf[1].Resolved || rf[1].Attempt != 2 ||
		rf[1].Agent == nil || *rf[1].CostUSD != 0.01 || rf[1].Trajectory != "inspected (steps)" {
		t.Fatalf("fixer: %+v", rf)
	}
	if b, err := os.ReadFile(filepath.Join(res, "fixer", "agent", evalControl, "run-1", "attempt-1.stdout")); err != nil {
		t.Errorf("agent output not kept: %v", err)
	} else if len(b) != 0 {
		t.Errorf("stdout %q", b)
	}
	md, err := runCLI(t, "report", filepath.Join(res, "fixer"))
	if err != nil || !strings.Contains(md, "| scripted | reported | run, k=1, up to 3 attempts | 1 of 1 | 0.0% (0/1) | 100.0% (1/1) |") {
		t.Errorf("report: %v\n%s", err, md)
	}
	runs := countRuns(t, store)
	if runs != 3 {
		t.Errorf("%d container runs for a repro and two attempts, want 3", runs)
	}

	// Hangs: stopped at the attempt timeout, not evaluated, no container.
	out, err = w.runAgent(t, store, "sleep 600", filepath.Join(res, "hang"), "--max-attempts", "2", "--attempt-timeout", "2s")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	rf, _ = readFolder(t, filepath.Join(res, "hang"))
	if len(rf) != 2 || rf[0].Status != schemas.EvalUnresolved || !strings.Contains(rf[0].Reason, "did not finish within 2s") || !rf[0].Agent.TimedOut {
		t.Fatalf("hang: %+v", rf)
	}

	// Edits source: rejected, no container.
	out, err = w.runAgent(t, store, `echo "print('x')" >> stats.py`, filepath.Join(res, "source"), "--max-attempts", "1")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	rf, _ = readFolder(t, filepath.Join(res, "source"))
	if len(rf) != 1 || rf[0].Status != schemas.EvalRejected || rf[0].Reason != "changes source file stats.py" {
		t.Fatalf("source edit: %+v", rf)
	}
	if n := countRuns(t, store); n != runs {
		t.Errorf("a hanging and a source-editing agent ran %d containers", n-runs)
	}

	// The same run again: the complete run is kept, nothing runs.
	out, err = w.runAgent(t, store, fixer, filepath.Join(res, "fixer"), "--max-attempts", "3")
	if err != nil || !strings.Contains(out, "1 reused") {
		t.Errorf("run again: %v\n%s", err, out)
	}
	if n := countRuns(t, store); n != runs {
		t.Errorf("running a complete folder again ran %d containers", n-runs)
	}
}

func readFolder(t *testing.T, dir string) ([]schemas.EvalResult, error) {
	t.Helper()
	_, rs, err := schemas.ReadEvalFolder[schemas.EvalResult](dir)
	return rs, err
}

// serveScript serves a scripted model over the OpenAI wire format and returns its base URL.
func serveScript(t *testing.T, script string) string {
	t.Helper()
	s, err := scripted.Parse([]byte(script), "test")
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(scripted.NewServer(s))
	t.Cleanup(ts.Close)
	return ts.URL + "/v1"
}

// The model agent: the real loop, the openai provider on a scripted server, every
// action in a box from the task's evaluation image.
func TestRunModelAgent(t *testing.T) {
	requireEngine(t, "envgap-python-eval")
	w := newEvalWorld(t)
	store := filepath.Join(t.TempDir(), "store")
	res := t.TempDir()
	// Attempt 1 reads, runs the reproduction, breaks the pin (never released) and stops;
	// attempt 2 reads the evaluation's output in its task and puts it right.
	base := serveScript(t, `{"model":"scripted-test","conversations":[
	 {"match":"Your previous attempt was scored","turns":[
	  {"tool_calls":[{"name":"write_file","input":{"path":"requirements.txt","content":"tabulate==0.9.0\n"}}],"usage":{"input_tokens":500,"output_tokens":20}},
	  {"tool_calls":[{"name":"bash","input":{"command":"printf '' >> requirements.txt && echo still-writable"}}],"usage":{"input_tokens":0,"output_tokens":0}},
	  {"tool_calls":[{"name":"finish","input":{}}],"usage":{"input_tokens":600,"output_tokens":5}}]},
	 {"match":"","turns":[
	  {"tool_calls":[{"name":"bash","input":{"command":"pwd; cat requirements.txt; echo $PIP_INDEX_URL | grep -c ."}}],"usage":{"input_tokens":400,"output_tokens":10}},
	  {"tool_calls":[{"name":"run_repro","input":{}}],"usage":{"input_tokens":450,"output_tokens":10}},
	  {"tool_calls":[{"name":"bash","input":{"command":"echo tabulate==0.9.2 > requirements.txt"}}],"usage":{"input_tokens":480,"output_tokens":10}},
	  {"text":"done","usage":{"input_tokens":490,"output_tokens":3}}]}]}`)
	out, err := w.runAgent(t, store, "openai", filepath.Join(res, "model"), "--model", "scripted-test", "--base-url", base,
		"--max-attempts", "3", "--price-in", "2", "--price-out", "10")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	rf, err := readFolder(t, filepath.Join(res, "model"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rf) != 2 || rf[0].Resolved || !rf[1].Resolved || rf[0].Agent == nil || rf[1].Agent == nil {
		t.Fatalf("results: %+v", rf)
	}
	a1, a2 := rf[0].Agent, rf[1].Agent
	if a1.Model != "scripted-test" || a1.Turns != 4 || a1.InputTokens != 1820 || a1.OutputTokens != 33 || a1.Stop != "no_tools" ||
		a2.Turns != 3 || a2.Stop != "finished" || a2.InputTokens != 1100 {
		t.Fatalf("agent records: %+v %+v", a1, a2)
	}
	if want := (1820*2.0 + 33*10.0) / 1e6; rf[0].CostUSD == nil || *rf[0].CostUSD != want {
		t.Fatalf("cost %v, want %v", rf[0].CostUSD, want)
	}
	if md, err := runCLI(t, "report", filepath.Join(res, "model")); err != nil || !strings.Contains(md, "model scripted-test, 2920 input and 58 output tokens over every attempt") ||
		!strings.Contains(md, "| $0.01 |") {
		t.Errorf("report: %v\n%s", err, md)
	}
	if rf[0].Trajectory != "inspected (steps)" {
		t.Fatalf("trajectory %q", rf[0].Trajectory)
	}
	traj, err := os.ReadFile(filepath.Join(res, "model", "agent", evalControl, "run-1", "attempt-1.trajectory"))
	if err != nil {
		t.Fatal(err)
	}
	// The box: the workspace is the working directory, the registry proxy is configured,
	// and the reproduction ran through the core.
	for _, want := range []string{`exit code 0\n/work\n`, `tabulate==0.9.1`, `repro exit code 0`} {
		if !strings.Contains(string(traj), want) {
			t.Errorf("the trajectory lacks %q:\n%s", want, traj)
		}
	}

	// What write_file wrote (the harness, as the host's root) the box's commands can still
	// change (in a user namespace it was given to the box's root).
	if traj2, err := os.ReadFile(filepath.Join(res, "model", "agent", evalControl, "run-1", "attempt-2.trajectory")); err != nil || !strings.Contains(string(traj2), `exit code 0\nstill-writable`) {
		t.Errorf("attempt 2's box could not change what write_file wrote: %v\n%s", err, traj2)
	}

	// The same attempt in ATIF beside it: valid, its tool calls and outputs as steps, the
	// tokens and cost the results hold, envgap's verdict in its extra.
	checkBuiltinATIF(t, filepath.Join(res, "model"), evalControl, rf[0])

	// A model that never stops is ended by --max-turns, and the workspace is scored. It
	// tries to reach GitHub from the box: the egress door refuses, and the refusal is in
	// the trajectory.
	base = serveScript(t, `{"model":"loops","conversations":[{"turns":[{"tool_calls":[{"name":"bash","input":{"command":"python3 -c \"import urllib.request as u; u.urlopen('https://github.com/', timeout=20)\"; echo rc=$?"}}]}]}]}`)
	out, err = w.runAgent(t, store, "openai", filepath.Join(res, "loops"), "--model", "loops", "--base-url", base, "--max-attempts", "1", "--max-turns", "3")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	rf, _ = readFolder(t, filepath.Join(res, "loops"))
	if len(rf) != 1 || rf[0].Agent.Stop != "max_turns" || rf[0].Agent.Turns != 3 || !rf[0].Resolved || rf[0].Agent.RefusedConnections < 1 {
		t.Fatalf("never stops: %+v %+v", rf, rf[0].Agent)
	}
	traj, _ = os.ReadFile(filepath.Join(res, "loops", "agent", evalControl, "run-1", "attempt-1.trajectory"))
	if !strings.Contains(string(traj), `"type":"refused_connection","host":"github.com"`) && !strings.Contains(string(traj), `"host":"github.com"`) {
		t.Errorf("the refusal is not in the trajectory:\n%s", traj)
	}
	if doc := checkBuiltinATIF(t, filepath.Join(res, "loops"), evalControl, rf[0]); doc != nil {
		if v := atif.VerdictOf(doc); v == nil || len(v.Refused) == 0 || v.Refused[0].Host != "github.com" {
			t.Errorf("the refusal is not in the ATIF verdict: %+v", v)
		}
	}

	// An expired key is an infrastructure fault: exit 4, no result, a message saying
	// what to do, and never the key.
	base = serveScript(t, `{"model":"m","conversations":[{"turns":[{"errors":[{"status":401,"message":"Incorrect API key provided"}],"always":true}]}]}`)
	out, err = w.runAgent(t, store, "openai", filepath.Join(res, "auth"), "--model", "m", "--base-url", base, "--max-attempts", "1")
	if exitCode(err) != exitPartial || !strings.Contains(out+err.Error(), "renew or set them") || strings.Contains(out+err.Error(), "SECRET") {
		t.Fatalf("auth fault: %v\n%s", err, out)
	}
	if rf, _ := readFolder(t, filepath.Join(res, "auth")); len(rf) != 0 {
		t.Fatalf("a provider fault recorded results: %+v", rf)
	}
}

// BenchmarkRunModelAgentFirstRequest measures the time from a model agent's attempt
// start (the box opening) to the model's first request, on the scenario's control task.
func BenchmarkRunModelAgentFirstRequest(b *testing.B) {
	requireEngine(b, "envgap-python-eval")
	w := newEvalWorld(b)
	store := filepath.Join(b.TempDir(), "store")
	s, err := scripted.Parse([]byte(`{"model":"m","conversations":[{"turns":[{"tool_calls":[{"name":"finish","input":{}}]}]}]}`), "bench")
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(scripted.NewServer(s))
	defer ts.Close()
	var total int64
	i := 0
	for b.Loop() {
		i++
		out := filepath.Join(b.TempDir(), "r")
		args := []string{"--store", store, "run", "--agent", "openai", "--model", "m", "--base-url", ts.URL + "/v1", "--split", "reported",
			"--tasks", w.hub, "--out", out, "--git-url-template", w.gitTemplate, "--pypi-upstream", w.pypi + "/simple/", "--pypi", w.pypi,
			"--npm-registry", "http://127.0.0.1:9/", "--osv", w.osv, "--max-attempts", "1"}
		if o, err := runCLI(b, args...); err != nil {
			b.Fatalf("run: %v\n%s", err, o)
		}
		_, rs, err := schemas.ReadEvalFolder[schemas.EvalResult](out)
		if err != nil || len(rs) != 1 || rs[0].Agent == nil {
			b.Fatalf("%v %+v", err, rs)
		}
		total += rs[0].Agent.FirstRequestMS
	}
	b.ReportMetric(float64(total)/float64(i), "first-request-ms")
}

// run --slurm takes the model agents with run's flags: the workers (this binary, on
// the cluster's node) run the same loop against the same scripted server, each action in
// a box, and the submitter writes the same result folder.
func TestRunModelAgentSlurm(t *testing.T) {
	needSlurmAndEngine(t)
	t.Setenv("ENVGAP_TEST_AS_ENVGAP", "1") // the workers are this binary, acting as envgap
	w := newEvalWorld(t)
	store := filepath.Join(t.TempDir(), "store")
	res := filepath.Join(t.TempDir(), "slurm")
	base := serveScript(t, `{"model":"scripted-slurm","conversations":[{"turns":[
	 {"tool_calls":[{"name":"bash","input":{"command":"pwd; cat requirements.txt"}}],"usage":{"input_tokens":100,"output_tokens":10}},
	 {"tool_calls":[{"name":"finish","input":{}}],"usage":{"input_tokens":200,"output_tokens":5}}]}]}`)
	out, err := w.runAgent(t, store, "openai", res, "--model", "scripted-slurm", "--base-url", base, "--max-attempts", "1",
		"--price-in", "1", "--price-out", "1", "--slurm", "--workers", "1")
	if err != nil {
		t.Fatalf("run --slurm: %v\n%s", err, out)
	}
	rf, err := readFolder(t, res)
	if err != nil {
		t.Fatal(err)
	}
	if len(rf) != 1 || !rf[0].Resolved || rf[0].Agent == nil || rf[0].Agent.Command != "openai:scripted-slurm" || rf[0].Agent.Turns != 2 ||
		rf[0].Agent.InputTokens != 300 || rf[0].CostUSD == nil || rf[0].Trajectory != "inspected (steps)" {
		t.Fatalf("results: %+v (agent %+v)", rf, rf[0].Agent)
	}
	traj, err := os.ReadFile(filepath.Join(res, "agent", rf[0].InstanceID, "run-1", "attempt-1.trajectory"))
	if err != nil || !strings.Contains(string(traj), `exit code 0\n/work\ntabulate==`) {
		t.Fatalf("the worker's trajectory (%v):\n%s", err, traj)
	}
	// Bad input is refused before anything is submitted.
	if _, err := w.runAgent(t, store, "openai", filepath.Join(t.TempDir(), "x"), "--slurm"); exitCode(err) != exitUsage {
		t.Errorf("run --slurm --agent openai without --model: %v", err)
	}
}

// agentBoxesUnder lists the agent boxes (running or not) whose workspace is under dir.
func agentBoxesUnder(t *testing.T, dir string) []string {
	t.Helper()
	ids, err := exec.Command("docker", "ps", "-aq", "--filter", "label=org.envgap.side=agent").Output()
	if err != nil {
		t.Fatalf("docker ps: %v", err)
	}
	var found []string
	for _, id := range strings.Fields(string(ids)) {
		m, err := exec.Command("docker", "inspect", "--format", "{{range .Mounts}}{{.Source}} {{end}}", id).Output()
		if err == nil && strings.Contains(string(m), dir) {
			found = append(found, id)
		}
	}
	return found
}

// A run killed while its agent acts (SIGTERM, as Slurm and a terminal's Ctrl-C stop it)
// leaves no container behind: the box is removed on the way out.
func TestRunKilledLeavesNoBox(t *testing.T) {
	requireEngine(t, "envgap-python-eval")
	w := newEvalWorld(t)
	store := filepath.Join(t.TempDir(), "store")
	work := t.TempDir()
	base := serveScript(t, `{"model":"sleeper","conversations":[{"turns":[{"tool_calls":[{"name":"bash","input":{"command":"sleep 600"}}]}]}]}`)
	args := []string{"--store", store, "run", "--agent", "openai", "--model", "sleeper", "--base-url", base, "--split", "reported", "--tasks", w.hub,
		"--out", filepath.Join(t.TempDir(), "out"), "--work-dir", work, "--git-url-template", w.gitTemplate, "--pypi-upstream", w.pypi + "/simple/",
		"--pypi", w.pypi, "--npm-registry", "http://127.0.0.1:9/", "--osv", w.osv, "--max-attempts", "1"}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "ENVGAP_TEST_AS_ENVGAP=1")
	var outBuf strings.Builder
	cmd.Stdout, cmd.Stderr = &outBuf, &outBuf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Wait for the box to be open (the model's first call is a 600 s sleep in it).
	for len(agentBoxesUnder(t, work)) == 0 {
		select {
		case err := <-exited:
			t.Fatalf("the run ended before its box opened: %v\n%s", err, outBuf.String())
		case <-time.After(time.Second):
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err == nil {
		t.Errorf("the killed run exited 0\n%s", outBuf.String())
	}
	if left := agentBoxesUnder(t, work); len(left) != 0 {
		exec.Command("docker", append([]string{"rm", "-f"}, left...)...).Run()
		t.Fatalf("a killed run left its box behind: %v\n%s", left, outBuf.String())
	}
}

// laterPyPI is the demo index plus tabulate 0.9.3, uploaded after every task's cut-off.
func laterPyPI(t *testing.T) string {
	t.Helper()
	inner := demo.PyPIHandler(demo.PyPIFS())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		inner.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if strings.Contains(r.URL.Path, "/simple/tabulate") && strings.Contains(rec.Header().Get("Content-Type"), "json") {
			var idx map[string]any
			if err := json.Unmarshal(body, &idx); err == nil {
				idx["versions"] = append(idx["versions"].([]any), "0.9.3")
				idx["files"] = append(idx["files"].([]any), map[string]any{"filename": "tabulate-0.9.3-py3-none-any.whl",
					"url": "tabulate-0.9.3-py3-none-any.whl", "hashes": map[string]any{"sha256": strings.Repeat("ab", 32)},
					"requires-python": ">=3.7", "size": 1936, "upload-time": "2023-06-01T00:00:00.000000Z", "yanked": false})
				body, _ = json.Marshal(idx)
			}
		}
		for k, v := range rec.Header() {
			if k != "Content-Length" {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(rec.Code)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Inside the box the cut-off holds: pip finds no version uploaded after it (the index
// upstream has one), and the workspace has no later history to read or fetch.
func TestRunModelAgentBoxHidesTheFuture(t *testing.T) {
	requireEngine(t, "envgap-python-eval")
	w := newEvalWorld(t)
	w.pypi = laterPyPI(t)
	store := filepath.Join(t.TempDir(), "store")
	out := filepath.Join(t.TempDir(), "out")
	script, _ := json.Marshal(map[string]any{"model": "future", "conversations": []any{map[string]any{"turns": []any{
		map[string]any{"tool_calls": []any{map[string]any{"name": "bash", "input": map[string]any{"command": "if command -v git >/dev/null; then echo commits=$(git log --all --oneline | wc -l); else echo commits=nogit; fi; " +
			"git fetch origin >/dev/null 2>&1; echo fetch=$?; git fetch --unshallow >/dev/null 2>&1; echo unshallow=$?; " +
			"echo mentions=$(grep -rl " + w.h2 + " .git | wc -l); echo gitdir=$(test -d .git && echo yes)"}}}},
		map[string]any{"tool_calls": []any{map[string]any{"name": "bash", "input": map[string]any{"command": "pip install --no-deps tabulate==0.9.3 2>&1 | grep -o 'from versions: [0-9., ]*'; echo pip=${PIPESTATUS[0]}"}}}},
		map[string]any{"tool_calls": []any{map[string]any{"name": "finish", "input": map[string]any{}}}},
	}}}})
	base := serveScript(t, string(script))
	args := []string{"--store", store, "run", "--agent", "openai", "--model", "future", "--base-url", base, "--split", "repaired", "--tasks", w.hub,
		"--out", out, "--git-url-template", w.gitTemplate, "--pypi-upstream", w.pypi + "/simple/", "--pypi", w.pypi,
		"--npm-registry", "http://127.0.0.1:9/", "--osv", w.osv, "--max-attempts", "1"}
	if o, err := runCLI(t, args...); err != nil {
		t.Fatalf("run: %v\n%s", err, o)
	}
	traj, err := os.ReadFile(filepath.Join(out, "agent", evalRepair, "run-1", "attempt-1.trajectory"))
	if err != nil {
		t.Fatal(err)
	}
	// The evaluation image may have no git: then git log and git fetch get nothing by
	// construction; with git, the history is base_commit alone. Either way the workspace's
	// repository (mounted in the box) names no later commit.
	if !strings.Contains(string(traj), `commits=1\n`) && !strings.Contains(string(traj), `commits=nogit\n`) {
		t.Errorf("git log --all in the box:\n%s", traj)
	}
	for _, want := range []string{`mentions=0\n`, `gitdir=yes`, `from versions: 0.8.10, 0.9.0`, `pip=1`} {
		if !strings.Contains(string(traj), want) {
			t.Errorf("the trajectory lacks %q:\n%s", want, traj)
		}
	}
	for _, never := range []string{`fetch=0`, `unshallow=0`, `0.9.3,`} {
		if strings.Contains(string(traj), never) {
			t.Errorf("the trajectory holds %q:\n%s", never, traj)
		}
	}
}
