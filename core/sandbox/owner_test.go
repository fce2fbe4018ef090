package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/envgap/envgap/data"
)

// childEnv makes the test binary a child that starts a sandbox running `sleep 600` and
// waits to be killed (the value is the test label's value).
const childEnv = "ENVGAP_SANDBOX_TEST_CHILD"

func TestMain(m *testing.M) {
	if v := os.Getenv(childEnv); v != "" {
		os.Exit(sandboxChild(v))
	}
	os.Exit(m.Run())
}

func sandboxChild(label string) int {
	ctx := context.Background()
	e, err := Connect(ctx, "")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	img := os.Getenv("ENVGAP_SANDBOX_TEST_IMAGE")
	if img == "" {
		img = defaultTestImage
	}
	_, err = e.Run(ctx, Spec{Image: img, Labels: map[string]string{"org.envgap.test": label},
		Steps: []Step{{Name: "wait", Command: "sleep 600"}}})
	fmt.Fprintln(os.Stderr, "the child's run ended:", err)
	return 1
}

// startChild starts a child whose sandbox carries the label org.envgap.test=label and
// waits until its container runs.
func startChild(t *testing.T, e *Engine, label string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+label)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	labels := map[string]string{"org.envgap.test": label}
	for deadline := time.Now().Add(2 * time.Minute); ; {
		list := containersWith(t, e, labels)
		if len(list) == 1 && list[0].State == "running" {
			o, ok := ownerOf(list[0].Labels)
			if !ok || o.PID != cmd.Process.Pid || o.Host != Self().Host || o.Start == "" {
				t.Fatalf("owner labels %v, want host %s, pid %d and a start time", list[0].Labels, Self().Host, cmd.Process.Pid)
			}
			return cmd
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child's container does not run: %+v", list)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestSweepRemovesContainersOfKilledOwners: kill -9 of a process running a sandbox leaves
// its container running; the next Connect removes it at once, and never touches the
// container of a process that still runs.
func TestSweepRemovesContainersOfKilledOwners(t *testing.T) {
	e, _ := needEngine(t)
	a, b := testLabels(t)["org.envgap.test"], testLabels(t)["org.envgap.test"]
	ca := startChild(t, e, a)
	startChild(t, e, b)
	ca.Process.Signal(syscall.SIGKILL)
	ca.Wait()
	if n := len(containersWith(t, e, map[string]string{"org.envgap.test": a})); n != 1 {
		t.Fatalf("%d containers of the killed child before the sweep, want 1 (still running)", n)
	}
	e2, err := Connect(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	if left := containersWith(t, e, map[string]string{"org.envgap.test": a}); len(left) != 0 {
		t.Fatalf("the killed child's container is still there after the next Connect: %+v", left)
	}
	if live := containersWith(t, e, map[string]string{"org.envgap.test": b}); len(live) != 1 || live[0].State != "running" {
		t.Fatalf("the live child's container was touched by the sweep: %+v", live)
	}
}

func TestOwnerState(t *testing.T) {
	self := Self()
	if self.Start == "" || self.Host == "" {
		t.Fatalf("Self() = %+v: no start time or host", self)
	}
	// A process that ran and was reaped: its pid is free (or reused by another process).
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := cmd.Process.Pid
	parent := Owner{Host: self.Host, PID: os.Getppid(), Start: processStart(os.Getppid())}
	tests := []struct {
		name string
		o    Owner
		want data.OwnerState
	}{
		{"this process", self, ownerAlive},
		{"a live process", parent, ownerAlive},
		{"a dead process", Owner{Host: self.Host, PID: dead, Start: "x/1"}, ownerGone},
		{"a pid reused by another process", Owner{Host: self.Host, PID: self.PID, Start: self.Start + "0"}, ownerGone},
		{"after a reboot", Owner{Host: self.Host, PID: parent.PID, Start: "another-boot/" + strings.SplitN(parent.Start, "/", 2)[1]}, ownerGone},
		{"another host", Owner{Host: self.Host + "-other", PID: dead, Start: "x/1"}, ownerUnknown},
	}
	for _, tc := range tests {
		if got := tc.o.StateFrom(self); got != tc.want {
			t.Errorf("%s: state %d, want %d", tc.name, got, tc.want)
		}
	}
	if o, ok := ownerOf(ownerLabels(self)); !ok || o != self {
		t.Errorf("ownerOf(labels) = %+v, %v; want %+v", o, ok, self)
	}
	if _, ok := ownerOf(map[string]string{LabelOwnerHost: "h", LabelOwnerPID: "x"}); ok {
		t.Error("ownerOf accepted a pid that is not a number")
	}
}
