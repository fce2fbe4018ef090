package eval

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/lib/safeinstall"
	"github.com/envgap/envgap/schemas"
)

func str(s string) *string { return &s }

func TestReadPredictionsNamesEveryBadLine(t *testing.T) {
	in := strings.Join([]string{
		`{"instance_id": "a", "files": {"requirements.txt": "x==1\n"}, "trajectory": [], "cost_usd": 0.5}`,
		``,
		`not json`,
		`{"instance_id": "b", "files": ["requirements.txt"]}`,
		`{"instance_id": "c", "files": {"p": 3}}`,
		`{"instance_id": "d", "files": {}, "extra": 1}`,
		`{"files": {}}`,
		"{\"instance_id\": \"e\", \"files\": {\"p\": \"\xff\"}}",
		`{"instance_id": "f", "files": {"gone.txt": null}, "trajectory": null, "cost_usd": null}`,
	}, "\n")
	_, err := schemas.ReadPredictions(strings.NewReader(in), "preds.jsonl")
	var probs schemas.Problems
	if !errors.As(err, &probs) {
		t.Fatalf("got %v, want problems", err)
	}
	want := []string{"preds.jsonl:3", "preds.jsonl:4: b: field files", "preds.jsonl:5: c: field files", "preds.jsonl:6: d: field extra", "preds.jsonl:7", "preds.jsonl:8"}
	if len(probs) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%v", len(probs), len(want), probs)
	}
	for i, w := range want {
		if !strings.HasPrefix(probs[i].Error(), w) {
			t.Errorf("problem %d: %q, want it to start with %q", i, probs[i].Error(), w)
		}
	}
	good, err := schemas.ReadPredictions(strings.NewReader(strings.Join([]string{
		`{"instance_id": "a", "files": {"requirements.txt": "x==1\n"}, "trajectory": [], "cost_usd": 0.5}`,
		`{"instance_id": "f", "files": {"gone.txt": null}, "trajectory": null, "cost_usd": null}`}, "\n")), "p")
	if err != nil || len(good) != 2 || *good[0].CostUSD != 0.5 || good[1].Files["gone.txt"] != nil {
		t.Fatalf("got %+v, %v", good, err)
	}
}

func TestMatchListsMissingUnknownRepeated(t *testing.T) {
	tasks := []schemas.Task{{Ident: schemas.Ident{InstanceID: "a"}}, {Ident: schemas.Ident{InstanceID: "b"}}, {Ident: schemas.Ident{InstanceID: "c"}}}
	preds := []schemas.Prediction{{InstanceID: "a"}, {InstanceID: "a"}, {InstanceID: "z"}, {InstanceID: "b"}}
	_, err := Match(tasks, preds, "p.jsonl")
	var probs schemas.Problems
	if !errors.As(err, &probs) || len(probs) != 3 {
		t.Fatalf("got %v", err)
	}
	text := err.Error()
	for _, w := range []string{"p.jsonl: a: repeated", "p.jsonl: z: unknown", "p.jsonl: c: missing"} {
		if !strings.Contains(text, w) {
			t.Errorf("%q not in\n%s", w, text)
		}
	}
}

func repaired() *schemas.Task {
	pr := int64(95)
	return &schemas.Task{
		Ident: schemas.Ident{InstanceID: "envgap__o__r-93"},
		Spec: schemas.Spec{
			Repo:       "o/r",
			BaseCommit: "89c361ab0961cd3b51249dde4fce95937ec10bdd",
			Patch:      "diff --git a/setup.py b/setup.py\n--- a/setup.py\n+++ b/setup.py\n@@ -1,2 +1,2 @@\n x = 1\n-    setup_requires=['cython'],\n+    setup_requires=['cython<3.0.0'],\n",
		},
		Source: schemas.SourceRepaired,
		Origin: schemas.Origin{
			PullRequest:  str("https://github.com/o/r/pull/95"),
			PRNumber:     &pr,
			PRHeadCommit: str("684615af89166275b440d6c2977b0ca0acc71c26"), PRMergeCommit: str("7e46a671dd28498f647fc885a1b1053aeb267dc5"),
		},
	}
}

