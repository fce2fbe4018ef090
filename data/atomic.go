package data

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteFile writes the file at path atomically: write fills a temporary file in path's
// directory (created when missing), which is synced, closed, given mode, renamed over path
// and made durable by syncing the directory. A reader sees the old file or the whole new
// one, never a part; after a crash at most a temporary ".tmp-*" file is left beside it.
// When write fails nothing is renamed. This is the one atomic file write of the project:
// the store's objects and refs, the registry proxy's cache, the image build's cache and
// the scan's review file, the work queue's files and eval's result folders all go through it (the store through commitTemp, its tail).
func WriteFile(path string, mode os.FileMode, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := commitTemp(tmp, path, mode, true); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// WriteBytes is WriteFile with the whole content at hand.
func WriteBytes(path string, mode os.FileMode, b []byte) error {
	return WriteFile(path, mode, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}
