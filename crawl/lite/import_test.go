package lite

import (
	"github.com/envgap/envgap/lib/studylayout"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/internal/testenv"
	"github.com/envgap/envgap/schemas"
)

func loadProblems(t *testing.T) []studylayout.Problem {
	t.Helper()
	f, err := os.Open("../../data/problems.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ps, err := studylayout.ReadProblems("data/problems.json", f)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

func TestProblemList(t *testing.T) {
	ps := loadProblems(t)
	if len(ps) != 50 {
		t.Fatalf("%d problems, want the paper's 50", len(ps))
	}
	domains := map[string]int{}
	for i, p := range ps {
		if p.Number != int64(i+1) {
			t.Errorf("entry %d has number %d", i, p.Number)
		}
		domains[p.Domain]++
	}
	// Table 1 of the paper: problems per domain.
	want := map[string]int{"Data Processing": 10, "Cryptography": 7, "Image Processing": 6, "Networking": 6,
		"Text Processing": 6, "Compression": 5, "Math/Scientific": 5, "System Utilities": 5}
	for d, n := range want {
		if domains[d] != n {
			t.Errorf("domain %s: %d problems, want %d", d, domains[d], n)
		}
	}
	if len(domains) != len(want) {
		t.Errorf("domains %v, want %v", domains, want)
	}
}

// TestImportDemo imports the built-in demo study and checks every project's outcome, the
// card's fields, and that each patch applies with git to the base commit and gives the
// project with the fix.
func TestImportDemo(t *testing.T) {
	res, err := Import("../../data/demo/study", Options{Problems: loadProblems(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rejects) > 0 {
		t.Fatalf("demo study has rejects: %+v", res.Rejects)
	}
	want := map[string]struct {
		outcome schemas.Outcome
		gold    []string
		domain  string
	}{
		"envgap__claude-code__cpp-t1-13":   {schemas.OutcomeNotChecked, []string{"README.md", "setup.sh"}, "Cryptography"},
		"envgap__claude-code__java-t1-43":  {schemas.OutcomeNotChecked, []string{"src/main/java/Dijkstra.java"}, "Math/Scientific"},
		"envgap__codex__javascript-t1-49":  {schemas.OutcomeNotChecked, []string{"package.json"}, "System Utilities"},
		"envgap__gemini__python-t1-1":      {schemas.OutcomeNotChecked, []string{"requirements.txt"}, "Data Processing"},
		"envgap__codex__python-t1-48":      {schemas.OutcomeAlreadyWorks, nil, "System Utilities"},
		"envgap__gemini__javascript-t1-34": {schemas.OutcomeCodeFix, nil, "Text Processing"},
		"envgap__codex__cpp-t1-47":         {schemas.OutcomeNotFixed, nil, "System Utilities"},
		"envgap__gemini__java-t1-14":       {schemas.OutcomeFixNotRecorded, nil, "Cryptography"},
	}
	if len(res.Candidates) != len(want) {
		t.Errorf("%d candidates, want %d", len(res.Candidates), len(want))
	}
	ecos := map[schemas.Ecosystem]bool{}
	for _, c := range res.Candidates {
		w, ok := want[c.InstanceID]
		if !ok {
			t.Errorf("unexpected candidate %s", c.InstanceID)
			continue
		}
		ecos[c.Ecosystem] = true
		if c.Outcome != w.outcome {
			t.Errorf("%s: outcome %s (%s), want %s", c.InstanceID, c.Outcome, c.Reason, w.outcome)
		}
		var gold []string
		for _, g := range c.GoldFiles {
			gold = append(gold, g.Path)
		}
		if strings.Join(gold, ",") != strings.Join(w.gold, ",") {
			t.Errorf("%s: gold_files %v, want %v", c.InstanceID, gold, w.gold)
		}
		if c.Domain == nil || *c.Domain != w.domain {
			t.Errorf("%s: domain %v, want %s", c.InstanceID, c.Domain, w.domain)
		}
		if ps := c.Validate(); len(ps) > 0 {
			t.Errorf("%s: invalid candidate: %+v", c.InstanceID, ps)
		}
		agent := strings.Split(c.Repo, "/")[0]
		if c.GeneratedBy == nil || *c.GeneratedBy != agent || c.MadeBy != MadeBy || c.IssueURL != nil || c.RepoLicense != nil ||
			c.Set != schemas.SourceLite || c.RegistryDateSource != wantDateSource(w.outcome) || c.Image != c.Ecosystem.Image() {
			t.Errorf("%s: card fields wrong: generated_by=%v made_by=%q issue_url=%v license=%v set=%s source=%s image=%s",
				c.InstanceID, c.GeneratedBy, c.MadeBy, c.IssueURL, c.RepoLicense, c.Set, c.RegistryDateSource, c.Image)
		}
		if id := schemas.InstanceID(c.Repo, c.IssueNumber); id != c.InstanceID {
			t.Errorf("%s: id from repo and issue_number is %s", c.InstanceID, id)
		}
		created, _ := time.Parse(time.RFC3339, c.CreatedAt)
		if h, _ := BaseCommit(c.ProjectFiles, created); h != c.BaseCommit {
			t.Errorf("%s: base_commit %s, recomputed %s", c.InstanceID, c.BaseCommit, h)
		}
		if c.ManifestPath == "" || c.RunCommand == "" && c.Outcome != schemas.OutcomeNotFixed {
			t.Errorf("%s: manifest_path %q run_command %q", c.InstanceID, c.ManifestPath, c.RunCommand)
		}
		if w.outcome == schemas.OutcomeNotChecked {
			if c.Patch == "" || c.FailureSignature == "" || !strings.Contains(c.ReproCommand, c.RunCommand) {
				t.Errorf("%s: a fix candidate needs patch, failure_signature and repro; got patch %d bytes, signature %q, repro %q",
					c.InstanceID, len(c.Patch), c.FailureSignature, c.ReproCommand)
			}
			checkPatchApplies(t, c)
		} else if c.Patch != "" || len(c.GoldFiles) > 0 {
			t.Errorf("%s: outcome %s carries a fix", c.InstanceID, c.Outcome)
		}
	}
	if len(ecos) != 4 {
		t.Errorf("demo covers ecosystems %v, want all four", ecos)
	}
	// The same study gives the same candidates (digests) every time.
	again, err := Import("../../data/demo/study", Options{Problems: loadProblems(t)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range res.Candidates {
		a, _ := schemas.DigestOf(&res.Candidates[i])
		b, _ := schemas.DigestOf(&again.Candidates[i])
		if a != b {
			t.Errorf("%s: second import differs", res.Candidates[i].InstanceID)
		}
	}
}

// checkPatchApplies materialises the base commit, applies the patch with git and compares
// the result with the project plus gold_files.
func checkPatchApplies(t *testing.T, c schemas.Candidate) {
	t.Helper()
	testenv.Tool(t, "git")
	created, _ := time.Parse(time.RFC3339, c.CreatedAt)
	dir := filepath.Join(t.TempDir(), "w")
	if _, err := Materialize(dir, c.ProjectFiles, created); err != nil {
		t.Fatal(err)
	}
	pf := filepath.Join(t.TempDir(), "fix.patch")
	if err := os.WriteFile(pf, []byte(c.Patch), 0o644); err != nil {
		t.Fatal(err)
	}
	gitCLI(t, dir, nil, "apply", "--whitespace=nowarn", pf)
	got := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			b, _ := os.ReadFile(p)
			r, _ := filepath.Rel(dir, p)
			got[filepath.ToSlash(r)] = string(b)
		}
		return nil
	})
	want := fileMap(Overlay(c.ProjectFiles, c.GoldFiles))
	if !sameFiles(got, want) {
		t.Errorf("%s: patch applied with git gives %v, want %v", c.InstanceID, sortedKeys(got), sortedKeys(want))
	}
}

// writeStudy writes files (path -> content) under a new study folder.
func writeStudy(t *testing.T, tree map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range tree {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const goodMeta = `{"created_at": "2026-01-02T03:04:05Z", "worked_first_time": false, "made_to_work": true,
 "repaired_at": "2026-01-02T04:00:00Z", "run_command": "python3 app.py", "error": "ModuleNotFoundError: No module named 'yaml'"}`

// TestImportBadInputs checks that every bad project is reported by path and the rest of
// the study is imported.
func TestImportBadInputs(t *testing.T) {
	tree := map[string]string{
		// good
		"agent/python-t1/p04/meta.json":                 goodMeta,
		"agent/python-t1/p04/written/app.py":            "import yaml\n",
		"agent/python-t1/p04/written/requirements.txt":  "",
		"agent/python-t1/p04/repaired/app.py":           "import yaml\n",
		"agent/python-t1/p04/repaired/requirements.txt": "PyYAML==6.0.1\n",
		// no meta.json
		"agent/python-t1/p05/written/app.py": "x\n",
		// malformed meta.json
		"agent/python-t1/p06/meta.json":      `{"created_at": "yesterday", "worked_first_time": false, "made_to_work": true}`,
		"agent/python-t1/p06/written/app.py": "x\n",
		// unknown field
		"agent/python-t1/p07/meta.json":      `{"created_at": "2026-01-02T03:04:05Z", "worked_first_time": true, "made_to_work": true, "run_command": "x", "worked": true}`,
		"agent/python-t1/p07/written/app.py": "x\n",
		// not JSON
		"agent/python-t1/p08/meta.json":      `created_at: 2026-01-02`,
		"agent/python-t1/p08/written/app.py": "x\n",
		// binary file
		"agent/cpp-t2/p09/meta.json":         goodMeta,
		"agent/cpp-t2/p09/written/main.cpp":  "int main(){}\n",
		"agent/cpp-t2/p09/written/logo.png":  "\x89PNG\r\n\x1a\n\x00\x00",
		"agent/cpp-t2/p09/repaired/main.cpp": "int main(){}\n",
		// non-UTF-8 file in the repaired copy
		"agent/java-t1/p10/meta.json":        goodMeta,
		"agent/java-t1/p10/written/pom.xml":  "<project/>\n",
		"agent/java-t1/p10/repaired/pom.xml": "<project>caf\xe9</project>\n",
		// bad folder names
		"agent/ruby-t1/p01/meta.json":        goodMeta,
		"agent/python-x/p01/meta.json":       goodMeta,
		"agent/python-t1/problem1/meta.json": goodMeta,
		// problem not in the list
		"agent/python-t1/p77/meta.json":      goodMeta,
		"agent/python-t1/p77/written/app.py": "x\n",
		// no written folder
		"agent/javascript-t1/p02/meta.json": goodMeta,
		// top-level files are not projects
		"README.md": "the study\n",
	}
	dir := writeStudy(t, tree)
	// symbolic links: one escaping the project, one inside it
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "agent/python-t1/p04/../../../agent/python-t1/p05/written/leak")); err != nil {
		t.Fatal(err)
	}
	mk := func(p string) string {
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		return full
	}
	os.WriteFile(mk("agent/cpp-t1/p11/meta.json"), []byte(goodMeta), 0o644)
	os.WriteFile(mk("agent/cpp-t1/p11/written/main.cpp"), []byte("int main(){}\n"), 0o644)
	os.Symlink("../../../../../outside.txt", mk("agent/cpp-t1/p11/written/up.txt"))
	os.MkdirAll(filepath.Join(dir, "agent/cpp-t1/p12/written"), 0o755)
	os.WriteFile(mk("agent/cpp-t1/p12/meta.json"), []byte(goodMeta), 0o644)
	os.Symlink("/tmp", filepath.Join(dir, "agent/cpp-t1/p12/written/dir"))

	res, err := Import(dir, Options{Problems: loadProblems(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Candidates) != 1 || res.Candidates[0].InstanceID != "envgap__agent__python-t1-4" {
		t.Fatalf("candidates %v, want only envgap__agent__python-t1-4", ids(res.Candidates))
	}
	if c := res.Candidates[0]; c.Outcome != schemas.OutcomeNotChecked || len(c.GoldFiles) != 1 {
		t.Errorf("good project: %s %s gold %v", c.Outcome, c.Reason, c.GoldFiles)
	}
	wantRejects := map[string]string{
		"agent/python-t1/p05/meta.json":      "is missing",
		"agent/python-t1/p05/written/leak":   "symbolic link",
		"agent/python-t1/p06/meta.json":      "created_at",
		"agent/python-t1/p07/meta.json":      `unknown field "worked"`,
		"agent/python-t1/p08/meta.json":      "not a valid meta object",
		"agent/cpp-t2/p09/written/logo.png":  "binary",
		"agent/java-t1/p10/repaired/pom.xml": "not valid UTF-8 (first bad byte at offset 12)",
		"agent/ruby-t1":                      `language "ruby"`,
		"agent/python-x":                     "<language>-t<trial>",
		"agent/python-t1/problem1":           "p<problem number>",
		"agent/python-t1/p77":                "problem 77 is not in the problem list",
		"agent/javascript-t1/p02/written":    "is missing",
		"agent/cpp-t1/p11/written/up.txt":    "symbolic link",
		"agent/cpp-t1/p12/written/dir":       "symbolic link",
	}
	got := map[string]string{}
	for _, r := range res.Rejects {
		t.Logf("reject %s: %s", r.Ref, r.Reason)
		got[r.Ref] += r.Reason + " | "
	}
	for ref, frag := range wantRejects {
		if !strings.Contains(got[ref], frag) {
			t.Errorf("reject %s: got %q, want it to mention %q", ref, got[ref], frag)
		}
	}
	for ref := range got {
		if _, ok := wantRejects[ref]; !ok {
			t.Errorf("unexpected reject %s: %s", ref, got[ref])
		}
	}
	if !strings.Contains(got["agent/python-t1/p06/meta.json"], "run_command is missing") ||
		!strings.Contains(got["agent/python-t1/p06/meta.json"], "repaired_at is missing") {
		t.Errorf("malformed meta should list every problem: %s", got["agent/python-t1/p06/meta.json"])
	}
}

func ids(cs []schemas.Candidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.InstanceID)
	}
	sort.Strings(out)
	return out
}

func TestImportStudyProblemsAndPrompt(t *testing.T) {
	dir := writeStudy(t, map[string]string{
		"problems.json":                              `[{"number": 4, "title": "YAML Config Merger", "domain": "Data Processing", "description": "Merge YAML files."}]`,
		"a/python-t3/p_04/meta.json":                 goodMeta,
		"a/python-t3/p_04/written/app.py":            "x\n",
		"a/python-t3/p_04/repaired/app.py":           "x\n",
		"a/python-t3/p_04/repaired/requirements.txt": "PyYAML==6.0.1\n",
		"a/python-t3/p_05/meta.json":                 goodMeta,
		"a/python-t3/p_05/written/app.py":            "x\n",
		"a/python-t3/p_05/repaired/app.py":           "x\n",
		"a/python-t3/p_05/repaired/requirements.txt": "regex==2024.5.15\n",
		"a/python-t3/p_05/prompt.txt":                "TASK: Log File Pattern Analyzer\nexact prompt\n",
	})
	res, err := Import(dir, Options{Problems: loadProblems(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Candidates) != 2 || len(res.Rejects) != 0 {
		t.Fatalf("candidates %v rejects %v", ids(res.Candidates), res.Rejects)
	}
	if got := res.Candidates[0].ProblemStatement; got != "YAML Config Merger\n\nMerge YAML files." {
		t.Errorf("statement from the study's problems.json = %q", got)
	}
	// The card's form: the title, a blank line, the prompt the agent got.
	if got := res.Candidates[1].ProblemStatement; got != "Log File Pattern Analyzer\n\nTASK: Log File Pattern Analyzer\nexact prompt" {
		t.Errorf("statement from prompt.txt = %q", got)
	}
	if c := res.Candidates[0]; c.ManifestPath != "" || c.InstanceID != "envgap__a__python-t3-4" {
		t.Errorf("manifest of the project as written = %q, id %s", c.ManifestPath, c.InstanceID)
	}
	if _, err := Import(dir, Options{}); err != nil {
		t.Errorf("a study with its own problems.json needs no list: %v", err)
	}
	if _, err := Import(t.TempDir(), Options{}); err == nil {
		t.Error("no problem list at all: want an error")
	}
}

// The card's Lite listing: every project of the main run (trial 1), and of the extra runs
// only those whose repair had an environment part.
func TestImportListsTheMainRunAndEnvironmentRepairsOfExtraRuns(t *testing.T) {
	worked := `{"created_at": "2026-03-01T10:00:00Z", "worked_first_time": true, "made_to_work": true, "run_command": "python3 app.py"}`
	never := `{"created_at": "2026-03-01T10:00:00Z", "worked_first_time": false, "made_to_work": false}`
	dir := writeStudy(t, map[string]string{
		// Main run: listed whatever happened.
		"a/python-t1/p01/meta.json": worked, "a/python-t1/p01/written/app.py": "x\n",
		"a/python-t1/p02/meta.json": never, "a/python-t1/p02/written/app.py": "x\n",
		"a/python-t1/p03/meta.json": goodMeta, "a/python-t1/p03/written/app.py": "x\n", "a/python-t1/p03/repaired/app.py": "y\n",
		// Extra runs: only the environment repair is listed.
		"a/python-t2/p01/meta.json": worked, "a/python-t2/p01/written/app.py": "x\n",
		"a/python-t2/p02/meta.json": never, "a/python-t2/p02/written/app.py": "x\n",
		"a/python-t2/p03/meta.json": goodMeta, "a/python-t2/p03/written/app.py": "x\n", "a/python-t2/p03/repaired/app.py": "y\n",
		"a/python-t2/p04/meta.json": goodMeta, "a/python-t2/p04/written/app.py": "x\n", "a/python-t2/p04/repaired/app.py": "x\n",
		"a/python-t2/p04/repaired/requirements.txt": "PyYAML==6.0.1\n",
	})
	res, err := Import(dir, Options{Problems: loadProblems(t)})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"envgap__a__python-t1-1", "envgap__a__python-t1-2", "envgap__a__python-t1-3", "envgap__a__python-t2-4"}
	if got := ids(res.Candidates); strings.Join(got, " ") != strings.Join(want, " ") || len(res.Rejects) != 0 {
		t.Fatalf("candidates %v, want %v; rejects %v", got, want, res.Rejects)
	}
	var skipped []string
	for _, n := range res.NotListed {
		skipped = append(skipped, n.Ref)
		if !strings.Contains(n.Reason, "no environment part") {
			t.Errorf("%s: reason %q", n.Ref, n.Reason)
		}
	}
	if got := strings.Join(skipped, " "); got != "a/python-t2/p01 a/python-t2/p02 a/python-t2/p03" {
		t.Errorf("not listed %s", got)
	}
}

// wantDateSource is the demo's registry_date_source: created_at for the project that
// worked first time (never repaired), repaired_at for the others.
func wantDateSource(o schemas.Outcome) schemas.RegistryDateSource {
	if o == schemas.OutcomeAlreadyWorks {
		return schemas.DateFromCreatedAt
	}
	return schemas.DateFromRepairedAt
}
