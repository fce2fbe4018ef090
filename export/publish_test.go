package export

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/envgap/envgap/data/catalog"
)

// childEnv makes the test binary a child that exports two stores into one folder, one
// after the other, until it is killed: STORE_A:STORE_B:OUT.
const childEnv = "ENVGAP_EXPORT_TEST_CHILD"

func TestMain(m *testing.M) {
	if v := os.Getenv(childEnv); v != "" {
		os.Exit(exportChild(strings.Split(v, string(os.PathListSeparator))))
	}
	os.Exit(m.Run())
}

func exportChild(args []string) int {
	var stores []*catalog.Catalog
	for _, dir := range args[:2] {
		st, err := catalog.Open(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		stores = append(stores, st)
	}
	for i := 0; ; i++ {
		if _, err := Export(stores[i%2], testOptions(args[2])); err != nil {
			fmt.Fprintln(os.Stderr, "child export:", err)
			return 1
		}
	}
}

// TestExportKilledAtAnyMoment: kill -9 of an export that replaces a release leaves the old
// release or the new one, never a mix (nor no folder); the next export works and leaves
// no working folder behind; a file of the maintainer's stays.
func TestExportKilledAtAnyMoment(t *testing.T) {
	a := admittedStore(t)
	b := admittedStore(t)
	if _, err := Exclude(b, ExcludeRequest{InstanceID: idControl, Reason: "breaks on rerun", Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	relA, _ := exportTo(t, a)
	relB, _ := exportTo(t, b)
	want := []map[string][]byte{readTree(t, relA), readTree(t, relB)}
	if bytes.Equal(want[0]["README.md"], want[1]["README.md"]) {
		t.Fatal("the two releases have the same card")
	}
	parent := t.TempDir()
	out := filepath.Join(parent, "release")
	if _, err := Export(a, testOptions(out)); err != nil {
		t.Fatal(err)
	}
	const mine = "NOTES.md"
	if err := os.WriteFile(filepath.Join(out, mine), []byte("the maintainer's"), 0o644); err != nil {
		t.Fatal(err)
	}
	rounds := 20
	if testing.Short() {
		rounds = 8
	}
	sawA, sawB := false, false
	for round := range rounds {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+strings.Join([]string{a.(*catalog.Catalog).Dir(), b.(*catalog.Catalog).Dir(), out}, string(os.PathListSeparator)))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(50+rand.IntN(1500)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		got := readTree(t, out)
		if string(got[mine]) != "the maintainer's" {
			t.Fatalf("round %d: %s lost (%q)", round, mine, got[mine])
		}
		delete(got, mine)
		switch {
		case sameTree(got, want[0]):
			sawA = true
		case sameTree(got, want[1]):
			sawB = true
		default:
			t.Fatalf("round %d: the folder after kill -9 is neither release: %s", round, treeDiff(got, want))
		}
	}
	t.Logf("seen after a kill: old-or-A %v, B %v", sawA, sawB)
	if _, err := Export(b, testOptions(out)); err != nil {
		t.Fatalf("the export after the kills: %v", err)
	}
	got := readTree(t, out)
	delete(got, mine)
	if !sameTree(got, want[1]) {
		t.Fatalf("after a full export: %s", treeDiff(got, want[1:]))
	}
	entries, _ := os.ReadDir(parent)
	for _, e := range entries {
		if e.Name() != "release" {
			t.Errorf("left beside the release: %s", e.Name())
		}
	}
}

// TestRecoverPutsBackASetAsideRelease: the fallback publish (no RENAME_EXCHANGE) killed
// between its two renames leaves no OUT; the next export puts the old release back first.
func TestRecoverPutsBackASetAsideRelease(t *testing.T) {
	st := admittedStore(t)
	old, _ := exportTo(t, st)
	want := readTree(t, old)
	parent := t.TempDir()
	out := filepath.Join(parent, "release")
	if err := os.Rename(old, filepath.Join(parent, ".release.export-old-00000000000000000001")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(parent, ".release.export-123"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := outFolder(out).Recover(); err != nil {
		t.Fatal(err)
	}
	if !sameTree(readTree(t, out), want) {
		t.Fatal("the release set aside is not back in place")
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		t.Fatalf("left beside the release: %v", entries)
	}
}

func sameTree(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	return true
}

func treeDiff(got map[string][]byte, wants []map[string][]byte) string {
	var lines []string
	for i, w := range wants {
		var d []string
		for k, v := range got {
			if wv, ok := w[k]; !ok {
				d = append(d, "extra "+k)
			} else if !bytes.Equal(v, wv) {
				d = append(d, "differs "+k)
			}
		}
		for k := range w {
			if _, ok := got[k]; !ok {
				d = append(d, "missing "+k)
			}
		}
		sort.Strings(d)
		lines = append(lines, fmt.Sprintf("against release %d: %s", i, strings.Join(d, ", ")))
	}
	return strings.Join(lines, "; ")
}
