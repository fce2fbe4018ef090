package verify

import (
	"context"
	"sync"
	"testing"

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
