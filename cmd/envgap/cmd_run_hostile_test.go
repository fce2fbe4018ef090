package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/envgap/envgap/lib/agent"
	"github.com/envgap/envgap/lib/agent/model/scripted"
	"github.com/envgap/envgap/schemas"
)

// boxPlant is what one attempt of a hostile agent in a box leaves, and the reason its
// attempt must be rejected with.
type boxPlant struct{ cmd, reason string }

// boxPlants are the link and file kinds an agent in a box can try in the trajectory
// (T), cost (C), feedback (F) and workspace paths. The trajectory and cost files are
// mounted files and the run directory is read-only, so the links and the FIFO of the
// first two attempts cannot be made (the agent prints what it could not do) and only the
// sparse and oversized files it can make there reject them; in the workspace, every kind
// can be made (a hard link only to a file of the workspace) and rejects.
var boxPlants = []boxPlant{
	{`rm -f "$T" 2>/dev/null || echo "could not remove T"
mkfifo "$(dirname "$ENVGAP_TASK_FILE")/fifo" 2>/dev/null || echo "could not make a FIFO"
truncate -s 1T "$T"`, "the trajectory file trajectory.json is a sparse file of 1099511627776 bytes"},
	{`for p in "$T" "$C" "$F"; do ln -sf "$SECRET" "$p" 2>/dev/null || echo "could not link $p"; done
head -c 5000 /dev/zero | tr '\0' 1 > "$C"`, "the cost file cost.json is 5000 bytes, over the bound of 4096 bytes"},
	{`ln -s "$SECRET" leak.txt`, "leak.txt is a symbolic link the agent made"},
	{`mkfifo pipe`, "pipe is a FIFO"},
	{`ln -s /dev/zero zero`, "zero is a symbolic link the agent made (to /dev/zero)"},
	{`truncate -s 1T requirements.txt`, "requirements.txt is a sparse file of 1099511627776 bytes"},
	{`head -c 3000000 /dev/zero | tr '\0' a > big.txt`, "big.txt is 3000000 bytes, over the bound of 2097152 bytes"},
	{`ln "$SECRET" hard.txt 2>/dev/null || echo "could not link the host file"; ln requirements.txt hard.txt`, "hard.txt has 2 hard links"},
}

