package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/envgap/envgap/data/demo"
	"github.com/envgap/envgap/harness/study"
	"github.com/envgap/envgap/lib/agent"
	"github.com/envgap/envgap/lib/agent/model"
	"github.com/envgap/envgap/lib/agent/model/scripted"
)

func TestStudyReportDemoNoEngine(t *testing.T) {
	out := t.TempDir()
	got, err := runCLI(t, "--json", "study", "report", "../../data/demo/study", "--no-engine", "--problems", "../../data/problems.json", "--out", out)
	if err != nil {
		t.Fatalf("study report: %v\n%s", err, got)
	}
	var r study.Report
	if err := json.Unmarshal([]byte(got), &r); err != nil {
		t.Fatalf("%v: %s", err, got)
	}
	if r.Projects != 8 || r.Successful != 7 || r.Layered != 0 || len(r.Agents) != 3 {
		t.Errorf("report: %d projects, %d successful, %d layered, agents %v", r.Projects, r.Successful, r.Layered, r.Agents)
	}
	// The demo's two C++ projects failed with a missing system library (Table 6).
	for _, g := range r.EnvGap {
		if g.Fail != 1 || g.SysLib != 1 {
			t.Errorf("env gap %+v", g)
		}
	}
	for _, f := range []string{"report.md", "report.json", "fig4-first-attempt-grid.svg", "fig8-inflation.svg"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(md), "no layers.json and no engine") || !strings.Contains(string(md), "Cryptography") {
		t.Errorf("report.md does not say what it left out, or has no domains:\n%s", md)
	}
}

func TestStudyReportBadProjectIsPartial(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte(s), 0o644)
	}
	write("a/python-t1/p1/meta.json", `{"created_at":"2026-01-01T00:00:00Z","worked_first_time":true,"made_to_work":true,"run_command":"python3 x.py"}`)
	write("a/python-t1/p1/written/x.py", "print(1)\n")
	write("a/python-t1/p1/layers.json", `{"d2": [], "d3": []}`)
	write("a/python-t1/p2/written/x.py", "print(2)\n")
	write("a/go-t1/p3/written/main.go", "package main\n")
	out, err := runCLI(t, "study", "report", dir, "--problems", "../../data/problems.json")
	if !errors.As(err, new(partialError)) {
		t.Fatalf("err = %v, want a partial error (exit 4)\n%s", err, out)
	}
	for _, want := range []string{"a/python-t1/p2/meta.json | all | is missing", `a/go-t1 | all | language "go" is not one of`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, err := runCLI(t, "study", "report"); !errors.As(err, new(usageError)) {
		t.Errorf("no STUDY: %v, want a usage error", err)
	}
}

// TestStudyReportMeasures runs a successful project's final state through the core for
// D2 and D3, and a second report answers from the store's memo.
func TestStudyReportMeasures(t *testing.T) {
	requireEngine(t, "envgap-python-eval")
	dir := t.TempDir()
	write := func(p, s string) {
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte(s), 0o644)
	}
	write("a/python-t1/p1/meta.json", `{"created_at":"2026-01-01T00:00:00Z","worked_first_time":true,"made_to_work":true,"run_command":"python3 main.py"}`)
	write("a/python-t1/p1/written/requirements.txt", "\n")
	write("a/python-t1/p1/written/main.py", "import json, csv\nprint(json.dumps({'ok': 1}))\n")
	store := filepath.Join(t.TempDir(), "store")
	var before map[string]string
	for i := 0; i < 2; i++ {
		if i == 1 {
			before = storeFiles(t, store)
		}
		got, err := runCLI(t, "--store", store, "--json", "study", "report", dir, "--problems", "../../data/problems.json")
		if err != nil {
			t.Fatalf("study report %d: %v\n%s", i, err, got)
		}
		var r study.Report
		if err := json.Unmarshal([]byte(got), &r); err != nil {
			t.Fatalf("%v: %s", err, got)
		}
		if r.Layered != 1 || len(r.Skipped) != 0 {
			t.Fatalf("report %d: layered %d, left out %+v", i, r.Layered, r.Skipped)
		}
		for _, a := range r.Accuracy {
			if a.Excluded != 1 { // nothing declared, nothing traced
				t.Errorf("accuracy %+v, want the project excluded (n1 = n3 = 0)", a)
			}
			break
		}
		if i == 1 {
			after := storeFiles(t, store)
			for p := range after {
				if _, ok := before[p]; !ok && !strings.Contains(p, "lock") {
					t.Errorf("second report wrote %s: the memo did not answer", p)
				}
			}
		}
	}
}

