package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/export"
	"github.com/envgap/envgap/lib/release"
	"github.com/envgap/envgap/schemas"
)

// The website's tests (harness/site) read a small Hub folder from their testdata: a
// stage's tests use no other stage, so it is committed there, written by envgap's export
// code. This test keeps it what export writes today; -update-site-fixture rewrites it.
var updateSiteFixture = flag.Bool("update-site-fixture", false, "rewrite harness/site/testdata/hub from its candidates")

const siteTestdata = "../../harness/site/testdata"

func TestSiteFixtureIsAnExport(t *testing.T) {
	got := readSiteFolder(t, siteFixtureHub(t))
	dir := filepath.Join(siteTestdata, "hub")
	if *updateSiteFixture {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		for name, b := range got {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := readSiteFolder(t, dir)
	for name, b := range got {
		if !bytes.Equal(b, want[name]) {
			t.Errorf("%s/%s is not what export writes now (go test ./cmd/envgap -run TestSiteFixtureIsAnExport -update-site-fixture)", dir, name)
		}
	}
	for name := range want {
		if _, ok := got[name]; !ok {
			t.Errorf("%s/%s is not written by export any more (-update-site-fixture)", dir, name)
		}
	}
}

// readSiteFolder returns every file under dir by its slash-separated path.
func readSiteFolder(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The fixture's candidates (testdata/candidates.jsonl): two repair tasks (one of them
// hostile: its problem statement and patch carry script payloads), a control that is then
// excluded, a not_reproduced candidate and one never checked.
const (
	siteRepaired = "envgap__acme__pyproj-12"
	siteHostile  = "envgap__evil__payload-66"
	siteControl  = "envgap__acme__works-7"
	siteNotRepro = "envgap__acme__gone-3"
	siteWaiting  = "envgap__acme__later-9"
)

// siteFixtureHub exports the site fixture's store with envgap's export code and returns the folder.
func siteFixtureHub(t testing.TB) string {
	t.Helper()
	st, err := catalog.Open(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddCandidatesFile(filepath.Join(siteTestdata, "candidates.jsonl")); err != nil {
		t.Fatal(err)
	}
	for id, o := range map[string]schemas.Outcome{siteRepaired: schemas.OutcomeVerified, siteHostile: schemas.OutcomeVerified,
		siteControl: schemas.OutcomeAlreadyWorks, siteNotRepro: schemas.OutcomeNotReproduced} {
		c, err := st.CandidateByID(id)
		if err != nil {
			t.Fatal(err)
		}
		v := schemas.Verdict{Kind: "verdict", InstanceID: id, Candidate: c.Digest, Outcome: o,
			Reason: "decided in a test", IsControl: o == schemas.OutcomeAlreadyWorks,
			Recipe: schemas.Recipe{Ecosystem: c.Ecosystem, Image: c.Ecosystem.Image(), BootstrapCommand: "true",
				ResolveCommand: "make install", ReproCommand: "make repro", RunCommand: "make run",
				ExpectedFailureRegex: "error", Generated: true},
			Stability: "3/3", CoreVersion: "test", DecidedAt: "2026-09-25T00:00:00Z",
			FailureSignature: "error: the build failed <script>window.__pwned=6</script>"}
		d, err := st.PutJSON(&v)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.SetRef(data.RefVerdicts+id, d); err != nil {
			t.Fatal(err)
		}
	}
	if rep, err := export.Admit(st, export.AdmitOptions{}); err != nil || rep.Refused > 0 {
		t.Fatalf("admit: %v %+v", err, rep)
	}
	now := func() time.Time { return time.Date(2026, 9, 29, 12, 0, 0, 0, time.UTC) }
	if _, err := export.Exclude(st, export.ExcludeRequest{InstanceID: siteControl, Reason: "the <b>setup.py</b> reads the network", Now: now}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "hub")
	src := fstest.MapFS{"go.mod": {Data: []byte("module example.com/envgap\n\ngo 1.26\n")},
		"main.go": {Data: []byte("package main\n\nfunc main() {}\n")}}
	if _, err := export.Export(st, export.Options{Out: out, Reviewer: siteReviewed{}, Source: src, NoAudit: true}); err != nil {
		t.Fatal(err)
	}
	return out
}

// reviewed is a credential review with nothing waiting and nothing to redact.
type siteReviewed struct{}

func (siteReviewed) Check(catalog.Store) error                                      { return nil }
func (siteReviewed) RedactTask(catalog.Store, *schemas.Task) (int, error)           { return 0, nil }
func (siteReviewed) RedactCandidate(catalog.Store, *schemas.Candidate) (int, error) { return 0, nil }
func (siteReviewed) CardSection(catalog.Store, []string) (string, error)            { return "", nil }

// envgap site on the fixture's Hub folder: the site is written with the release's harness
// zip; a folder whose zip is another release's is refused, and so is a missing --out.
func TestSiteCommand(t *testing.T) {
	hub := filepath.Join(siteTestdata, "hub")
	out := filepath.Join(t.TempDir(), "site")
	stdout, err := runCLI(t, "site", "--hub", hub, "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains([]byte(stdout), []byte("5 candidates")) {
		t.Errorf("stdout = %q", stdout)
	}
	zip, _ := os.ReadFile(filepath.Join(hub, filepath.FromSlash(release.HarnessPath)))
	if got, err := os.ReadFile(filepath.Join(out, "harness", "envgap-source.zip")); err != nil || !bytes.Equal(got, zip) {
		t.Errorf("the site's harness zip is not the release's: %v", err)
	}
	if _, err := runCLI(t, "site", "--hub", hub); err == nil {
		t.Error("site without --out ran")
	}
	// A Hub folder whose harness zip carries another task set.
	other := filepath.Join(t.TempDir(), "hub")
	for name, b := range readSiteFolder(t, hub) {
		p := filepath.Join(other, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, b, 0o644)
	}
	tasks, err := release.ReadTasks(hub)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(other, filepath.FromSlash(release.HarnessPath)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := export.WriteHarness(f, fstest.MapFS{"go.mod": {Data: []byte("module x\n")}}, tasks[:1], release.HarnessManifest{Kind: "harness"}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := runCLI(t, "site", "--hub", other, "--out", filepath.Join(t.TempDir(), "s")); err == nil || !bytes.Contains([]byte(err.Error()), []byte("not one release")) {
		t.Errorf("a Hub folder with another release's zip: %v", err)
	}
}
