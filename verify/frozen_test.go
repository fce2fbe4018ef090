package verify

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/core/sandbox/sandboxtest"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
)

// TestFrozenEngineEndsVerify: an engine that stops answering in the middle of a step ends
// the verify run soon after the step timeout: the candidate it ran is an infrastructure
// fault (no verdict), and so is the one whose container was made ready meanwhile (the
// gate's lookahead, core.Gate); the one after is not run on that engine. Which candidate
// runs first is the gate's: a running container may be one made ready ahead, so the engine
// freezes once a container runs a step.
func TestFrozenEngineEndsVerify(t *testing.T) {
	st, err := catalog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := openEnv(t, st, "").engines[0] // skips (or fails in CI) without engine and images
	freezer, host := sandboxtest.New(t)
	ctx := context.Background()
	sess, err := Open(ctx, Env{Store: st, Engines: []string{host}, SweepOlderThan: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	ids := []string{"envgap__codex__javascript-t1-7", "envgap__codex__javascript-t1-8", "envgap__codex__javascript-t1-9"}
	var cands []schemas.Candidate
	for _, id := range ids {
		c := liteCandidate(id, schemas.EcosystemJavaScript, map[string]string{"package.json": "{}"}, map[string]string{"package.json": "{ }"})
		c.ResolveCommand, c.ReproCommand, c.RunCommand = "true", "sleep 600", "true"
		cands = append(cands, c)
	}
	if _, err := st.AddCandidateSet("test", "test", cands, nil); err != nil {
		t.Fatal(err)
	}
	ours := filters.NewArgs(filters.Arg("label", "org.envgap.instance"))
	t.Cleanup(func() { // before the freezer's cleanup: the real engine removes what the run left
		for _, id := range ids {
			f := filters.NewArgs(filters.Arg("label", "org.envgap.instance="+id))
			list, _ := real.Client().ContainerList(context.Background(), container.ListOptions{All: true, Filters: f})
			for _, c := range list {
				real.Client().ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true})
			}
		}
	})
	const stepTimeout = 5 * time.Second
	type result struct {
		rep *Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := sess.Stage.Run(ctx, Options{Jobs: 1, Limits: sandbox.Limits{StepTimeout: stepTimeout}})
		done <- result{rep, err}
	}()
	inStep := func() bool {
		list, err := real.Client().ContainerList(ctx, container.ListOptions{Filters: ours})
		if err != nil {
			return false
		}
		for _, c := range list {
			if !slices.Contains(ids, c.Labels["org.envgap.instance"]) || c.State != "running" {
				continue
			}
			// A container made ready ahead runs no exec yet; one in its steps does.
			if ins, err := real.Client().ContainerInspect(ctx, c.ID); err == nil && len(ins.ExecIDs) > 0 {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(2 * time.Minute); !inStep(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no candidate's container runs its step")
		}
	}
	time.Sleep(time.Second) // into the steps
	freezer.Freeze()
	frozeAt := time.Now()
	bound := stepTimeout + 25*time.Second // the step timeout, the kill's grace, the abandoned removal, a loaded machine
	select {
	case r := <-done:
		t.Logf("verify ended %s after the freeze", time.Since(frozeAt).Round(time.Millisecond))
		// A container whose removal went on in the background when the engine froze is left
		// to the next command's sweep, and said so; any other error fails.
		if r.err != nil && !(errors.Is(r.err, sandbox.ErrEngineUnresponsive) && strings.Contains(r.err.Error(), "containers not removed")) {
			t.Fatal(r.err)
		}
		if r.rep.Failed != len(ids) {
			t.Fatalf("report %+v, want every candidate failed", r.rep)
		}
		notRun := 0
		for _, res := range r.rep.Results {
			if !res.Infra || res.Outcome != "" {
				t.Errorf("%s: %+v, want an infrastructure fault and no outcome", res.InstanceID, res)
			}
			if strings.Contains(res.Error, "not run") {
				notRun++
			}
			if _, _, err := st.Verdict(res.InstanceID); err == nil {
				t.Errorf("%s: a frozen engine left a verdict", res.InstanceID)
			}
		}
		if notRun != 1 {
			t.Errorf("%d candidates not run on the frozen engine, want 1 (the one after the step and the one made ready)", notRun)
		}
	case <-time.After(bound):
		t.Fatalf("verify still runs %s after the engine froze (step timeout %s)", bound, stepTimeout)
	}
}

// TestFrozenEngineEndsRecheck: an engine that stops answering in the middle of a task's
// run ends the recheck's use of it: the task it ran is an infrastructure fault (no
// exclusion), and the next task is not sent to it ("not run"), as verify does.
func TestFrozenEngineEndsRecheck(t *testing.T) {
	st, err := catalog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := openEnv(t, st, "").engines[0] // skips (or fails in CI) without engine and images
	freezer, host := sandboxtest.New(t)
	ctx := context.Background()
	sess, err := Open(ctx, Env{Store: st, Engines: []string{host}, SweepOlderThan: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	ids := []string{"envgap__codex__javascript-t3-7", "envgap__codex__javascript-t3-8"}
	for _, id := range ids {
		c := liteCandidate(id, schemas.EcosystemJavaScript, map[string]string{"package.json": "{}"}, map[string]string{"package.json": "{ }"})
		c.ResolveCommand, c.ReproCommand, c.RunCommand = "true", "true", "sleep 600"
		admitTask(t, st, c, false)
	}
	mine := filters.NewArgs(filters.Arg("label", "org.envgap.instance="+ids[0]))
	t.Cleanup(func() { // before the freezer's cleanup: the real engine removes what the run left
		list, _ := real.Client().ContainerList(context.Background(), container.ListOptions{All: true, Filters: mine})
		for _, c := range list {
			real.Client().ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true})
		}
	})
	type result struct {
		rec *Recheck
		err error
	}
	done := make(chan result, 1)
	go func() {
		rec, err := sess.Stage.Recheck(ctx, "2026-09-29", Options{Limits: sandbox.Limits{StepTimeout: 5 * time.Second}})
		done <- result{rec, err}
	}()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		list, err := real.Client().ContainerList(ctx, container.ListOptions{Filters: mine})
		if err == nil && len(list) == 1 && list[0].State == "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first task's container does not run")
		}
	}
	time.Sleep(time.Second) // into the steps
	freezer.Freeze()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if len(r.rec.Results) != 2 {
		t.Fatalf("results %+v", r.rec.Results)
	}
	for i, res := range r.rec.Results {
		if res.Error == "" || res.Excluded || !strings.Contains(res.Error, "did not answer") {
			t.Errorf("%s: %+v, want an infrastructure fault of the unresponsive engine and no exclusion", res.InstanceID, res)
		}
		if got := strings.Contains(res.Error, "not run"); got != (i == 1) {
			t.Errorf("%s: %q: not run = %v, want %v (only the task after the freeze is not sent)", res.InstanceID, res.Error, got, i == 1)
		}
		if _, err := st.Exclusion(res.InstanceID); err == nil {
			t.Errorf("%s: a frozen engine left an exclusion", res.InstanceID)
		}
	}
}
