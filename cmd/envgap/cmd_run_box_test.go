package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/core/registry"
	"github.com/envgap/envgap/schemas"
)

// buildAgentImage builds an image FROM a card image with a marker file and the given
// files in /opt/test-agent/ (what a user does to put an agent CLI in the box) and returns
// its reference; it is removed after the test.
func buildAgentImage(t testing.TB, card string, files map[string][]byte, lines ...string) string {
	t.Helper()
	dir := t.TempDir()
	ref := fmt.Sprintf("localhost/envgap-test-agent:%d", time.Now().UnixNano())
	df := "FROM " + schemas.ImageRef(card) + "\nCOPY files/ /opt/test-agent/\n" + strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(df), 0o644); err != nil {
		t.Fatal(err)
	}
	if files == nil {
		files = map[string][]byte{}
	}
	files["marker"] = []byte("the agent image\n")
	if err := os.MkdirAll(filepath.Join(dir, "files"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, "files", name), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("docker", "build", "-q", "-t", ref, dir)
	cmd.Env = append(os.Environ(), "DOCKER_BUILDKIT=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("docker build: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("docker", "rmi", "-f", ref).Run() })
	return ref
}

// TestRunAgentInBox: an agent command with --agent-image runs in a box from the agent
// image on the workspace: the protocol's files and $ENVGAP_REPRO work there, the door lets
// through an --allow-host host and refuses GitHub (counted in the result and the
// trajectory), the feedback reaches attempt 2, and no box is left. An image not built on
// the task's evaluation image, or --allow-host alone, is refused before any container.
func TestRunAgentInBox(t *testing.T) {
	requireEngine(t, "envgap-python-eval", "envgap-javascript-eval")
	w := newEvalWorld(t)
	store := filepath.Join(t.TempDir(), "store")
	res := t.TempDir()
	work := t.TempDir()
	img := buildAgentImage(t, "envgap-python-eval", nil)
	npmURL, err := registry.NPMConfigRegistry(context.Background())
	if err != nil {
		t.Fatalf("the npm client's registry (the host the box is allowed to reach): %v", err)
	}
	u, err := url.Parse(npmURL)
	if err != nil || u.Scheme != "https" {
		t.Fatalf("npm registry %q: want an https URL", npmURL)
	}
	allowed := "https://" + u.Host + "/"

	agentCmd := `set -e
test -f /opt/test-agent/marker
test "$(pwd)" = "$ENVGAP_WORKSPACE"
if [ "$ENVGAP_ATTEMPT" = 1 ]; then
  grep -q '"repro_command"' "$ENVGAP_TASK_FILE"
  "$ENVGAP_REPRO" > "$HOME/repro.txt"
  grep -q '=== repro exited 0' "$HOME/repro.txt"
  python3 - <<'PY'
import urllib.request
for url in ["` + allowed + `", "https://github.com/envgap/envgap"]:
    try:
        urllib.request.urlopen(url, timeout=30)
        print("reached", url)
    except Exception as e:
        print("refused", url, type(e).__name__)
PY
  echo 'tabulate==0.9.2' > requirements.txt
else
  grep -q 'No matching distribution found for tabulate==0.9.2' "$ENVGAP_FEEDBACK_FILE"
  echo 'tabulate==0.9.0' > requirements.txt
fi
echo '[{"action": "edit requirements.txt"}]' > "$ENVGAP_TRAJECTORY_FILE"`
	out, err := w.runAgent(t, store, agentCmd, filepath.Join(res, "box"), "--max-attempts", "3", "--work-dir", work,
		"--agent-image", img, "--allow-host", u.Host)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	rf, err := readFolder(t, filepath.Join(res, "box"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rf) != 2 || rf[0].Resolved || rf[0].Status != schemas.EvalUnresolved || !rf[1].Resolved || rf[1].Attempt != 2 {
		t.Fatalf("box: %+v", rf)
	}
	if a := rf[0].Agent; a == nil || a.AgentImage != img || a.ExitCode != 0 || a.RefusedConnections < 1 {
		t.Fatalf("attempt 1 agent: %+v", a)
	}
	stdout, err := os.ReadFile(filepath.Join(res, "box", "agent", evalControl, "run-1", "attempt-1.stdout"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(stdout), "reached "+allowed) || !strings.Contains(string(stdout), "refused https://github.com/envgap/envgap") {
		t.Errorf("the box's network, as the agent saw it:\n%s", stdout)
	}
	if rf[0].Trajectory != "inspected (steps)" {
		t.Errorf("trajectory: %q", rf[0].Trajectory)
	}
	logs, _ := os.ReadFile(filepath.Join(res, "box", schemas.EvalLogsDir, evalControl+".log"))
	if !bytes.Contains(logs, []byte("in a box from "+img)) {
		t.Errorf("the log does not say the agent ran in a box:\n%s", logs)
	}
	if boxes := agentBoxesUnder(t, work); len(boxes) != 0 {
		t.Errorf("boxes left behind: %v", boxes)
	}

	// An agent image that runs as an unprivileged user (USER 1000): the run directory is
	// given to it, so it writes its workspace and HOME.
	unpriv := buildAgentImage(t, "envgap-python-eval", nil, "USER 1000:1000")
	out, err = w.runAgent(t, store, `set -e; id -u; echo x > "$HOME/note"; echo 'tabulate==0.9.0' > requirements.txt`, filepath.Join(res, "user"), "--max-attempts", "1", "--agent-image", unpriv)
	if err != nil {
		t.Fatalf("run as user 1000: %v\n%s", err, out)
	}
	if rf, err := readFolder(t, filepath.Join(res, "user")); err != nil || len(rf) != 1 || !rf[0].Resolved || rf[0].Agent.ExitCode != 0 {
		t.Errorf("run as user 1000: %+v %v", rf, err)
	}
	if b, _ := os.ReadFile(filepath.Join(res, "user", "agent", evalControl, "run-1", "attempt-1.stdout")); string(b) != "1000\n" {
		t.Errorf("the agent ran as %q, want uid 1000", b)
	}

	// Refused before any container: an image not built on the task's evaluation image,
	// --allow-host without --agent-image, --agent-image with a model agent.
	runs := countRuns(t, store)
	for _, extra := range [][]string{
		{"--agent-image", schemas.ImageRef("envgap-javascript-eval")},
		{"--allow-host", u.Host},
		{"--agent-image", "envgap-python-eval=localhost/envgap-no-such-image:latest"},
	} {
		out, err := w.runAgent(t, store, "true", filepath.Join(res, "refused"), append([]string{"--max-attempts", "1"}, extra...)...)
		if exitCode(err) != 2 {
			t.Errorf("%v: exit %d (%v), want 2\n%s", extra, exitCode(err), err, out)
		}
	}
	if n := countRuns(t, store); n != runs {
		t.Errorf("refused runs ran %d containers", n-runs)
	}
	if _, err := os.Stat(filepath.Join(res, "refused", schemas.EvalSummaryFile)); err == nil {
		t.Error("a refused run wrote a result folder")
	}
}

// TestStudyRunInBox: study run's command agent with --agent-image runs each turn in a box
// from the agent image (the demo's scripted study agent is only in the image): the Python
// Merkle project fails at Gen, the error goes back, and the repair in the box makes it run.
func TestStudyRunInBox(t *testing.T) {
	requireEngine(t, "envgap-python-eval")
	script, err := os.ReadFile("../../data/demo/agents/study-agent.sh")
	if err != nil {
		t.Fatal(err)
	}
	img := buildAgentImage(t, "envgap-python-eval", map[string][]byte{"study-agent.sh": script})
	w := newEvalWorld(t) // its PyPI serves the tabulate the repair adds
	out := filepath.Join(t.TempDir(), "study")
	got, err := runCLI(t, "--store", filepath.Join(t.TempDir(), "store"), "study", "run", "--agent", "test -f /opt/test-agent/marker && bash /opt/test-agent/study-agent.sh",
		"--agent-name", "boxed", "--languages", "python", "--only", "48", "--max-repairs", "2", "--out", out, "--problems", "../../data/problems.json",
		"--agent-image", "envgap-python-eval="+img, "--pypi-upstream", w.pypi+"/simple/")
	if err != nil {
		t.Fatalf("study run: %v\n%s", err, got)
	}
	b, err := os.ReadFile(filepath.Join(out, "boxed/python-t1/p48/meta.json"))
	if err != nil {
		t.Fatalf("%v\n%s", err, got)
	}
	var meta struct {
		Worked bool `json:"worked_first_time"`
		Made   bool `json:"made_to_work"`
		Rounds int  `json:"repair_rounds"`
	}
	if err := json.Unmarshal(b, &meta); err != nil || meta.Worked || !meta.Made || meta.Rounds != 1 {
		t.Errorf("meta %s: %v", b, err)
	}
	rounds, _ := os.ReadFile(filepath.Join(out, "boxed/python-t1/p48/rounds.json"))
	if !strings.Contains(string(rounds), "agent exited 0") {
		t.Errorf("rounds.json:\n%s", rounds)
	}
	// The same with the image for another language only: refused before anything runs.
	got, err = runCLI(t, "--store", filepath.Join(t.TempDir(), "store"), "study", "run", "--agent", "true", "--agent-name", "x",
		"--languages", "python", "--only", "48", "--out", filepath.Join(t.TempDir(), "s2"), "--problems", "../../data/problems.json",
		"--agent-image", "envgap-javascript-eval="+img)
	if exitCode(err) != 2 {
		t.Errorf("an image for another language: exit %d (%v)\n%s", exitCode(err), err, got)
	}
}

// BenchmarkRunAgentBoxOverhead: what the box costs an agent command (`true`, on the
// reported control, scoring memoised after the first run): the wall time of a one-attempt
// envgap run on the host and with --agent-image, and the command's own time in each.
func BenchmarkRunAgentBoxOverhead(b *testing.B) {
	requireEngine(b, "envgap-python-eval")
	w := newEvalWorld(b)
	store := filepath.Join(b.TempDir(), "store")
	img := buildAgentImage(b, "envgap-python-eval", nil)
	once := func(extra ...string) (time.Duration, int64) {
		out := filepath.Join(b.TempDir(), "r")
		args := []string{"--store", store, "run", "--agent", "true", "--name", "bench", "--split", "reported", "--tasks", w.hub, "--out", out,
			"--git-url-template", w.gitTemplate, "--pypi-upstream", w.pypi + "/simple/", "--pypi", w.pypi,
			"--npm-registry", "http://127.0.0.1:9/", "--osv", w.osv, "--max-attempts", "1"}
		start := time.Now()
		if o, err := runCLI(b, append(args, extra...)...); err != nil {
			b.Fatalf("run: %v\n%s", err, o)
		}
		d := time.Since(start)
		_, rs, err := schemas.ReadEvalFolder[schemas.EvalResult](out)
		if err != nil || len(rs) != 1 || rs[0].Agent == nil {
			b.Fatalf("%v %+v", err, rs)
		}
		return d, rs[0].Agent.DurationMS
	}
	once() // the scoring run, memoised for both
	var host, box time.Duration
	var hostCmd, boxCmd int64
	n := 0
	for b.Loop() {
		n++
		d, c := once()
		host, hostCmd = host+d, hostCmd+c
		d, c = once("--agent-image", img)
		box, boxCmd = box+d, boxCmd+c
	}
	b.ReportMetric(float64(host.Milliseconds())/float64(n), "host-run-ms")
	b.ReportMetric(float64(box.Milliseconds())/float64(n), "box-run-ms")
	b.ReportMetric(float64(hostCmd)/float64(n), "host-cmd-ms")
	b.ReportMetric(float64(boxCmd)/float64(n), "box-cmd-ms")
	b.ReportMetric(float64(box)/float64(host), "box/host")
}
