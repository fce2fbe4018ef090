package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/envgap/envgap/harness/eval"
	"github.com/envgap/envgap/harness/tasks"
	"github.com/envgap/envgap/lib/release"
	"github.com/envgap/envgap/schemas"
)

// runCLIStreams runs the command line in-process and returns stdout and stderr apart.
func runCLIStreams(t testing.TB, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := &factory{Global: &globalOptions{}, Out: &out, Err: &errOut, Getenv: func(string) string { return "" }}
	root := newRootCommand(f)
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	err := root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// cardCommands returns the envgap command lines the card prints in its code blocks
// ("./envgap ..." lines) and in its text (`envgap run ...`), as printed.
func cardCommands(t *testing.T, card string) (block []string, runLine string) {
	t.Helper()
	inBlock := false
	for _, l := range strings.Split(card, "\n") {
		if strings.HasPrefix(l, "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock && strings.HasPrefix(l, "./envgap ") {
			block = append(block, l)
		}
	}
	m := regexp.MustCompile("`envgap (run --agent [^`]*)`").FindStringSubmatch(card)
	if m == nil {
		t.Fatal("the card prints no envgap run command")
	}
	return block, m[1]
}

// args splits a printed command line after its program name into arguments (the card's
// lines have no quoting).
func cardArgs(line string) []string {
	return strings.Fields(strings.TrimPrefix(strings.TrimPrefix(line, "./envgap "), "envgap "))
}

// TestCardCommandsInHarness runs the dataset card's commands as the generated card prints
// them, in the harness zip unzipped inside the Hub folder (as the card says: unzip, cd
// envgap-source): hf check, the two eval lines on one predictions file (the gold fixes
// of every task), report, the leaderboard's run line (the bedrock agent swapped for the
// model agent on a scripted model, reported|repaired made reported), a split with no
// task (exit 3, naming where it looked), a subset with its own corpus id, and site with
// the report's folder arguments. Only the test world's offline registries and git are
// added to the scoring commands; the store is the checkout's default. build-images is not
// run: the images are built.
func TestCardCommandsInHarness(t *testing.T) {
	requireEngine(t, "envgap-python-eval")
	w := newEvalWorld(t)
	card, err := os.ReadFile(filepath.Join(w.hub, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	block, runLine := cardCommands(t, string(card))
	unzip(t, filepath.Join(w.hub, release.HarnessPath), w.hub)
	tree := filepath.Join(w.hub, strings.TrimSuffix(release.HarnessRoot, "/"))
	t.Chdir(tree)
	offline := []string{"--git-url-template", w.gitTemplate, "--pypi-upstream", w.pypi + "/simple/", "--pypi", w.pypi,
		"--npm-registry", "http://127.0.0.1:9/", "--osv", w.osv, "--step-timeout", "3m"}

	// One predictions file for every task: the reference fixes (controls change nothing).
	all, err := tasks.ReadRows(release.HarnessTasks)
	if err != nil {
		t.Fatal(err)
	}
	preds, _ := eval.Builtin("gold", all)
	var pb bytes.Buffer
	for _, p := range preds {
		b, _ := json.Marshal(p)
		pb.Write(append(b, '\n'))
	}
	if err := os.WriteFile("predictions.jsonl", pb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	var evals, reports []string
	for _, l := range block {
		switch a := cardArgs(l); a[0] {
		case "hf":
			out, _, err := runCLIStreams(t, a...)
			if err != nil || !strings.Contains(out, "has the release's corpus id") {
				t.Errorf("%s: %v\n%s", l, err, out)
			}
		case "eval":
			evals = append(evals, l)
		case "report":
			reports = append(reports, l)
		}
	}
	if len(evals) != 2 || len(reports) != 1 {
		t.Fatalf("the card's commands: %d eval and %d report lines, want 2 and 1: %q", len(evals), len(reports), block)
	}
	for _, l := range evals {
		out, errOut, err := runCLIStreams(t, append(cardArgs(l), offline...)...)
		if err != nil {
			t.Fatalf("%s: %v\n%s%s", l, err, out, errOut)
		}
		if !strings.Contains(errOut, "tasks: release/tasks.jsonl (this harness's own copy") {
			t.Errorf("%s: does not say where its tasks come from:\n%s", l, errOut)
		}
		a := cardArgs(l)
		dir := a[len(a)-1]
		rs, sum := readResults(t, dir)
		if sum.Tasks == 0 || sum.Scored == 0 || len(rs) != sum.Tasks || sum.Subset != nil || len(sum.ResolvedIDs) != sum.Scored {
			t.Errorf("%s: gold scored %+v", l, sum)
		}
		if !strings.Contains(out, "set aside, not scored") {
			t.Errorf("%s: the other splits' predictions are not said to be set aside:\n%s", l, out)
		}
	}
	md, _, err := runCLIStreams(t, cardArgs(reports[0])...)
	if err != nil || !strings.Contains(md, "| predictions | reported | eval, 1 attempt | 1 of 1 | 100.0% (1/1) |") ||
		!strings.Contains(md, "| predictions | repaired | eval, 1 attempt | 1 of 2 | 100.0% (1/1) |") {
		t.Errorf("%s: %v\n%s", reports[0], err, md)
	}

	// The leaderboard's run line, on the model agent with a scripted model that
	// changes nothing: the control stays working. --out is the default.
	base := serveScript(t, `{"model":"scripted-card","conversations":[{"match":"","turns":[{"tool_calls":[{"name":"finish","input":{}}],"usage":{"input_tokens":10,"output_tokens":1}}]}]}`)
	line := strings.Replace(strings.Replace(runLine, "--agent bedrock --model <model>", "--agent openai --base-url "+base+" --model scripted-card", 1), "reported|repaired", "reported", 1)
	if line == runLine {
		t.Fatalf("the card's run line %q is not the one this test knows", runLine)
	}
	out, errOut, err := runCLIStreams(t, append(cardArgs(line), offline...)...)
	if err != nil {
		t.Fatalf("%s: %v\n%s%s", line, err, out, errOut)
	}
	runDir := filepath.Join("results", "openai-scripted-card-reported")
	if !strings.Contains(errOut, "--out not given: writing "+runDir) {
		t.Errorf("run does not say where it writes:\n%s", errOut)
	}
	if _, sum := readResults(t, runDir); sum.Mode != schemas.ModeRun || sum.K != 1 || sum.MaxAttempts != 5 || len(sum.ResolvedIDs) != 1 {
		t.Errorf("run: %+v", sum)
	}

	// A split with no task: exit 3, naming where it looked.
	out, errOut, err = runCLIStreams(t, "eval", "--pred", "gold", "--split", "lite")
	if exitCode(err) != exitRejected || !strings.Contains(err.Error(), "split lite has no task") || !strings.Contains(err.Error(), "release/tasks.jsonl") {
		t.Errorf("eval of an empty split: exit %d, %v\n%s%s", exitCode(err), err, out, errOut)
	}
	if _, err := os.Stat(filepath.Join("results", "gold-lite")); !os.IsNotExist(err) {
		t.Errorf("an empty split wrote a result folder (%v)", err)
	}

	// A subset: its own corpus id, marked in the folder, the printout and the report.
	out, _, err = runCLIStreams(t, append([]string{"eval", "--pred", "predictions.jsonl", "--split", "full", "--ids", evalRepair, "--out", "results/subset"}, offline...)...)
	if err != nil || !strings.Contains(out, "SUBSET, not a leaderboard entry (subset: 1 of 3 tasks of corpus") {
		t.Fatalf("eval --ids: %v\n%s", err, out)
	}
	wholeID, err := schemas.CorpusID(all)
	if err != nil {
		t.Fatal(err)
	}
	_, sum := readResults(t, "results/subset")
	if sum.Subset == nil || sum.Tasks != 1 || sum.CorpusID == wholeID || sum.Subset.OfCorpusID != wholeID || sum.Subset.OfTasks != 3 {
		t.Errorf("subset summary: %+v (subset %+v), whole corpus %s", sum, sum.Subset, wholeID)
	}
	if md, _, err := runCLIStreams(t, "report", "--results", "results/subset"); err != nil || !strings.Contains(md, "| full (subset) |") || !strings.Contains(md, "SUBSET, not a leaderboard entry") {
		t.Errorf("report of a subset: %v\n%s", err, md)
	}
	// report --ids in the harness checkout: the same selection of the repaired folder gets
	// the corpus id eval gave it (from the harness's own release/tasks.jsonl); a release
	// the folder was not scored against is refused.
	if md, _, err := runCLIStreams(t, "report", "--ids", evalRepair, "results/my-agent-repaired"); err != nil || !strings.Contains(md, "its own corpus id "+sum.CorpusID) {
		t.Errorf("report --ids of the repaired folder: %v, want its own corpus id %s\n%s", err, sum.CorpusID, md)
	}
	rows, err := os.ReadFile(filepath.Join("release", "tasks.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(rows), "\n")
	other := filepath.Join(t.TempDir(), "other.jsonl")
	if err := os.WriteFile(other, []byte(first+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLIStreams(t, "report", "--ids", evalRepair, "--tasks", other, "results/my-agent-repaired"); err == nil || !strings.Contains(err.Error(), "give the release") {
		t.Errorf("report --ids against another release: %v", err)
	}
	if _, _, err := runCLIStreams(t, "eval", "--pred", "gold", "--split", "full", "--ids", "envgap__nobody__here-1"); exitCode(err) != exitUsage || !strings.Contains(err.Error(), "envgap__nobody__here-1: not a task of split full") {
		t.Errorf("eval --ids of an unknown task: %v", err)
	}

	// site takes result folders as arguments, as report does.
	out, _, err = runCLIStreams(t, "site", "--hub", "..", "--out", "site", "results/my-agent-reported", "results/my-agent-repaired", "results/subset")
	if err != nil || !strings.Contains(out, "reported board 1 row(s)") || !strings.Contains(out, "repaired board 1 row(s)") {
		t.Errorf("site with folder arguments: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(filepath.Join("site", "index.html")); err != nil || !strings.Contains(string(b), "SUBSET of 3 tasks of corpus "+wholeID) {
		t.Errorf("the site does not mark the subset (%v)", err)
	}
}
