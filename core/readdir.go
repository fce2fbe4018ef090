package core

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// maxDirBytes bounds what an ad-hoc directory run copies into the container.
const maxDirBytes = 256 << 20

// ReadDir reads a project directory as core files: regular files and symlinks, skipping
// .git; it refuses more than maxDirBytes (an ad-hoc directory run, a study's project).
func ReadDir(dir string) ([]File, error) {
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
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			files = append(files, File{Path: rel, Link: target, Mode: 0o644})
		case info.Mode().IsRegular():
			total += info.Size()
			if total > maxDirBytes {
				return fmt.Errorf("%s holds more than %d MiB; try a smaller project", dir, maxDirBytes>>20)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files = append(files, File{Path: rel, Content: b, Mode: info.Mode().Perm()})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s has no files", dir)
	}
	return files, nil
}
