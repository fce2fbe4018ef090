package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCrawlLiteDemo(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	args := []string{"--store", store, "--json", "crawl", "lite", "--study", "../../data/demo/study", "--problems", "../../data/problems.json"}
	out, err := runCLI(t, args...)
	if err != nil {
		t.Fatalf("crawl lite: %v\n%s", err, out)
	}
	var rep crawlLiteReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if rep.Stored != 8 || rep.New != 8 || len(rep.Rejects) != 0 || rep.Outcomes["not_checked"] != 4 || !strings.HasPrefix(rep.Ref, "candidates/lite-") {
		t.Errorf("report %+v", rep)
	}
	out, err = runCLI(t, args...)
	if err != nil || !strings.Contains(out, `"unchanged": true`) {
		t.Errorf("second import: %v %s", err, out)
	}
}

func TestCrawlLiteRejectsArePartial(t *testing.T) {
	study := t.TempDir()
	write := func(p, s string) {
		full := filepath.Join(study, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte(s), 0o644)
	}
	write("a/python-t1/p1/meta.json", `{"created_at":"2026-01-01T00:00:00Z","worked_first_time":true,"made_to_work":true,"run_command":"python3 x.py"}`)
	write("a/python-t1/p1/written/x.py", "print(1)\n")
	write("a/python-t1/p2/written/x.py", "print(2)\n")
	out, err := runCLI(t, "--store", filepath.Join(t.TempDir(), "s"), "crawl", "lite", "--study", study, "--problems", "../../data/problems.json")
	var partial partialError
	if !errors.As(err, &partial) {
		t.Fatalf("err = %v, want a partial error (exit 4)", err)
	}
	if !strings.Contains(out, "a/python-t1/p2/meta.json: is missing") || !strings.Contains(out, "imported 1 candidates") {
		t.Errorf("output:\n%s", out)
	}
	if _, err := runCLI(t, "crawl", "lite"); !errors.As(err, new(usageError)) {
		t.Errorf("no --study: %v, want a usage error", err)
	}
}

// TestCrawlLiteOutsideTheCheckout: without --problems and run where data/problems.json is
// not at hand (the tests run in cmd/envgap), crawl lite takes the problem list embedded
// with envgap's source, which is the committed file, and gives the same candidates as
// with the file.
func TestCrawlLiteOutsideTheCheckout(t *testing.T) {
	if _, err := os.Stat(defaultProblemsFile); err == nil {
		t.Fatalf("%s exists in the test's working directory; this test needs it absent", defaultProblemsFile)
	}
	stored := func(args ...string) crawlLiteReport {
		t.Helper()
		store := filepath.Join(t.TempDir(), "store")
		out, err := runCLI(t, append([]string{"--store", store, "--json", "crawl", "lite", "--study", "../../data/demo/study"}, args...)...)
		if err != nil {
			t.Fatalf("crawl lite %v: %v\n%s", args, err, out)
		}
		var rep crawlLiteReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return rep
	}
	embedded := stored()
	file := stored("--problems", "../../data/problems.json")
	if embedded.Stored != 8 || embedded.Set != file.Set {
		t.Errorf("with the embedded list: %d candidates, set %s; with the file: set %s", embedded.Stored, embedded.Set, file.Set)
	}
}
