package verify

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/core/registry"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/internal/testenv"
	"github.com/envgap/envgap/schemas"
)

// BenchmarkRunOverheadOfTheDoor runs one typical small run (a resolve and a run step in
// the python image) with the egress door and without it (Core.Door nil: no proxy
// settings, the kernel rules alone), alternately (after one untimed run of each, and in
// alternating order), and reports both wall times, their ratio, the door's own cost per
// run (session-ms: opening a session, its settings and closing it), and the
// one-time read of an image's package sources (probe-ms, once per image id and session).
func BenchmarkRunOverheadOfTheDoor(b *testing.B) {
	st, err := catalog.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	sess, err := Open(ctx, Env{Store: st, Registry: registry.Options{NPMUpstream: "http://127.0.0.1:1/"}, SweepOlderThan: -1})
	if err != nil {
		testenv.Missing(b, "no engine: %v", err)
	}
	defer sess.Close()
	cr := sess.Stage.Cores[0]
	t0 := time.Now()
	if _, err := cr.Allowlist(ctx, "envgap-python-eval"); err != nil {
		testenv.Missing(b, "python image: %v", err)
	}
	probe := time.Since(t0)
	door := cr.Door
	spec := func(i int) core.Spec {
		return core.Spec{InstanceID: "envgap__o__bench-1", Side: core.SideAfter,
			// A different file each time: no memo, every run really runs.
			Project: []core.File{{Path: "app.py", Content: []byte(fmt.Sprintf("print('ok')\n# %d %s\n", i, time.Now()))}},
			Recipe:  schemas.Recipe{Ecosystem: schemas.EcosystemPython, ResolveCommand: "python3 -c 'import sys'", RunCommand: "python3 app.py"},
			Cutoff:  schemas.MustParseCutoff("2024-01-01"), Limits: sandbox.Limits{StepTimeout: time.Minute}}
	}
	// One untimed run of each first: the first container of a process pays for what
	// every later one reuses (the engine's caches of the image, this process's
	// connections), which would be charged to whichever side ran first.
	for i, d := range []bool{true, false} {
		if d {
			cr.Door = door
		} else {
			cr.Door = nil
		}
		if run, _, err := cr.Run(ctx, spec(-1-i)); err != nil || !run.Resolved {
			b.Fatalf("warm-up run (door %v): %v %+v", d, err, run)
		}
	}
	var with, without time.Duration
	for i := 0; b.Loop(); i++ {
		// Alternate which side goes first, so that neither always follows the other's
		// container removal.
		order := []bool{true, false}
		if i%2 == 1 {
			order = []bool{false, true}
		}
		for _, d := range order {
			if d {
				cr.Door = door
			} else {
				cr.Door = nil
			}
			start := time.Now()
			run, _, err := cr.Run(ctx, spec(i))
			el := time.Since(start)
			if err != nil || !run.Resolved {
				b.Fatalf("run (door %v): %v %+v", d, err, run)
			}
			if d {
				with += el
			} else {
				without += el
			}
		}
	}
	cr.Door = door
	// The door's own part of a run, apart from the engine's noise: what Core.Run does with
	// the allowlist it remembers (a session opened, its settings written out, closed).
	allow, err := cr.Allowlist(ctx, "envgap-python-eval")
	if err != nil {
		b.Fatal(err)
	}
	const sessions = 20
	t1 := time.Now()
	for range sessions {
		s, err := door.Open(allow)
		if err != nil {
			b.Fatal(err)
		}
		s.Env("10.0.0.1")
		s.Files("10.0.0.1")
		s.Close()
	}
	session := time.Since(t1) / sessions
	n := float64(b.N)
	b.ReportMetric(float64(session.Microseconds())/1000, "session-ms")
	b.ReportMetric(float64(with.Milliseconds())/n, "door-run-ms")
	b.ReportMetric(float64(without.Milliseconds())/n, "nodoor-run-ms")
	b.ReportMetric(float64(with)/float64(without), "ratio")
	b.ReportMetric(float64(probe.Milliseconds()), "probe-ms")
}