func TestLeakRules(t *testing.T) {
	fix := map[string]*string{"setup.py": str("x = 1\n    setup_requires=['cython<3.0.0'],\n")}
	for _, tc := range []struct {
		name  string
		traj  []any
		rule  string
		step  int
		shape string
	}{
		{"clean", []any{map[string]any{"action": "pip install .", "output": "error: cython"}}, "", 0, "steps"},
		{"pr url", []any{map[string]any{"action": "ls"}, map[string]any{"action": "curl https://github.com/o/r/pull/95.diff"}}, RulePullRequest, 1, "steps"},
		{"pr ref", []any{map[string]any{"command": "see o/r#95"}}, RulePullRequest, 0, "steps"},
		{"merge commit", []any{map[string]any{"output": "commit 7e46a67 (origin/main)"}}, RuleFixCommit, 0, "steps"},
		{"base commit is fine", []any{map[string]any{"output": "HEAD is 89c361ab"}}, "", 0, "steps"},
		{"unshallow", []any{map[string]any{"role": "assistant", "content": "git fetch --unshallow origin"}}, RuleHistory, 0, "steps"},
		{"log all", []any{map[string]any{"type": "item.completed", "item": map[string]any{"type": "command_execution", "command": "git -C . log --all -S cython", "aggregated_output": ""}}}, RuleHistory, 0, "steps"},
		{"full clone", []any{map[string]any{"cmd": "git clone https://github.com/o/r.git /tmp/r"}}, RuleHistory, 0, "steps"},
		{"shallow clone is fine", []any{map[string]any{"cmd": "git clone --depth 1 https://github.com/o/r.git /tmp/r"}}, "", 0, "steps"},
		{"fix lines shown first", []any{
			map[string]any{"role": "tool", "content": "+    setup_requires=['cython<3.0.0'],"},
			map[string]any{"role": "assistant", "content": "edit setup.py: setup_requires=['cython<3.0.0'],"}}, RuleFixLines, 0, "steps"},
		{"fix lines written first", []any{
			map[string]any{"role": "assistant", "content": "edit setup.py: setup_requires=['cython<3.0.0'],"},
			map[string]any{"role": "tool", "content": "    setup_requires=['cython<3.0.0'],"}}, "", 0, "steps"},
		{"claude stream-json", []any{
			map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "input": map[string]any{"command": "git log --all --oneline"}}}}}}, RuleHistory, 0, "steps"},
		{"claude tool result", []any{
			map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "content": "684615af89 fix build"}}}}}, RuleFixCommit, 0, "steps"},
		{"OpenHands observation", []any{
			map[string]any{"action": "run", "args": map[string]any{"command": "cat setup.py"}},
			map[string]any{"observation": "run", "content": "commit 7e46a671dd28 Merge pull request", "extras": map[string]any{}}}, RuleFixCommit, 1, "steps"},
		{"OpenHands output before write", []any{
			map[string]any{"observation": "run", "content": "    setup_requires=['cython<3.0.0'],"},
			map[string]any{"action": "edit", "args": map[string]any{"new_str": "setup_requires=['cython<3.0.0'],"}}}, RuleFixLines, 0, "steps"},
		{"OpenHands write before output", []any{
			map[string]any{"action": "edit", "args": map[string]any{"new_str": "setup_requires=['cython<3.0.0'],"}},
			map[string]any{"observation": "run", "content": "    setup_requires=['cython<3.0.0'],"}}, "", 0, "steps"},
		{"ATIF", []any{map[string]any{"schema_version": "ATIF-v1.2", "steps": []any{map[string]any{"source": "agent", "tool_calls": []any{map[string]any{"function_name": "bash", "arguments": map[string]any{"cmd": "git pull"}}}}}}}, RuleHistory, 0, "ATIF"},
	} {
		steps, shape, ok := readTrajectory(tc.traj)
		if !ok || shape != tc.shape {
			t.Errorf("%s: shape %q ok %v", tc.name, shape, ok)
			continue
		}
		leaks := findLeaks(repaired(), steps, fix)
		switch {
		case tc.rule == "" && len(leaks) > 0:
			t.Errorf("%s: unexpected leaks %+v", tc.name, leaks)
		case tc.rule != "" && (len(leaks) == 0 || leaks[0].Rule != tc.rule || leaks[0].Step != tc.step):
			t.Errorf("%s: leaks %+v, want rule %s at step %d", tc.name, leaks, tc.rule, tc.step)
		}
	}
	// The issue itself shows the line: no leak.
	withIssue := repaired()
	withIssue.ProblemStatement = "Pinning it works:\n    setup_requires=['cython<3.0.0'],\n"
	steps, _, _ := readTrajectory([]any{map[string]any{"role": "user", "content": withIssue.ProblemStatement}})
	if leaks := findLeaks(withIssue, steps, fix); len(leaks) > 0 {
		t.Errorf("a line of the issue: %+v", leaks)
	}
	for _, traj := range [][]any{{"just text"}, {map[string]any{"foo": 1}}, {[]any{1}}} {
		if _, why, ok := readTrajectory(traj); ok || why == "" {
			t.Errorf("%v: read as known (%q)", traj, why)
		}
	}
}

