package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/crawl/gittest"
	"github.com/envgap/envgap/lib/release"

	"github.com/envgap/envgap/core/registry"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/crawl/fakegithub"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/export/scan"
	"github.com/envgap/envgap/internal/testenv"
	"github.com/envgap/envgap/schemas"
)

// The end-to-end scenario of the GitHub path: padco/padder, a small Node.js program.
//
//	c1  (A-60m) initial commit: index.js requires left-pad, package.json does not declare it
//	    issue #1 (A-50m): "Cannot find module 'left-pad'", the real node error
//	h3  (A-45m) PR #3 head: package.json declares left-pad 1.3.0 (closes #1)
//	m3  (A-40m) merge of PR #3 (parents c1, h3)
//	    issue #2 (A-30m): the same error after a git pull without npm install; at its base
//	    commit (m3) the program runs, so verify finds it a control
//	h4  (A-20m) PR #4 head: index.js uses padStart, package.json drops left-pad (closes #2;
//	    it changes source, so it is no Repaired candidate)
//	m4  (A-10m) merge of PR #4; main
//
// A is now, or 01:00 UTC today if that is later, so every registry_date is today: the npm
// registry these machines reach is a mirror whose publish times are its own, not the
// original ones, so only a current cut-off sees its packages.
const (
	e2eRepo       = "padco/padder"
	e2eIndexLeft  = "const leftPad = require('left-pad');\nconsole.log(leftPad('42', 5, '0'));\n"
	e2eIndexStart = "console.log('42'.padStart(5, '0'));\n"
	e2ePkgBare    = "{\n  \"name\": \"padder\",\n  \"version\": \"1.0.0\",\n  \"private\": true,\n  \"main\": \"index.js\"\n}\n"
	e2ePkgLeftPad = "{\n  \"name\": \"padder\",\n  \"version\": \"1.0.0\",\n  \"private\": true,\n  \"main\": \"index.js\",\n  \"dependencies\": {\n    \"left-pad\": \"1.3.0\"\n  }\n}\n"
	e2eRepaired   = "envgap__padco__padder-1"
	e2eControl    = "envgap__padco__padder-2"
)

// e2eWorld is the scenario's git repository (served through file://) and fake GitHub.
type e2eWorld struct {
	gitRoot string
	sha     map[string]string
	at      map[string]time.Time
	fake    *fakegithub.Server
}

func newE2EWorld(t *testing.T) *e2eWorld {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Second)
	anchor := now
	if early := now.Truncate(24 * time.Hour).Add(time.Hour); early.After(anchor) {
		anchor = early
	}
	w := &e2eWorld{gitRoot: t.TempDir(), sha: map[string]string{}, at: map[string]time.Time{}}
	for name, minutes := range map[string]int{"c1": 60, "i1": 50, "h3": 45, "m3": 40, "i2": 30, "h4": 20, "m4": 10} {
		w.at[name] = anchor.Add(-time.Duration(minutes) * time.Minute)
	}
	r := gittest.Init(t, filepath.Join(w.gitRoot, "padco", "padder"))
	s := func(v string) *string { return &v }
	w.sha["c1"] = r.Commit("", w.at["c1"], "Initial commit", map[string]*string{
		"package.json": s(e2ePkgBare), "index.js": s(e2eIndexLeft), "README.md": s("# padder\n\nRun with `npm install && node index.js`.\n"),
	})
	w.sha["h3"] = r.Commit(w.sha["c1"], w.at["h3"], "Declare left-pad in package.json", map[string]*string{"package.json": s(e2ePkgLeftPad)})
	w.sha["m3"] = r.Commit(w.sha["c1"], w.at["m3"], "Merge pull request #3 from dev/declare-left-pad", map[string]*string{"package.json": s(e2ePkgLeftPad)}, w.sha["h3"])
	drop := map[string]*string{"package.json": s(e2ePkgBare), "index.js": s(e2eIndexStart)}
	w.sha["h4"] = r.Commit(w.sha["m3"], w.at["h4"], "Drop left-pad: String.prototype.padStart does it", drop)
	w.sha["m4"] = r.Commit(w.sha["m3"], w.at["m4"], "Merge pull request #4 from dev/drop-left-pad", drop, w.sha["h4"])
	r.SetRef("refs/pull/3/head", w.sha["h3"])
	r.SetRef("refs/pull/4/head", w.sha["h4"])
	r.SetRef("refs/heads/main", w.sha["m4"])

	vars := map[string]string{}
	for k, v := range w.sha {
		vars["sha:"+k] = v
	}
	for k, v := range w.at {
		vars["t:"+k] = v.Format(time.RFC3339)
	}
	w.fake = fakegithub.New(t, os.DirFS("testdata/e2e/github"), fakegithub.Options{Token: cliTestToken, Vars: vars})
	return w
}

