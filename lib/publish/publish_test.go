package publish

import (
	"os"
	"path/filepath"
	"testing"
)

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestPublishNewAndOverOld: a new folder is renamed into place; publishing over an old one
// swaps them, the old one left in the working folder for the caller to remove.
func TestPublishNewAndOverOld(t *testing.T) {
	parent := t.TempDir()
	f := Folder{Out: filepath.Join(parent, "site"), Tag: "site"}
	for i, text := range []string{"first", "second"} {
		tmp, err := f.Temp()
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(tmp) != parent || filepath.Base(tmp)[:len(".site.site-")] != ".site.site-" {
			t.Fatalf("working folder %s: not .site.site-* beside the folder", tmp)
		}
		write(t, tmp, "index.html", text)
		if err := f.Publish(tmp); err != nil {
			t.Fatal(err)
		}
		if got := read(t, filepath.Join(f.Out, "index.html")); got != text {
			t.Fatalf("round %d: published %q, want %q", i, got, text)
		}
		if i == 1 {
			if got := read(t, filepath.Join(tmp, "index.html")); got != "first" {
				t.Fatalf("the working folder holds %q after the swap, want the old folder", got)
			}
		}
		os.RemoveAll(tmp)
	}
	if got := entries(t, parent); len(got) != 1 || got[0] != "site" {
		t.Fatalf("beside the folder: %v", got)
	}
}

// TestRecover: a folder set aside by the fallback publish with nothing in its place goes
// back; working folders of killed writers go; another folder's working folders stay.
func TestRecover(t *testing.T) {
	parent := t.TempDir()
	f := Folder{Out: filepath.Join(parent, "out"), Tag: "export"}
	write(t, filepath.Join(parent, ".out.export-old-00000000000000000001"), "a", "older")
	write(t, filepath.Join(parent, ".out.export-old-00000000000000000002"), "a", "newest set aside")
	write(t, filepath.Join(parent, ".out.export-123"), "a", "half written")
	write(t, filepath.Join(parent, ".other.export-1"), "a", "another folder's")
	unlock, err := f.Lock()
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if err := f.Recover(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(f.Out, "a")); got != "newest set aside" {
		t.Fatalf("put back %q, want the last folder set aside", got)
	}
	got := entries(t, parent)
	if len(got) != 2 || got[0] != ".other.export-1" || got[1] != "out" {
		t.Fatalf("beside the folder after Recover: %v", got)
	}
	// With the folder in place, an old one set aside is a leftover, not put back.
	write(t, filepath.Join(parent, ".out.export-old-00000000000000000003"), "a", "stale")
	if err := f.Recover(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(f.Out, "a")); got != "newest set aside" {
		t.Fatalf("Recover replaced a folder in place with %q", got)
	}
}
