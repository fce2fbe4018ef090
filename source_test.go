package envgap

import (
	"bytes"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"testing"

	"github.com/envgap/envgap/export"
)

// TestSourceHoldsEveryTrackedFile checks that the embedded tree holds every file git
// tracks that the harness zip carries, as the working tree has it, so that the harness zip
// builds like a checkout does.
func TestSourceHoldsEveryTrackedFile(t *testing.T) {
	out, err := exec.Command("git", "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout (git ls-files: %v); the embedded tree is checked from a checkout", err)
	}
	tracked := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(tracked) < 100 {
		t.Fatalf("git ls-files lists only %d files", len(tracked))
	}
	src := Source()
	for _, p := range tracked {
		if export.HarnessOmits(p) {
			continue // only tests use it: the zip leaves it out, embedded or not
		}
		disk, err := os.ReadFile(p)
		if err != nil {
			continue // deleted in the working tree, not yet in the index
		}
		b, err := fs.ReadFile(src, p)
		if err != nil {
			t.Errorf("%s is tracked but not embedded (add its folder to the go:embed lines of source.go): %v", p, err)
			continue
		}
		if !bytes.Equal(b, disk) {
			t.Errorf("%s: the embedded copy differs from the working tree", p)
		}
	}
}

// TestHarnessSourceBuildsWithoutTests checks that the harness zip's tree (the embedded
// source without tests, testdata and test-helper packages) is whole: every package of the
// module that a kept Go file imports has Go files in the zip.
func TestHarnessSourceBuildsWithoutTests(t *testing.T) {
	files, err := export.HarnessSource(Source())
	if err != nil {
		t.Fatal(err)
	}
	mod, err := fs.ReadFile(Source(), "go.mod")
	if err != nil {
		t.Fatal(err)
	}
	module := ""
	for _, l := range strings.Split(string(mod), "\n") {
		if m, ok := strings.CutPrefix(strings.TrimSpace(l), "module "); ok {
			module = strings.TrimSpace(m)
		}
	}
	if module == "" {
		t.Fatal("go.mod names no module")
	}
	pkgs := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f.Path, ".go") {
			pkgs[path.Dir(f.Path)] = true
		}
		if strings.HasSuffix(f.Path, "_test.go") || strings.Contains("/"+f.Path, "/testdata/") {
			t.Errorf("the harness carries %s", f.Path)
		}
	}
	for _, f := range files {
		if !strings.HasSuffix(f.Path, ".go") {
			continue
		}
		pf, err := parser.ParseFile(token.NewFileSet(), f.Path, f.Body, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range pf.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			rel, ok := strings.CutPrefix(p, module+"/")
			if p == module {
				rel, ok = ".", true
			}
			if ok && !pkgs[rel] {
				t.Errorf("%s imports %s, which the harness zip leaves out (a test-only package?)", f.Path, p)
			}
		}
	}
}
