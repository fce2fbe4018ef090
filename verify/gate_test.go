package verify

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/core/registry"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/data/catalog"
)

// gatedRunner answers as fakeRunner does, honouring the spec's gate as the engine does: a
// run's "container" is ready before it enters, its steps run inside. Each run waits,
// ready, until a second run is ready too (a pair's other side always comes), so the test
// sees whether verify makes containers ready ahead of the gate.
type gatedRunner struct {
	fakeRunner
	mu                    sync.Mutex
	cond                  *sync.Cond
	ready, inside         int
	mostReady, mostInside int
	gated                 bool
}

func (g *gatedRunner) Run(ctx context.Context, spec sandbox.Spec) (*sandbox.Result, error) {
	if spec.Gate == nil {
		return g.fakeRunner.Run(ctx, spec)
	}
	g.mu.Lock()
	g.gated = true
	g.ready++
	g.mostReady = max(g.mostReady, g.ready)
	g.cond.Broadcast()
	for g.mostReady < 2 {
		g.cond.Wait()
	}
	g.mu.Unlock()
	leave, err := spec.Gate(ctx)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	g.ready--
	g.inside++
	g.mostInside = max(g.mostInside, g.inside)
	g.mu.Unlock()
	res, err := g.fakeRunner.Run(ctx, spec)
	g.mu.Lock()
	g.inside--
	g.mu.Unlock()
	leave()
	return res, err
}

// TestGatedVerifyDecidesAsSerial: verify with its gate (containers made ready ahead, steps
// --jobs at a time) reaches the verdicts the serial way reaches, never runs more than
// --jobs runs' steps at once, and has more runs ready than it runs.
func TestGatedVerifyDecidesAsSerial(t *testing.T) {
	for _, jobs := range []int{1, 2} {
		verdicts := map[bool]map[string]string{}
		for _, serial := range []bool{true, false} {
			st, _ := catalog.Open(t.TempDir())
			cands := benchCandidates(7)
			cands[2].RunCommand = "node missing.js" // unchanged outputs, but another key
			cands[4].ExpectedFailureRegex = "no such failure"
			if _, err := st.AddCandidateSet("gate", "gate", cands, nil); err != nil {
				t.Fatal(err)
			}
			proxy, err := registry.New(registry.Options{NPMUpstream: "http://127.0.0.1:1/"})
			if err != nil {
				t.Fatal(err)
			}
			gr := &gatedRunner{}
			gr.cond = sync.NewCond(&gr.mu)
			stage := &Stage{Store: st, Cores: []*core.Core{{Runner: gr, Proxy: proxy, ProxyURL: "http://127.0.0.1:1", Store: st}}}
			rep, err := stage.Run(context.Background(), Options{Jobs: jobs, serial: serial})
			if err != nil || rep.Ran != len(cands) {
				t.Fatalf("jobs %d serial %v: %+v %v", jobs, serial, rep, err)
			}
			got := map[string]string{}
			for _, r := range rep.Results {
				got[r.InstanceID] = string(r.Outcome) + ": " + r.Reason
			}
			verdicts[serial] = got
			if serial {
				if gr.gated {
					t.Fatalf("jobs %d: the serial way used a gate", jobs)
				}
				continue
			}
			if !gr.gated || gr.mostInside > jobs || gr.mostInside < 1 || gr.mostReady < 2 {
				t.Fatalf("jobs %d: gated %v, at most %d runs inside the gate, %d ready at once", jobs, gr.gated, gr.mostInside, gr.mostReady)
			}
		}
		for id, v := range verdicts[true] {
			if verdicts[false][id] != v {
				t.Errorf("jobs %d: %s: gated %q, serial %q", jobs, id, verdicts[false][id], v)
			}
		}
		if len(verdicts[true]) != 7 || verdicts[true]["envgap__codex__javascript-t3-5"] == verdicts[true]["envgap__codex__javascript-t3-1"] {
			t.Errorf("the candidates do not reach different verdicts: %v", verdicts[true])
		}
	}
}

// lateRunner answers as fakeRunner does and, for a spec with RemoveLater, returns before
// its "container" is removed: the removal ends when the test says, and fails for the after
// side of the candidate named bad.
type lateRunner struct {
	fakeRunner
	bad     string
	release chan struct{}
	asked   atomic.Int64
}

func (l *lateRunner) Run(ctx context.Context, spec sandbox.Spec) (*sandbox.Result, error) {
	res, err := l.fakeRunner.Run(ctx, spec)
	if err != nil || !spec.RemoveLater {
		return res, err
	}
	l.asked.Add(1)
	removed := make(chan error, 1)
	res.Removed = removed
	var rerr error
	if spec.Labels["org.envgap.instance"] == l.bad && spec.Labels["org.envgap.side"] == string(core.SideAfter) {
		rerr = errors.New("engine said no")
	}
	go func() {
		<-l.release
		removed <- rerr
	}()
	return res, nil
}

// TestVerifyWaitsForLateRemovals: verify (gated) lets runs return before their
// containers are removed, returns only once every removal ended, and reports a removal
// that failed as its error, naming the candidate and side, its verdicts kept.
func TestVerifyWaitsForLateRemovals(t *testing.T) {
	st, _ := catalog.Open(t.TempDir())
	cands := benchCandidates(3)
	if _, err := st.AddCandidateSet("late", "late", cands, nil); err != nil {
		t.Fatal(err)
	}
	proxy, err := registry.New(registry.Options{NPMUpstream: "http://127.0.0.1:1/"})
	if err != nil {
		t.Fatal(err)
	}
	lr := &lateRunner{bad: cands[1].InstanceID, release: make(chan struct{})}
	stage := &Stage{Store: st, Cores: []*core.Core{{Runner: lr, Proxy: proxy, ProxyURL: "http://127.0.0.1:1", Store: st}}}
	type ran struct {
		rep *Report
		err error
	}
	out := make(chan ran, 1)
	go func() {
		rep, err := stage.Run(context.Background(), Options{Jobs: 2})
		out <- ran{rep, err}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for lr.asked.Load() < int64(2*len(cands)) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case r := <-out:
		t.Fatalf("verify returned (%v) before its containers were removed", r.err)
	case <-time.After(100 * time.Millisecond):
	}
	close(lr.release)
	r := <-out
	want := cands[1].InstanceID + ": removing the after side's container: engine said no"
	if r.err == nil || !strings.Contains(r.err.Error(), want) || r.rep == nil || r.rep.Ran != len(cands) || r.rep.Failed != 0 {
		t.Fatalf("got %+v, %v; want every candidate decided and the error %q", r.rep, r.err, want)
	}
	for _, c := range cands {
		if _, _, err := st.Verdict(c.InstanceID); err != nil {
			t.Errorf("%s: no verdict: %v", c.InstanceID, err)
		}
	}
	if lr.asked.Load() != int64(2*len(cands)) {
		t.Errorf("%d runs asked to remove later, want %d", lr.asked.Load(), 2*len(cands))
	}
}
