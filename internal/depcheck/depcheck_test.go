// Package depcheck holds the test that keeps envgap's layering true:
//
//	cmd -> stages (crawl, verify, export, harness) -> lib -> the evaluation core -> data -> schemas
//
// A stage never imports another stage (cmd wires them); nothing but cmd imports a stage's
// root package; lib and the evaluation core (verify/core, verify/sandbox, verify/registry,
// verify/deps, verify/recipe, verify/egress) import no stage, and the core imports no lib
// package but the leaves lib/shell and lib/headtail;
// no package of a stage imports its parent (or any folder above it: a stage's root is not
// a library for its children; in lib and data a parent may declare what its children
// implement, as lib/agent/model does for its model clients, or be the base they build on,
// as data is for data/catalog); nothing imports cmd; schemas
// imports only the standard library; data imports only schemas; and the test switch
// internal/testenv is imported by tests only.
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

// stages are the top-level folders that never import each other.
var stages = []string{"crawl", "verify", "export", "harness"}

// corePkgs are the evaluation core: inside verify's folder, but a layer below every stage.
var corePkgs = []string{"verify/core", "verify/sandbox", "verify/registry", "verify/deps", "verify/recipe", "verify/egress"}

// coreMayUse are the lib packages below the core itself (they import nothing of envgap),
// which the core may use too.
var coreMayUse = []string{"lib/shell", "lib/headtail"}

// layer names what a package (a path below the module) is: "core", "lib", a stage's
// name, or its top-level folder.
func layer(pkg string) string {
	for _, c := range corePkgs {
		if pkg == c || strings.HasPrefix(pkg, c+"/") {
			return "core"
		}
	}
	return strings.SplitN(pkg, "/", 2)[0]
}