// fakeRunner answers every spec with a run that resolved when the overlay pins x==1.
type fakeRunner struct{ runs atomic.Int64 }

func (f *fakeRunner) ImageID(context.Context, string) (string, error) { return "sha256:img", nil }
func (f *fakeRunner) RunSpec(_ context.Context, spec core.Spec, _ string) (*schemas.Run, schemas.Digest, bool, error) {
	f.runs.Add(1)
	ok := false
	for _, o := range spec.Overlay {
		ok = ok || (o.Content != nil && *o.Content == "x==1\n")
	}
	r := &schemas.Run{Kind: "run", InstanceID: spec.InstanceID, Resolved: ok,
		D1: schemas.DepSet{Deps: []schemas.Dependency{{Name: "x", Spec: "==1", Pinned: true}}},
		D3: schemas.DepSet{Deps: []schemas.Dependency{{Name: "x"}, {Name: "y"}}}}
	return r, schemas.Hash([]byte(spec.InstanceID)), false, nil
}

func TestScoreRejectsBeforeRunningAndMemoises(t *testing.T) {
	st, err := catalog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fr := &fakeRunner{}
	ev := &Evaluator{Store: st, Runner: fr}
	task := &schemas.Task{
		Ident:  schemas.Ident{InstanceID: "envgap__a__python-t1-1"},
		Source: schemas.SourceLite,
		Spec: schemas.Spec{
			Ecosystem:    schemas.EcosystemPython,
			ProjectFiles: []schemas.File{{Path: "requirements.txt", Content: str("x==2\n")}, {Path: "src/app.py", Content: str("print(1)\n")}},
			RunCommand:   "python3 src/app.py", ResolveCommand: "pip install -r requirements.txt", RegistryDate: "2023-01-01T00:00:00Z",
		},
	}
	for _, tc := range []struct {
		name   string
		files  map[string]*string
		status string
		reason string
	}{
		{"right fix", map[string]*string{"requirements.txt": str("x==1\n")}, schemas.EvalResolved, ""},
		{"wrong fix", map[string]*string{"requirements.txt": str("x==3\n")}, schemas.EvalUnresolved, ""},
		{"source edit", map[string]*string{"requirements.txt": str("x==1\n"), "src/app.py": str("print(2)\n")}, schemas.EvalRejected, "changes source file src/app.py"},
		{"source deleted", map[string]*string{"src/app.py": nil}, schemas.EvalRejected, "changes source file src/app.py"},
		{"source copied unchanged", map[string]*string{"requirements.txt": str("x==1\n"), "app.py": str("print(1)\n")}, schemas.EvalResolved, ""},
		{"escape", map[string]*string{"../evil.txt": str("x")}, schemas.EvalRejected, "contains \"..\""},
		{"absolute", map[string]*string{"/etc/passwd": str("x")}, schemas.EvalRejected, "absolute"},
		{"through a file", map[string]*string{"requirements.txt/x": str("x")}, schemas.EvalRejected, "goes through the project's file"},
		{"binary", map[string]*string{"requirements.txt": str("x==1\x00")}, schemas.EvalRejected, "binary content"},
	} {
		before := fr.runs.Load()
		r, cached, err := ev.Score(context.Background(), task, &schemas.Prediction{InstanceID: task.InstanceID, Files: tc.files})
		if err != nil || cached {
			t.Fatalf("%s: %v (cached %v)", tc.name, err, cached)
		}
		if r.Status != tc.status || !strings.Contains(r.Reason, tc.reason) || r.Resolved != (tc.status == schemas.EvalResolved) {
			t.Errorf("%s: %s (%s), want %s (%s)", tc.name, r.Status, r.Reason, tc.status, tc.reason)
		}
		if !st.Has(r.Prediction) {
			t.Errorf("%s: the prediction %s is not kept in the store", tc.name, r.Prediction)
		}
		ran := fr.runs.Load() - before
		if (tc.status == schemas.EvalRejected) != (ran == 0) {
			t.Errorf("%s: %d container runs", tc.name, ran)
		}
		if tc.status == schemas.EvalResolved && (!r.ManifestF1.Measured || r.ManifestF1.Precision != 1 || r.ManifestF1.Recall != 0.5) {
			t.Errorf("%s: manifest F1 %+v", tc.name, r.ManifestF1)
		}
		// The same prediction again: the memo answers, nothing runs.
		before = fr.runs.Load()
		r2, cached, err := ev.Score(context.Background(), task, &schemas.Prediction{InstanceID: task.InstanceID, Files: tc.files})
		if err != nil || !cached || fr.runs.Load() != before || r2.Status != r.Status {
			t.Errorf("%s: second score: cached %v, %d runs, %v", tc.name, cached, fr.runs.Load()-before, err)
		}
	}
}

