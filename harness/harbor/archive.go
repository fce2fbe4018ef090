package harbor

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// archiveTime is every entry's modification time: the archive depends on the files alone.
var archiveTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// Limits of what ReadArchive accepts.
const (
	MaxArchiveBytes = 512 << 20 // the unpacked files together
	MaxArchiveFiles = 200000
)

// Archive returns the gzipped tar of a task directory, byte-identical for the same files:
// entries sorted by path with their folders before them, owner 0:0, one fixed time, mode
// 0755 or 0644 (0444 for git objects), gzip without a name or time.
func Archive(files []File) ([]byte, error) {
	sorted := append([]File(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	dirs := map[string]bool{}
	hdr := func(name string, typ byte, mode int64, size int64, link string) *tar.Header {
		return &tar.Header{Typeflag: typ, Name: name, Mode: mode, Size: size, Linkname: link, ModTime: archiveTime,
			Uid: 0, Gid: 0, Uname: "root", Gname: "root", Format: tar.FormatPAX}
	}
	for _, f := range sorted {
		if err := checkPath(f.Path); err != nil {
			return nil, err
		}
		var parents []string
		for d := path.Dir(f.Path); d != "."; d = path.Dir(d) {
			parents = append(parents, d)
		}
		for i := len(parents) - 1; i >= 0; i-- {
			if !dirs[parents[i]] {
				dirs[parents[i]] = true
				if err := tw.WriteHeader(hdr(parents[i]+"/", tar.TypeDir, 0o755, 0, "")); err != nil {
					return nil, err
				}
			}
		}
		if f.Link != "" {
			if err := tw.WriteHeader(hdr(f.Path, tar.TypeSymlink, 0o777, 0, f.Link)); err != nil {
				return nil, err
			}
			continue
		}
		mode := int64(0o644)
		switch {
		case f.Mode&0o111 != 0:
			mode = 0o755
		case f.Mode == 0o444:
			mode = 0o444
		}
		if err := tw.WriteHeader(hdr(f.Path, tar.TypeReg, mode, int64(len(f.Content)), "")); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Content); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// checkPath refuses a path that is absolute, not clean, or climbs out.
func checkPath(p string) error {
	if p == "" || strings.HasPrefix(p, "/") || path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../") {
		return fmt.Errorf("path %q: not a clean relative path", p)
	}
	return nil
}

// ErrArchive marks a task_binary that is not a valid task archive.
var ErrArchive = errors.New("invalid task archive")

// ReadArchive reads a task archive back as files. A truncated or corrupt archive, a path
// that climbs out or is absolute, a hard link, a device, or an archive over the limits is
// an ErrArchive error.
func ReadArchive(b []byte) ([]File, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%w: gzip: %v", ErrArchive, err)
	}
	tr := tar.NewReader(zr)
	var out []File
	var total int64
	seen := map[string]bool{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: tar: %v", ErrArchive, err)
		}
		name := strings.TrimSuffix(h.Name, "/")
		if err := checkPath(name); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrArchive, err)
		}
		if seen[name] {
			return nil, fmt.Errorf("%w: %s appears twice", ErrArchive, name)
		}
		seen[name] = true
		if len(out) >= MaxArchiveFiles {
			return nil, fmt.Errorf("%w: more than %d entries", ErrArchive, MaxArchiveFiles)
		}
		switch h.Typeflag {
		case tar.TypeDir:
		case tar.TypeSymlink:
			out = append(out, File{Path: name, Link: h.Linkname})
		case tar.TypeReg:
			total += h.Size
			if total > MaxArchiveBytes {
				return nil, fmt.Errorf("%w: over %d bytes unpacked", ErrArchive, MaxArchiveBytes)
			}
			c, err := io.ReadAll(io.LimitReader(tr, h.Size))
			if err != nil || int64(len(c)) != h.Size {
				return nil, fmt.Errorf("%w: %s: truncated", ErrArchive, name)
			}
			out = append(out, File{Path: name, Mode: fs.FileMode(h.Mode) & 0o777, Content: c})
		default:
			return nil, fmt.Errorf("%w: %s: entry type %q is not a file, folder or symbolic link", ErrArchive, name, h.Typeflag)
		}
	}
	if _, err := io.Copy(io.Discard, zr); err != nil {
		return nil, fmt.Errorf("%w: gzip: %v", ErrArchive, err)
	}
	return out, nil
}

// WriteDir writes files under dir (created; a symbolic link is written as a link).
func WriteDir(_ context.Context, dir string, files []File) error {
	for _, f := range files {
		if err := checkPath(f.Path); err != nil {
			return err
		}
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if f.Link != "" {
			if err := os.Symlink(f.Link, p); err != nil {
				return err
			}
			continue
		}
		mode := f.Mode
		if mode == 0 {
			mode = 0o644
		}
		if err := os.WriteFile(p, f.Content, mode|0o200); err != nil {
			return err
		}
	}
	return nil
}

// ReadDir reads a task directory from disk.
func ReadDir(dir string) ([]File, error) {
	var out []File
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "." || d.IsDir() {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out = append(out, File{Path: rel, Link: l})
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", rel)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out = append(out, File{Path: rel, Mode: info.Mode().Perm(), Content: b})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, err
}