// TestRunHostileAgentInBox: an agent command in a box (--agent-image) that tries each
// link and file kind in the trajectory, cost, feedback and workspace paths gets each
// attempt rejected with the reason naming the file and what it is; the host file is
// neither read into the results nor written, no attempt stalls, and the run puts the
// task right at the next attempt and goes on to the next task.
func TestRunHostileAgentInBox(t *testing.T) {
	requireEngine(t, "envgap-python-eval")
	w := newEvalWorld(t)
	const content = "host secret: never in a result\n"
	secret := filepath.Join(t.TempDir(), "host-secret")
	if err := os.WriteFile(secret, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	img := buildAgentImage(t, "envgap-python-eval", nil)
	var s strings.Builder
	fmt.Fprintf(&s, "SECRET=%q T=\"$ENVGAP_TRAJECTORY_FILE\" C=\"$ENVGAP_COST_FILE\" F=\"$ENVGAP_FEEDBACK_FILE\"\n", secret)
	s.WriteString("test -f \"$HOME/req\" || cp requirements.txt \"$HOME/req\"\nrm -f leak.txt pipe zero big.txt hard.txt; cp \"$HOME/req\" requirements.txt\n")
	fmt.Fprintf(&s, "grep -q '%q' \"$ENVGAP_TASK_FILE\" || { echo 'tabulate==0.9.0' > requirements.txt; exit 0; }\ncase $ENVGAP_ATTEMPT in\n", evalControl)
	for i, p := range boxPlants {
		fmt.Fprintf(&s, "%d) %s ;;\n", i+1, p.cmd)
	}
	s.WriteString("*) grep -q 'status: rejected' \"$F\" && echo 'tabulate==0.9.0' > requirements.txt ;;\nesac\n")

	out := filepath.Join(t.TempDir(), "hostile")
	work := t.TempDir()
	got, err := w.runAgent(t, filepath.Join(t.TempDir(), "store"), s.String(), out, "--split", "full", "--work-dir", work,
		"--max-attempts", fmt.Sprint(len(boxPlants)+1), "--agent-image", img, "--attempt-timeout", "5m")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, got)
	}
	rf, err := readFolder(t, out)
	if err != nil {
		t.Fatal(err)
	}
	byTask := map[string][]schemas.EvalResult{}
	for _, r := range rf {
		byTask[r.InstanceID] = append(byTask[r.InstanceID], r)
	}
	ctl := byTask[evalControl]
	if len(ctl) != len(boxPlants)+1 {
		t.Fatalf("%d attempts on %s, want %d: %+v", len(ctl), evalControl, len(boxPlants)+1, rf)
	}
	for i, p := range boxPlants {
		r := ctl[i]
		if r.Attempt != i+1 || r.Status != schemas.EvalRejected || !strings.Contains(r.Reason, p.reason) {
			t.Errorf("attempt %d (%s): %s %q, want rejected with %q", r.Attempt, p.cmd, r.Status, r.Reason, p.reason)
		}
	}
	if r := ctl[len(boxPlants)]; !r.Resolved {
		t.Errorf("the attempt after the plants: %s %q", r.Status, r.Reason)
	}
	if rs := byTask[evalRepair]; len(rs) != 1 || !rs[0].Resolved {
		t.Errorf("the next task: %+v", rs)
	}
	stdout, _ := os.ReadFile(filepath.Join(out, "agent", evalControl, "run-1", "attempt-1.stdout"))
	for _, want := range []string{"could not remove T", "could not make a FIFO"} {
		if !strings.Contains(string(stdout), want) {
			t.Errorf("the box let the agent do what %q says it could not:\n%s", want, stdout)
		}
	}
	stdout, _ = os.ReadFile(filepath.Join(out, "agent", evalControl, "run-1", "attempt-2.stdout"))
	for _, name := range []string{agent.TrajectoryFileName, agent.CostFileName, agent.FeedbackFileName} {
		if !regexp.MustCompile(`could not link /\S+/` + regexp.QuoteMeta(name) + "\n").Match(stdout) {
			t.Errorf("the agent in the box could make %s a link:\n%s", name, stdout)
		}
	}
	if b, err := os.ReadFile(secret); err != nil || string(b) != content {
		t.Errorf("the host file was written: %q %v", b, err)
	}
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), "host secret") {
				t.Errorf("the host file was copied into %s", p)
			}
		}
		return nil
	})
	if boxes := agentBoxesUnder(t, work); len(boxes) != 0 {
		t.Errorf("boxes left behind: %v", boxes)
	}
}

