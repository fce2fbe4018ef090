package data

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a", "b.json")
	put := func(s string) error {
		return WriteFile(p, 0o444, func(w io.Writer) error { _, err := io.WriteString(w, s); return err })
	}
	if err := put("one"); err != nil {
		t.Fatal(err)
	}
	if err := put("two"); err != nil { // replaces a read-only file
		t.Fatal(err)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "two" {
		t.Fatalf("content %q %v", b, err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o444 {
		t.Errorf("mode %v", fi.Mode())
	}
	boom := errors.New("boom")
	err := WriteFile(p, 0o644, func(w io.Writer) error { io.WriteString(w, "half"); return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "two" {
		t.Errorf("a failed write changed the file: %q", b)
	}
	if es, _ := os.ReadDir(filepath.Dir(p)); len(es) != 1 {
		t.Errorf("left behind: %v", es)
	}
}
