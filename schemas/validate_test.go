package schemas

import (
	"strings"
	"testing"
	"time"
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
		// The card's nulls and "only" columns.
		{"reported with crawl_id", reportedOf(goodCandidate, false), "crawl_id", "must be null for reported records"},
		{"reported with a pull request", reportedOf(goodCandidate, true), "pr_number", "must be null for reported records"},
		{"lite with crawl_id", liteOf(`"crawl_id":"pr-20260924"`), "crawl_id", "must be null for lite records"},
		{"lite with repo_license", liteOf(`"repo_license":"MIT"`), "repo_license", "must be null for lite records"},
		{"lite with a pull request", liteOf(`"pull_request":"https://github.com/a/b/pull/1"`), "pull_request", "must be null for lite records"},
		{"lite base_commit not from its files", liteOf(`"base_commit":"89c361ab0961cd3b51249dde4fce95937ec10bdd"`), "base_commit", "is not the commit made from project_files"},
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

// reportedOf is a repaired record made reported, keeping its crawl_id (and, with pr, its
// pull request columns; without, they are null).
func reportedOf(rec string, pr bool) string {
	s := strings.Replace(rec, `"set":"repaired"`, `"set":"reported"`, 1)
	s = strings.Replace(s, `"pull_request_merged_at"`, `"issue_created_at"`, 1)
	if !pr {
		s = strings.Replace(s, `"pull_request":"https://github.com/Ezibenroc/PyRoaringBitMap/pull/95","pr_number":95,"pr_head_commit":"684615af89166275b440d6c2977b0ca0acc71c26","pr_merge_commit":"7e46a671dd28498f647fc885a1b1053aeb267dc5",`, ``, 1)
	} else {
		s = strings.Replace(s, `"crawl_id":"pr-20260924",`, ``, 1)
	}
	return s
}

// goodLite is a valid lite record without base_commit (envgap add computes it).
const goodLite = `{"instance_id":"envgap__codex__python-t1-7","set":"lite","repo":"codex/python-t1","project_files":[{"path":"app.py","content":"print(1)\n"},{"path":"requirements.txt","content":"x==1\n"}],"gold_files":[{"path":"requirements.txt","content":"x==2\n"}],"problem_statement":"T\n\nbody","created_at":"2026-03-01T10:00:00Z","registry_date":"2026-03-01T11:00:00Z","registry_date_source":"repaired_at","ecosystem":"python","issue_number":7}`

// liteOf is goodLite with one more field.
func liteOf(field string) string {
	return strings.Replace(goodLite, `{"instance_id"`, `{`+field+`,"instance_id"`, 1)
}

func TestReadCandidatesComputesLiteBaseCommit(t *testing.T) {
	cands, ps, err := ReadCandidates("in.jsonl", strings.NewReader(goodLite+"\n"))
	if err != nil || len(ps) != 0 || len(cands) != 1 {
		t.Fatalf("good lite record: %v %v", err, ps)
	}
	c := cands[0]
	created, _ := time.Parse(time.RFC3339, c.CreatedAt)
	want, _ := LiteBaseCommit(c.ProjectFiles, created)
	if c.BaseCommit == "" || c.BaseCommit != want {
		t.Fatalf("base_commit %q, want %q", c.BaseCommit, want)
	}
	// Given, it must be that commit; the computed one passes.
	if _, ps, _ := ReadCandidates("in.jsonl", strings.NewReader(liteOf(`"base_commit":"`+want+`"`)+"\n")); len(ps) != 0 {
		t.Errorf("the computed base_commit given back: %v", ps)
	}
	// The task it becomes carries it, and a lite task without one is invalid.
	task := c.ToTask()
	task.ResolveCommand, task.ReproCommand, task.RunCommand, task.Image = "r", "r", "r", EcosystemPython.Image()
	if ps := task.Validate(); len(ps) != 0 {
		t.Errorf("lite task: %v", ps)
	}
	task.BaseCommit = ""
	if ps := task.Validate(); !hasProblem(ps, "base_commit") {
		t.Errorf("a lite task without base_commit passes: %v", ps)
	}
	since := "2026-09-29T02:00:00+02:00"
	reason := "broken"
	task.BaseCommit, task.ExcludedFromScoring, task.ExclusionReason, task.ExcludedSince = want, true, &reason, &since
	if ps := task.Validate(); !hasProblem(ps, "excluded_since") {
		t.Errorf("excluded_since with an offset passes: %v", ps)
	}
}

func hasProblem(ps []FieldProblem, field string) bool {
	for _, p := range ps {
		if p.Field == field {
			return true
		}
	}
	return false
}
