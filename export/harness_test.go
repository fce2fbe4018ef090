package export

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/envgap/envgap/lib/release"
	"github.com/envgap/envgap/schemas"
)

func readZip(t *testing.T, p string) (*zip.ReadCloser, map[string][]byte) {
	t.Helper()
	zr, err := zip.OpenReader(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { zr.Close() })
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[f.Name] = b
	}
	return zr, out
}

func TestHarnessZip(t *testing.T) {
	st := admittedStore(t)
	out, rep := exportTo(t, st)
	zipPath := filepath.Join(out, release.HarnessPath)
	zr, files := readZip(t, zipPath)

	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		if !f.Modified.Equal(harnessTime) {
			t.Errorf("%s: modified %v, want the fixed %v", f.Name, f.Modified, harnessTime)
		}
		wantMode := fs.FileMode(0o644)
		if f.Name == release.HarnessRoot+"scripts/demo.sh" {
			wantMode = 0o755
		}
		if f.Mode() != wantMode {
			t.Errorf("%s: mode %v, want %v", f.Name, f.Mode(), wantMode)
		}
	}
	// Sorted, under one folder, without the build products, store and large file of the
	// source tree.
	want := []string{"go.mod", "main.go", release.HarnessManifestPath, release.HarnessTasks, "scripts/demo.sh"}
	for i := range want {
		want[i] = release.HarnessRoot + want[i]
	}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("entries\n got %v\nwant %v", names, want)
	}
	if !sort.StringsAreSorted(names) {
		t.Errorf("entries are not sorted: %v", names)
	}

	// tasks.jsonl is the text the corpus id hashes: canonical lines, sorted, each ended.
	lines := files[release.HarnessRoot+release.HarnessTasks]
	sum := sha256.Sum256(lines)
	if got := hex.EncodeToString(sum[:])[:12]; got != rep.CorpusID {
		t.Errorf("sha256(tasks.jsonl) begins %s, want the corpus id %s", got, rep.CorpusID)
	}
	if !bytes.HasSuffix(lines, []byte("\n")) {
		t.Error("tasks.jsonl does not end with a newline")
	}
	split := strings.Split(strings.TrimSuffix(string(lines), "\n"), "\n")
	if len(split) != rep.Tasks || !sort.StringsAreSorted(split) {
		t.Errorf("tasks.jsonl: %d lines (want %d), sorted %v", len(split), rep.Tasks, sort.StringsAreSorted(split))
	}
	for _, l := range split {
		c, err := schemas.CanonicalizeJSON([]byte(l))
		if err != nil || string(c) != l {
			t.Errorf("a line of tasks.jsonl is not canonical JSON (%v): %.80s", err, l)
		}
	}
	var man release.HarnessManifest
	if err := json.Unmarshal(files[release.HarnessRoot+release.HarnessManifestPath], &man); err != nil {
		t.Fatal(err)
	}
	if man != (release.HarnessManifest{Kind: "harness", CorpusID: rep.CorpusID, Tasks: rep.Tasks, Repo: DefaultRepo}) {
		t.Errorf("manifest = %+v", man)
	}

	h, err := release.ReadHarness(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := st.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	if h.CorpusID != rep.CorpusID || !reflect.DeepEqual(h.Tasks, tasks) || h.SourceFiles != 3 {
		t.Errorf("ReadHarness: id %s (want %s), %d source files, tasks equal %v", h.CorpusID, rep.CorpusID, h.SourceFiles, reflect.DeepEqual(h.Tasks, tasks))
	}
	if got := DefaultHarnessRelease(zipPath); got != out {
		t.Errorf("DefaultHarnessRelease = %q, want %q", got, out)
	}
	if got := DefaultHarnessRelease(filepath.Join(t.TempDir(), "envgap-source.zip")); got != "" {
		t.Errorf("DefaultHarnessRelease of a loose zip = %q, want none", got)
	}
}

