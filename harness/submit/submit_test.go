package submit

import (
	"archive/tar"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envgap/envgap/harness/eval"
	"github.com/envgap/envgap/schemas"
)

func writeMeta(t *testing.T, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "meta.yaml")
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const goodMeta = "agent: {name: a, version: 1.0}\nmodels: [m]\norganisation: o\nopen_source: {agent: true, model: false}\n"

func TestReadMetaNamesTheField(t *testing.T) {
	m, err := ReadMeta(writeMeta(t, goodMeta+"setting: {label: mine}\n"))
	if err != nil || m.Agent.Name != "a" || m.Label != "mine" || *m.OpenSource.Agent != true || *m.OpenSource.Model != false {
		t.Fatalf("good meta: %v %+v", err, m)
	}
	for _, c := range []struct{ meta, want string }{
		{"", "empty"},
		{"agent: {name: a}\nmodels: [m]\norganisation: o\nopen_source: {agent: true, model: false}\n", "agent.version: missing"},
		{"agent: {name: a, version: 1}\norganisation: o\nopen_source: {agent: true, model: false}\n", "models: missing"},
		{"agent: {name: a, version: 1}\nmodels: [m, '']\norganisation: o\nopen_source: {agent: true, model: false}\n", "models[1]: empty"},
		{"agent: {name: a, version: 1}\nmodels: [m]\nopen_source: {agent: true, model: false}\n", "organisation: missing"},
		{"agent: {name: a, version: 1}\nmodels: [m]\norganisation: o\nopen_source: {agent: true}\n", "open_source.model: missing"},
		{goodMeta + "team: x\n", "field team not found"},
		{goodMeta + "links: [http://x]\n", "links[0]"},
		{"agent: {name: a, version: 'a b'}\nmodels: [m]\norganisation: o\nopen_source: {agent: true, model: false}\n", "agent.version: \"a b\" is not a version"},
	} {
		_, err := ReadMeta(writeMeta(t, c.meta))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("meta %q: %v, want %q", c.meta, err, c.want)
		}
	}
}

type entry struct {
	name     string
	typ      byte
	body     string
	link     string
	size     int64
	fakeSize bool
}

func writeTar(t *testing.T, es []entry) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "b.tar.gz")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	tw := tar.NewWriter(zw)
	for _, e := range es {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: 0o644, Linkname: e.link, Size: int64(len(e.body))}
		if e.typ != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if e.typ == tar.TypeReg {
			tw.Write([]byte(e.body))
		}
	}
	tw.Close()
	zw.Close()
	f.Close()
	return p
}

func TestOpenRefusesUnsafeArchives(t *testing.T) {
	lim := Limits{File: 100, Total: 150, Files: 10}
	md := entry{name: MetadataFile, typ: tar.TypeReg, body: "schema_version: 1\n"}
	for _, c := range []struct {
		name string
		es   []entry
		want string
	}{
		{"symlink", []entry{md, {name: "results/x/summary.json", typ: tar.TypeSymlink, link: "/etc/passwd"}}, "symbolic link"},
		{"hard link", []entry{md, {name: "a", typ: tar.TypeLink, link: MetadataFile}}, "hard link"},
		{"escape", []entry{md, {name: "../evil", typ: tar.TypeReg, body: "x"}}, "not a clean relative name"},
		{"absolute", []entry{{name: "/tmp/evil", typ: tar.TypeReg, body: "x"}}, "not a clean relative name"},
		{"dotdot inside", []entry{{name: "results/../../evil", typ: tar.TypeReg, body: "x"}}, "not a clean relative name"},
		{"file too big", []entry{{name: "big", typ: tar.TypeReg, body: strings.Repeat("x", 101)}}, "over the bound of 100"},
		{"too much", []entry{{name: "a", typ: tar.TypeReg, body: strings.Repeat("x", 80)}, {name: "b", typ: tar.TypeReg, body: strings.Repeat("x", 80)}}, "over 150 bytes in all"},
		{"twice", []entry{{name: "a", typ: tar.TypeReg, body: "1"}, {name: "a", typ: tar.TypeReg, body: "2"}}, "file exists"},
		{"fifo", []entry{{name: "p", typ: tar.TypeFifo}}, "FIFO"},
	} {
		b, err := Open(writeTar(t, c.es), lim)
		if err == nil {
			b.Close()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// Too many entries.
	var many []entry
	for i := 0; i < 11; i++ {
		many = append(many, entry{name: "d" + strings.Repeat("x", i), typ: tar.TypeDir})
	}
	if _, err := Open(writeTar(t, many), lim); err == nil || !strings.Contains(err.Error(), "more than 10 entries") {
		t.Errorf("many: %v", err)
	}
	// A good one unpacks, and Close removes it.
	b, err := Open(writeTar(t, []entry{{name: "results/", typ: tar.TypeDir}, md}), lim)
	if err != nil {
		t.Fatal(err)
	}
	if b.MetadataErr == nil || !strings.Contains(b.MetadataErr.Error(), "agent.name: missing") {
		t.Errorf("metadata: %v", b.MetadataErr)
	}
	dir := b.Dir
	b.Close()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("unpacked folder left: %v", err)
	}
}

func TestOpenRefusesLinksInFolders(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "results", "x"), 0o755)
	os.WriteFile(filepath.Join(dir, MetadataFile), []byte("x"), 0o644)
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "results", "x", "results.jsonl")); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, DefaultLimits); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("folder with a link: %v", err)
	}
	if err := copyTree(dir, filepath.Join(t.TempDir(), "c")); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("prepare copying a link: %v", err)
	}
}

