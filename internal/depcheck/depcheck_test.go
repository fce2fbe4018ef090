// Package depcheck holds the test that keeps envgap's layering true. The packages stand on
// floors, read from the bottom:
//
//	schemas -> data -> core -> lib -> the stages (crawl, verify, export, harness; images) -> cmd
//
// A package imports only its own floor and the floors below it: schemas imports nothing of
// envgap (and only the standard library), data imports only schemas, core (the evaluation
// core every container run goes through) imports only data and schemas, lib imports no stage.
// On the stages' floor a stage never imports another stage (cmd wires them), and images (the
// evaluation images' build) counts as a stage of its own; no package of a stage or of core
// imports its parent or a folder above it (a root is not a library for its children; in lib
// and data a parent may declare what its children implement, as lib/agent/model does for its
// model clients, or be the base they build on, as data is for data/catalog); nothing imports
// cmd; the root package (envgap's embedded source) uses the standard library only and only
// cmd imports it; and the test switch internal/testenv is imported by tests only.
package depcheck

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/envgap/envgap"

// stages are the top-level folders of the stages' floor, which never import each other.
var stages = []string{"crawl", "verify", "export", "harness", "images"}

// floor says which floor a top-level folder stands on (higher imports lower, never the
// reverse); -1 for a folder outside the floors (the root package, internal).
func floor(top string) int {
	switch {
	case top == "schemas":
		return 0
	case top == "data":
		return 1
	case top == "core":
		return 2
	case top == "lib":
		return 3
	case slices.Contains(stages, top):
		return 4
	case top == "cmd":
		return 5
	}
	return -1
}

var floorName = []string{"schemas", "data", "core", "lib", "a stage", "cmd"}

// violations returns what is wrong with package pkg (a path below the module, e.g.
// "core/sandbox") importing imps; test says whether the importing file is a _test.go file
// (a stage's tests keep to the stage too).
func violations(pkg string, test bool, imps []string) []string {
	top := strings.SplitN(pkg, "/", 2)[0]
	from := floor(top)
	var out []string
	for _, imp := range imps {
		if imp == module && top != "cmd" {
			out = append(out, pkg+" imports the root package (envgap's embedded source): only cmd does")
			continue
		}
		if !strings.HasPrefix(imp, module+"/") {
			external := strings.Contains(strings.SplitN(imp, "/", 2)[0], ".")
			switch {
			case top == "." && external:
				out = append(out, "the root package imports "+imp+": it uses the standard library only")
			case top == "schemas" && external:
				out = append(out, pkg+" imports "+imp+": schemas uses the standard library only")
			case pkg == "internal/testenv" && external:
				out = append(out, pkg+" imports "+imp+": testenv uses the standard library only")
			}
			continue
		}
		rel := strings.TrimPrefix(imp, module+"/")
		itop := strings.SplitN(rel, "/", 2)[0]
		to := floor(itop)
		switch {
		case top == "." && !test:
			out = append(out, "the root package imports "+rel+": it imports nothing of envgap")
		case top == ".":
		case itop == "cmd":
			out = append(out, pkg+" imports "+rel+": nothing imports cmd")
		case rel == "internal/testenv" && !test:
			out = append(out, pkg+" imports "+rel+" outside a test")
		case rel == "internal/testenv":
		case rel == pkg: // a package's external tests (package x_test)
		case top == "internal" && pkg != "internal/depcheck" && itop != "schemas":
			out = append(out, pkg+" imports "+rel)
		case top == "internal":
		case to > from:
			out = append(out, pkg+" imports "+rel+": "+floorName[from]+" stands below "+floorName[to]+" and imports only its floor and those under it")
		case strings.HasPrefix(pkg, rel+"/") && (from == 4 || from == 2):
			out = append(out, pkg+" imports "+rel+": no package imports its parent (move what both need down a floor)")
		case test && top == "harness" && itop == "export":
			// The scoring side's tests score a Hub folder that export made, as its users do.
		case from == 4 && to == 4 && itop != top:
			out = append(out, pkg+" imports "+rel+": a stage never imports another stage (cmd wires them)")
		}
	}
	return out
}

