package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/export/scan"
	"github.com/envgap/envgap/lib/release"
	"github.com/envgap/envgap/schemas"
)

// proposeAgents are scripted agents for envgap propose, run with sh -c in the workspace.
var proposeAgents = map[string]string{
	// Declares left-pad, at a version that was never published: the fix does not run.
	"wrong": `cat > package.json <<'EOF'
{
  "name": "padder",
  "version": "1.0.0",
  "private": true,
  "main": "index.js",
  "dependencies": {
    "left-pad": "99.99.99"
  }
}
EOF
`,
	// Rewrites the source instead of the environment: refused.
	"source": `printf "console.log('42'.padStart(5, '0'));\n" > index.js`,
	// Reads the failing log, declares left-pad 1.3.0, proposes the run command, and keeps
	// a trajectory.
	"good": `grep -q "Cannot find module 'left-pad'" "$ENVGAP_FAILURE_LOG" || exit 3
cat > package.json <<'EOF'
` + e2ePkgLeftPad + `EOF
printf '{"run_command": "node index.js"}\n' > "$ENVGAP_COMMANDS_FILE"
printf '[{"step": 1, "action": "read the failing log"}, {"step": 2, "action": "declared left-pad 1.3.0"}]\n' > "$ENVGAP_TRAJECTORY_FILE"
printf '0.02\n' > "$ENVGAP_COST_FILE"
`,
}

