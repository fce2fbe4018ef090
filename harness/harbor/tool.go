package harbor

import (
	_ "embed"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// module is envgap's module path.
const module = "github.com/envgap/envgap"

// ToolDir is the folder of a task's environment that holds envgap-task's source.
const ToolDir = "environment/envgap-task"

//go:embed tool/main.go.txt
var toolMain []byte

// toolPicks are packages of which only some files are needed (the rest imports modules
// the tool must not need): the environment-file classifier (not its SourceChange, which
// needs the evaluation core).
var toolPicks = map[string][]string{"lib/envfiles": {"envfiles.go"}}

// ToolSource returns the source of envgap-task read from envgap's source tree src: its
// main package (cmd/envgap-task/main.go), every module package it imports, transitively
// (non-test Go files and the files their go:embed directives name), and a go.mod without
// requirements. A package that imports anything outside the standard library and the
// module is an error: the tool builds offline with Go alone.
func ToolSource(src fs.FS) (map[string][]byte, error) {
	out := map[string][]byte{
		"go.mod":                  []byte("module " + module + "\n\ngo 1.26\n"),
		"cmd/envgap-task/main.go": toolMain,
	}
	queue, err := moduleImports("cmd/envgap-task/main.go", toolMain)
	if err != nil {
		return nil, err
	}
	done := map[string]bool{}
	for len(queue) > 0 {
		pkg := queue[0]
		queue = queue[1:]
		if done[pkg] {
			continue
		}
		done[pkg] = true
		names := toolPicks[pkg]
		if names == nil {
			ents, err := fs.ReadDir(src, pkg)
			if err != nil {
				return nil, fmt.Errorf("envgap-task source: package %s: %w", pkg, err)
			}
			for _, e := range ents {
				if n := e.Name(); !e.IsDir() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
					names = append(names, n)
				}
			}
		}
		for _, n := range names {
			p := path.Join(pkg, n)
			b, err := fs.ReadFile(src, p)
			if err != nil {
				return nil, fmt.Errorf("envgap-task source: %w", err)
			}
			out[p] = b
			imps, err := moduleImports(p, b)
			if err != nil {
				return nil, err
			}
			queue = append(queue, imps...)
			for _, pat := range embedPatterns(b) {
				ms, err := fs.Glob(src, path.Join(pkg, pat))
				if err != nil || len(ms) == 0 {
					return nil, fmt.Errorf("envgap-task source: %s: go:embed %s matches nothing", p, pat)
				}
				for _, m := range ms {
					if out[m], err = fs.ReadFile(src, m); err != nil {
						return nil, fmt.Errorf("envgap-task source: %w", err)
					}
				}
			}
		}
	}
	return out, nil
}

// moduleImports returns the module packages a Go file imports (relative to the module
// root); an import outside the standard library and the module is an error.
func moduleImports(name string, b []byte) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), name, b, parser.ImportsOnly)
	if err != nil {
		return nil, fmt.Errorf("envgap-task source: %w", err)
	}
	var out []string
	for _, is := range f.Imports {
		p, _ := strconv.Unquote(is.Path.Value)
		switch {
		case strings.HasPrefix(p, module+"/"):
			out = append(out, strings.TrimPrefix(p, module+"/"))
		case strings.Contains(strings.SplitN(p, "/", 2)[0], "."):
			return nil, fmt.Errorf("envgap-task source: %s imports %s: the tool builds with the standard library only", name, p)
		}
	}
	sort.Strings(out)
	return out, nil
}

// embedPatterns returns the patterns of a file's //go:embed lines.
func embedPatterns(b []byte) []string {
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "//go:embed "); ok {
			out = append(out, strings.Fields(rest)...)
		}
	}
	return out
}
