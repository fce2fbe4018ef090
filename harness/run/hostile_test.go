package run

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/harness/eval"
	"github.com/envgap/envgap/lib/agent"
	"github.com/envgap/envgap/lib/agent/agenttest"
	"github.com/envgap/envgap/schemas"
)

// A plant is what one attempt of a hostile agent leaves in a file of the protocol, and
// the reason its attempt must be rejected with.
type plant struct{ cmd, reason string }

// hostPlants are the link and file kinds an agent on this host can leave in the
// trajectory, cost, feedback, repro script and workspace paths (SECRET is a host file
// outside the run directory, T, C and F the trajectory, cost and feedback files).
func hostPlants(secret string) []plant {
	return []plant{
		{`ln -sf "$SECRET" "$T"`, "the trajectory file trajectory.json is a symbolic link to " + secret},
		{`rm -f "$T"; mkfifo "$T"`, "the trajectory file trajectory.json is a FIFO"},
		{`truncate -s 1T "$T"`, "the trajectory file trajectory.json is a sparse file of 1099511627776 bytes"},
		{`rm -f "$T"; ln "$SECRET" "$T"`, "the trajectory file trajectory.json has 2 hard links"},
		{`ln -sf /dev/zero "$C"`, "the cost file cost.json is a symbolic link to /dev/zero"},
		{`head -c 5000 /dev/zero | tr '\0' 1 > "$C"`, "the cost file cost.json is 5000 bytes, over the bound of 4096 bytes"},
		{`ln -sf "$SECRET" "$F"`, "the agent wrote outside its workspace: " + "FEEDBACK"},
		{`rm -f "$F"; mkfifo "$F"`, "the agent wrote outside its workspace: " + "FEEDBACK"},
		{`ln -sf "$SECRET" "$ENVGAP_REPRO"`, "the agent wrote outside its workspace: "},
		{`ln -s "$SECRET" leak.txt`, "leak.txt is a symbolic link the agent made (to " + secret + ")"},
		{`mkfifo pipe`, "pipe is a FIFO"},
		{`ln -s /dev/zero zero`, "zero is a symbolic link the agent made (to /dev/zero)"},
		{`truncate -s 1T requirements.txt`, "requirements.txt is a sparse file of 1099511627776 bytes"},
		{`head -c 3000000 /dev/zero | tr '\0' a > big.txt`, "big.txt is 3000000 bytes, over the bound of 2097152 bytes"},
		{`ln "$SECRET" hard.txt`, "hard.txt has 2 hard links"},
	}
}

// hostileScript is an agent command that, on the task first, plants plants[n-1] at
// attempt n and fixes the task at the attempt after the last; on any other task it fixes
// it at once. Each attempt first undoes what the last one left in the workspace.
func hostileScript(first, secret string, plants []plant) string {
	var b strings.Builder
	fmt.Fprintf(&b, "SECRET=%q T=\"$ENVGAP_TRAJECTORY_FILE\" C=\"$ENVGAP_COST_FILE\" F=\"$ENVGAP_FEEDBACK_FILE\"\n", secret)
	b.WriteString("rm -f leak.txt pipe zero big.txt hard.txt; printf 'x==2\\n' > requirements.txt\n")
	fmt.Fprintf(&b, "grep -q '%q' \"$ENVGAP_TASK_FILE\" || { echo 'x==1' > requirements.txt; exit 0; }\n", first)
	b.WriteString("case $ENVGAP_ATTEMPT in\n")
	for i, p := range plants {
		fmt.Fprintf(&b, "%d) %s ;;\n", i+1, p.cmd)
	}
	b.WriteString("*) test -f \"$F\" && grep -q 'status: rejected' \"$F\" && echo 'x==1' > requirements.txt ;;\nesac\n")
	return b.String()
}

// TestHostileAgentOnThisHost: an agent command on this host that leaves a link to a host
// file, a hard link, a FIFO, a /dev/zero link, a sparse 1 TiB file or an oversized file in
// the trajectory, cost, feedback or workspace paths gets each attempt rejected with a
// reason naming the file and what it is; the host file is neither read into the results
// nor written (the next feedback and repro script replace the links), nothing stalls, and
// the run goes on to fix the task and to the next task.
func TestHostileAgentOnThisHost(t *testing.T) {
	const content = "host secret: never in a result\n"
	secret := filepath.Join(t.TempDir(), "host-secret")
	if err := os.WriteFile(secret, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := catalog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	first, next := agenttest.Task(), agenttest.Task()
	next.InstanceID = "envgap__o__r-2"
	plants := hostPlants(secret)
	out, work := t.TempDir(), t.TempDir()
	done := make(chan struct{})
	var o *Outcome
	go func() {
		defer close(done)
		o, err = Run(context.Background(), []schemas.Task{*first, *next}, Options{Evaluator: &eval.Evaluator{Store: st, Runner: &agenttest.FakeRunner{Store: st}},
			Materialize: agenttest.GitMaterialize(0), Agent: agent.ParseSpec(hostileScript(first.InstanceID, secret, plants)), ReproCommand: "true",
			K: 1, MaxAttempts: len(plants) + 1, AttemptTimeout: 2 * time.Minute, WorkDir: work, OutDir: out})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Minute):
		t.Fatal("the run stalled")
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Faults) != 0 || len(o.Results) != len(plants)+2 {
		t.Fatalf("%d results, faults %+v", len(o.Results), o.Faults)
	}
	for i, p := range plants {
		r := o.Results[i]
		want := strings.Replace(p.reason, "FEEDBACK", "", 1)
		if r.InstanceID != first.InstanceID || r.Attempt != i+1 || r.Status != schemas.EvalRejected || !strings.Contains(r.Reason, want) ||
			strings.HasSuffix(p.reason, "FEEDBACK") && !strings.HasSuffix(r.Reason, "feedback.txt") {
			t.Errorf("attempt %d (%s): %s %s: %q, want rejected with %q", i+1, p.cmd, r.InstanceID, r.Status, r.Reason, want)
		}
	}
	if r := o.Results[len(plants)]; !r.Resolved || r.InstanceID != first.InstanceID {
		t.Errorf("the attempt after the plants (reading the feedback): %+v", r)
	}
	if r := o.Results[len(plants)+1]; !r.Resolved || r.InstanceID != next.InstanceID || r.Attempt != 1 {
		t.Errorf("the next task: %+v", r)
	}
	if b, err := os.ReadFile(secret); err != nil || string(b) != content {
		t.Errorf("the host file was written: %q %v", b, err)
	}
	b, _ := json.Marshal(o.Results)
	if strings.Contains(string(b), "host secret") {
		t.Error("the host file is in the results")
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