// TestRunHostileModelAgent: envgap's own model agent (the scripted model), whose box
// mounts the workspace alone, makes each link and file kind there with its bash tool and
// writes a file through a link to a host file with write_file: each attempt is rejected
// naming the file, the write replaced the link instead of writing the host file, the
// host file is not read into the results, and the run fixes the task and goes on to the
// next.
func TestRunHostileModelAgent(t *testing.T) {
	requireEngine(t, "envgap-python-eval")
	w := newEvalWorld(t)
	const content = "host secret: never in a result\n"
	secret := filepath.Join(t.TempDir(), "host-secret")
	if err := os.WriteFile(secret, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	call := func(name string, input map[string]string) scripted.Call {
		b, _ := json.Marshal(input)
		return scripted.Call{Name: name, Input: b}
	}
	const clean = "rm -f leak.txt pipe zero big.txt hard.txt notes.txt; printf 'tabulate==0.9.0\\n' > requirements.txt; "
	plants := []boxPlant{
		{`ln -s "` + secret + `" leak.txt`, "leak.txt is a symbolic link the agent made (to " + secret + ")"},
		{"mkfifo pipe", "pipe is a FIFO"},
		{"ln -s /dev/zero zero", "zero is a symbolic link the agent made (to /dev/zero)"},
		{"truncate -s 1T requirements.txt", "requirements.txt is a sparse file of 1099511627776 bytes"},
		{"head -c 3000000 /dev/zero | tr '\\0' a > big.txt", "big.txt is 3000000 bytes, over the bound of 2097152 bytes"},
		{"ln requirements.txt hard.txt", "hard.txt has 2 hard links"},
	}
	script := scripted.Script{Model: "hostile"}
	for i, p := range plants {
		turns := []scripted.Turn{{ToolCalls: []scripted.Call{call("bash", map[string]string{"command": clean + p.cmd})}}}
		if i == 0 {
			turns = append([]scripted.Turn{
				{ToolCalls: []scripted.Call{call("bash", map[string]string{"command": clean + `ln -s "` + secret + `" notes.txt`})}},
				{ToolCalls: []scripted.Call{call("write_file", map[string]string{"path": "notes.txt", "content": "written by the model\n"})}}}, turns...)
		}
		turns = append(turns, scripted.Turn{ToolCalls: []scripted.Call{call("finish", map[string]string{})}})
		script.Conversations = append(script.Conversations, scripted.Conversation{Match: fmt.Sprintf("attempt %d of", i+1), MatchAll: []string{evalControl}, Turns: turns})
	}
	script.Conversations = append(script.Conversations, scripted.Conversation{Turns: []scripted.Turn{
		{ToolCalls: []scripted.Call{call("bash", map[string]string{"command": clean})}},
		{ToolCalls: []scripted.Call{call("finish", map[string]string{})}}}})
	b, err := json.Marshal(script)
	if err != nil {
		t.Fatal(err)
	}
	base := serveScript(t, string(b))
	out := filepath.Join(t.TempDir(), "hostile")
	got, err := w.runAgent(t, filepath.Join(t.TempDir(), "store"), "openai", out, "--model", "hostile", "--base-url", base, "--split", "full",
		"--max-attempts", fmt.Sprint(len(plants)+1))
	if err != nil {
		t.Fatalf("run: %v\n%s", err, got)
	}
	rf, err := readFolder(t, out)
	if err != nil {
		t.Fatal(err)
	}
	byTask := map[string][]schemas.EvalResult{}
	for _, r := range rf {
		byTask[r.InstanceID] = append(byTask[r.InstanceID], r)
	}
	ctl := byTask[evalControl]
	if len(ctl) != len(plants)+1 {
		t.Fatalf("%d attempts on %s, want %d: %+v", len(ctl), evalControl, len(plants)+1, rf)
	}
	for i, p := range plants {
		if r := ctl[i]; r.Attempt != i+1 || r.Status != schemas.EvalRejected || !strings.Contains(r.Reason, p.reason) {
			t.Errorf("attempt %d (%s): %s %q, want rejected with %q", r.Attempt, p.cmd, r.Status, r.Reason, p.reason)
		}
	}
	if r := ctl[len(plants)]; !r.Resolved {
		t.Errorf("the attempt after the plants: %s %q", r.Status, r.Reason)
	}
	if rs := byTask[evalRepair]; len(rs) != 1 || !rs[0].Resolved {
		t.Errorf("the next task: %+v", rs)
	}
	if traj, _ := os.ReadFile(filepath.Join(out, "agent", evalControl, "run-1", "attempt-1.trajectory")); !strings.Contains(string(traj), "wrote notes.txt") {
		t.Errorf("the write through the link did not replace it:\n%s", traj)
	}
	if b, err := os.ReadFile(secret); err != nil || string(b) != content {
		t.Errorf("the host file was written: %q %v", b, err)
	}
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), "host secret") {
				t.Errorf("the host file was copied into %s", p)
			}
		}
		return nil
	})
}