// TestSafeInstallUnreachableKeepsTheResult: registries or advisories that do not answer
// do not hold the main score hostage: the task's result is recorded (resolved), safe
// install is not measured with the reason and how to measure it, nothing is a fault; the
// result is not memoised, so the same command measures it once the registries answer.
// flakyRegistry fails its first lookup with fault, then finds every package.
type flakyRegistry struct {
	fault error
	calls int
}

func (r *flakyRegistry) URL() string { return "fake" }

func (r *flakyRegistry) Lookup(context.Context, string, schemas.Cutoff) (safeinstall.Existence, error) {
	r.calls++
	if r.calls == 1 {
		return safeinstall.Existence{}, r.fault
	}
	return safeinstall.Existence{Now: true, AtDate: safeinstall.Yes}, nil
}

func TestSafeInstallUnreachableKeepsTheResult(t *testing.T) {
	st, _ := catalog.Open(t.TempDir())
	fault := errors.New("osv querybatch: dial tcp: lookup api.example: no such host")
	pypi := &flakyRegistry{fault: fault}
	ev := &Evaluator{Store: st, Runner: &fakeRunner{}, SafeInstall: &safeinstall.Checker{PyPI: pypi}}
	task := &schemas.Task{
		Ident:  schemas.Ident{InstanceID: "envgap__a__python-t1-1"},
		Source: schemas.SourceLite,
		Spec: schemas.Spec{
			Ecosystem:    schemas.EcosystemPython,
			RegistryDate: "2023-07-30",
			ProjectFiles: []schemas.File{{Path: "requirements.txt", Content: str("x==2\n")}},
		},
	}
	tasks := []schemas.Task{*task}
	preds := map[string]*schemas.Prediction{task.InstanceID: {InstanceID: task.InstanceID, Files: map[string]*string{"requirements.txt": str("x==1\n")}}}
	out, err := ev.Eval(context.Background(), tasks, preds, 2, nil)
	if err != nil || len(out.Results) != 1 || len(out.Faults) != 0 {
		t.Fatalf("first eval: %+v, %v", out, err)
	}
	r := out.Results[0]
	if r.Status != schemas.EvalResolved || r.Safe.Measured || !strings.HasPrefix(r.Safe.Reason, SafeInstallUnreachable) ||
		!strings.Contains(r.Safe.Reason, "no such host") || !strings.Contains(r.Safe.Reason, "--osv FILE") || !strings.Contains(r.Safe.Reason, "--no-safe-install") {
		t.Fatalf("first eval's result: status %s, safe install %+v", r.Status, r.Safe)
	}
	out, err = ev.Eval(context.Background(), tasks, preds, 2, nil)
	if err != nil || len(out.Results) != 1 || len(out.Faults) != 0 || !out.Results[0].Safe.Measured || out.Reused != 0 {
		t.Fatalf("the same eval once the registries answer: %+v, %v", out, err)
	}
	out, err = ev.Eval(context.Background(), tasks, preds, 2, nil)
	if err != nil || out.Reused != 1 || pypi.calls != 2 {
		t.Fatalf("a measured result is memoised: reused %d, %d registry lookups, %v", out.Reused, pypi.calls, err)
	}
}