// rewriteZip copies a harness zip to a new file, replacing or dropping entries (a nil
// body drops one).
func rewriteZip(t *testing.T, src string, replace map[string][]byte) string {
	t.Helper()
	zr, files := readZip(t, src)
	dst := filepath.Join(t.TempDir(), "envgap-source.zip")
	f, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, e := range zr.File {
		body := files[e.Name]
		if r, ok := replace[strings.TrimPrefix(e.Name, release.HarnessRoot)]; ok {
			if r == nil {
				continue
			}
			body = r
		}
		w, err := zw.Create(e.Name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return dst
}

func TestCheckHarness(t *testing.T) {
	st := admittedStore(t)
	out, rep := exportTo(t, st)
	zipPath := filepath.Join(out, release.HarnessPath)

	if _, err := CheckHarness(zipPath, "", ""); err == nil {
		t.Error("a check with nothing to compare with passed")
	}
	for _, tc := range []struct {
		name, against, id string
	}{{"folder", out, ""}, {"id", "", rep.CorpusID}, {"both", out, rep.CorpusID}} {
		c, err := CheckHarness(zipPath, tc.against, tc.id)
		if err != nil || !c.Same || c.CorpusID != rep.CorpusID || c.Diff != nil {
			t.Errorf("%s: check of the release's own zip: %+v, %v", tc.name, c, err)
		}
	}
	if c, err := CheckHarness(zipPath, "", "000000000000"); err != nil || c.Same {
		t.Errorf("check against another id passed: %+v, %v", c, err)
	}
	if c, err := CheckHarness(zipPath, out, "000000000000"); err != nil || c.Same || c.AgainstCorpusID != rep.CorpusID || c.Expected != "000000000000" {
		t.Errorf("check against the folder and another id passed: %+v, %v", c, err)
	}

	// A zip whose task rows were changed after it was made: the manifest and the folder
	// both disagree, and the changed column is named.
	h, err := release.ReadHarness(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	for i := range h.Tasks {
		if h.Tasks[i].InstanceID == idReported {
			h.Tasks[i].ProblemStatement += " (edited)"
		}
	}
	lines, err := TaskLines(h.Tasks)
	if err != nil {
		t.Fatal(err)
	}
	edited := rewriteZip(t, zipPath, map[string][]byte{release.HarnessTasks: lines})
	c, err := CheckHarness(edited, out, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Same || c.ManifestCorpusID != rep.CorpusID || c.CorpusID == rep.CorpusID || c.Diff == nil ||
		!reflect.DeepEqual(c.Diff.Changed, []ChangedTask{{InstanceID: idReported, Columns: []string{"problem_statement"}}}) {
		t.Errorf("check of an edited zip: %+v (diff %+v)", c, c.Diff)
	}

	for _, drop := range []string{"go.mod", release.HarnessTasks, release.HarnessManifestPath} {
		broken := rewriteZip(t, zipPath, map[string][]byte{drop: nil})
		if _, err := CheckHarness(broken, out, ""); !errors.Is(err, release.ErrNotHarness) {
			t.Errorf("zip without %s: err = %v, want release.ErrNotHarness", drop, err)
		}
	}
	if _, err := CheckHarness(filepath.Join(out, "README.md"), out, ""); err == nil {
		t.Error("a file that is not a zip passed")
	}
}

func TestExportNeedsASourceTree(t *testing.T) {
	st := admittedStore(t)
	o := testOptions(filepath.Join(t.TempDir(), "release"))
	o.Source = nil
	if _, err := Export(st, o); err == nil || !strings.Contains(err.Error(), "Options.Source") {
		t.Errorf("export without a source tree: %v", err)
	}
}

func TestLicenseFile(t *testing.T) {
	st := admittedStore(t)
	out, _ := exportTo(t, st)
	b, err := os.ReadFile(filepath.Join(out, LicensePath))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, want := range []string{
		"MIT License",
		"| Ezibenroc/PyRoaringBitMap | MIT | 1 | 1 |",
		"| keycloak/keycloak | Apache-2.0 | 0 | 1 |", // a candidate only
		"| npm/cli | none reported | 0 | 1 |",        // GitHub reported no licence
		"1 task row, 2 rows in the candidates config",
		"CC BY 4.0 (" + ccBy4 + ")",
		release.HarnessPath,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("LICENSE.md lacks %q", want)
		}
	}
	if strings.Contains(text, "| claude-code/") {
		t.Error("LICENSE.md lists a Lite project as a GitHub repository")
	}
}
