package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envgap/envgap"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/export"
	"github.com/envgap/envgap/harness/harbor"
)

// TestExportHarborAndChecks exports the eval world's store with the Harbor files twice (GitHub
// tasks materialized from the file:// repository), checks the parquet is byte-identical,
// that hf check ties it to the release and harbor check finds its structure sound, and
// that a truncated task_binary fails both, named by the task's path.
func TestExportHarborAndChecks(t *testing.T) {
	w := newEvalWorld(t)
	st, err := catalog.Open(w.curation)
	if err != nil {
		t.Fatal(err)
	}
	var parquets [][]byte
	var release string
	for i := 0; i < 2; i++ {
		release = filepath.Join(t.TempDir(), "release")
		var progress bytes.Buffer
		// As envgap export --harbor wires it (the credential review is stubbed: the
		// scan has its own tests).
		_, err := export.Export(st, export.Options{Out: release, Reviewer: passReviewer{}, NoAudit: true,
			Source: envgap.Source(), Harbor: harborExport(context.Background(), export.DefaultRepo, w.gitTemplate, &progress)})
		if err != nil {
			t.Fatalf("export --harbor: %v", err)
		}
		if !strings.Contains(progress.String(), "harbor: 2 tasks") {
			t.Errorf("export --harbor's progress: %q", progress.String())
		}
		b, err := os.ReadFile(filepath.Join(release, harbor.ParquetPath))
		if err != nil {
			t.Fatal(err)
		}
		parquets = append(parquets, b)
	}
	if !bytes.Equal(parquets[0], parquets[1]) {
		t.Fatal("two exports of the same store give different tasks.parquet")
	}
	rows, err := harbor.ReadParquet(parquets[0])
	if err != nil || len(rows) != 2 || rows[0].Path != evalControl && rows[1].Path != evalControl {
		t.Fatalf("rows: %d (%v), want the two tasks not excluded", len(rows), err)
	}
	card, _ := os.ReadFile(filepath.Join(release, "README.md"))
	if !strings.Contains(string(card), "### Running EnvGap in Harbor") {
		t.Error("the card has no Harbor section")
	}
	pq := filepath.Join(release, harbor.ParquetPath)
	if out, err := runCLI(t, "hf", "check", "--release", pq); err != nil {
		t.Fatalf("hf check: %v\n%s", err, out)
	}
	if out, err := runCLI(t, "harbor", "check", "--no-trials", pq); err != nil {
		t.Fatalf("harbor check: %v\n%s", err, out)
	}
	// A truncated task_binary.
	rows[0].TaskBinary = rows[0].TaskBinary[:len(rows[0].TaskBinary)-100]
	var buf bytes.Buffer
	if err := harbor.WriteParquet(&buf, rows); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pq, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"hf", "check", "--release", pq}, {"harbor", "check", "--no-trials", pq}} {
		out, err := runCLI(t, args...)
		if exitCode(err) != exitDamage || !strings.Contains(out, rows[0].Path) {
			t.Errorf("%v on a truncated task_binary: exit %d (%v)\n%s", args, exitCode(err), err, out)
		}
	}
}
