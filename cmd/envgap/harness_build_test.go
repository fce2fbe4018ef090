package main

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/envgap/envgap/lib/release"
)

// unzip extracts a zip into dir, refusing entries that would land outside it.
func unzip(t *testing.T, zipPath, dir string) {
	t.Helper()
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		dst := filepath.Join(dir, filepath.FromSlash(f.Name))
		if !strings.HasPrefix(dst, filepath.Clean(dir)+string(filepath.Separator)) {
			t.Fatalf("zip entry %q escapes the folder", f.Name)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, f.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHarnessZipBuilds unzips the harness zip an export writes and builds envgap inside it
// the way the card says (go build ./cmd/envgap), offline from the module cache; the binary
// it gives prints the release's corpus id for the zip's copy of the tasks and passes hf
// check. It compiles the whole program, so -short skips it.
func TestHarnessZipBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds envgap from the harness zip (slow); run without -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the harness: %v", err)
	}
	store := verifiedStore(t)
	if out, err := runCLI(t, "--store", store, "admit"); err != nil {
		t.Fatalf("admit: %q, %v", out, err)
	}
	a, b := exportStore(t, store), exportStore(t, store)
	zipA, err := os.ReadFile(filepath.Join(a, release.HarnessPath))
	if err != nil {
		t.Fatal(err)
	}
	if zipB, err := os.ReadFile(filepath.Join(b, release.HarnessPath)); err != nil || !bytes.Equal(zipA, zipB) {
		t.Fatalf("two exports of one store give different harness zips (%v)", err)
	}
	wantID, err := runCLI(t, "corpus-id", a)
	if err != nil {
		t.Fatal(err)
	}
	wantID = strings.TrimSpace(wantID)

	dir := t.TempDir()
	unzip(t, filepath.Join(a, release.HarnessPath), dir)
	tree := filepath.Join(dir, strings.TrimSuffix(release.HarnessRoot, "/"))
	if fi, err := os.Stat(filepath.Join(tree, "scripts", "demo.sh")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("scripts/demo.sh is not executable in the zip (%v)", err)
	}
	bin := filepath.Join(dir, "envgap-built")
	build := exec.Command(goBin, "build", "-o", bin, "./cmd/envgap")
	build.Dir = tree
	build.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly -buildvcs=false", "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/envgap in the unzipped harness: %v\n%s", err, out)
	}
	run := func(args ...string) string {
		t.Helper()
		c := exec.Command(bin, args...)
		c.Dir = tree
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("built envgap %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if got := strings.TrimSpace(run("corpus-id", release.HarnessTasks)); got != wantID {
		t.Errorf("the built harness gives corpus id %s for its tasks, the release is %s", got, wantID)
	}
	if out := run("hf", "check", "--release", filepath.Join(a, release.HarnessPath)); !strings.Contains(out, "has the release's corpus id "+wantID) {
		t.Errorf("hf check with the built harness:\n%s", out)
	}
}

// TestEvalTasksFromTheHarness: eval and run take their tasks from the harness zip's own
// copy (release/tasks.jsonl) as they do from the Hub folder.
func TestEvalTasksFromTheHarness(t *testing.T) {
	store := verifiedStore(t)
	if out, err := runCLI(t, "--store", store, "admit"); err != nil {
		t.Fatalf("admit: %q, %v", out, err)
	}
	hub := exportStore(t, store)
	dir := t.TempDir()
	unzip(t, filepath.Join(hub, release.HarnessPath), dir)
	rows := filepath.Join(dir, strings.TrimSuffix(release.HarnessRoot, "/"), filepath.FromSlash(release.HarnessTasks))
	f := &factory{Global: &globalOptions{Store: filepath.Join(dir, "empty-store")}, Getenv: func(string) string { return "" }}
	for _, split := range []string{release.ConfigFull, release.ConfigReported, release.ConfigRepaired, release.ConfigLite} {
		fromZip, _, errZip := (&scoringOptions{Split: split, Tasks: rows}).splitTasks(f)
		fromHub, _, errHub := (&scoringOptions{Split: split, Tasks: hub}).splitTasks(f)
		if exitCode(errZip) == exitRejected && exitCode(errHub) == exitRejected {
			continue // a split with no task, from either: nothing to score (exit 3)
		}
		if errZip != nil || errHub != nil {
			t.Fatal(errZip, errHub)
		}
		if !reflect.DeepEqual(fromZip, fromHub) {
			t.Errorf("%s: %d tasks from the harness's copy, %d from the Hub folder, or they differ", split, len(fromZip), len(fromHub))
		}
	}
}