func TestViolationsRule(t *testing.T) {
	tests := []struct {
		pkg  string
		test bool
		imps []string
		want int
	}{
		{"core", false, []string{"fmt", module + "/schemas", module + "/data", module + "/core/registry", "github.com/docker/docker/client"}, 0},
		{"core", false, []string{module + "/export/audit"}, 1},
		{"core", false, []string{module + "/verify"}, 1},
		{"core", false, []string{module + "/lib/envfiles"}, 1},
		{"core/deps", false, []string{module + "/core/shell"}, 0},
		{"core/deps", false, []string{module + "/core"}, 1},
		{"core/sandbox", false, []string{module + "/core/headtail"}, 0},
		{"core/headtail", false, []string{module + "/lib/agent"}, 1},
		{"core/sandbox", false, []string{module + "/verify/propose"}, 1},
		{"lib/agent", false, []string{module + "/core/shell"}, 0},
		{"export", false, []string{module + "/crawl"}, 1},
		{"crawl/lite", false, []string{module + "/cmd/envgap"}, 1},
		{"crawl/lite", true, []string{module + "/internal/testenv"}, 0},
		{"export/scan", true, []string{module + "/verify/propose"}, 1},
		{"export/scan", false, []string{module + "/core"}, 0},
		{"crawl/lite", false, []string{module + "/internal/testenv"}, 1},
		{"schemas", false, []string{"time", "golang.org/x/text/unicode/norm"}, 1},
		{"schemas/semver", false, []string{module + "/data"}, 1},
		{"schemas", false, []string{module + "/schemas/semver"}, 0},
		{"data", false, []string{module + "/core"}, 1},
		{"images", false, []string{module + "/data", module + "/schemas"}, 0},
		{"images", false, []string{module + "/lib/agent"}, 0},
		{"lib/agent", false, []string{module + "/images"}, 1},
		{"core", false, []string{module + "/lib/agent"}, 1},
		{"images", false, []string{module + "/core/sandbox"}, 0},
		{"images", false, []string{module + "/verify"}, 1},
		{"images", true, []string{module + "/verify"}, 1},
		{"images", true, []string{module + "/core/sandbox"}, 0},
		{"crawl", true, []string{module + "/crawl"}, 0},
		{"data/catalog", false, []string{module + "/data"}, 0},
		{"lib/agent/model/openai", false, []string{module + "/lib/agent/model"}, 0},
		{"harness/site", true, []string{module + "/export"}, 0},
		{"harness/site", false, []string{module + "/export"}, 1},
		{"export/scan", true, []string{module + "/harness/eval"}, 1},
		{"cmd/envgap", false, []string{module + "/verify", module + "/export", module + "/crawl", module + "/images"}, 0},
		{"export/hub", true, []string{module + "/cmd/envgap"}, 1},
		{"internal/testenv", false, []string{"os", "github.com/x/y"}, 1},
		{".", false, []string{"embed", "io/fs"}, 0},
		{".", false, []string{module + "/schemas"}, 1},
		{".", true, []string{module + "/export"}, 0},
		{"export", false, []string{module}, 1},
		{"cmd/envgap", false, []string{module}, 0},
		// The new layers: harness is a stage, lib sits below the stages.
		{"harness/eval", false, []string{module + "/core", module + "/lib/envfiles", module + "/data", module + "/schemas"}, 0},
		{"harness/eval", false, []string{module + "/verify"}, 1},
		{"harness/run", false, []string{module + "/harness/eval", module + "/lib/agent"}, 0},
		{"harness/report", false, []string{module + "/export"}, 1},
		{"export", false, []string{module + "/harness/eval"}, 1},
		{"crawl", false, []string{module + "/lib/envfiles"}, 0},
		{"lib/agent", false, []string{module + "/core", module + "/core/sandbox", module + "/data", module + "/lib/envfiles"}, 0},
		{"lib/agent", false, []string{module + "/harness/eval"}, 1},
		{"lib/jobs", false, []string{module + "/verify"}, 1},
		{"lib/envfiles", false, []string{module + "/crawl"}, 1},
		// Nothing but cmd imports a stage's root package; no package imports its parent.
		{"verify/propose", false, []string{module + "/verify"}, 1},
		{"crawl/lite", false, []string{module + "/crawl"}, 1},
		{"verify/propose", false, []string{module + "/core", module + "/lib/agent", module + "/data/catalog"}, 0},
	}
	for _, tt := range tests {
		if got := violations(tt.pkg, tt.test, tt.imps); len(got) != tt.want {
			t.Errorf("%s (test %v) importing %v: %v, want %d violations", tt.pkg, tt.test, tt.imps, got, tt.want)
		}
	}
}

// TestLayering reads the imports of every Go file of the module and checks them.
func TestLayering(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	fset := token.NewFileSet()
	files := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules" || name == "out") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		pkg := filepath.ToSlash(rel)
		if strings.HasPrefix(pkg, "data/store") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		var imps []string
		for _, is := range f.Imports {
			s, _ := strconv.Unquote(is.Path.Value)
			imps = append(imps, s)
		}
		for _, v := range violations(pkg, strings.HasSuffix(name, "_test.go"), imps) {
			t.Errorf("%s: %s", filepath.ToSlash(filepath.Join(rel, name)), v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Errorf("read only %d Go files: the walk missed the tree", files)
	}
}
