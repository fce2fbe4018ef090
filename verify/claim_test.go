package verify

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/core/registry"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/data/datatest"
	"github.com/envgap/envgap/schemas"
)

// Child mode of TestTwoVerifiesShareTheWork: verify every candidate of the store in
// $verifyChildEnv with a fake engine that logs each run to $verifyLogEnv, once released.
const (
	verifyChildEnv = "ENVGAP_TEST_VERIFY_CHILD"
	verifyLogEnv   = "ENVGAP_TEST_VERIFY_LOG"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(verifyChildEnv); dir != "" {
		if err := verifyChild(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// loggingRunner is the fake engine, slowed down so that two verifies overlap, logging
// "<instance id> <side>" for every run it does.
type loggingRunner struct {
	fakeRunner
	log string
}

func (r *loggingRunner) Run(ctx context.Context, spec sandbox.Spec) (*sandbox.Result, error) {
	time.Sleep(20 * time.Millisecond)
	f, err := os.OpenFile(r.log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(f, "%s %s %d\n", spec.Labels["org.envgap.instance"], spec.Labels["org.envgap.side"], os.Getpid())
	f.Close()
	return r.fakeRunner.Run(ctx, spec)
}

func verifyChild(dir string) error {
	ClaimPoll = 20 * time.Millisecond
	datatest.Wait()
	st, err := catalog.Open(dir)
	if err != nil {
		return err
	}
	proxy, err := registry.New(registry.Options{NPMUpstream: "http://127.0.0.1:1/"})
	if err != nil {
		return err
	}
	stage := &Stage{Store: st, Cores: []*core.Core{{Runner: &loggingRunner{log: os.Getenv(verifyLogEnv)}, Proxy: proxy, ProxyURL: "http://127.0.0.1:1", Store: st}}}
	rep, err := stage.Run(context.Background(), Options{Jobs: 2})
	if err != nil {
		return err
	}
	if rep.Failed > 0 {
		return fmt.Errorf("failed: %+v", rep.Results)
	}
	fmt.Printf("ran %d cached %d\n", rep.Ran, rep.Cached)
	return nil
}

// Two verifies on one store, in two processes at once, share the work: each candidate
// runs once, and no verdict has a previous one.
func TestTwoVerifiesShareTheWork(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	st, err := catalog.Open(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	cands := benchCandidates(20)
	if _, err := st.AddCandidateSet("test", "test", cands, nil); err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(dir, "runs.log")
	outs := datatest.Children(t, 2, func(int) []string {
		return []string{verifyChildEnv + "=" + filepath.Join(dir, "store"), verifyLogEnv + "=" + logFile}
	})
	for _, o := range outs {
		if !strings.HasPrefix(o, "ran ") {
			t.Fatalf("verify: %s", o)
		}
	}
	log, _ := os.ReadFile(logFile)
	runs := map[string]int{}
	pids := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(log)), "\n") {
		f := strings.Fields(line)
		runs[f[0]+" "+f[1]]++
		pids[f[2]] = true
	}
	for _, c := range cands {
		for _, side := range []string{"before", "after"} {
			if n := runs[c.InstanceID+" "+side]; n != 1 {
				t.Errorf("%s %s ran %d times, want once", c.InstanceID, side, n)
			}
		}
		v, _, err := st.Verdict(c.InstanceID)
		if err != nil {
			t.Fatalf("%s: %v", c.InstanceID, err)
		}
		if !v.Previous.IsZero() {
			t.Errorf("%s: verdict has a previous one", c.InstanceID)
		}
	}
	t.Logf("verifies: %q; runs by %d processes", outs, len(pids))
	if cl, _ := st.Claims("verify/"); len(cl) != 0 {
		t.Errorf("claims left: %+v", cl)
	}
}

// The same on the real engine: two verify sessions on one store at once run each
// candidate's containers once between them.
func TestTwoVerifySessionsOnTheEngine(t *testing.T) {
	st, _ := catalog.Open(t.TempDir())
	fix := pypiFixture(t, "demo-pkg", []fixtureFile{
		{"1.0", "2023-01-01T00:00:00.000000Z", wheel(t, "demo-pkg", "1.0", "VALUE = 1\n")},
		{"2.0", "2023-09-01T00:00:00.000000Z", wheel(t, "demo-pkg", "2.0", "VALUE = 2\n")},
	})
	sessions := []*Session{openEnv(t, st, fix.URL+"/simple/"), openEnv(t, st, fix.URL+"/simple/")}
	run := "python3 -c 'import demo_pkg; print(\"value\", demo_pkg.VALUE)'"
	var cands []schemas.Candidate
	for i, req := range []string{"demo-pkg==2.0\n", "demo-pkg==1.0\n"} {
		c := liteCandidate(fmt.Sprintf("envgap__claude-code__python-t9-%d", i+1), schemas.EcosystemPython,
			map[string]string{"requirements.txt": req}, map[string]string{"requirements.txt": "demo-pkg==1.0\n"})
		c.ResolveCommand = "pip install -r requirements.txt"
		c.ReproCommand = "pip install -r requirements.txt && " + run
		c.RunCommand = run
		c.ExpectedFailureRegex = "No matching distribution found for demo-pkg==2\\.0"
		cands = append(cands, c)
	}
	if _, err := st.AddCandidateSet("test", "test", cands, nil); err != nil {
		t.Fatal(err)
	}
	counters := make([]*countingRunner, len(sessions))
	for i, s := range sessions {
		counters[i] = &countingRunner{Runner: s.Stage.Cores[0].Runner}
		s.Stage.Cores[0].Runner = counters[i]
	}
	reps := make([]*Report, len(sessions))
	errs := make([]error, len(sessions))
	var wg sync.WaitGroup
	for i, s := range sessions {
		wg.Add(1)
		go func(i int, s *Session) {
			defer wg.Done()
			reps[i], errs[i] = s.Stage.Run(context.Background(), Options{})
		}(i, s)
	}
	wg.Wait()
	for i := range sessions {
		if errs[i] != nil || reps[i].Failed > 0 {
			t.Fatalf("verify %d: %v %+v", i, errs[i], reps[i])
		}
	}
	if total := counters[0].runs.Load() + counters[1].runs.Load(); total != 4 {
		t.Errorf("%d container runs for 2 candidates between two verifies, want 4", total)
	}
	for _, c := range cands {
		v, _, err := st.Verdict(c.InstanceID)
		if err != nil || !v.Previous.IsZero() {
			t.Errorf("%s: previous %s, %v", c.InstanceID, v.Previous.Short(), err)
		}
	}
	t.Logf("runs per session: %d, %d", counters[0].runs.Load(), counters[1].runs.Load())
}
