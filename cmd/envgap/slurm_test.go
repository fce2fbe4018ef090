package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/internal/testenv"
	"github.com/envgap/envgap/lib/jobs"
	"github.com/envgap/envgap/schemas"
)

// needSlurmAndEngine skips (fails under ENVGAP_REQUIRE_ENGINE=1, as in CI) without a
// Slurm controller, a container engine or the Python image.
func needSlurmAndEngine(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Slurm and the container engine")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	problem := ""
	if err := (&jobs.Client{}).Check(ctx); err != nil {
		problem = err.Error() + " (make slurm starts one)"
	} else if os.Getenv("DOCKER_HOST") == "" {
		problem = "DOCKER_HOST is not set (make engine prints it)"
	} else if out, err := exec.CommandContext(ctx, "docker", "image", "inspect", "localhost/envgap-python-eval").CombinedOutput(); err != nil {
		problem = fmt.Sprintf("the python image: %v %s (make images)", err, strings.TrimSpace(string(out)))
	}
	if problem != "" {
		testenv.Missing(t, "%s", problem)
	}
}

// tinyCandidates are demo-like Lite candidates that need no registry and run in a few
// seconds: each outcome verify decides, and verified twice.
func tinyCandidates() []schemas.Candidate { return tinyN(4) }

// tinyN returns n tiny candidates, cycling through verified, already_works,
// not_reproduced and verified.
func tinyN(count int) []schemas.Candidate {
	repro := `if [ "$(cat README.md)" = ok ]; then echo fine; else echo "ERROR: the tiny environment is broken"; exit 1; fi`
	kinds := []struct{ mode, fix string }{{"broken", "ok"}, {"ok", "ok"}, {"broken", "still-broken"}, {"broken", "ok"}}
	var out []schemas.Candidate
	for i := range count {
		c := kinds[i%len(kinds)]
		n := i + 1
		mode, fix := c.mode+"\n", c.fix+"\n"
		out = append(out, schemas.Candidate{
			Ident: schemas.Ident{InstanceID: fmt.Sprintf("envgap__tiny__python-t1-%d", n)},
			Set:   schemas.SourceLite,
			Spec: schemas.Spec{
				Repo: "tiny/python-t1", CreatedAt: "2026-01-01T00:00:00Z", RegistryDate: "2026-01-02T00:00:00Z",
				Ecosystem:      schemas.EcosystemPython,
				ProjectFiles:   []schemas.File{{Path: "README.md", Content: &mode}},
				GoldFiles:      []schemas.File{{Path: "README.md", Content: &fix}},
				ResolveCommand: "true", ReproCommand: repro, RunCommand: `test "$(cat README.md)" = ok`,
				ExpectedFailureRegex: "the tiny environment is broken",
			},
			Origin: schemas.Origin{IssueNumber: int64(n)},
		})
	}
	return out
}

func tinyStore(t testing.TB) (string, *catalog.Catalog) { return tinyStoreN(t, 4) }

func tinyStoreN(t testing.TB, n int) (string, *catalog.Catalog) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	st, err := catalog.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddCandidateSet("test", "test", tinyN(n), nil); err != nil {
		t.Fatal(err)
	}
	return dir, st
}

