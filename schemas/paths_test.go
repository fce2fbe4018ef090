package schemas

import (
	"strings"
	"testing"
)

// liteCandidate is goodCandidate as a lite candidate with these project and gold files
// (JSON arrays); other fields may then be wrong for a lite candidate.
func liteCandidate(project, gold string) string {
	s := strings.Replace(goodCandidate, `"set":"repaired"`, `"set":"lite"`, 1)
	s = strings.Replace(s, `"project_files":[]`, `"project_files":`+project, 1)
	return strings.Replace(s, `"gold_files":[{"path":"setup.py","content":"x"}]`, `"gold_files":`+gold, 1)
}

// pathProblems are records with paths verify cannot run, and the problem envgap add
// reports for each (TestReadCandidatesProblems reads them): file/directory clashes,
// over-long paths, unknown fields inside file entries.
var pathProblems = []struct {
	name      string
	input     string
	wantField string
	wantMsg   string
}{
	{"gold file and directory", strings.Replace(goodCandidate, `"gold_files":[{"path":"setup.py","content":"x"}]`, `"gold_files":[{"path":"a","content":"x"},{"path":"a/b","content":"y"}]`, 1),
		"gold_files[1].path", `"a/b" is below gold_files[0] "a", which is a file`},
	{"gold deletes a file and writes below it", strings.Replace(goodCandidate, `"gold_files":[{"path":"setup.py","content":"x"}]`, `"gold_files":[{"path":"a/b/c","content":"y"},{"path":"a","content":null}]`, 1),
		"gold_files[0].path", `is below gold_files[1] "a"`},
	{"project file and directory", liteCandidate(`[{"path":"src","content":"x"},{"path":"src/main.c","content":"y"}]`, `[]`),
		"project_files[1].path", `"src/main.c" is below project_files[0] "src", which is a file`},
	{"gold below a project file", liteCandidate(`[{"path":"main.py","content":"x"}]`, `[{"path":"main.py/x","content":"y"}]`),
		"gold_files[0].path", `"main.py/x" is below project_files[0] "main.py", which is a file`},
	{"gold file over a project directory", liteCandidate(`[{"path":"lib/a.py","content":"x"}]`, `[{"path":"lib","content":"y"}]`),
		"gold_files[0].path", `"lib" is a directory of the project (project_files[0] "lib/a.py"`},
	{"300-byte component", strings.Replace(goodCandidate, `"path":"setup.py"`, `"path":"src/`+strings.Repeat("x", 300)+`"`, 1),
		"gold_files[0].path", "has a component of 300 bytes"},
	{"path too long", strings.Replace(goodCandidate, `"path":"setup.py"`, `"path":"`+strings.Repeat("abcdefgh/", 450)+`x"`, 1),
		"gold_files[0].path", "longer than 4000 bytes"},
	{"unknown field in a gold entry", strings.Replace(goodCandidate, `{"path":"setup.py","content":"x"}`, `{"path":"setup.py","content":"x","mode":"0755"}`, 1),
		"gold_files[0].mode", `unknown field "mode"; an entry has "content" and "path" only`},
	{"unknown field in a project entry", liteCandidate(`[{"path":"main.py","content":"x","link":"/etc/passwd"}]`, `[]`),
		"project_files[0].link", `unknown field "link"`},
	{"misspelt field in an entry", strings.Replace(goodCandidate, `{"path":"setup.py","content":"x"}`, `{"path":"setup.py","contents":"x"}`, 1),
		"gold_files[0].contents", `did you mean "content"`},
}

func TestPathsVerifyCanRunAreAccepted(t *testing.T) {
	f := func(p string, content *string) File { return File{Path: p, Content: content} }
	x := new(string)
	project := []File{f("main.py", x), f("lib/a.py", x), f("lib/b/c.py", x)}
	for name, gold := range map[string][]File{
		"new file beside":                         {f("lib/d.py", x), f("requirements.txt", x)},
		"replace a file":                          {f("main.py", x)},
		"delete and write below it":               {f("main.py", nil), f("tools/main.py", x)},
		"delete a file":                           {f("lib/a.py", nil)},
		"replace the only file below a directory": {f("lib/b/c.py", nil)},
	} {
		if ps := append(fileDirClashes("gold_files", gold), overlayClashes(project, gold)...); len(ps) > 0 {
			t.Errorf("%s: %v", name, ps)
		}
	}
	if err := CheckRelPath(strings.Repeat("a", MaxPathComponentBytes) + "/" + strings.Repeat("b", MaxPathComponentBytes)); err != nil {
		t.Errorf("components of %d bytes: %v", MaxPathComponentBytes, err)
	}
}
