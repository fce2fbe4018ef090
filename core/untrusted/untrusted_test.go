package untrusted

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestReadFile: a plain file is read; every other kind an agent can leave at the name is
// refused with what it is, at once (no open that waits, no read past the bound), and the
// host file a link points at is never read.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "host-secret")
	if err := os.WriteFile(outside, []byte("host secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	put := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put("plain.json", `[1]`)
	put("sub/dir/nested.txt", "nested")
	put("big.txt", strings.Repeat("x", 2000))
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(outside, filepath.Join(dir, "link-out")))
	must(os.Symlink("plain.json", filepath.Join(dir, "link-in")))
	must(os.Symlink("/dev/zero", filepath.Join(dir, "zero")))
	must(os.Symlink(filepath.Dir(outside), filepath.Join(dir, "linkdir")))
	must(unix.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	must(os.Link(outside, filepath.Join(dir, "hard")))
	f, err := os.Create(filepath.Join(dir, "sparse"))
	must(err)
	must(f.Truncate(1 << 40))
	f.Close()
	must(os.Mkdir(filepath.Join(dir, "adir"), 0o755))
	device := unix.Mknod(filepath.Join(dir, "null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))) == nil

	if b, err := ReadFile(dir, "plain.json", 100); err != nil || string(b) != `[1]` {
		t.Fatalf("plain file: %q %v", b, err)
	}
	if b, err := ReadFile(dir, "sub/dir/nested.txt", 100); err != nil || string(b) != "nested" {
		t.Fatalf("nested file: %q %v", b, err)
	}
	if _, err := ReadFile(dir, "absent", 100); !errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrUnsafe) {
		t.Errorf("a missing file: %v", err)
	}
	if _, err := ReadFile(dir, "sub/absent/x", 100); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing folder: %v", err)
	}
	for _, c := range []struct{ name, want string }{
		{"link-out", "is a symbolic link to " + outside},
		{"link-in", "is a symbolic link to plain.json"},
		{"zero", "is a symbolic link to /dev/zero"},
		{"linkdir/host-secret", "goes through linkdir, which is a symbolic link"},
		{"fifo", "is a FIFO"},
		{"hard", "has 2 hard links"},
		{"sparse", "is a sparse file of 1099511627776 bytes"},
		{"big.txt", "is 2000 bytes, over the bound of 1000 bytes"},
		{"adir", "is a directory"},
		{"plain.json/x", "goes through plain.json, which is a symbolic link or not a directory"},
	} {
		start := time.Now()
		b, err := ReadFile(dir, c.name, 1000)
		var ue *Error
		if !errors.As(err, &ue) || !errors.Is(err, ErrUnsafe) || ue.Path != c.name || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %q, %v; want an *Error saying %q", c.name, b, err, c.want)
		}
		if b != nil {
			t.Errorf("%s: read %q", c.name, b)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %s", c.name, d)
		}
	}
	if device {
		if _, err := ReadFile(dir, "null", 1000); !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "is a device") {
			t.Errorf("a device: %v", err)
		}
	}
	if b, err := ReadFileWith(dir, "hard", 1000, Options{HardLinks: true}); err != nil || string(b) != "host secret\n" {
		t.Errorf("a hard link where they are allowed: %q %v", b, err)
	}
	for _, bad := range []string{"../x", "/etc/passwd", "", ".", "a//b"} {
		if _, err := ReadFile(dir, bad, 10); err == nil {
			t.Errorf("name %q accepted", bad)
		}
	}
}

// TestWriteFile: a write replaces a link, a FIFO or a file at the name (the host file a
// link points at is not written, a FIFO does not block), with its mode (UpdateFile keeps
// an existing file's),
// makes missing folders, and refuses a link on the way or a directory at the name.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "host-file")
	if err := os.WriteFile(outside, []byte("host\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Symlink(outside, filepath.Join(dir, "feedback.txt"))
	os.Symlink(filepath.Dir(outside), filepath.Join(dir, "errors"))
	unix.Mkfifo(filepath.Join(dir, "fifo"), 0o644)
	os.WriteFile(filepath.Join(dir, "run.sh"), []byte("old"), 0o755)
	os.Mkdir(filepath.Join(dir, "adir"), 0o755)

	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, name := range []string{"feedback.txt", "fifo", "run.sh", "new/deep/file.txt"} {
			write := WriteFile
			if name == "run.sh" {
				write = UpdateFile
			}
			if err := write(dir, name, []byte("new "+name), 0o644); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			if b, err := ReadFile(dir, name, 100); err != nil || string(b) != "new "+name {
				t.Errorf("%s after the write: %q %v", name, b, err)
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a write blocked")
	}
	if b, _ := os.ReadFile(outside); string(b) != "host\n" {
		t.Errorf("the host file was written through the link: %q", b)
	}
	if st, err := os.Stat(filepath.Join(dir, "run.sh")); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("run.sh's mode after UpdateFile: %v %v", st.Mode(), err)
	}
	if err := WriteFile(dir, "run.sh", []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(dir, "run.sh")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("run.sh's mode after WriteFile: %v %v", st.Mode(), err)
	}
	if err := WriteFile(dir, "errors/error-0.txt", []byte("x"), 0o644); !errors.Is(err, ErrUnsafe) {
		t.Errorf("a write through a linked folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(outside), "error-0.txt")); err == nil {
		t.Error("a file was written into the folder the link points at")
	}
	if err := WriteFile(dir, "adir", []byte("x"), 0o644); !errors.Is(err, ErrUnsafe) {
		t.Errorf("a directory at the name: %v", err)
	}
	if err := RemoveAll(dir, "errors"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("RemoveAll of a link removed what it points at: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("a temporary file is left: %s", e.Name())
		}
	}
}
