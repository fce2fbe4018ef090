package jobs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/internal/testenv"
)

// needSlurm returns a client of the real Slurm on this machine, or skips (fails when
// ENVGAP_REQUIRE_ENGINE=1, as in CI, where `make test` starts Slurm with `make slurm`).
func needSlurm(t *testing.T) *Client {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Slurm")
	}
	c := &Client{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Check(ctx); err != nil {
		testenv.Missing(t, "no Slurm: %v (make slurm starts one)", err)
	}
	return c
}

func TestClientAgainstSlurm(t *testing.T) {
	c := needSlurm(t)
	ctx := context.Background()
	p, err := c.Partition(ctx, "")
	if err != nil || p.Name == "" || !p.Default || len(p.Nodes) == 0 {
		t.Fatalf("default partition: %+v %v", p, err)
	}
	if _, err := c.Partition(ctx, "no-such-partition"); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), p.Name) {
		t.Fatalf("unknown partition: %v (want a refusal naming %s)", err, p.Name)
	}
	dir := t.TempDir()
	a := Array{Name: "envgap-test", Tasks: 3, Output: filepath.Join(dir, "out-%A_%a"),
		Script: "#!/bin/bash\necho task $SLURM_ARRAY_TASK_ID\n"}
	bad := a
	bad.Time = "not-a-time"
	if err := c.TestSubmit(ctx, bad); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "time") {
		t.Fatalf("a bad --time: %v", err)
	}
	bad = a
	bad.Extra = []string{"--no-such-sbatch-flag"}
	if err := c.TestSubmit(ctx, bad); !errors.Is(err, ErrRefused) {
		t.Fatalf("an unknown sbatch flag: %v", err)
	}
	if err := c.TestSubmit(ctx, a); err != nil {
		t.Fatalf("test-only submission: %v", err)
	}
	job, err := c.Submit(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		tasks, err := c.Tasks(ctx, job)
		if err != nil {
			t.Fatal(err)
		}
		if len(tasks) == 0 {
			break
		}
		if time.Now().After(deadline) {
			c.Cancel(ctx, job)
			t.Fatalf("job %s still listed after 2 minutes: %+v", job, tasks)
		}
		time.Sleep(300 * time.Millisecond)
	}
	for _, task := range []string{"0", "1", "2"} {
		b, err := os.ReadFile(filepath.Join(dir, "out-"+job+"_"+task))
		if err != nil || strings.TrimSpace(string(b)) != "task "+task {
			t.Errorf("task %s wrote %q (%v)", task, b, err)
		}
	}
}

func TestCheckShared(t *testing.T) {
	host, _ := os.Hostname()
	if err := CheckShared("store", "data/store", []string{host}); err == nil || !strings.Contains(err.Error(), "relative path") {
		t.Errorf("a relative store: %v", err)
	}
	if err := CheckShared("store", t.TempDir(), []string{host}); err != nil {
		t.Errorf("a local store with only this machine as a node: %v", err)
	}
	if _, err := os.Stat("/dev/shm"); err == nil {
		if err := CheckShared("store", "/dev/shm", []string{host, "node-b"}); err == nil || !strings.Contains(err.Error(), "tmpfs") {
			t.Errorf("a tmpfs store with another node: %v", err)
		}
		if err := CheckShared("store", "/dev/shm", []string{host}); err != nil {
			t.Errorf("a tmpfs store with only this machine as a node: %v", err)
		}
	}
}

func TestScriptRequeuesBoundedAndQuotes(t *testing.T) {
	r := &Run{Worker: []string{"/opt/env gap/envgap", "--store", "/s/it's", "worker"}, MaxRequeue: 3, NodeSetup: "bash /x/setup-engine.sh"}
	s := r.script()
	for _, want := range []string{
		`'/opt/env gap/envgap' '--store' '/s/it'\''s' 'worker'`,
		`"${SLURM_RESTART_COUNT:-0}" -lt 3`,
		`scontrol requeue "${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}"`,
		`bash -c 'bash /x/setup-engine.sh'`,
		`grep '^export DOCKER_HOST='`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q:\n%s", want, s)
		}
	}
}

// TestFailedWorkerIsRequeuedBounded: an array task whose worker fails requeues itself
// (Slurm then holds it for its requeue delay); one with no requeues left does not.
func TestFailedWorkerIsRequeuedBounded(t *testing.T) {
	c := needSlurm(t)
	ctx := context.Background()
	dir := t.TempDir()
	for _, tc := range []struct {
		maxRequeue int
		requeued   bool
	}{{1, true}, {-1, false}} {
		r := &Run{Worker: []string{"/bin/sh", "-c", "echo worker fails; exit 3"}, MaxRequeue: tc.maxRequeue}
		a := Array{Name: "envgap-test-requeue", Tasks: 1, Output: filepath.Join(dir, "out-%A_%a"), Script: r.script(), Requeue: true}
		job, err := c.Submit(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		var restarts string
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			out, _, _ := c.run(ctx, "scontrol", nil, "show", "job", job+"_0")
			if i := strings.Index(string(out), "Restarts="); i >= 0 {
				restarts = strings.Fields(string(out)[i:])[0]
			}
			tasks, err := c.Tasks(ctx, job)
			if err != nil {
				t.Fatal(err)
			}
			if restarts == "Restarts=1" || len(tasks) == 0 {
				break
			}
			time.Sleep(300 * time.Millisecond)
		}
		c.Cancel(ctx, job)
		if got := restarts == "Restarts=1"; got != tc.requeued {
			b, _ := os.ReadFile(filepath.Join(dir, "out-"+job+"_0"))
			t.Errorf("max requeue %d: %s, want requeued %v; output:\n%s", tc.maxRequeue, restarts, tc.requeued, b)
		}
	}
}
