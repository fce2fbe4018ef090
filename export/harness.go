package export

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/envgap/envgap/lib/release"
	"github.com/envgap/envgap/schemas"
)

// harnessTime is the modification time of every zip entry.
var harnessTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// maxSourceFile bounds one file of the source tree; a larger file is not source (a store
// object, an output, a large generated fixture) and stays out of the zip.
const maxSourceFile = 1 << 20

// TaskLines returns the task rows as the harness stores them: canonical JSON lines sorted
// bytewise, each followed by a newline. Its SHA-256 begins with the corpus id.
func TaskLines(tasks []schemas.Task) ([]byte, error) {
	lines := make([][]byte, len(tasks))
	for i := range tasks {
		b, err := schemas.Canonical(&tasks[i])
		if err != nil {
			return nil, fmt.Errorf("harness: task %s: %w", tasks[i].InstanceID, err)
		}
		lines[i] = b
	}
	sort.Slice(lines, func(i, j int) bool { return bytes.Compare(lines[i], lines[j]) < 0 })
	var buf bytes.Buffer
	for _, l := range lines {
		buf.Write(l)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}

// testOnlyDirs are the folders of packages only tests import (test helpers named like
// net/http/httptest); the harness zip leaves them out with the tests.
// TestHarnessSourceBuildsWithoutTests (root package) checks that no file the zip keeps
// imports one.
var testOnlyDirs = []string{"crawl/gittest", "data/datatest", "export/hub/hubtest", "internal/testenv", "core/sandbox/sandboxtest"}

// HarnessOmits reports whether the harness zip leaves out the file at path p (relative to
// the source tree) because only tests use it: _test.go files, testdata/ folders, the
// test-helper packages (testOnlyDirs) and the CI script folder .ci/, which runs the tests.
// The binary need not embed such files (source.go).
func HarnessOmits(p string) bool {
	if strings.HasSuffix(path.Base(p), "_test.go") || strings.HasPrefix(p, "testdata/") || strings.Contains(p, "/testdata/") || strings.HasPrefix(p, ".ci/") {
		return true
	}
	for _, d := range testOnlyDirs {
		if strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// skipSource reports whether a file of the embedded tree stays out of the zip: what only
// tests use (HarnessOmits), build and test products a checkout may hold in a package
// folder (binaries, *.test, profiles), the runtime store and outputs, and files over
// maxSourceFile.
func skipSource(p string, size int64, head []byte) bool {
	base := path.Base(p)
	switch {
	case HarnessOmits(p):
		return true
	case strings.HasPrefix(p, "data/store/"), strings.HasPrefix(p, "out/"), strings.HasPrefix(p, "bin/"):
		return true
	case p == "envgap", p == "cmd/envgap/envgap", strings.HasSuffix(base, ".test"), strings.HasSuffix(base, ".prof"), strings.HasSuffix(base, ".exe"):
		return true
	case size > maxSourceFile:
		return true
	}
	for _, magic := range [][]byte{{0x7f, 'E', 'L', 'F'}, {0xcf, 0xfa, 0xed, 0xfe}, {0xfe, 0xed, 0xfa, 0xcf}} {
		if bytes.HasPrefix(head, magic) {
			return true
		}
	}
	return false
}

// HarnessFile is one file of the source tree as the harness zip carries it; Path is
// relative to the tree (the zip's entry is HarnessRoot+Path).
type HarnessFile struct {
	Path string
	Body []byte
}

// HarnessSource returns the files of the source tree src (rooted at the module folder, as
// envgap.Source gives it) that the harness zip carries, sorted by path: every regular file
// but those skipSource leaves out and anything under release/ (the zip's own release
// files). The credential scan reads exactly these bytes (envgap scan, field "harness").
func HarnessSource(src fs.FS) ([]HarnessFile, error) {
	if _, err := fs.Stat(src, "go.mod"); err != nil {
		return nil, fmt.Errorf("harness: the source tree has no go.mod at its top: %w", err)
	}
	var files []HarnessFile
	err := fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == "release" {
				return fs.SkipDir // the release files below are the only ones there
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := fs.ReadFile(src, p)
		if err != nil {
			return err
		}
		if skipSource(p, int64(len(b)), b[:min(len(b), 8)]) {
			return nil
		}
		files = append(files, HarnessFile{p, b})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("harness: reading the source tree: %w", err)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, nil
}

// WriteHarness writes the harness zip of a release to w: the source tree src (rooted at the
// module folder, as envgap.Source gives it, filtered by HarnessSource) and the task rows
// with their manifest. It returns the number of entries.
func WriteHarness(w io.Writer, src fs.FS, tasks []schemas.Task, m release.HarnessManifest) (int, error) {
	files, err := HarnessSource(src)
	if err != nil {
		return 0, err
	}
	lines, err := TaskLines(tasks)
	if err != nil {
		return 0, err
	}
	m.Kind = schemas.KindHarness
	m.Tasks = len(tasks)
	man, err := json.MarshalIndent(&m, "", "  ")
	if err != nil {
		return 0, fmt.Errorf("harness: %w", err)
	}
	entries := append(files, HarnessFile{release.HarnessTasks, lines}, HarnessFile{release.HarnessManifestPath, append(man, '\n')})
	sort.Slice(entries, func(i, j int) bool { return entries[i].Path < entries[j].Path })

	zw := zip.NewWriter(w)
	for _, e := range entries {
		h := &zip.FileHeader{Name: release.HarnessRoot + e.Path, Method: zip.Deflate, Modified: harnessTime}
		mode := fs.FileMode(0o644)
		if bytes.HasPrefix(e.Body, []byte("#!")) {
			mode = 0o755
		}
		h.SetMode(mode)
		fw, err := zw.CreateHeader(h)
		if err != nil {
			return 0, fmt.Errorf("harness: %w", err)
		}
		if _, err := fw.Write(e.Body); err != nil {
			return 0, fmt.Errorf("harness: %w", err)
		}
	}
	if err := zw.Close(); err != nil {
		return 0, fmt.Errorf("harness: %w", err)
	}
	return len(entries), nil
}

// HarnessCheck is the result of CheckHarness.
type HarnessCheck struct {
	Zip string `json:"zip"`
	// CorpusID is the id of the zip's task rows; ManifestCorpusID the one its manifest
	// records.
	CorpusID         string `json:"corpus_id"`
	ManifestCorpusID string `json:"manifest_corpus_id"`
	Tasks            int    `json:"tasks"`
	SourceFiles      int    `json:"source_files"`
	// Against is the exported folder compared with (if any) and AgainstCorpusID its corpus
	// id; Expected is the corpus id the zip must have: --corpus-id when given, else the
	// folder's.
	Against         string `json:"against,omitempty"`
	AgainstCorpusID string `json:"against_corpus_id,omitempty"`
	Expected        string `json:"expected_corpus_id"`
	// Diff lists the tasks that differ from the folder's rows, when they differ.
	Diff *ReleaseDiff `json:"diff,omitempty"`
	Same bool         `json:"same"`
}

// DefaultHarnessRelease returns the exported folder a harness zip belongs to when it sits at
// its place in one (DIR/harness/envgap-source.zip with DIR/data/full), or "".
func DefaultHarnessRelease(zipPath string) string {
	dir := filepath.Dir(filepath.Dir(zipPath))
	if filepath.Base(filepath.Dir(zipPath)) != path.Dir(release.HarnessPath) {
		return ""
	}
	if fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(release.DataDir(release.ConfigFull)))); err != nil || !fi.IsDir() {
		return ""
	}
	return dir
}

// CheckHarness checks that the harness zip's copy of the tasks is the release's: its rows
// give the corpus id its manifest records, and that id is the one of the exported folder
// against (when given; the tasks that differ are listed) and equals expectedID (when
// given). At least one of against and expectedID must be given. A difference is a result
// (Same false), not an error.
func CheckHarness(zipPath, against, expectedID string) (*HarnessCheck, error) {
	if against == "" && expectedID == "" {
		return nil, fmt.Errorf("harness check: nothing to compare %s with: give the exported folder (--against DIR) or the release's corpus id (--corpus-id ID)", zipPath)
	}
	h, err := release.ReadHarness(zipPath)
	if err != nil {
		return nil, err
	}
	c := &HarnessCheck{Zip: zipPath, CorpusID: h.CorpusID, ManifestCorpusID: h.Manifest.CorpusID,
		Tasks: len(h.Tasks), SourceFiles: h.SourceFiles, Against: against, Expected: expectedID}
	same := c.CorpusID == c.ManifestCorpusID
	if against != "" {
		rel, err := release.ReadTasks(against)
		if err != nil {
			return nil, err
		}
		d, err := CompareTasks(h.Tasks, rel)
		if err != nil {
			return nil, fmt.Errorf("harness check: %s: %w", against, err)
		}
		d.Release, d.Against = zipPath, against
		c.AgainstCorpusID = d.AgainstID
		if c.Expected == "" {
			c.Expected = d.AgainstID
		}
		if !d.Same {
			c.Diff = d
			same = false
		}
	}
	c.Same = same && c.CorpusID == c.Expected
	return c, nil
}