// verdicts returns each candidate's outcome and reason, and how often its verdict ref
// was set (from the ref log).
func verdicts(t *testing.T, dir string, st *catalog.Catalog) (map[string]string, map[string]int) {
	t.Helper()
	out := map[string]string{}
	for _, c := range tinyCandidates() {
		v, _, err := st.Verdict(c.InstanceID)
		if err != nil {
			t.Fatalf("%s: %v", c.InstanceID, err)
		}
		out[c.InstanceID] = fmt.Sprintf("%s (%s): %s", v.Outcome, v.Stability, v.Reason)
	}
	sets := map[string]int{}
	f, err := os.Open(filepath.Join(dir, "logs", "refs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e struct{ Ref string }
		json.Unmarshal(sc.Bytes(), &e)
		if id, ok := strings.CutPrefix(e.Ref, data.RefVerdicts); ok {
			sets[id]++
		}
	}
	return out, sets
}

// TestVerifySlurmEqualsLocal verifies the same candidates locally and through a Slurm
// job array of three workers (two of them killed halfway in a second run): the
// verdicts are the same, every candidate gets exactly one, and the work folder is gone.
func TestVerifySlurmEqualsLocal(t *testing.T) {
	needSlurmAndEngine(t)
	t.Setenv("ENVGAP_TEST_AS_ENVGAP", "1") // the workers are this binary, acting as envgap

	localDir, localSt := tinyStore(t)
	if out, err := runCLI(t, "--store", localDir, "verify", "--jobs", "2"); err != nil {
		t.Fatalf("local verify: %v\n%s", err, out)
	}
	want, _ := verdicts(t, localDir, localSt)
	outcomes := map[string]int{}
	for _, v := range want {
		outcomes[strings.Fields(v)[0]]++
	}
	if outcomes["verified"] != 2 || outcomes["already_works"] != 1 || outcomes["not_reproduced"] != 1 {
		t.Fatalf("the local verify did not decide the expected outcomes: %v", want)
	}

	check := func(name, dir string, st *catalog.Catalog, out string) {
		t.Helper()
		got, sets := verdicts(t, dir, st)
		for id, w := range want {
			if got[id] != w {
				t.Errorf("%s: %s: %s\nlocal: %s", name, id, got[id], w)
			}
			if sets[id] != 1 {
				t.Errorf("%s: %s: the verdict ref was set %d times, want once", name, id, sets[id])
			}
		}
		// Each candidate is run once or, where a killed worker had stored its verdict
		// before it could report the item done, found unchanged by the item's second
		// attempt: never twice, never failed.
		m := regexp.MustCompile(`verified 4 candidates: (\d) run, (\d) unchanged \(not run\), 0 failed`).FindStringSubmatch(out)
		if m == nil || m[1][0]-'0'+m[2][0]-'0' != 4 || (name == "three workers" && m[1] != "4") {
			t.Errorf("%s: report:\n%s", name, out)
		}
		if ents, _ := os.ReadDir(filepath.Join(dir, "work")); len(ents) != 0 {
			t.Errorf("%s: the work folder was kept: %v", name, ents)
		}
	}

	t.Run("three workers, then recheck", func(t *testing.T) {
		dir, st := tinyStore(t)
		out, err := runCLI(t, "--store", dir, "verify", "--slurm", "--workers", "3")
		if err != nil {
			t.Fatalf("verify --slurm: %v\n%s", err, out)
		}
		check("three workers", dir, st, out)
		// The same tasks, the same corpus id; a recheck through Slurm records what a
		// local one does.
		ids := map[string]string{}
		rechecks := map[string]string{}
		for name, d := range map[string]string{"local": localDir, "slurm": dir} {
			if out, err := runCLI(t, "--store", d, "admit"); err != nil {
				t.Fatalf("%s admit: %v\n%s", name, err, out)
			}
			id, err := runCLI(t, "--store", d, "corpus-id")
			if err != nil {
				t.Fatal(err)
			}
			ids[name] = id
			args := []string{"--store", d, "recheck", "--date", "2026-02-01"}
			if name == "slurm" {
				args = append(args, "--slurm", "--workers", "2")
			}
			out, err := runCLI(t, args...)
			if err != nil {
				t.Fatalf("%s recheck: %v\n%s", name, err, out)
			}
			rechecks[name] = out
		}
		if ids["local"] != ids["slurm"] {
			t.Errorf("corpus ids differ: local %s, slurm %s", ids["local"], ids["slurm"])
		}
		// Eval of a predictions file through Slurm equals the local eval: one task fixed,
		// one left broken.
		preds := filepath.Join(t.TempDir(), "preds.jsonl")
		os.WriteFile(preds, []byte(`{"instance_id":"envgap__tiny__python-t1-1","files":{"README.md":"ok\n"}}`+"\n"+
			`{"instance_id":"envgap__tiny__python-t1-4","files":{"README.md":"broken\n"}}`+"\n"), 0o644)
		evals := map[string]string{}
		for name, d := range map[string]string{"local": localDir, "slurm": dir} {
			outDir := filepath.Join(t.TempDir(), "results")
			args := []string{"--store", d, "eval", "--pred", preds, "--split", "lite", "--out", outDir, "--no-safe-install"}
			if name == "slurm" {
				args = append(args, "--slurm", "--workers", "2")
			}
			out, err := runCLI(t, args...)
			if err != nil {
				t.Fatalf("%s eval: %v\n%s", name, err, out)
			}
			b, err := os.ReadFile(filepath.Join(outDir, "results.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			var statuses []string
			for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				var r struct {
					InstanceID string `json:"instance_id"`
					Status     string `json:"status"`
					Reason     string `json:"reason"`
				}
				json.Unmarshal([]byte(line), &r)
				statuses = append(statuses, r.InstanceID+": "+r.Status+": "+r.Reason)
			}
			evals[name] = strings.SplitN(out, "\n", 2)[0] + "\n" + strings.Join(statuses, "\n")
		}
		if evals["local"] != evals["slurm"] || !strings.Contains(evals["slurm"], "resolved 1, unresolved 1") {
			t.Errorf("evals differ:\nlocal:\n%s\nslurm:\n%s", evals["local"], evals["slurm"])
		}
		if rechecks["local"] != rechecks["slurm"] || !strings.Contains(rechecks["slurm"], "recheck 2026-02-01: 2 tasks, 0 excluded, 0 not rechecked") {
			t.Errorf("rechecks differ:\nlocal:\n%s\nslurm:\n%s", rechecks["local"], rechecks["slurm"])
		}
	})

	t.Run("workers killed halfway", func(t *testing.T) {
		dir, st := tinyStore(t)
		type result struct {
			out string
			err error
		}
		done := make(chan result, 1)
		go func() {
			out, err := runCLI(t, "--store", dir, "verify", "--slurm", "--workers", "3")
			done <- result{out, err}
		}()
		// Halfway: once a first result is in, stop two workers that hold an item.
		killed := ""
		deadline := time.Now().Add(5 * time.Minute)
		for killed == "" && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
			works, _ := filepath.Glob(filepath.Join(dir, "work", "verify-*"))
			if len(works) != 1 {
				continue
			}
			q, err := jobs.OpenQueue(works[0])
			if err != nil {
				continue
			}
			res, _, _ := q.Results(nil)
			n := 0
			for _, d := range res {
				if d != nil {
					n++
				}
			}
			if n == 0 {
				continue
			}
			// The first holder is killed with SIGKILL (it cannot give its item back: its
			// death is seen on this machine), a second one, when there is one, cancelled
			// with scancel (it gives its item back).
			leases, _ := q.Leases()
			for _, l := range leases {
				if l.Released || !strings.HasPrefix(l.Label, "slurm-") {
					continue
				}
				task := strings.TrimPrefix(l.Label, "slurm-")
				if killed == "" {
					if err := syscall.Kill(l.Owner.PID, syscall.SIGKILL); err != nil {
						t.Fatal(err)
					}
					killed = task
					t.Logf("killed the worker of array task %s (kill -9) after %d result(s)", task, n)
					continue
				}
				if err := (&jobs.Client{}).Cancel(context.Background(), task); err != nil {
					t.Fatal(err)
				}
				t.Logf("cancelled array task %s (scancel) after %d result(s)", task, n)
				break
			}
		}
		if killed == "" {
			t.Fatal("no array task held an item after the first result")
		}
		r := <-done
		if r.err != nil {
			t.Fatalf("verify --slurm with killed workers: %v\n%s", r.err, r.out)
		}
		check("workers killed", dir, st, r.out)
	})
}

// TestSlurmBadInputSubmitsNothing: mistakes found before anything is submitted give a
// clear error, and the store is unchanged.
func TestSlurmBadInputSubmitsNothing(t *testing.T) {
	dir, _ := tinyStore(t)
	before := storeFiles(t, dir)
	cases := []struct {
		args []string
		want string
		code int
	}{
		{[]string{"--store", "rel/store", "verify", "--slurm"}, "relative path", exitUsage},
		{[]string{"--store", dir, "verify", "--slurm", "--engine", "unix:///x.sock"}, "--engine does not go with --slurm", exitUsage},
		{[]string{"--store", dir, "verify", "--workers", "2"}, "--workers needs --slurm", exitUsage},
		{[]string{"--store", dir, "verify", "--", "--account=x"}, "need --slurm", exitUsage},
		{[]string{"--store", dir, "verify", "--slurm", "--workers", "0"}, "at least 1", exitUsage},
	}
	if (&jobs.Client{}).Check(context.Background()) == nil {
		cases = append(cases,
			struct {
				args []string
				want string
				code int
			}{[]string{"--store", dir, "verify", "--slurm", "--partition", "no-such-partition"}, `partition "no-such-partition" does not exist`, exitUsage},
			struct {
				args []string
				want string
				code int
			}{[]string{"--store", dir, "verify", "--slurm", "--time", "soon"}, "Invalid --time", exitUsage},
			struct {
				args []string
				want string
				code int
			}{[]string{"--store", dir, "verify", "--slurm", "--", "--no-such-flag"}, "sbatch", exitUsage},
		)
	} else if testenv.Required() {
		t.Fatal("ENVGAP_REQUIRE_ENGINE=1 but Slurm does not answer (make slurm)")
	}
	for _, tc := range cases {
		_, err := runCLI(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || exitCode(err) != tc.code {
			t.Errorf("%v: %v (exit %d); want %q, exit %d", tc.args, err, exitCode(err), tc.want, tc.code)
		}
	}
	// No Slurm on the machine.
	t.Setenv("PATH", t.TempDir())
	if _, err := runCLI(t, "--store", dir, "verify", "--slurm"); err == nil || !strings.Contains(err.Error(), "sbatch is not installed") || exitCode(err) != exitError {
		t.Errorf("without Slurm: %v (exit %d)", err, exitCode(err))
	}
	after := storeFiles(t, dir)
	if len(after) != len(before) {
		t.Errorf("the store changed: %d files, then %d", len(before), len(after))
	}
	for p, b := range before {
		if after[p] != b {
			t.Errorf("%s changed", p)
		}
	}
}

// TestSlurmInterruptCancelsTheArray: SIGINT to the submitting command cancels the job
// array, exits 130, and leaves no verdict half-written.
func TestSlurmInterruptCancelsTheArray(t *testing.T) {
	needSlurmAndEngine(t)
	dir, _ := tinyStore(t)
	cmd := exec.Command(os.Args[0], "--store", dir, "verify", "--slurm", "--workers", "2")
	cmd.Env = append(os.Environ(), "ENVGAP_TEST_AS_ENVGAP=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	job := ""
	for deadline := time.Now().Add(2 * time.Minute); job == "" && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		files, _ := filepath.Glob(filepath.Join(dir, "work", "verify-*", "job"))
		if len(files) == 1 {
			b, _ := os.ReadFile(files[0])
			job = strings.TrimSpace(string(b))
		}
	}
	if job == "" {
		cmd.Process.Kill()
		t.Fatalf("no job was submitted: %s", stderr.String())
	}
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitCanceled {
		t.Fatalf("the interrupted submitter: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "cancelled job array "+job) {
		t.Errorf("stderr does not say the array was cancelled:\n%s", stderr.String())
	}
	c := &jobs.Client{}
	for deadline := time.Now().Add(time.Minute); ; {
		tasks, err := c.Tasks(context.Background(), job)
		if err != nil {
			t.Fatal(err)
		}
		if len(tasks) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still has tasks a minute after the interrupt: %+v", job, tasks)
		}
		time.Sleep(500 * time.Millisecond)
	}
	// Whatever was finished is kept whole.
	if out, err := runCLI(t, "--store", dir, "store", "fsck"); err != nil {
		t.Fatalf("fsck after the interrupt: %v\n%s", err, out)
	}
}

// TestStudyRunSlurmEqualsLocal runs the same study (the demo's scripted command agent,
// problems 13 and 48 in JavaScript: one runs at Gen, one after a repair round) locally and
// as a Slurm job array of two workers, and finds the same study folder: the same projects,
// files, meta.json (but its times), layers.json (but the run record's digest) and rounds
// (but the error text, where npm names its log by the time, and the run digests).
func TestStudyRunSlurmEqualsLocal(t *testing.T) {
	needSlurmAndEngine(t)
	requireEngine(t, "envgap-javascript-eval")
	t.Setenv("ENVGAP_TEST_AS_ENVGAP", "1") // the workers are this binary, acting as envgap
	agentCmd := "bash " + mustAbs(t, "../../data/demo/agents/study-agent.sh")
	problems := mustAbs(t, "../../data/problems.json")
	studies := map[string]string{}
	for _, mode := range []string{"local", "slurm"} {
		out := filepath.Join(t.TempDir(), "study")
		args := []string{"--store", filepath.Join(t.TempDir(), "store"), "study", "run", "--agent", agentCmd, "--agent-name", "scripted",
			"--languages", "javascript", "--only", "13,48", "--max-repairs", "2", "--out", out, "--problems", problems}
		if mode == "slurm" {
			args = append(args, "--slurm", "--workers", "2")
		}
		got, err := runCLI(t, args...)
		if err != nil || !strings.Contains(got, "2 project(s) written") {
			t.Fatalf("%s study run: %v\n%s", mode, err, got)
		}
		studies[mode] = out
	}
	read := func(root string) map[string]string {
		files := map[string]string{}
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			switch filepath.Base(p) {
			case "meta.json":
				var m map[string]any
				if err := json.Unmarshal(b, &m); err != nil {
					return err
				}
				delete(m, "created_at")
				delete(m, "repaired_at")
				b, _ = json.Marshal(m)
			case "layers.json": // but the digest of the store's run record (it holds times)
				var m map[string]any
				if err := json.Unmarshal(b, &m); err != nil {
					return err
				}
				delete(m, "run")
				b, _ = json.Marshal(m)
			case "rounds.json":
				var r struct {
					Rounds []struct {
						Round int    `json:"round"`
						Ran   bool   `json:"ran"`
						Step  string `json:"step"`
						Agent string `json:"agent"`
					} `json:"rounds"`
				}
				if err := json.Unmarshal(b, &r); err != nil {
					return err
				}
				b, _ = json.Marshal(r)
			}
			files[filepath.ToSlash(rel)] = string(b)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	local, slurm := read(studies["local"]), read(studies["slurm"])
	if _, ok := local["scripted/javascript-t1/p48/repaired/package.json"]; !ok || len(local) < 10 {
		t.Fatalf("the local study folder lacks the repaired project: %v", local)
	}
	for p, want := range local {
		if slurm[p] != want {
			t.Errorf("%s: slurm %q\nlocal %q", p, slurm[p], want)
		}
	}
	for p := range slurm {
		if _, ok := local[p]; !ok {
			t.Errorf("%s: only in the slurm study folder", p)
		}
	}
}

// eval --slurm scores the same predictions as a local eval, its workers reading the
// predictions file, the tasks folder and the OSV file from their absolute paths: after a
// first local eval on the store, a second local one and one --slurm write the same result
// folder (results, summary, logs; every run reused from the store).
func TestEvalSlurmEqualsLocal(t *testing.T) {
	needSlurmAndEngine(t)
	t.Setenv("ENVGAP_TEST_AS_ENVGAP", "1") // the workers are this binary, acting as envgap
	w := newEvalWorld(t)
	fixed, _ := json.Marshal(evalFixed)
	preds := writePreds(t,
		`{"instance_id": "`+evalRepair+`", "files": {"requirements.txt": `+string(fixed)+`}, "cost_usd": 0.25}`,
		`{"instance_id": "`+evalControl+`", "files": {}}`,
		`{"instance_id": "`+evalExcluded+`", "files": {}}`)
	store, res := filepath.Join(t.TempDir(), "store"), t.TempDir()
	for _, mode := range []string{"first", "local", "slurm"} {
		args := []string{"--store", store, "eval", "--pred", preds, "--split", "full", "--tasks", w.hub, "--out", filepath.Join(res, mode),
			"--git-url-template", w.gitTemplate, "--pypi-upstream", w.pypi + "/simple/", "--pypi", w.pypi,
			"--npm-registry", "http://127.0.0.1:9/", "--osv", w.osv, "--step-timeout", "3m"}
		if mode == "slurm" {
			args = append(args, "--slurm", "--workers", "2")
		}
		if o, err := runCLI(t, args...); err != nil {
			t.Fatalf("eval (%s): %v\n%s", mode, err, o)
		}
	}
	if works, _ := filepath.Glob(filepath.Join(store, "work", "*")); len(works) != 0 {
		t.Errorf("work folders left: %v", works)
	}
	for _, name := range []string{"results.jsonl", "summary.json", filepath.Join("logs", evalRepair+".log")} {
		local, err := os.ReadFile(filepath.Join(res, "local", name))
		if err != nil {
			t.Fatal(err)
		}
		slurm, err := os.ReadFile(filepath.Join(res, "slurm", name))
		if err != nil || string(slurm) != string(local) {
			t.Errorf("%s differs (%v):\nlocal:\n%s\nslurm:\n%s", name, err, local, slurm)
		}
	}
}
