package core

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/envgap/envgap/core/untrusted"
)

// maxDirBytes bounds what an ad-hoc directory run copies into the container.
const maxDirBytes = 256 << 20

// ReadDir reads a project directory as core files: regular files and symlinks (kept as
// links, never followed), skipping .git; files are read as untrusted (core/untrusted:
// nothing is followed, a file that turned into a FIFO is not waited on). It refuses a
// FIFO, a device or a socket, and more than maxDirBytes in all (an ad-hoc directory run,
// a study's project), with an error that wraps an *untrusted.Error naming the file.
// Hard links are read (a person's project folder; see ReadAgentDir).
func ReadDir(dir string) ([]File, error) {
	return readDir(dir, untrusted.Options{HardLinks: true})
}

// ReadAgentDir is ReadDir for a folder an agent wrote (a study's workspace): a hard link
// is refused too.
func ReadAgentDir(dir string) ([]File, error) {
	return readDir(dir, untrusted.Options{})
}

func readDir(dir string, o untrusted.Options) ([]File, error) {
	var files []File
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			files = append(files, File{Path: rel, Link: target, Mode: 0o644})
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b, err := untrusted.ReadFileWith(dir, rel, maxDirBytes-total, o)
		if err != nil {
			return err
		}
		total += int64(len(b))
		files = append(files, File{Path: rel, Content: b, Mode: info.Mode().Perm()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s (at most %d MiB of regular files and links): %w", dir, maxDirBytes>>20, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s has no files", dir)
	}
	return files, nil
}
