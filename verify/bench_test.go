package verify

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/core/registry"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/internal/testenv"
	"github.com/envgap/envgap/schemas"
)

// fakeRunner answers every run at once: the before side fails with the expected
// failure, the after side runs.
type fakeRunner struct{ runs atomic.Int64 }

func (f *fakeRunner) ImageID(ctx context.Context, ref string) (string, error) {
	return "sha256:" + strings.Repeat("ab", 32), nil
}

func (f *fakeRunner) Run(ctx context.Context, spec sandbox.Spec) (*sandbox.Result, error) {
	f.runs.Add(1)
	res := &sandbox.Result{ImageID: "sha256:" + strings.Repeat("ab", 32), Collected: map[string][]byte{}}
	for _, st := range spec.Steps {
		code, out := 0, "ok\n"
		if st.Name == core.StepRepro {
			code, out = 1, "Error: Cannot find module 'x'\n"
		}
		res.Steps = append(res.Steps, sandbox.StepResult{Name: st.Name, Command: st.Command, ExitCode: code,
			Output: []byte(out), OutputSize: int64(len(out)), OutputSHA256: schemas.Hash([]byte(out)).Hex(), Duration: time.Millisecond})
	}
	return res, nil
}

func benchCandidates(n int) []schemas.Candidate {
	out := make([]schemas.Candidate, n)
	for i := range out {
		c := liteCandidate(fmt.Sprintf("envgap__codex__javascript-t3-%d", i+1), schemas.EcosystemJavaScript,
			map[string]string{"package.json": fmt.Sprintf(`{"name":"p%d"}`, i)}, map[string]string{"ok": "1"})
		c.RegistryDate = "2026-11-30T00:00:00Z"
		c.ResolveCommand, c.ReproCommand, c.RunCommand = "true", "node -e \"require('x')\"", "true"
		c.ExpectedFailureRegex = "Cannot find module 'x'"
		out[i] = c
	}
	return out
}

// BenchmarkReverify1000 measures a verify of 1,000 candidates whose inputs, image and
// core are unchanged: it must run no container.
func BenchmarkReverify1000(b *testing.B) {
	st, _ := catalog.Open(b.TempDir())
	cands := benchCandidates(1000)
	if _, err := st.AddCandidateSet("bench", "bench", cands, nil); err != nil {
		b.Fatal(err)
	}
	proxy, err := registry.New(registry.Options{NPMUpstream: "http://127.0.0.1:1/"})
	if err != nil {
		b.Fatal(err)
	}
	fr := &fakeRunner{}
	stage := &Stage{Store: st, Cores: []*core.Core{{Runner: fr, Proxy: proxy, ProxyURL: "http://127.0.0.1:1", Store: st}}}
	ctx := context.Background()
	if rep, err := stage.Run(ctx, Options{Jobs: 2}); err != nil || rep.Ran != 1000 {
		b.Fatalf("first verify: %+v %v", rep, err)
	}
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = c.InstanceID
	}
	before := fr.runs.Load()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		rep, err := stage.Run(ctx, Options{IDs: ids, Jobs: 2})
		if err != nil || rep.Cached != 1000 {
			b.Fatalf("re-verify: %+v %v", rep.Cached, err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s/reverify-1000")
	}
	b.ReportMetric(float64(fr.runs.Load()-before), "containers")
}

// BenchmarkVerifyEngine verifies trivial candidates on the real engine at --jobs 1 and 2
// and reports candidates per minute and the overhead of verify over the time of the
// container steps (wall time / sum of step durations, per job).
func BenchmarkVerifyEngine(b *testing.B) {
	for _, jobs := range []int{1, 2} {
		b.Run(fmt.Sprintf("jobs=%d", jobs), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				st, _ := catalog.Open(b.TempDir())
				sess, err := Open(context.Background(), Env{Store: st, Registry: registry.Options{NPMUpstream: "http://127.0.0.1:1/"}, SweepOlderThan: -1})
				if err != nil {
					testenv.Missing(b, "no engine: %v", err)
				}
				cands := benchCandidates(6)
				st.AddCandidateSet("bench", "bench", cands, nil)
				b.StartTimer()
				start := time.Now()
				rep, err := sess.Stage.Run(context.Background(), Options{Jobs: jobs})
				wall := time.Since(start)
				b.StopTimer()
				if err != nil || rep.Ran != len(cands) {
					b.Fatalf("%+v %v", rep, err)
				}
				var steps time.Duration
				for _, c := range cands {
					v, _, _ := st.Verdict(c.InstanceID)
					for _, d := range append(v.Before, v.After...) {
						var r schemas.Run
						st.GetJSON(d, &r)
						for _, s := range r.Steps {
							steps += time.Duration(s.DurationMS) * time.Millisecond
						}
					}
				}
				b.ReportMetric(float64(len(cands))/wall.Minutes(), "candidates/min")
				b.ReportMetric(wall.Seconds()*float64(jobs)/steps.Seconds(), "wall-x-jobs/step-time")
				sess.Close()
			}
		})
	}
}
