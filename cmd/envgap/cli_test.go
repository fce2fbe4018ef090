package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
)

// runCLI runs the root command with args and returns stdout and the error.
func runCLI(t testing.TB, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := &factory{Global: &globalOptions{}, Out: &out, Err: &errOut, Getenv: func(string) string { return "" }}
	root := newRootCommand(f)
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

// cardExample is the dataset card's example record, as a candidate.
const cardExample = `{"instance_id":"envgap__Ezibenroc__PyRoaringBitMap-93","set":"repaired","repo":"Ezibenroc/PyRoaringBitMap","base_commit":"89c361ab0961cd3b51249dde4fce95937ec10bdd","project_files":[],"patch":"diff --git a/setup.py b/setup.py\n--- a/setup.py\n+++ b/setup.py\n@@ -72,7 +72,7 @@\n-    setup_requires=['cython'],\n+    setup_requires=['cython<3.0.0'],\n","gold_files":[{"path":"setup.py","content":"#! /usr/bin/env python3\n"}],"problem_statement":"Build error with cython 3\n\nBuilding pyroaring with the cython 3.0.0 results in the following error logs:","problem_statement_truncated":false,"created_at":"2023-07-24T11:01:01Z","registry_date":"2023-07-30T12:48:33Z","registry_date_source":"pull_request_merged_at","ecosystem":"python","image":"envgap-python-eval","manifest_path":"setup.py","manifest_paths":["setup.py"],"bootstrap_command":"python3 -m pip install -q --upgrade pip","resolve_command":"python3 -m pip install .","repro_command":"python3 -m pip install .","run_command":"python3 -c 'import pyroaring'","d2_command":"python3 -m pip list --format=json > /evidence/D2.raw.json","failure_signature":"error: subprocess-exited-with-error","expected_failure_regex":"error:\\ subprocess\\-exited\\-with\\-error","crawl_id":"pr-20260924","issue_url":"https://github.com/Ezibenroc/PyRoaringBitMap/issues/93","issue_number":93,"pull_request":"https://github.com/Ezibenroc/PyRoaringBitMap/pull/95","pr_number":95,"pr_head_commit":"684615af89166275b440d6c2977b0ca0acc71c26","pr_merge_commit":"7e46a671dd28498f647fc885a1b1053aeb267dc5","categories":["misspecification"],"repo_license":"MIT"}`

func storeFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			out[p] = string(b)
		}
		return nil
	})
	return out
}

