package core

import (
	"io/fs"
	"testing"
	"testing/fstest"
)

func TestFS(t *testing.T) {
	fsys := FS([]File{
		{Path: "setup.py", Content: []byte("setup()\n"), Mode: 0o755},
		{Path: "src/pkg/__init__.py", Content: []byte("")},
		{Path: "src/pkg/mod.py", Content: []byte("x = 1\n")},
		{Path: "src/README", Content: []byte("read me\n")},
		{Path: "link.py", Link: "setup.py"},
	})
	if err := fstest.TestFS(fsys, "setup.py", "src/pkg/__init__.py", "src/pkg/mod.py", "src/README", "src", "src/pkg"); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Stat(fsys, "link.py"); err == nil {
		t.Error("a symbolic link is readable")
	}
	if b, err := fs.ReadFile(fsys, "src/pkg/mod.py"); err != nil || string(b) != "x = 1\n" {
		t.Errorf("ReadFile: %q %v", b, err)
	}
	if _, err := fs.ReadFile(fsys, "../etc/passwd"); err == nil {
		t.Error("an invalid path was read")
	}
}
