package main

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// firstLine records when a progress line "[1/" is first written.
type firstLine struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	first time.Time
}

func (w *firstLine) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.first.IsZero() && bytes.Contains(p, []byte("[1/")) {
		w.first = time.Now()
	}
	return w.buf.Write(p)
}

// timedVerify runs envgap verify with args on a fresh store of n tiny candidates and
// returns the wall time and the time to the first result.
func timedVerify(b *testing.B, n int, args ...string) (total, first time.Duration) {
	b.Helper()
	dir, _ := tinyStoreN(b, n)
	var out bytes.Buffer
	errOut := &firstLine{}
	f := &factory{Global: &globalOptions{}, Out: &out, Err: errOut, Getenv: func(string) string { return "" }}
	root := newRootCommand(f)
	root.SetArgs(append([]string{"--store", dir, "verify"}, args...))
	start := time.Now()
	if err := root.ExecuteContext(context.Background()); err != nil {
		b.Fatalf("verify %v: %v\n%s\n%s", args, err, out.String(), errOut.buf.String())
	}
	total = time.Since(start)
	if want := "verified " + strconv.Itoa(n) + " candidates: " + strconv.Itoa(n) + " run"; !strings.Contains(out.String(), want) {
		b.Fatalf("verify %v: %s", args, out.String())
	}
	return total, errOut.first.Sub(start)
}

// BenchmarkVerifySlurm compares W workers of a Slurm job array on this one node with a
// local verify --jobs W of the same candidates: throughput, Slurm's overhead per
// candidate and the time from submit to the first result. ENVGAP_BENCH_WORKERS (default
// 2) and ENVGAP_BENCH_CANDIDATES (default 8) size it.
func BenchmarkVerifySlurm(b *testing.B) {
	needSlurmAndEngine(b)
	b.Setenv("ENVGAP_TEST_AS_ENVGAP", "1")
	workers, candidates := 2, 8
	if v, err := strconv.Atoi(os.Getenv("ENVGAP_BENCH_WORKERS")); err == nil && v > 0 {
		workers = v
	}
	if v, err := strconv.Atoi(os.Getenv("ENVGAP_BENCH_CANDIDATES")); err == nil && v > 0 {
		candidates = v
	}
	w := strconv.Itoa(workers)
	for range b.N {
		local, localFirst := timedVerify(b, candidates, "--jobs", w)
		sl, slFirst := timedVerify(b, candidates, "--slurm", "--workers", w)
		n := float64(candidates)
		b.ReportMetric(n/local.Seconds()*60, "local-cand/min")
		b.ReportMetric(n/sl.Seconds()*60, "slurm-cand/min")
		b.ReportMetric((sl-local).Seconds()/n, "overhead-s/cand")
		b.ReportMetric(localFirst.Seconds(), "local-first-s")
		b.ReportMetric(slFirst.Seconds(), "slurm-first-s")
		b.Logf("%d candidates, %d workers: local --jobs %s %s (first result %s), --slurm --workers %s %s (first result %s)",
			candidates, workers, w, local.Round(time.Millisecond), localFirst.Round(time.Millisecond), w, sl.Round(time.Millisecond), slFirst.Round(time.Millisecond))
	}
}
