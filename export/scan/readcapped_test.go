package scan

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/envgap/envgap/data"
)

// A damaged stored output is reported as data.ErrCorrupt (wrapped, so callers can tell it
// from an output that was never stored).
func TestReadCappedWrapsCorrupt(t *testing.T) {
	dir := t.TempDir()
	st, err := data.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	d, err := st.Put([]byte("step output\n"))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := readCapped(st, d, 1<<20); err != nil || string(b) != "step output\n" {
		t.Fatalf("intact: %q %v", b, err)
	}
	p := filepath.Join(dir, "objects", d.Hex()[:2], d.Hex()[2:])
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("step 0utput\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = readCapped(st, d, 1<<20)
	if !errors.Is(err, data.ErrCorrupt) {
		t.Errorf("damaged object: %v, want data.ErrCorrupt", err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if _, err = readCapped(st, d, 1<<20); !errors.Is(err, errNotStored) || errors.Is(err, data.ErrCorrupt) {
		t.Errorf("missing object: %v", err)
	}
}
