package core

import (
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"
)

// FS returns the project's regular files as a read-only fs.FS, with the directories their
// paths imply; symbolic links are left out (they are never read on the host). Manifest
// parsing (D1) and the default recipe read projects through it.
func FS(files []File) fs.FS {
	m := &filesFS{files: map[string][]byte{}, dirs: map[string][]string{".": nil}}
	for _, f := range files {
		if f.Link != "" || !fs.ValidPath(f.Path) || f.Path == "." {
			continue
		}
		m.files[f.Path] = f.Content
		for p := f.Path; p != "."; {
			dir := path.Dir(p)
			_, seen := m.dirs[dir]
			m.dirs[dir] = append(m.dirs[dir], path.Base(p))
			if seen {
				break
			}
			p = dir
		}
	}
	for d, names := range m.dirs {
		slices.Sort(names)
		m.dirs[d] = slices.Compact(names)
	}
	return m
}

type filesFS struct {
	files map[string][]byte
	dirs  map[string][]string // directory -> sorted names of its entries
}

func (m *filesFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if b, ok := m.files[name]; ok {
		return &memFile{info: fileInfo{name: path.Base(name), size: int64(len(b))}, r: strings.NewReader(string(b))}, nil
	}
	if _, ok := m.dirs[name]; ok {
		es, _ := m.ReadDir(name)
		return &memDir{info: fileInfo{name: path.Base(name), dir: true}, entries: es}, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// ReadFile implements fs.ReadFileFS.
func (m *filesFS) ReadFile(name string) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: fs.ErrInvalid}
	}
	b, ok := m.files[name]
	if !ok {
		if _, isDir := m.dirs[name]; isDir {
			return nil, &fs.PathError{Op: "readfile", Path: name, Err: fs.ErrInvalid}
		}
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: fs.ErrNotExist}
	}
	return slices.Clone(b), nil
}

// ReadDir implements fs.ReadDirFS.
func (m *filesFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	names, ok := m.dirs[name]
	if !ok {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	out := make([]fs.DirEntry, len(names))
	for i, n := range names {
		p := path.Join(name, n)
		if b, isFile := m.files[p]; isFile {
			out[i] = fs.FileInfoToDirEntry(fileInfo{name: n, size: int64(len(b))})
		} else {
			out[i] = fs.FileInfoToDirEntry(fileInfo{name: n, dir: true})
		}
	}
	return out, nil
}

// Stat implements fs.StatFS.
func (m *filesFS) Stat(name string) (fs.FileInfo, error) {
	f, err := m.Open(name)
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err.(*fs.PathError).Err}
	}
	return f.Stat()
}

type fileInfo struct {
	name string
	size int64
	dir  bool
}

func (i fileInfo) Name() string { return i.name }
func (i fileInfo) Size() int64  { return i.size }
func (i fileInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (i fileInfo) ModTime() time.Time { return time.Time{} }
func (i fileInfo) IsDir() bool        { return i.dir }
func (i fileInfo) Sys() any           { return nil }

type memFile struct {
	info fileInfo
	r    *strings.Reader
}

func (f *memFile) Stat() (fs.FileInfo, error)                { return f.info, nil }
func (f *memFile) Read(p []byte) (int, error)                { return f.r.Read(p) }
func (f *memFile) Seek(off int64, whence int) (int64, error) { return f.r.Seek(off, whence) }
func (f *memFile) ReadAt(p []byte, off int64) (int, error)   { return f.r.ReadAt(p, off) }
func (f *memFile) Close() error                              { return nil }

type memDir struct {
	info    fileInfo
	entries []fs.DirEntry
	off     int
}

func (d *memDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *memDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.name, Err: fs.ErrInvalid}
}
func (d *memDir) Close() error { return nil }

// ReadDir implements fs.ReadDirFile.
func (d *memDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.off:]
	if n <= 0 {
		d.off = len(d.entries)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(rest))
	d.off += n
	return rest[:n], nil
}