func TestSettingLeaderboard(t *testing.T) {
	s := Setting{Mode: "run", K: 1, MaxAttempts: 5, AttemptTimeout: "20m0s"}
	if ok, diff := s.Leaderboard(); !ok {
		t.Errorf("the leaderboard's setting: %s", diff)
	}
	for _, c := range []struct {
		s    Setting
		want string
	}{
		{Setting{Mode: "run", K: 3, MaxAttempts: 5, AttemptTimeout: "20m0s"}, "k 3"},
		{Setting{Mode: "run", K: 1, MaxAttempts: 5, AttemptTimeout: "10m0s"}, "attempt timeout 10m0s"},
		{Setting{Mode: "run", K: 1, MaxAttempts: 5}, "attempt timeout not recorded"},
		{Setting{Mode: "eval", K: 1, MaxAttempts: 1}, "mode eval"},
	} {
		if ok, diff := c.s.Leaderboard(); ok || !strings.Contains(diff, c.want) {
			t.Errorf("%+v: %v %q, want %q", c.s, ok, diff, c.want)
		}
	}
}

// TestTrajectoriesLine: an attempt's trajectory is ATIF, raw only (the agent's file, or
// ATIF keeping unread text whole), or missing (no file, or ATIF saying the agent wrote none).
func TestTrajectoriesLine(t *testing.T) {
	dir := t.TempDir()
	write := func(id string, attempt int, suffix, body string) {
		p := filepath.Join(dir, AttemptPath(id, 1, attempt)) + suffix
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	form := func(f string) string { return `{"steps": [], "extra": {"envgap": {"form": "` + f + `"}}}` }
	write("a", 1, ATIFSuffix, form("envgap"))
	write("b", 1, ATIFSuffix, form("agent"))
	write("c", 1, ATIFSuffix, form(FormRaw))
	write("d", 1, RawSuffix, `free text`)
	write("e", 1, ATIFSuffix, form(FormNone))
	fd := &folderData{rel: "results/reported", dir: dir, f: &eval.Folder{Summary: schemas.EvalSummary{Mode: schemas.ModeRun}}}
	for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
		fd.f.Results = append(fd.f.Results, schemas.EvalResult{InstanceID: id, Run: 1, Attempt: 1})
		fd.preds = append(fd.preds, PredictionLine{InstanceID: id, Run: 1, Attempt: 1})
	}
	st, why := trajectories([]*folderData{fd})
	if st != StatusFail || !strings.Contains(why, "2 attempt(s) without a trajectory") || !strings.Contains(why, `e run 1 attempt 1 (the agent wrote none`) ||
		!strings.Contains(why, "f run 1 attempt 1 (no results/reported/agent/f/run-1/attempt-1.atif.json or attempt-1.trajectory)") {
		t.Errorf("%s %s", st, why)
	}
	fd.f.Results, fd.preds = fd.f.Results[:4], fd.preds[:4]
	st, why = trajectories([]*folderData{fd})
	if st != StatusOK || !strings.Contains(why, "2 in ATIF, 2 raw only") {
		t.Errorf("%s %s", st, why)
	}
}