func TestAddStatusFsck(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	good := filepath.Join(dir, "good.jsonl")
	os.WriteFile(good, []byte(cardExample+"\n"), 0o644)
	out, err := runCLI(t, "--store", store, "add", good)
	if err != nil || !strings.Contains(out, "added 1 candidates (1 new)") {
		t.Fatalf("add: %v %s", err, out)
	}
	out, err = runCLI(t, "--store", store, "add", good)
	if err != nil || !strings.HasPrefix(out, "unchanged:") {
		t.Fatalf("add again: %v %s", err, out)
	}
	before := storeFiles(t, store)

	// Several bad records: every problem listed, exit code 3, the store unchanged.
	bad := filepath.Join(dir, "bad.jsonl")
	lines := []string{
		strings.Replace(cardExample, `"ecosystem":"python"`, `"ecosystem":"rust"`, 1),
		`{"instance_id": "envgap__a__b-1",`,
		strings.Replace(strings.Replace(cardExample, `envgap__Ezibenroc__PyRoaringBitMap-93`, `envgap__x__y-7`, 1), `"path":"setup.py"`, `"path":"../setup.py"`, 1),
		strings.Replace(strings.Replace(cardExample, `envgap__Ezibenroc__PyRoaringBitMap-93`, `envgap__x__y-8`, 1), `{"path":"setup.py",`, `{"path":"a","content":"x","mode":"0755"},{"path":"a/setup.py",`, 1),
	}
	os.WriteFile(bad, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	_, err = runCLI(t, "--store", store, "add", bad)
	var ps schemas.Problems
	if !errors.As(err, &ps) || exitCode(err) != exitRejected {
		t.Fatalf("bad add: %v (exit %d)", err, exitCode(err))
	}
	msg := ps.Error()
	for _, want := range []string{"bad.jsonl:1: envgap__Ezibenroc__PyRoaringBitMap-93: field ecosystem", "bad.jsonl:2: invalid JSON", "bad.jsonl:3: envgap__x__y-7: field gold_files[0].path", "bad.jsonl:3: envgap__x__y-7: field instance_id", "bad.jsonl:4: envgap__x__y-8: field gold_files[0].mode: unknown field", "bad.jsonl:4: envgap__x__y-8: field gold_files[1].path: \"a/setup.py\" is below gold_files[0] \"a\""} {
		if !strings.Contains(msg, want) {
			t.Errorf("problems do not include %q:\n%s", want, msg)
		}
	}
	after := storeFiles(t, store)
	if len(after) != len(before) {
		t.Errorf("a refused add changed the store: %d -> %d files", len(before), len(after))
	}
	for p, b := range before {
		if after[p] != b {
			t.Errorf("a refused add changed %s", p)
		}
	}

	out, err = runCLI(t, "--store", store, "--json", "status")
	var fun struct {
		Candidates map[string]map[string]int `json:"candidates"`
	}
	if err != nil || json.Unmarshal([]byte(out), &fun) != nil || fun.Candidates["repaired"]["not_checked"] != 1 {
		t.Errorf("status: %v %s", err, out)
	}

	out, err = runCLI(t, "--store", store, "store", "fsck")
	if err != nil || !strings.Contains(out, "clean") {
		t.Fatalf("fsck: %v %s", err, out)
	}
	// Flip a byte of one object: fsck finds it and exits 5.
	objects, _ := filepath.Glob(filepath.Join(store, "objects", "*", "*"))
	victim := objects[0]
	os.Chmod(victim, 0o644)
	b, _ := os.ReadFile(victim)
	b[0] ^= 0x20
	os.WriteFile(victim, b, 0o444)
	out, err = runCLI(t, "--store", store, "store", "fsck")
	if exitCode(err) != exitDamage || !strings.Contains(out, "damaged") {
		t.Errorf("fsck after a flipped byte: exit %d: %s", exitCode(err), out)
	}
}

func TestCorpusIDOfTaskRows(t *testing.T) {
	dir := t.TempDir()
	cands, _, _ := schemas.ReadCandidates("x", strings.NewReader(cardExample))
	t1 := cands[0].ToTask()
	t2 := t1
	t2.InstanceID, t2.IssueNumber = "envgap__Ezibenroc__PyRoaringBitMap-94", 94
	url := "https://github.com/Ezibenroc/PyRoaringBitMap/issues/94"
	t2.IssueURL = &url
	write := func(name string, indent bool, rows ...schemas.Task) string {
		var buf bytes.Buffer
		for _, r := range rows {
			b, _ := json.Marshal(r)
			if indent {
				// The same data with other spacing and key order (a map re-sorts keys).
				var m map[string]any
				json.Unmarshal(b, &m)
				b, _ = json.Marshal(m)
				b = bytes.ReplaceAll(b, []byte(`":`), []byte(`": `))
			}
			buf.Write(b)
			buf.WriteByte('\n')
		}
		p := filepath.Join(dir, name)
		os.WriteFile(p, buf.Bytes(), 0o644)
		return p
	}
	id1, err := runCLI(t, "corpus-id", write("a.jsonl", false, t1, t2))
	if err != nil {
		t.Fatal(err)
	}
	id2, _ := runCLI(t, "corpus-id", write("b.jsonl", true, t2, t1))
	if id1 != id2 || len(strings.TrimSpace(id1)) != 12 {
		t.Errorf("order or formatting changed the id: %q %q", id1, id2)
	}
	t3 := t2
	t3.ProblemStatement = strings.Replace(t3.ProblemStatement, "cython", "Cython", 1)
	id3, _ := runCLI(t, "corpus-id", write("c.jsonl", false, t1, t3))
	if id3 == id1 {
		t.Error("a one-character edit did not change the id")
	}
}

// A lost candidate record or verdict is damage: fsck reports it (exit 5), the add that
// wrote the record writes it back, and status and admit refuse a lost verdict instead of
// reading it as "no verdict".
func TestLostRecords(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	good := filepath.Join(dir, "good.jsonl")
	os.WriteFile(good, []byte(cardExample+"\n"), 0o644)
	if _, err := runCLI(t, "--store", store, "add", good); err != nil {
		t.Fatal(err)
	}
	st, err := catalog.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	const id = "envgap__Ezibenroc__PyRoaringBitMap-93"
	cd, _, err := st.CandidateDigest(id)
	if err != nil {
		t.Fatal(err)
	}
	object := func(d schemas.Digest) string { return filepath.Join(store, "objects", d.Hex()[:2], d.Hex()[2:]) }
	os.Remove(object(cd))
	out, err := runCLI(t, "--store", store, "store", "fsck")
	if exitCode(err) != exitDamage || !strings.Contains(out, "missing refs/candidates/add-") || !strings.Contains(out, "candidate "+id) {
		t.Fatalf("fsck of a lost record: exit %d %v\n%s", exitCode(err), err, out)
	}
	if out, err := runCLI(t, "--store", store, "add", good); err != nil || !strings.HasPrefix(out, "unchanged:") {
		t.Fatalf("add again: %v %s", err, out)
	}
	if out, err := runCLI(t, "--store", store, "store", "fsck"); err != nil {
		t.Fatalf("fsck after the add wrote the record back: %v\n%s", err, out)
	}

	v := schemas.Verdict{Kind: "verdict", InstanceID: id, Candidate: cd, Outcome: schemas.OutcomeNotReproduced, Reason: "test"}
	vd, _ := st.PutJSON(&v)
	if err := st.SetRef(data.RefVerdicts+id, vd); err != nil {
		t.Fatal(err)
	}
	if out, err := runCLI(t, "--store", store, "status"); err != nil {
		t.Fatalf("status: %v %s", err, out)
	}
	os.Remove(object(vd))
	for _, args := range [][]string{{"status"}, {"admit"}} { // export: see export.TestExportRefusesLostVerdict
		_, err := runCLI(t, append([]string{"--store", store}, args...)...)
		if err == nil || !strings.Contains(err.Error(), "verdict of "+id+" is lost") {
			t.Errorf("%s over a lost verdict: %v", args[0], err)
		}
	}
}

// verifyOutcomes reads envgap --json verify's report: each candidate's outcome by
// instance id (each result is logged with its reason or error).
func verifyOutcomes(t *testing.T, out string) map[string]string {
	t.Helper()
	var rep struct {
		Results []struct {
			InstanceID string `json:"instance_id"`
			Outcome    string `json:"outcome"`
			Reason     string `json:"reason"`
			Error      string `json:"error"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("verify: %v\n%s", err, out)
	}
	got := map[string]string{}
	for _, r := range rep.Results {
		got[r.InstanceID] = r.Outcome
		t.Logf("verify %s: %s: %s%s", r.InstanceID, r.Outcome, r.Reason, r.Error)
	}
	return got
}