// violations returns what is wrong with package pkg (a path below the module, e.g.
// "verify/core") importing imps; test says whether the importing file is a _test.go file
// (a stage's tests keep to the stage too; the images' engine tests may run containers
// through verify/sandbox).
func violations(pkg string, test bool, imps []string) []string {
	top := strings.SplitN(pkg, "/", 2)[0]
	from := layer(pkg)
	var out []string
	for _, imp := range imps {
		if imp == module && top != "cmd" {
			out = append(out, pkg+" imports the root package (envgap's embedded source): only cmd does")
			continue
		}
		if !strings.HasPrefix(imp, module+"/") {
			if top == "." && strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") {
				out = append(out, "the root package imports "+imp+": it uses the standard library only")
			}
			if top == "schemas" && strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") {
				out = append(out, pkg+" imports "+imp+": schemas uses the standard library only")
			}
			if pkg == "internal/testenv" && strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") {
				out = append(out, pkg+" imports "+imp+": testenv uses the standard library only")
			}
			continue
		}
		rel := strings.TrimPrefix(imp, module+"/")
		itop := strings.SplitN(rel, "/", 2)[0]
		to := layer(rel)
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
		case strings.HasPrefix(pkg, rel+"/") && slices.Contains(stages, from):
			out = append(out, pkg+" imports "+rel+": no package imports its parent (move what both need down a layer)")
		case top == "schemas" && itop != "schemas":
			out = append(out, pkg+" imports "+rel+": schemas imports nothing of envgap")
		case top == "data" && itop != "data" && itop != "schemas":
			out = append(out, pkg+" imports "+rel+": data imports only schemas")
		case slices.Contains(coreMayUse, pkg):
			out = append(out, pkg+" imports "+rel+": the core uses it, so it imports nothing of envgap")
		case (from == "lib" || from == "core") && slices.Contains(stages, to):
			out = append(out, pkg+" imports "+rel+": "+from+" imports no stage")
		case from == "core" && (to == "lib" && !slices.Contains(coreMayUse, rel) || to == "images"):
			out = append(out, pkg+" imports "+rel+": the evaluation core imports only data, schemas and itself")
		case from == "lib" && to == "images":
			out = append(out, pkg+" imports "+rel+": lib imports no stage")
		case test && from == "harness" && to == "export":
			// The scoring side's tests score a Hub folder that export made, as its users do.
		case slices.Contains(stages, from) && to != from && (slices.Contains(stages, to) || to == "images"):
			out = append(out, pkg+" imports "+rel+": a stage never imports another stage (cmd wires them)")
		case top != "cmd" && slices.Contains(stages, rel):
			out = append(out, pkg+" imports "+rel+": only cmd imports a stage's root package")
		case top == "images" && !test && slices.Contains(stages, to):
			out = append(out, pkg+" imports "+rel+": images imports no stage")
		case top == "internal" && pkg != "internal/depcheck" && itop != "schemas":
			out = append(out, pkg+" imports "+rel)
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
		{"verify/core", false, []string{"fmt", module + "/schemas", module + "/data", module + "/verify/registry", "github.com/docker/docker/client"}, 0},
		{"verify/core", false, []string{module + "/export/audit"}, 1},
		{"verify/core", false, []string{module + "/verify"}, 1},
		{"verify/core", false, []string{module + "/lib/envfiles"}, 1},
		{"verify/deps", false, []string{module + "/lib/shell"}, 0},
		{"lib/shell", false, []string{module + "/verify/core"}, 1},
		{"verify/sandbox", false, []string{module + "/lib/headtail"}, 0},
		{"lib/headtail", false, []string{module + "/lib/shell"}, 1},
		{"verify/sandbox", false, []string{module + "/verify/propose"}, 1},
		{"export", false, []string{module + "/crawl"}, 1},
		{"crawl/lite", false, []string{module + "/cmd/envgap"}, 1},
		{"crawl/lite", true, []string{module + "/internal/testenv"}, 0},
		{"export/scan", true, []string{module + "/verify/propose"}, 1},
		{"export/scan", false, []string{module + "/verify/core"}, 0},
		{"crawl/lite", false, []string{module + "/internal/testenv"}, 1},
		{"schemas", false, []string{"time", "golang.org/x/text/unicode/norm"}, 1},
		{"schemas/semver", false, []string{module + "/data"}, 1},
		{"schemas", false, []string{module + "/schemas/semver"}, 0},
		{"data", false, []string{module + "/verify/core"}, 1},
		{"images", false, []string{module + "/data", module + "/schemas"}, 0},
		{"images", false, []string{module + "/verify/sandbox"}, 0},
		{"images", false, []string{module + "/verify"}, 1},
		{"images", true, []string{module + "/verify"}, 1},
		{"images", true, []string{module + "/verify/sandbox"}, 0},
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
		{"harness/eval", false, []string{module + "/verify/core", module + "/lib/envfiles", module + "/data", module + "/schemas"}, 0},
		{"harness/eval", false, []string{module + "/verify"}, 1},
		{"harness/run", false, []string{module + "/harness/eval", module + "/lib/agent"}, 0},
		{"harness/report", false, []string{module + "/export"}, 1},
		{"export", false, []string{module + "/harness/eval"}, 1},
		{"crawl", false, []string{module + "/lib/envfiles"}, 0},
		{"lib/agent", false, []string{module + "/verify/core", module + "/verify/sandbox", module + "/data", module + "/lib/envfiles"}, 0},
		{"lib/agent", false, []string{module + "/harness/eval"}, 1},
		{"lib/jobs", false, []string{module + "/verify"}, 1},
		{"lib/envfiles", false, []string{module + "/crawl"}, 1},
		// Nothing but cmd imports a stage's root package; no package imports its parent.
		{"verify/propose", false, []string{module + "/verify"}, 1},
		{"crawl/lite", false, []string{module + "/crawl"}, 1},
		{"verify/propose", false, []string{module + "/verify/core", module + "/lib/agent", module + "/data/catalog"}, 0},
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
