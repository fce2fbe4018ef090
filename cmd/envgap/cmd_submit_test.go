package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/envgap/envgap/harness/submit"
)

const submitMeta = `agent:
  name: scripted
  version: 1.0.0
models: [scripted-model]
organisation: Test Lab
open_source:
  agent: true
  model: false
`

// submitCheck runs envgap submit check on a bundle against the scenario's Hub folder, with
// the check's own store.
func (w *evalWorld) submitCheck(t *testing.T, store, bundle string) (string, error) {
	t.Helper()
	return runCLI(t, "--store", store, "submit", "check", bundle, "--tasks", w.hub,
		"--git-url-template", w.gitTemplate, "--pypi-upstream", w.pypi+"/simple/", "--pypi", w.pypi,
		"--npm-registry", "http://127.0.0.1:9/", "--osv", w.osv, "--step-timeout", "3m")
}

// checkLine returns the status and why of a check line of submit check's output.
func checkLine(out, check string) (string, string) {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, check+" ") {
			rest := strings.TrimSpace(strings.TrimPrefix(l, check))
			for _, st := range []string{submit.StatusNotChecked, submit.StatusFail, submit.StatusOK} {
				if strings.HasPrefix(rest, st+" ") {
					return st, strings.TrimSpace(strings.TrimPrefix(rest, st))
				}
			}
		}
	}
	return "", ""
}

func copyBundle(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "bundle")
	if out, err := exec.Command("cp", "-r", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	return dst
}