// TestStudyRunScripted runs the protocol end to end on the real engine with the demo's
// scripted agent (data/demo/agents/study-agent.sh): Gen, the run in the clean image, the
// error fed back, a repair; then crawl lite imports the folder and study report reads it.
func TestStudyRunScripted(t *testing.T) {
	requireEngine(t, "envgap-python-eval", "envgap-javascript-eval")
	out := filepath.Join(t.TempDir(), "study")
	store := filepath.Join(t.TempDir(), "store")
	agentCmd := "bash " + mustAbs(t, "../../data/demo/agents/study-agent.sh")
	// The study folder is given relative to the working directory, as the demo gives it:
	// the agent, run in its workspace, must still find its prompt and feedback files.
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	relOut, err := filepath.Rel(wd, out)
	if err != nil || filepath.IsAbs(relOut) {
		t.Fatalf("relative study folder: %q %v", relOut, err)
	}
	run := func(langs, only string) string {
		t.Helper()
		got, err := runCLI(t, "--store", store, "study", "run", "--agent", agentCmd, "--agent-name", "scripted",
			"--languages", langs, "--only", only, "--max-repairs", "2", "--out", relOut, "--problems", "../../data/problems.json")
		if err != nil {
			t.Fatalf("study run %s %s: %v\n%s", langs, only, err, got)
		}
		return got
	}
	run("javascript", "13,48")
	if got := run("python,javascript", "13"); !strings.Contains(got, "1 project(s) written") || !strings.Contains(got, "1 done earlier") {
		t.Errorf("resumed run: %s", got)
	}
	// The JavaScript Merkle project failed at Gen (npm could not parse package.json) and ran
	// after one repair; its first error is recorded verbatim.
	var meta struct {
		Worked bool   `json:"worked_first_time"`
		Made   bool   `json:"made_to_work"`
		Rounds int    `json:"repair_rounds"`
		Error  string `json:"error"`
	}
	b, err := os.ReadFile(filepath.Join(out, "scripted/javascript-t1/p48/meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &meta); err != nil || meta.Worked || !meta.Made || meta.Rounds != 1 {
		t.Errorf("meta %s: %v", b, err)
	}
	rounds, _ := os.ReadFile(filepath.Join(out, "scripted/javascript-t1/p48/rounds.json"))
	if !strings.Contains(string(rounds), "EJSONPARSE") {
		t.Errorf("rounds.json lacks the first error:\n%s", rounds)
	}
	for _, f := range []string{"written/package.json", "repaired/package.json", "prompt.txt", "layers.json"} {
		if _, err := os.Stat(filepath.Join(out, "scripted/javascript-t1/p48", f)); err != nil {
			t.Error(err)
		}
	}
	prompt, _ := os.ReadFile(filepath.Join(out, "scripted/python-t1/p13/prompt.txt"))
	if !strings.HasPrefix(string(prompt), "TASK: HMAC Integrity Checker\n") || !strings.Contains(string(prompt), "requirements.txt with all dependencies (direct and transitive) pinned to exact versions") {
		t.Errorf("prompt.txt:\n%s", prompt)
	}

	got, err := runCLI(t, "--store", filepath.Join(t.TempDir(), "lite"), "--json", "crawl", "lite", "--study", out, "--problems", "../../data/problems.json")
	if err != nil {
		t.Fatalf("crawl lite: %v\n%s", err, got)
	}
	var imp crawlLiteReport
	if err := json.Unmarshal([]byte(got), &imp); err != nil || imp.Stored != 3 || imp.Outcomes["already_works"] != 2 || imp.Outcomes["not_checked"] != 1 {
		t.Errorf("crawl lite of the automated study: %v %s", err, got)
	}
	got, err = runCLI(t, "--json", "study", "report", out, "--no-engine", "--problems", "../../data/problems.json")
	if err != nil {
		t.Fatalf("study report: %v\n%s", err, got)
	}
	var r study.Report
	if err := json.Unmarshal([]byte(got), &r); err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Convergence {
		if c.Language == "javascript" && (c.SR0 != 0.5 || c.SRk != 1 || c.Buckets["1-3"] != 1) {
			t.Errorf("javascript convergence %+v", c)
		}
	}
	if r.Layered != 3 {
		t.Errorf("layers measured for %d projects, want 3 (study run records them)", r.Layered)
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestStudyRunModelAgent runs the protocol with the model agent (lib/agent/loop)
// acting in the box, its model a scripted stand-in served over the OpenAI wire format
// (the real openai provider talks to it): Gen writes the project with write_file and says
// how to run it in finish; the project runs in the clean image.
func TestStudyRunModelAgent(t *testing.T) {
	requireEngine(t, "envgap-python-eval")
	script, err := scripted.Parse([]byte(`{"model": "scripted-study", "conversations": [{"match": "TASK: HMAC Integrity Checker", "turns": [
  {"tool_calls": [{"name": "bash", "input": {"command": "python3 --version"}},
                  {"name": "write_file", "input": {"path": "hmac_check.py", "content": "import hashlib, hmac\nprint(hmac.new(b'Jefe', b'what do ya want for nothing?', hashlib.sha256).hexdigest())\n"}},
                  {"name": "write_file", "input": {"path": "requirements.txt", "content": "\n"}}]},
  {"tool_calls": [{"name": "finish", "input": {"summary": "RUN: python3 hmac_check.py\nstandard library only"}}]}]}]}`), "script")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(scripted.NewServer(script))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "study")
	got, err := runCLI(t, "--store", filepath.Join(t.TempDir(), "store"), "study", "run", "--agent", "openai", "--model", "scripted-study",
		"--base-url", srv.URL+"/v1", "--languages", "python", "--only", "13", "--max-repairs", "1", "--out", out, "--problems", "../../data/problems.json")
	if err != nil {
		t.Fatalf("study run: %v\n%s", err, got)
	}
	dir := filepath.Join(out, "scripted-study/python-t1/p13")
	meta, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(meta), `"worked_first_time": true`) || !strings.Contains(string(meta), `"run_command": "python3 hmac_check.py"`) {
		t.Errorf("meta.json:\n%s", meta)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "written/hmac_check.py")); err != nil || !strings.Contains(string(b), "hmac.new") {
		t.Errorf("written/hmac_check.py: %v %s", err, b)
	}
}