// unresponsiveRunner is an engine that stopped answering: every call fails as the
// sandbox reports it.
type unresponsiveRunner struct{ calls atomic.Int64 }

func (f *unresponsiveRunner) ImageID(context.Context, string) (string, error) {
	f.calls.Add(1)
	return "", fmt.Errorf("inspecting image: %w at unix:///engine.sock within 30s", sandbox.ErrEngineUnresponsive)
}
func (f *unresponsiveRunner) RunSpec(context.Context, core.Spec, string) (*schemas.Run, schemas.Digest, bool, error) {
	f.calls.Add(1)
	return nil, schemas.Digest{}, false, sandbox.ErrEngineUnresponsive
}

// TestEvalStopsOnAnUnresponsiveEngine: once the engine did not answer, the tasks left are
// not sent to it: each is a fault ("not run"), never a result, as verify does. The tasks
// already in flight (the gate's lookahead: core.Ahead of --jobs) may have asked it too.
func TestEvalStopsOnAnUnresponsiveEngine(t *testing.T) {
	st, _ := catalog.Open(t.TempDir())
	fr := &unresponsiveRunner{}
	ev := &Evaluator{Store: st, Runner: fr}
	var tasks []schemas.Task
	preds := map[string]*schemas.Prediction{}
	const n = 5
	for i := range n {
		id := fmt.Sprintf("envgap__a__python-t1-%d", i+1)
		tasks = append(tasks, schemas.Task{Ident: schemas.Ident{InstanceID: id}, Source: schemas.SourceLite,
			Spec: schemas.Spec{Ecosystem: schemas.EcosystemPython, ProjectFiles: []schemas.File{{Path: "requirements.txt", Content: str("x==2\n")}}}})
		preds[id] = &schemas.Prediction{InstanceID: id, Files: map[string]*string{}}
	}
	out, err := ev.Eval(context.Background(), tasks, preds, 1, nil)
	if err != nil || len(out.Results) != 0 || len(out.Faults) != n {
		t.Fatalf("eval on an unresponsive engine: %+v, %v", out, err)
	}
	inFlight := core.Ahead(1)
	if c := fr.calls.Load(); c < 1 || c > int64(inFlight) {
		t.Errorf("the engine was called %d times; want at most %d (the tasks in flight; those after them are not sent)", c, inFlight)
	}
	for i, f := range out.Faults {
		if !strings.Contains(f.Error, "did not answer") || (i >= inFlight && !strings.Contains(f.Error, "not run")) {
			t.Errorf("%s: %q", f.InstanceID, f.Error)
		}
	}
}