func editFile(t *testing.T, p string, edit func(string) string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := edit(string(b))
	if s == string(b) {
		t.Fatalf("%s: the edit changed nothing", p)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSubmitBundleChecks: a run in the leaderboard's setting makes a bundle that passes
// (as a folder and as a .tar.gz), re-scored on the engine in a store of its own; a bundle
// missing a trajectory, scored on another corpus, run in another setting or with tampered
// results fails with the line saying why.
func TestSubmitBundleChecks(t *testing.T) {
	requireEngine(t, "envgap-python-eval")
	w := newEvalWorld(t)
	store := filepath.Join(t.TempDir(), "store")
	checkStore := filepath.Join(t.TempDir(), "check-store")
	res, tmp := t.TempDir(), t.TempDir()
	meta := filepath.Join(tmp, "meta.yaml")
	if err := os.WriteFile(meta, []byte(submitMeta), 0o644); err != nil {
		t.Fatal(err)
	}
	agent := `printf 'tabulate==0.9.0\n' > requirements.txt
echo '[{"action": "edit requirements.txt", "output": "ok"}]' > "$ENVGAP_TRAJECTORY_FILE"`
	if out, err := w.runAgent(t, store, agent, filepath.Join(res, "good"), "--k", "1", "--max-attempts", "5"); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	good := filepath.Join(tmp, "good")
	out, err := runCLI(t, "--store", store, "submit", "prepare", filepath.Join(res, "good"), "--meta", meta, "--out", good)
	if err != nil {
		t.Fatalf("prepare: %v\n%s", err, out)
	}
	md, err := os.ReadFile(filepath.Join(good, submit.MetadataFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"name: scripted", "version: 1.0.0", "organisation: Test Lab", "k: 1", "max_attempts: 5", "attempt_timeout: 20m0s", "folder: results/reported", "corpus_id: "} {
		if !strings.Contains(string(md), want) {
			t.Errorf("metadata.yaml lacks %q:\n%s", want, md)
		}
	}
	preds, err := submit.ReadPredictions(filepath.Join(good, "results", "reported", submit.PredictionsFile))
	if err != nil || len(preds) != 1 || preds[0].Prediction == nil || len(preds[0].Prediction.Trajectory) != 1 {
		t.Fatalf("predictions: %v %+v", err, preds)
	}

	out, err = w.submitCheck(t, checkStore, good)
	if err != nil {
		t.Fatalf("check of a good bundle: exit %d, %v\n%s", exitCode(err), err, out)
	}
	for _, c := range []string{"metadata", "corpus", "complete (reported)", "attempts (reported)", "setting", "trajectories", "leaks", "rescore (reported)"} {
		if st, why := checkLine(out, c); st != submit.StatusOK {
			t.Errorf("line %s: %q %q\n%s", c, st, why, out)
		}
	}
	if _, why := checkLine(out, "rescore (reported)"); !strings.Contains(why, "1 run now") {
		t.Errorf("the check did not re-score on the engine: %s", why)
	}
	t.Logf("submit check of a good bundle:\n%s", out)
	if !strings.Contains(out, "is a fair leaderboard entry") {
		t.Errorf("no verdict:\n%s", out)
	}

	// --json: the lines for programs.
	out, err = runCLI(t, "--json", "--store", checkStore, "submit", "check", good, "--tasks", w.hub,
		"--git-url-template", w.gitTemplate, "--pypi-upstream", w.pypi+"/simple/", "--pypi", w.pypi,
		"--npm-registry", "http://127.0.0.1:9/", "--osv", w.osv, "--step-timeout", "3m")
	var verdict submit.Verdict
	if err != nil || json.Unmarshal([]byte(out), &verdict) != nil || !verdict.Fair || len(verdict.Lines) != 8 || verdict.Failed != 0 {
		t.Errorf("--json: %v %+v\n%s", err, verdict, out)
	}

	// The same as a .tar.gz.
	tgz := filepath.Join(tmp, "good.tar.gz")
	if out, err := runCLI(t, "--store", store, "submit", "prepare", filepath.Join(res, "good"), "--meta", meta, "--out", tgz); err != nil {
		t.Fatalf("prepare tar.gz: %v\n%s", err, out)
	}
	if out, err := w.submitCheck(t, checkStore, tgz); err != nil {
		t.Errorf("check of a good .tar.gz: %v\n%s", err, out)
	}

	// site --results takes bundles, a folder and a .tar.gz, beside result folders.
	siteDir := filepath.Join(tmp, "site")
	if out, err := runCLI(t, "site", "--hub", w.hub, "--out", siteDir, "--results", good+","+tgz); err != nil {
		t.Fatalf("site: %v\n%s", err, out)
	}
	index, err := os.ReadFile(filepath.Join(siteDir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{filepath.ToSlash(good) + "/results/reported", filepath.ToSlash(tgz) + "/results/reported"} {
		if !strings.Contains(string(index), name) {
			t.Errorf("the site does not list %s", name)
		}
	}

	// So does report.
	if out, err := runCLI(t, "report", tgz, "--json"); err != nil || !strings.Contains(out, `"folder": "`+filepath.ToSlash(tgz)+`/results/reported"`) {
		t.Errorf("report of a bundle: %v\n%s", err, out)
	}

	fails := func(name, bundle, check string, why ...string) {
		t.Helper()
		out, err := w.submitCheck(t, checkStore, bundle)
		if exitCode(err) != exitDamage {
			t.Errorf("%s: exit %d (%v), want %d\n%s", name, exitCode(err), err, exitDamage, out)
		}
		t.Logf("%s:\n%s", name, out)
		st, got := checkLine(out, check)
		if st != submit.StatusFail {
			t.Errorf("%s: line %s is %q, want FAIL\n%s", name, check, st, out)
		}
		for _, w := range why {
			if !strings.Contains(got, w) {
				t.Errorf("%s: line %s says %q, want %q", name, check, got, w)
			}
		}
	}

	// A trajectory missing.
	b := copyBundle(t, good)
	base := filepath.Join(b, "results", "reported", submit.AttemptPath(evalControl, 1, 1))
	os.Remove(base + submit.ATIFSuffix)
	if err := os.Remove(base + submit.RawSuffix); err != nil {
		t.Fatal(err)
	}
	fails("missing trajectory", b, "trajectories", "1 attempt(s) without a trajectory", evalControl+" run 1 attempt 1")

	// An attempt's files kept without its result (an attempt dropped from results.jsonl).
	b = copyBundle(t, good)
	stray := filepath.Join(b, "results", "reported", submit.AttemptPath(evalControl, 1, 2)) + submit.RawSuffix
	if err := os.WriteFile(stray, []byte(`[{"action": "x"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	fails("dropped attempt", b, "attempts (reported)", evalControl+" run 1: attempt-2.trajectory kept under agent/ without a result")

	// Scored on another corpus.
	b = copyBundle(t, good)
	corpus := regexp.MustCompile(`"corpus_id": *"[0-9a-f]{12}"`)
	editFile(t, filepath.Join(b, "results", "reported", "summary.json"), func(s string) string {
		return corpus.ReplaceAllString(s, `"corpus_id": "0123456789ab"`)
	})
	editFile(t, filepath.Join(b, submit.MetadataFile), func(s string) string {
		return regexp.MustCompile(`corpus_id: [0-9a-f]{12}`).ReplaceAllString(s, "corpus_id: 0123456789ab")
	})
	fails("another corpus", b, "corpus", "scored on corpus 0123456789ab", "the release is corpus")

	// Run with another setting (the memo of the run's store: no container).
	if out, err := w.runAgent(t, store, agent, filepath.Join(res, "other"), "--max-attempts", "3"); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	other := filepath.Join(tmp, "other")
	if out, err := runCLI(t, "--store", store, "submit", "prepare", filepath.Join(res, "other"), "--meta", meta, "--out", other); err != nil || !strings.Contains(out, "submit check will fail") {
		t.Fatalf("prepare: %v\n%s", err, out)
	}
	fails("another setting", other, "setting", "up to 3 attempts (the leaderboard's is 5)", "label")
	// Labelled, it is an entry of its own setting.
	labelled := filepath.Join(tmp, "meta-labelled.yaml")
	if err := os.WriteFile(labelled, []byte(submitMeta+"setting:\n  label: three attempts\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := runCLI(t, "--store", store, "submit", "prepare", filepath.Join(res, "other"), "--meta", labelled, "--out", filepath.Join(tmp, "labelled")); err != nil {
		t.Fatalf("prepare: %v\n%s", err, out)
	}
	out, err = w.submitCheck(t, checkStore, filepath.Join(tmp, "labelled"))
	if st, why := checkLine(out, "setting"); err != nil || st != submit.StatusOK || !strings.Contains(why, `labelled "three attempts"`) {
		t.Errorf("labelled setting: %v %q %q\n%s", err, st, why, out)
	}

	// envgap eval's predictions: another setting (one attempt, no feedback), labelled; the
	// trajectories are in the predictions.
	pred := writePreds(t, `{"instance_id": "`+evalControl+`", "files": {}, "trajectory": [{"note": "kept as it is"}]}`)
	if out, err := runCLI(t, "--store", store, "eval", "--pred", pred, "--split", "reported", "--tasks", w.hub, "--out", filepath.Join(res, "eval"),
		"--git-url-template", w.gitTemplate, "--pypi-upstream", w.pypi+"/simple/", "--pypi", w.pypi,
		"--npm-registry", "http://127.0.0.1:9/", "--osv", w.osv, "--step-timeout", "3m"); err != nil {
		t.Fatalf("eval: %v\n%s", err, out)
	}
	if out, err := runCLI(t, "--store", store, "submit", "prepare", filepath.Join(res, "eval"), "--meta", labelled, "--out", filepath.Join(tmp, "eval")); err != nil {
		t.Fatalf("prepare: %v\n%s", err, out)
	}
	out, err = w.submitCheck(t, checkStore, filepath.Join(tmp, "eval"))
	if st, why := checkLine(out, "trajectories"); err != nil || st != submit.StatusOK || !strings.Contains(why, "1 in the predictions (envgap eval)") {
		t.Errorf("eval bundle: %v %q %q\n%s", err, st, why, out)
	}
	if st, why := checkLine(out, "setting"); st != submit.StatusOK || !strings.Contains(why, "mode eval") {
		t.Errorf("eval bundle setting: %q %q", st, why)
	}

	// Tampered results: numbers re-scoring does not give.
	b = copyBundle(t, good)
	editFile(t, filepath.Join(b, "results", "reported", "results.jsonl"), func(s string) string {
		return strings.Replace(s, `"checks_passed":true`, `"checks_passed":false`, 1)
	})
	fails("tampered checks", b, "rescore (reported)", "checks passed claimed false, re-scored true")
	b = copyBundle(t, good)
	editFile(t, filepath.Join(b, "results", "reported", "results.jsonl"), func(s string) string {
		s = strings.Replace(s, `"status":"resolved"`, `"status":"unresolved"`, 1)
		return strings.Replace(s, `"resolved":true`, `"resolved":false`, 1)
	})
	fails("tampered status", b, "rescore (reported)", "first-attempt resolved claimed 0, re-scored 1", "claimed unresolved, re-scored resolved")
}
