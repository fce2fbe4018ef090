package main

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/core/registry"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/harness/eval"
	"github.com/envgap/envgap/lib/release"
	"github.com/envgap/envgap/schemas"
	"github.com/envgap/envgap/verify"
)

// timedRunner sums the time spent in the evaluation core's runs.
type timedRunner struct {
	core.SpecRunner
	mu  sync.Mutex
	sum time.Duration
}

func (r *timedRunner) RunSpec(ctx context.Context, spec core.Spec, salt string) (*schemas.Run, schemas.Digest, bool, error) {
	start := time.Now()
	run, d, cached, err := r.SpecRunner.RunSpec(ctx, spec, salt)
	r.mu.Lock()
	r.sum += time.Since(start)
	r.mu.Unlock()
	return run, d, cached, err
}

// BenchmarkEvalOverhead: envgap eval's wall time over the sum of its core runs (real
// steps: pip installs in the evaluation image), for the gold predictions of the
// evaluation scenario's three tasks, a fresh store each time (overhead-x is the ratio).
func BenchmarkEvalOverhead(b *testing.B) {
	requireEngine(b, "envgap-python-eval")
	w := newEvalWorld(b)
	tasks, err := release.ReadTaskConfig(w.hub, "full")
	if err != nil {
		b.Fatal(err)
	}
	preds, _ := eval.Builtin("gold", tasks)
	byID, err := eval.Match(tasks, preds, "gold")
	if err != nil {
		b.Fatal(err)
	}
	var total, inCore time.Duration
	for i := 0; i < b.N; i++ {
		st, err := catalog.Open(filepath.Join(b.TempDir(), "store"))
		if err != nil {
			b.Fatal(err)
		}
		sess, err := verify.Open(context.Background(), verify.Env{Store: st, Registry: registry.Options{PyPIUpstream: w.pypi + "/simple/"}, SweepOlderThan: -1})
		if err != nil {
			b.Fatal(err)
		}
		tr := &timedRunner{SpecRunner: sess.Stage}
		ev := &eval.Evaluator{Store: st, Runner: tr, Checkout: checkoutSource(w.gitTemplate)}
		start := time.Now()
		out, err := ev.Eval(context.Background(), tasks, byID, 1, nil)
		total += time.Since(start)
		sess.Close()
		if err != nil || len(out.Faults) > 0 {
			b.Fatalf("%v %+v", err, out.Faults)
		}
		inCore += tr.sum
	}
	b.ReportMetric(total.Seconds()/inCore.Seconds(), "overhead-x")
	b.ReportMetric(inCore.Seconds()/float64(b.N), "core-s/op")
}