func (w *e2eWorld) gitURLTemplate() string {
	return "file://" + filepath.ToSlash(w.gitRoot) + "/{owner}/{name}"
}

// requireEngine skips the test when no container engine with the images answers, or fails
// it when ENVGAP_REQUIRE_ENGINE=1 (as in CI: testenv).
func requireEngine(t testing.TB, images ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the container engine")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	eng, err := sandbox.Connect(ctx, "")
	if err == nil {
		defer eng.Close()
		for _, name := range images {
			if _, err = eng.ImageID(ctx, schemas.ImageRef(name)); err != nil {
				break
			}
		}
	}
	if err != nil {
		testenv.Missing(t, "no container engine or image: %v", err)
	}
}

// logRuns logs the steps and outputs of a candidate's latest verdict's runs.
func logRuns(t *testing.T, st *catalog.Catalog, id string) {
	t.Helper()
	v, _, err := st.Verdict(id)
	if err != nil {
		t.Logf("%s: no verdict: %v", id, err)
		return
	}
	t.Logf("%s: recipe %+v", id, v.Recipe)
	for _, d := range append(append([]schemas.Digest{}, v.Before...), v.After...) {
		var r schemas.Run
		if err := st.GetJSON(d, &r); err != nil {
			t.Logf("%s: run %s: %v", id, d, err)
			continue
		}
		for _, s := range r.Steps {
			out, _ := st.Get(s.Output)
			t.Logf("%s %s step %s (exit %d): %s\n%s", id, r.Side, s.Name, s.ExitCode, s.Command, out)
		}
	}
}

// crawlReport is the part of crawl --json's report the test reads.
type crawlReport struct {
	Candidates int            `json:"candidates"`
	Rejected   map[string]int `json:"rejected_by_reason"`
}

func depNames(ds schemas.DepSet) []string {
	var out []string
	for _, d := range ds.Deps {
		out = append(out, d.Name)
	}
	return out
}

func hasDep(ds schemas.DepSet, name string) bool {
	for _, d := range ds.Deps {
		if d.Name == name {
			return true
		}
	}
	return false
}

// storeCLI returns a runner of the real CLI on store (with the test token) that fails t
// on an error and returns the command's standard output.
func storeCLI(t *testing.T, store string) func(args ...string) string {
	return func(args ...string) string {
		t.Helper()
		out, errOut, err := runGitHubCLI(t, cliTestToken, append([]string{"--store", store}, args...)...)
		if err != nil {
			t.Fatalf("envgap %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, errOut)
		}
		return out
	}
}

// exportedTasks reads the task rows of an export folder, also by instance id.
func exportedTasks(t *testing.T, dir string) ([]schemas.Task, map[string]schemas.Task) {
	t.Helper()
	rows, err := release.ReadTasks(dir)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]schemas.Task{}
	for _, r := range rows {
		byID[r.InstanceID] = r
	}
	return rows, byID
}

