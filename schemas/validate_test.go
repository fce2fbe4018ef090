package schemas

import (
	"strings"
	"testing"
)

const goodCandidate = `{"instance_id":"envgap__Ezibenroc__PyRoaringBitMap-93","set":"repaired","repo":"Ezibenroc/PyRoaringBitMap","base_commit":"89c361ab0961cd3b51249dde4fce95937ec10bdd","project_files":[],"patch":"diff --git a/setup.py b/setup.py\n","gold_files":[{"path":"setup.py","content":"x"}],"problem_statement":"Build error with cython 3","created_at":"2023-07-24T11:01:01Z","registry_date":"2023-07-30T12:48:33Z","registry_date_source":"pull_request_merged_at","ecosystem":"python","image":"envgap-python-eval","manifest_path":"setup.py","manifest_paths":["setup.py"],"expected_failure_regex":"error:\\ subprocess\\-exited\\-with\\-error","crawl_id":"pr-20260924","issue_url":"https://github.com/Ezibenroc/PyRoaringBitMap/issues/93","issue_number":93,"pull_request":"https://github.com/Ezibenroc/PyRoaringBitMap/pull/95","pr_number":95,"pr_head_commit":"684615af89166275b440d6c2977b0ca0acc71c26","pr_merge_commit":"7e46a671dd28498f647fc885a1b1053aeb267dc5","categories":["misspecification"],"repo_license":"MIT"}`

func TestReadCandidatesProblems(t *testing.T) {
	tests := []struct {
		name      string
		input     string
		wantField string
		wantMsg   string
	}{
		{"invalid json", `{"instance_id": `, "", "invalid JSON"},
		{"not an object", `[1,2]`, "", "not an object"},
		{"unknown field with suggestion", strings.Replace(goodCandidate, `"repo_license"`, `"repo_licence"`, 1), "repo_licence", `did you mean "repo_license"`},
		{"missing required", strings.Replace(goodCandidate, `"issue_number":93,`, ``, 1), "issue_number", "missing required field"},
		{"wrong type", strings.Replace(goodCandidate, `"issue_number":93`, `"issue_number":"93"`, 1), "issue_number", "want an integer, got a string"},
		{"bad enum", strings.Replace(goodCandidate, `"ecosystem":"python"`, `"ecosystem":"rust"`, 1), "ecosystem", `"rust" is not one of python, cpp, java, javascript`},
		{"bad set", strings.Replace(goodCandidate, `"set":"repaired"`, `"set":"fixed"`, 1), "set", "is not one of"},
		{"invalid utf8", strings.Replace(goodCandidate, "cython 3", "cython \xff3", 1), "", "invalid UTF-8"},
		{"id pattern", strings.Replace(goodCandidate, `envgap__Ezibenroc__PyRoaringBitMap-93`, `Ezibenroc-93`, 1), "instance_id", "does not follow"},
		{"id mismatch", strings.Replace(goodCandidate, `"issue_number":93`, `"issue_number":94`, 1), "instance_id", "does not match repo and issue_number"},
		{"absolute gold path", strings.Replace(goodCandidate, `"path":"setup.py"`, `"path":"/etc/setup.py"`, 1), "gold_files[0].path", "absolute"},
		{"dotdot gold path", strings.Replace(goodCandidate, `"path":"setup.py"`, `"path":"a/../../setup.py"`, 1), "gold_files[0].path", `contains ".."`},
		{"repeated gold path", strings.Replace(goodCandidate, `{"path":"setup.py","content":"x"}`, `{"path":"setup.py","content":"x"},{"path":"setup.py","content":null}`, 1), "gold_files[1].path", "repeats"},
		{"bad regex", strings.Replace(goodCandidate, `"expected_failure_regex":"error:\\ subprocess\\-exited\\-with\\-error"`, `"expected_failure_regex":"error: ("`, 1), "expected_failure_regex", "does not compile"},
		{"time without offset", strings.Replace(goodCandidate, `"created_at":"2023-07-24T11:01:01Z"`, `"created_at":"2023-07-24T11:01:01"`, 1), "created_at", "RFC 3339"},
		{"registry_date without offset", strings.Replace(goodCandidate, `"registry_date":"2023-07-30T12:48:33Z"`, `"registry_date":"2023-07-30T12:48:33"`, 1), "registry_date", "has no offset"},
		{"registry_date not a date", strings.Replace(goodCandidate, `"registry_date":"2023-07-30T12:48:33Z"`, `"registry_date":"2023-02-30"`, 1), "registry_date", "is not a date"},
		{"null for string", strings.Replace(goodCandidate, `"repo":"Ezibenroc/PyRoaringBitMap"`, `"repo":null`, 1), "repo", "is null"},
		{"repaired without pr", strings.Replace(goodCandidate, `"pr_number":95,`, ``, 1), "pr_number", "required"},
		{"outcome decided by verify", strings.Replace(goodCandidate, `"set":"repaired"`, `"set":"repaired","outcome":"task"`, 1), "outcome", "decided by verify"},
		{"wrong date source", strings.Replace(goodCandidate, `"pull_request_merged_at"`, `"issue_created_at"`, 1), "registry_date_source", "does not fit set repaired"},
	}
	tests = append(tests, pathProblems...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ps, err := ReadCandidates("in.jsonl", strings.NewReader(tt.input+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range ps {
				if p.Field == tt.wantField && strings.Contains(p.Msg, tt.wantMsg) {
					if p.File != "in.jsonl" || p.Line != 1 {
						t.Errorf("problem does not name file and line: %+v", p)
					}
					return
				}
			}
			t.Errorf("want a problem on field %q containing %q; got %v", tt.wantField, tt.wantMsg, ps)
		})
	}
}

