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
// and reports verify's own overhead: wall time times jobs over the sum of the container
// steps' durations (1.00 would be steps back to back, nothing between them). Each
// iteration verifies the same candidates twice, into fresh stores, in turn: as verify
// does (a gate of --jobs places, a container made ready ahead for each: core.Gate) and as
// it did before (--jobs candidates at once, each container created, started, collected
// and removed between steps: "serial"), so both see the same load of a shared machine.
// Metrics: wall-x-jobs/step-time and candidates/min (verify), serial-wall-x-jobs/step-time,
// and wall/serial-wall (the wall time's ratio, new over old).
func BenchmarkVerifyEngine(b *testing.B) {
	const n = 8
	for _, jobs := range []int{1, 2} {
		b.Run(fmt.Sprintf("jobs=%d", jobs), func(b *testing.B) {
			var wall, steps, swall, ssteps time.Duration
			for i := 0; i < b.N; i++ {
				modes := []bool{false, true}
				if i%2 == 1 {
					modes = []bool{true, false}
				}
				for _, serial := range modes {
					w, s := verifyEngineOnce(b, n, jobs, serial)
					if serial {
						swall, ssteps = swall+w, ssteps+s
					} else {
						wall, steps = wall+w, steps+s
					}
				}
			}
			b.ReportMetric(float64(n*b.N)/wall.Minutes(), "candidates/min")
			b.ReportMetric(wall.Seconds()*float64(jobs)/steps.Seconds(), "wall-x-jobs/step-time")
			b.ReportMetric(swall.Seconds()*float64(jobs)/ssteps.Seconds(), "serial-wall-x-jobs/step-time")
			b.ReportMetric(wall.Seconds()/swall.Seconds(), "wall/serial-wall")
		})
	}
}

// verifyEngineOnce verifies n trivial candidates into a fresh store and returns the wall
// time of the stage and the sum of the durations of every step of its runs.
func verifyEngineOnce(b *testing.B, n, jobs int, serial bool) (wall, steps time.Duration) {
	b.StopTimer()
	defer b.StartTimer()
	ctx := context.Background()
	st, _ := catalog.Open(b.TempDir())
	sess, err := Open(ctx, Env{Store: st, Registry: registry.Options{NPMUpstream: "http://127.0.0.1:1/"}, SweepOlderThan: -1})
	if err != nil {
		testenv.Missing(b, "no engine: %v", err)
	}
	defer sess.Close()
	cands := benchCandidates(n)
	if _, err := st.AddCandidateSet("bench", "bench", cands, nil); err != nil {
		b.Fatal(err)
	}
	// The image's egress allowlist is read once per session (a container of its own):
	// read it before the clock starts, so both ways are timed on their runs alone.
	if _, err := sess.Stage.Cores[0].Allowlist(ctx, cands[0].Ecosystem.Image()); err != nil {
		b.Fatal(err)
	}
	b.StartTimer()
	start := time.Now()
	rep, err := sess.Stage.Run(ctx, Options{Jobs: jobs, serial: serial})
	wall = time.Since(start)
	b.StopTimer()
	if err != nil || rep.Ran != len(cands) {
		b.Fatalf("%+v %v", rep, err)
	}
	for _, c := range cands {
		v, _, err := st.Verdict(c.InstanceID)
		if err != nil {
			b.Fatal(err)
		}
		for _, d := range append(v.Before, v.After...) {
			var r schemas.Run
			if err := st.GetJSON(d, &r); err != nil {
				b.Fatal(err)
			}
			for _, s := range r.Steps {
				steps += time.Duration(s.DurationMS) * time.Millisecond
			}
		}
	}
	return wall, steps
}
