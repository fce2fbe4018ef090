package lite

import (
	"fmt"
	"github.com/envgap/envgap/lib/studylayout"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"unicode/utf8"

	"bytes"

	"github.com/envgap/envgap/schemas"
)

// fileProblem is one file of a project that cannot be imported.
type fileProblem struct {
	Rel    string // study-relative path
	Reason string
}

// readTree reads every regular file under dir as a project file. A symbolic link, a
// special file, a path that is not clean, a binary or non-UTF-8 file, or a file or
// project over the size limits is a problem naming its path; .git folders are skipped.
// The files are sorted by path.
func readTree(dir, rel string) ([]schemas.File, []fileProblem) {
	var files []schemas.File
	var probs []fileProblem
	total := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		r, _ := filepath.Rel(dir, p)
		r = filepath.ToSlash(r)
		srel := rel + "/" + r
		if err != nil {
			probs = append(probs, fileProblem{srel, fmt.Sprintf("cannot be read: %v", err)})
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if p == dir {
			if d.Type()&fs.ModeSymlink != 0 {
				probs = append(probs, fileProblem{rel, "is a symbolic link; the project must be a real folder"})
			}
			return nil
		}
		switch {
		case d.IsDir():
			if d.Name() == ".git" {
				return fs.SkipDir
			}
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			probs = append(probs, fileProblem{srel, fmt.Sprintf("is a symbolic link (to %q); a project holds regular files only, and a link may point outside its folder: replace it with the file it points to", target)})
			return nil
		case !d.Type().IsRegular():
			probs = append(probs, fileProblem{srel, "is not a regular file (device, socket or pipe); remove it"})
			return nil
		}
		if err := schemas.CheckRelPath(r); err != nil {
			probs = append(probs, fileProblem{srel, err.Error()})
			return nil
		}
		info, err := d.Info()
		if err != nil {
			probs = append(probs, fileProblem{srel, fmt.Sprintf("cannot be read: %v", err)})
			return nil
		}
		if info.Size() > studylayout.MaxFileBytes {
			probs = append(probs, fileProblem{srel, fmt.Sprintf("is %d bytes, over the %d-byte limit of one project file; a generated or vendored file does not belong in the project as written", info.Size(), studylayout.MaxFileBytes)})
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			probs = append(probs, fileProblem{srel, fmt.Sprintf("cannot be read: %v", err)})
			return nil
		}
		if i := bytes.IndexByte(b, 0); i >= 0 {
			probs = append(probs, fileProblem{srel, fmt.Sprintf("is binary (a NUL byte at offset %d); project files are text, so the project cannot be carried in project_files", i)})
			return nil
		}
		if !utf8.Valid(b) {
			probs = append(probs, fileProblem{srel, fmt.Sprintf("is not valid UTF-8 (first bad byte at offset %d); re-encode it as UTF-8", schemas.InvalidUTF8Offset(b))})
			return nil
		}
		total += len(b)
		s := string(b)
		files = append(files, schemas.File{Path: r, Content: &s})
		return nil
	})
	if err != nil {
		probs = append(probs, fileProblem{rel, fmt.Sprintf("cannot be read: %v", err)})
	}
	if total > studylayout.MaxProjectBytes {
		probs = append(probs, fileProblem{rel, fmt.Sprintf("holds %d bytes of files, over the %d-byte limit of one project", total, studylayout.MaxProjectBytes)})
	}
	if len(files) > studylayout.MaxProjectFiles {
		probs = append(probs, fileProblem{rel, fmt.Sprintf("holds %d files, over the limit of %d", len(files), studylayout.MaxProjectFiles)})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, probs
}

// fileMap indexes files by path.
func fileMap(files []schemas.File) map[string]string {
	m := make(map[string]string, len(files))
	for _, f := range files {
		m[f.Path] = *f.Content
	}
	return m
}

// sortedKeys returns a map's keys, sorted.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