// TestE2EProposeReportedFix takes a Reported issue all the way to a repair task: crawl
// issues against the fake GitHub (issue #1 of padco/padder, whose left-pad crash
// reproduces at its base commit), verify (a reproduction, no verdict), propose with three
// scripted agents (a wrong fix, a source edit, a working fix with commands), verify again
// (the wrong fix fails its check, the source edit was refused, the working fix verifies),
// admit and export: the task's gold_files are the working proposal's, made_by is
// "AI assistant", and issue #2's control is made_by "recipe generator".
func TestE2EProposeReportedFix(t *testing.T) {
	w := newE2EWorld(t)
	store := filepath.Join(t.TempDir(), "store")
	repos := writeFile(t, "repos.txt", e2eRepo+"\n")
	tmpl := w.gitURLTemplate()
	cli := storeCLI(t, store)
	cli("crawl", "issues", "--crawl-id", "e2e-issues", "--repos", repos, "--api-url", w.fake.URL, "--git-url-template", tmpl)
	st, err := catalog.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	issue, err := st.CandidateByID(e2eRepaired)
	if err != nil {
		t.Fatalf("issue #1 is no Reported candidate: %v", err)
	}
	if issue.Set != schemas.SourceReported || issue.BaseCommit != w.sha["c1"] || len(issue.GoldFiles) != 0 {
		t.Fatalf("issue #1: %+v", issue.Candidate)
	}

	requireEngine(t, schemas.EcosystemJavaScript.Image())
	verify := func() map[string]string {
		t.Helper()
		return verifyOutcomes(t, cli("--json", "verify", "--git-url-template", tmpl, "--step-timeout", "5m"))
	}
	if got, want := verify(), map[string]string{e2eRepaired: "not_checked", e2eControl: "already_works"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("first verify: %v, want %v", got, want)
	}
	_, errRepro := st.Ref(data.RefReproductions + e2eRepaired)
	if v, _, err := st.Verdict(e2eRepaired); errRepro != nil && (err != nil || v.Outcome != schemas.OutcomeNotChecked) {
		t.Fatalf("no reproduction of issue #1: %v, verdict %+v (%v)", errRepro, v, err)
	}

	// Three agents propose, in this order.
	agentDir := t.TempDir()
	propose := func(name string) map[string]any {
		t.Helper()
		script := filepath.Join(agentDir, name+".sh")
		if err := os.WriteFile(script, []byte(proposeAgents[name]), 0o755); err != nil {
			t.Fatal(err)
		}
		out := cli("--json", "propose", "--agent", "sh "+script, "--git-url-template", tmpl, "--attempt-timeout", "2m")
		var rep struct {
			Results []map[string]any `json:"results"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Results) != 1 {
			t.Fatalf("propose %s: %v\n%s", name, err, out)
		}
		return rep.Results[0]
	}
	if r := propose("wrong"); r["refused"] != nil || r["made_by"] != schemas.MadeByModel {
		t.Errorf("wrong fix: %v", r)
	}
	if r := propose("source"); !strings.Contains(r["refused"].(string), "changes source file index.js") {
		t.Errorf("source edit: %v", r)
	}
	// The same source edit by a script that exists only in an agent image: propose runs it
	// in a box (--agent-image) and refuses it alike; the proposal names the image.
	img := buildAgentImage(t, schemas.EcosystemJavaScript.Image(), map[string][]byte{"source.sh": []byte(proposeAgents["source"])})
	var boxed struct {
		Results []map[string]any `json:"results"`
	}
	if out := cli("--json", "propose", "--agent", "sh /opt/test-agent/source.sh", "--agent-image", img, "--git-url-template", tmpl, "--attempt-timeout", "2m"); json.Unmarshal([]byte(out), &boxed) != nil ||
		len(boxed.Results) != 1 || boxed.Results[0]["refused"] == nil || !strings.Contains(boxed.Results[0]["refused"].(string), "changes source file index.js") {
		t.Errorf("source edit in a box: %s", out)
	} else {
		var p schemas.Proposal
		if d, err := schemas.ParseDigest(boxed.Results[0]["proposal"].(string)); err != nil {
			t.Fatal(err)
		} else if err := st.GetJSON(d, &p); err != nil || p.Run == nil || p.Run.AgentImage != img || p.Run.ExitCode != 0 {
			t.Errorf("the boxed proposal's run: %+v (%v)", p.Run, err)
		}
	}
	// The wrong fix is checked and fails: no verdict, and status says so.
	if got := verify(); got[e2eRepaired] != "not_checked" {
		t.Fatalf("verify with the wrong fix: %v", got)
	}
	if st, err := st.CurrentOutcome(issue.Candidate); err != nil || st.Outcome != schemas.OutcomeNotChecked ||
		!strings.Contains(st.Reason, "waiting for a working fix; 1 proposed fix(es)") {
		t.Errorf("current outcome with a failed proposal: %+v (%v)", st, err)
	}
	good := propose("good")
	if good["refused"] != nil || good["made_by"] != schemas.MadeByAIAssistant {
		t.Errorf("working fix: %v", good)
	}
	// The same agent on the unchanged candidate is not asked again.
	if r := propose("good"); r["cached"] != true || r["proposal"] != good["proposal"] {
		t.Errorf("asked again: %v", r)
	}

	// envgap's own agent proposes too (run's flags): the scripted model answers only a
	// task text holding the reproduction's failing log; it looks at the project in its box
	// and rewrites the source, which is refused like the command agent's source edit.
	base := serveScript(t, `{"model":"scripted-propose","conversations":[{"match":"Cannot find module 'left-pad'","turns":[
	 {"tool_calls":[{"name":"bash","input":{"command":"cat package.json index.js"}}],"usage":{"input_tokens":300,"output_tokens":10}},
	 {"tool_calls":[{"name":"write_file","input":{"path":"index.js","content":"console.log('42'.padStart(5, '0'));\n"}}],"usage":{"input_tokens":350,"output_tokens":10}},
	 {"tool_calls":[{"name":"finish","input":{}}],"usage":{"input_tokens":400,"output_tokens":5}}]}]}`)
	var brep struct {
		Results []map[string]any `json:"results"`
	}
	bout := cli("--json", "propose", "--agent", "openai", "--model", "scripted-propose", "--base-url", base, "--git-url-template", tmpl,
		"--attempt-timeout", "5m", "--price-in", "1", "--price-out", "1")
	if err := json.Unmarshal([]byte(bout), &brep); err != nil || len(brep.Results) != 1 {
		t.Fatalf("propose --agent openai: %v\n%s", err, bout)
	}
	br := brep.Results[0]
	if br["error"] != nil || br["refused"] == nil || !strings.Contains(br["refused"].(string), "changes source file index.js") || br["proposal"] == good["proposal"] {
		t.Fatalf("model agent's proposal: %v", br)
	}
	var bp schemas.Proposal
	if d, err := schemas.ParseDigest(br["proposal"].(string)); err != nil {
		t.Fatal(err)
	} else if err := st.GetJSON(d, &bp); err != nil {
		t.Fatal(err)
	}
	if bp.Agent != "openai:scripted-propose" || bp.Run == nil || bp.Run.Turns != 3 || bp.Run.InputTokens != 1050 || bp.CostUSD == nil || bp.Trajectory.IsZero() {
		t.Errorf("model agent's proposal record: agent %q run %+v cost %v trajectory %v", bp.Agent, bp.Run, bp.CostUSD, bp.Trajectory)
	}
	// Bad input is refused before anything starts.
	if _, _, err := runGitHubCLI(t, cliTestToken, "--store", store, "propose", "--agent", "openai"); exitCode(err) != exitUsage {
		t.Errorf("propose --agent openai without --model: %v", err)
	}

	if got := verify(); got[e2eRepaired] != "verified" {
		t.Fatalf("second verify: %v, want issue #1 verified with the working proposal", got)
	}
	v, _, err := st.Verdict(e2eRepaired)
	if err != nil || v.Proposal.String() != good["proposal"] {
		t.Fatalf("verdict %+v (%v): want proposal %v", v, err, good["proposal"])
	}
	checks, err := st.Refs(data.RefProposalChecks + e2eRepaired + "/")
	if err != nil || len(checks) != 1 {
		t.Fatalf("proposal checks %v (%v): want the wrong fix's failed check", checks, err)
	}
	var failed schemas.Verdict
	if err := st.GetJSON(checks[0].Digest, &failed); err != nil || failed.Outcome != schemas.OutcomeNotReproduced ||
		!strings.Contains(failed.Reason, "did not make the project run") {
		t.Errorf("the wrong fix's check: %+v (%v)", failed, err)
	}

	if st, err := st.CurrentOutcome(issue.Candidate); err != nil || st.Outcome != schemas.OutcomeVerified {
		t.Errorf("current outcome of issue #1: %+v (%v)", st, err)
	}
	if out := cli("admit"); !strings.Contains(out, "2 admitted") {
		t.Fatalf("admit: %s", out)
	}
	// The committed review file decides the findings in envgap's own source (the harness).
	cli("scan", "--review", "../../"+scan.DefaultReviewFile)
	relDir := filepath.Join(t.TempDir(), "release")
	exportArgs := []string{"export", "--out", relDir}
	if strings.Contains(cli("export", "--help"), "--no-audit") {
		exportArgs = append(exportArgs, "--no-audit") // this test runs no registry audit
	}
	cli(exportArgs...)
	_, byID := exportedTasks(t, relDir)
	task := byID[e2eRepaired]
	if task.IsControl || task.Source != schemas.SourceReported || task.RunCommand != "node index.js" ||
		!reflect.DeepEqual(task.GoldFiles, []schemas.File{{Path: "package.json", Content: &[]string{e2ePkgLeftPad}[0]}}) ||
		!strings.Contains(task.Patch, `+    "left-pad": "1.3.0"`) || task.FailureSignature == "" || task.ExpectedFailureRegex == "" {
		t.Errorf("task row of issue #1: %+v", task)
	}
	made := map[string]string{}
	cands, err := release.ReadCandidates(relDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cands {
		made[c.InstanceID] = c.MadeBy
	}
	if want := map[string]string{e2eRepaired: schemas.MadeByAIAssistant, e2eControl: schemas.MadeByRecipeGenerator}; !reflect.DeepEqual(made, want) {
		t.Errorf("made_by of the candidates config: %v, want %v", made, want)
	}
}