// registry_date is a cut-off (schemas.ParseCutoff): a bare date, the end of that day in
// UTC, is as valid as an instant with an offset, in every stage that reads it.
func TestRegistryDateBareDate(t *testing.T) {
	in := strings.Replace(goodCandidate, `"registry_date":"2023-07-30T12:48:33Z"`, `"registry_date":"2023-07-30"`, 1)
	cands, ps, err := ReadCandidates("in.jsonl", strings.NewReader(in+"\n"))
	if err != nil || len(ps) != 0 || len(cands) != 1 || cands[0].RegistryDate != "2023-07-30" {
		t.Fatalf("bare registry_date: %v %v %d", err, ps, len(cands))
	}
}

func TestReadCandidatesGoodAndAllProblemsListed(t *testing.T) {
	cands, ps, err := ReadCandidates("in.jsonl", strings.NewReader(goodCandidate+"\n\n"))
	if err != nil || len(ps) != 0 || len(cands) != 1 {
		t.Fatalf("good candidate: %v %v %d", err, ps, len(cands))
	}
	if cands[0].GoldFiles[0].Content == nil || *cands[0].GoldFiles[0].Content != "x" {
		t.Fatalf("gold file content not decoded")
	}
	bad := strings.Join([]string{goodCandidate, "nope", goodCandidate, strings.Replace(goodCandidate, `"ecosystem":"python"`, `"ecosystem":"go"`, 1)}, "\n")
	_, ps, _ = ReadCandidates("in.jsonl", strings.NewReader(bad))
	lines := map[int]bool{}
	for _, p := range ps {
		lines[p.Line] = true
	}
	for _, l := range []int{2, 3, 4} {
		if !lines[l] {
			t.Errorf("no problem reported on line %d (duplicate id on 3, bad JSON on 2, bad enum on 4): %v", l, ps)
		}
	}
	if !strings.Contains(ps.Error(), "in.jsonl:3: envgap__Ezibenroc__PyRoaringBitMap-93: field instance_id: repeats the record on line 1") {
		t.Errorf("duplicate message: %v", ps)
	}
}

func TestCheckRelPath(t *testing.T) {
	for _, p := range []string{"a", "a/b.txt", "src/main/java/App.java", ".github/workflows/x.yml"} {
		if err := CheckRelPath(p); err != nil {
			t.Errorf("%q: %v", p, err)
		}
	}
	for _, p := range []string{"", "/a", "../a", "a/../b", "a/./b", "a//b", "a/", ".", "a\\b", "a\x00"} {
		if err := CheckRelPath(p); err == nil {
			t.Errorf("%q accepted", p)
		}
	}
}

func TestCandidateToTask(t *testing.T) {
	cands, _, _ := ReadCandidates("in.jsonl", strings.NewReader(goodCandidate))
	task := cands[0].ToTask()
	task.ResolveCommand, task.ReproCommand, task.RunCommand = "a", "b", "c"
	if ps := task.Validate(); len(ps) != 0 {
		t.Fatalf("task from a good candidate is invalid: %v", ps)
	}
	if task.Source != SourceRepaired || len(task.Splits) != 1 || task.Splits[0] != SplitFull || task.SecurityFlags == nil {
		t.Errorf("derived fields: %+v", task)
	}
}