// TestStudyRunDemoModelScript runs the demo's study (scripts/demo.sh) as the demo does:
// the model agent on the demo's scripted stand-in model
// (data/demo/agents/study-model.json) served over the OpenAI wire format, problems 13 and
// 48 in Python and JavaScript. The Merkle verifier fails at Gen in both languages and runs
// after one repair round, which continues Gen's conversation: the repair turns of the
// script are played only to a request holding Gen's messages (the scripted model answers
// by the number of assistant messages), and the request carries them.
func TestStudyRunDemoModelScript(t *testing.T) {
	requireEngine(t, "envgap-python-eval", "envgap-javascript-eval")
	script, err := scripted.Read("../../data/demo/agents/study-model.json")
	if err != nil {
		t.Fatal(err)
	}
	type msg struct {
		Role      string `json:"role"`
		Content   any    `json:"content"`
		ToolCalls []any  `json:"tool_calls"`
	}
	var mu sync.Mutex
	var repairReqs [][]msg
	inner := scripted.NewServer(script)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		var req struct {
			Messages []msg `json:"messages"`
		}
		if json.Unmarshal(b, &req) == nil && strings.Contains(string(b), "and it failed") {
			mu.Lock()
			repairReqs = append(repairReqs, req.Messages)
			mu.Unlock()
		}
		inner.ServeHTTP(w, r)
	}))
	defer srv.Close()
	pypi := httptest.NewServer(demo.PyPIHandler(demo.PyPIFS()))
	defer pypi.Close()
	out := filepath.Join(t.TempDir(), "study")
	got, err := runCLI(t, "--store", filepath.Join(t.TempDir(), "store"), "study", "run", "--agent", "openai", "--model", "scripted-study",
		"--base-url", srv.URL+"/v1", "--languages", "python,javascript", "--only", "13,48", "--max-repairs", "3", "--out", out,
		"--problems", "../../data/problems.json", "--pypi-upstream", pypi.URL+"/simple/")
	if err != nil {
		t.Fatalf("study run: %v\n%s", err, got)
	}
	for _, tc := range []struct {
		rel, firstError string
		worked          bool
	}{
		{"python-t1/p13", "", true}, {"javascript-t1/p13", "", true},
		{"python-t1/p48", "No module named 'tabulate'", false}, {"javascript-t1/p48", "EJSONPARSE", false},
	} {
		dir := filepath.Join(out, "scripted-study", tc.rel)
		var meta struct {
			Worked bool `json:"worked_first_time"`
			Made   bool `json:"made_to_work"`
			Rounds int  `json:"repair_rounds"`
		}
		b, err := os.ReadFile(filepath.Join(dir, "meta.json"))
		if err != nil {
			t.Fatal(err)
		}
		wantRounds := 0
		if !tc.worked {
			wantRounds = 1
		}
		if err := json.Unmarshal(b, &meta); err != nil || meta.Worked != tc.worked || !meta.Made || meta.Rounds != wantRounds {
			t.Errorf("%s meta %s: %v", tc.rel, b, err)
		}
		if tc.firstError != "" {
			rounds, _ := os.ReadFile(filepath.Join(dir, "rounds.json"))
			if !strings.Contains(string(rounds), tc.firstError) {
				t.Errorf("%s rounds.json lacks %q:\n%s", tc.rel, tc.firstError, rounds)
			}
		}
	}
	// Two repair rounds (one per language), each of two requests; every one carries Gen's
	// conversation: the prompt first (after the system message), Gen's two answers.
	if len(repairReqs) != 4 {
		t.Fatalf("%d requests of repair rounds, want 4", len(repairReqs))
	}
	for _, msgs := range repairReqs {
		assistants, first := 0, ""
		for _, m := range msgs {
			if m.Role == "assistant" {
				assistants++
			}
			if c, ok := m.Content.(string); ok && m.Role == "user" && first == "" && assistants == 0 {
				first = c
			}
		}
		if !strings.HasPrefix(first, "TASK: Merkle Tree Verifier") || assistants < 2 {
			t.Errorf("a repair round's request does not continue Gen's conversation: first %q, %d assistant messages", first, assistants)
		}
	}
}