// TestE2EGitHubRepairedAndControl runs the GitHub path through the real CLI and the real
// container engine: crawl prs and crawl issues against a fake GitHub and a local git
// repository, verify (checkouts through --git-url-template, npm through the date-limited
// proxy), admit, scan, export and corpus-id.
func TestE2EGitHubRepairedAndControl(t *testing.T) {
	w := newE2EWorld(t)
	store := filepath.Join(t.TempDir(), "store")
	repos := writeFile(t, "repos.txt", e2eRepo+"\n")
	tmpl := w.gitURLTemplate()
	cli := storeCLI(t, store)
	crawlCLI := func(kind string) crawlReport {
		t.Helper()
		out := cli("--json", "crawl", kind, "--crawl-id", "e2e-"+kind, "--repos", repos,
			"--api-url", w.fake.URL, "--git-url-template", tmpl)
		var rep crawlReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("crawl %s: %v\n%s", kind, err, out)
		}
		return rep
	}

	// 1. Crawl: PR #3 is the Repaired candidate of issue #1; PR #4 changes source.
	prs := crawlCLI("prs")
	if prs.Candidates != 1 || !reflect.DeepEqual(prs.Rejected, map[string]int{"not_env_only": 1}) {
		t.Fatalf("crawl prs: %+v, want 1 candidate and PR #4 rejected as not_env_only", prs)
	}
	// Issue #2 is a Reported candidate; issue #1 is already PR #3's candidate.
	issues := crawlCLI("issues")
	if issues.Candidates != 1 || !reflect.DeepEqual(issues.Rejected, map[string]int{"already_stored": 1}) {
		t.Fatalf("crawl issues: %+v, want 1 candidate and issue #1 rejected as already_stored", issues)
	}
	st, err := catalog.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := st.CandidateByID(e2eRepaired)
	if err != nil {
		t.Fatal(err)
	}
	if c := rc.Candidate; c.Set != schemas.SourceRepaired || c.BaseCommit != w.sha["c1"] || *c.PRHeadCommit != w.sha["h3"] ||
		*c.PRMergeCommit != w.sha["m3"] || c.Ecosystem != schemas.EcosystemJavaScript || c.ManifestPath != "package.json" ||
		c.FailureSignature != "Error: Cannot find module 'left-pad'" || c.ExpectedFailureRegex == "" {
		t.Fatalf("repaired candidate: %+v", c)
	}
	cc, err := st.CandidateByID(e2eControl)
	if err != nil {
		t.Fatal(err)
	}
	if c := cc.Candidate; c.Set != schemas.SourceReported || c.BaseCommit != w.sha["m3"] || c.RegistryDate != w.at["i2"].Format(time.RFC3339) {
		t.Fatalf("reported candidate: %+v", c)
	}

	// 2. Verify in the engine: the repaired candidate fails at c1 with the issue's error and
	// runs with PR #3's package.json; issue #2's project runs at m3 (a control).
	requireEngine(t, schemas.EcosystemJavaScript.Image())
	out := cli("--json", "verify", "--git-url-template", tmpl, "--jobs", "2", "--step-timeout", "5m")
	got := verifyOutcomes(t, out)
	if want := map[string]string{e2eRepaired: "verified", e2eControl: "already_works"}; !reflect.DeepEqual(got, want) {
		for id := range want {
			logRuns(t, st, id)
		}
		t.Fatalf("verify outcomes %v, want %v", got, want)
	}

	// 3. What the runs saw is each candidate's base commit alone: left-pad is undeclared
	// at c1, declared by the fix, declared at m3 (and gone again at main, m4).
	run := func(d schemas.Digest) schemas.Run {
		t.Helper()
		var r schemas.Run
		if err := st.GetJSON(d, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	vr, _, err := st.Verdict(e2eRepaired)
	if err != nil || len(vr.Before) != 1 || len(vr.After) != 1 {
		t.Fatalf("verdict of %s: %+v, %v", e2eRepaired, vr, err)
	}
	if b, a := run(vr.Before[0]), run(vr.After[0]); hasDep(b.D1, "left-pad") || !b.FailureMatched || !hasDep(a.D1, "left-pad") || !a.Resolved ||
		b.RegistryDate != w.at["m3"].Format(time.RFC3339) {
		t.Errorf("%s: before D1 %v (matched %v, registry date %s), after D1 %v (resolved %v)",
			e2eRepaired, depNames(b.D1), b.FailureMatched, b.RegistryDate, depNames(a.D1), a.Resolved)
	}
	// npm fetched left-pad's tarball through the proxy, cut off at the PR's merge time.
	var reg registry.Record
	if err := st.GetJSON(run(vr.After[0]).Registry, &reg); err != nil {
		t.Fatal(err)
	}
	cutoff, err := time.Parse(time.RFC3339Nano, reg.Cutoff)
	tarball := false
	for _, e := range reg.Served {
		tarball = tarball || e.Ecosystem == registry.EcosystemNPM && e.Package == "left-pad" && e.Version == "1.3.0" && e.File != ""
	}
	if err != nil || !cutoff.Equal(w.at["m3"]) || !tarball {
		t.Errorf("%s: after run's registry record: cut-off %q (%v), served %+v; want left-pad 1.3.0's tarball at %s", e2eRepaired, reg.Cutoff, err, reg.Served, w.at["m3"])
	}
	vc, _, err := st.Verdict(e2eControl)
	if err != nil || len(vc.Before) != 1 || !vc.IsControl {
		t.Fatalf("verdict of %s: %+v, %v", e2eControl, vc, err)
	}
	if b := run(vc.Before[0]); !hasDep(b.D1, "left-pad") || b.FailureMatched || len(b.Steps) == 0 {
		t.Errorf("%s: before D1 %v (matched %v), want left-pad declared as at m3", e2eControl, depNames(b.D1), b.FailureMatched)
	} else {
		for _, s := range b.Steps {
			if s.ExitCode != 0 || s.TimedOut {
				t.Errorf("%s: before step %s exited %d", e2eControl, s.Name, s.ExitCode)
			}
		}
	}

	// 4. Admit, scan (the committed review file: it decides only the findings in
	// envgap's own source, which the harness zip carries), export, corpus id.
	if out := cli("admit"); !strings.Contains(out, "2 admitted, 0 updated, 0 unchanged, 0 refused") {
		t.Fatalf("admit: %s", out)
	}
	cli("scan", "--review", "../../"+scan.DefaultReviewFile)
	relDir := filepath.Join(t.TempDir(), "release")
	cli("export", "--out", relDir, "--no-audit")
	storeID, folderID := cli("corpus-id"), cli("corpus-id", relDir)
	if storeID != folderID || len(strings.TrimSpace(storeID)) != 12 {
		t.Errorf("corpus-id of the store %q, of the export %q", storeID, folderID)
	}

	rows, byID := exportedTasks(t, relDir)
	if len(rows) != 2 {
		t.Fatalf("exported %d task rows, want 2", len(rows))
	}
	r := byID[e2eRepaired]
	if r.BaseCommit != w.sha["c1"] || r.Patch == "" || !strings.Contains(r.Patch, `+    "left-pad": "1.3.0"`) ||
		!reflect.DeepEqual(r.GoldFiles, []schemas.File{{Path: "package.json", Content: &[]string{e2ePkgLeftPad}[0]}}) ||
		r.RegistryDate != w.at["m3"].Format(time.RFC3339) || r.RegistryDateSource != schemas.DateFromPRMerged ||
		r.IsControl || r.Source != schemas.SourceRepaired || r.PRNumber == nil || *r.PRNumber != 3 ||
		*r.PRHeadCommit != w.sha["h3"] || *r.PRMergeCommit != w.sha["m3"] || r.CreatedAt != w.at["i1"].Format(time.RFC3339) ||
		!strings.Contains(r.FailureSignature, "Cannot find module 'left-pad'") || r.RunCommand != vr.Recipe.RunCommand ||
		!strings.Contains(r.RunCommand, "index.js") || !strings.Contains(r.ResolveCommand, "npm install") || r.CrawlID == nil || *r.CrawlID != "e2e-prs" ||
		r.RepoLicense == nil || *r.RepoLicense != "MIT" {
		t.Errorf("repaired row: %+v", r)
	}
	r = byID[e2eControl]
	if r.BaseCommit != w.sha["m3"] || !r.IsControl || r.Patch != "" || len(r.GoldFiles) != 0 || r.FailureSignature != "" ||
		r.Source != schemas.SourceReported || r.RegistryDate != w.at["i2"].Format(time.RFC3339) || r.PRNumber != nil {
		t.Errorf("control row: %+v", r)
	}
	for config, want := range map[string]string{release.ConfigRepaired: e2eRepaired, release.ConfigReported: e2eControl} {
		rows, err := release.ReadTaskConfig(relDir, config)
		if err != nil || len(rows) != 1 || rows[0].InstanceID != want {
			t.Errorf("config %s: %d rows (%v), want %s", config, len(rows), err, want)
		}
	}

	// The token was sent to the fake GitHub, never stored or exported.
	for _, dir := range []string{store, relDir} {
		for p, b := range storeFiles(t, dir) {
			if strings.Contains(b, cliTestToken) {
				t.Errorf("%s holds the GitHub token", p)
			}
		}
	}
}