// TestStudyContextTokens: study run's --context-tokens defaults to the model's context,
// so the loop elides before the provider overflows; an unknown model gets the default
// and a notice; an agent command refuses the flag.
func TestStudyContextTokens(t *testing.T) {
	var warn bytes.Buffer
	for _, c := range []struct {
		agent, model string
		flag, want   int64
		notice, bad  bool
	}{
		{agent.NameBedrock, "anthropic.claude-3-5-sonnet-20241022-v2:0", 0, 200000, false, false},
		{agent.NameOpenAI, "gpt-4o", 0, 128000, false, false},
		{agent.NameOpenAI, "my-vllm-model", 0, model.DefaultContextTokens, true, false},
		{agent.NameOpenAI, "gpt-4o", 50000, 50000, false, false},
		{"bash agent.sh", "", 0, 0, false, false},
		{"bash agent.sh", "", 1000, 0, false, true},
		{agent.NameOpenAI, "gpt-4o", -1, 0, false, true},
	} {
		warn.Reset()
		got, err := studyContextTokens(agent.ParseSpec(c.agent), c.model, c.flag, &warn)
		if (err != nil) != c.bad || (!c.bad && got != c.want) || (warn.Len() > 0) != c.notice {
			t.Errorf("%s %s --context-tokens %d: %d, %v, notice %q; want %d", c.agent, c.model, c.flag, got, err, warn.String(), c.want)
		}
	}
}
