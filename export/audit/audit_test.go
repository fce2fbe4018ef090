package audit

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/lib/safeinstall"
	"github.com/envgap/envgap/schemas"
)

// fakeUpstreams serves testdata/ in the real wire formats: safeinstall.PyPI's JSON API under /pypi/,
// npm packuments under /npm/, safeinstall.Maven Central's search under /maven/, and OSV's querybatch.
// A package named "flaky" answers 503.
func fakeUpstreams(t *testing.T) *httptest.Server {
	t.Helper()
	osvDB, err := safeinstall.LoadOSVFile("testdata/osv.json")
	if err != nil {
		t.Fatal(err)
	}
	serveFile := func(w http.ResponseWriter, p string) {
		b, err := os.ReadFile(p)
		if err != nil {
			http.Error(w, `{"message": "Not Found"}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /pypi/{name}/json", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		if name == "flaky" {
			http.Error(w, "upstream timeout", http.StatusServiceUnavailable)
			return
		}
		serveFile(w, filepath.Join("testdata", "pypi", safeinstall.Key(schemas.EcosystemPython, name)+".json"))
	})
	mux.HandleFunc("GET /npm/", func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/npm/")
		if name == "flaky" {
			http.Error(w, "bad gateway", http.StatusBadGateway)
			return
		}
		serveFile(w, filepath.Join("testdata", "npm", strings.ReplaceAll(name, "/", "__")+".json"))
	})
	mux.HandleFunc("GET /maven/solrsearch/select", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("wt") != "json" || q.Get("core") != "gav" {
			http.Error(w, "want wt=json and core=gav", http.StatusBadRequest)
			return
		}
		var g, a string
		for _, part := range strings.Split(q.Get("q"), " AND ") {
			k, v, _ := strings.Cut(part, ":")
			v = strings.Trim(v, `"`)
			if k == "g" {
				g = v
			} else if k == "a" {
				a = v
			}
		}
		p := filepath.Join("testdata", "maven", g+"__"+a+".json")
		if _, err := os.Stat(p); err != nil {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"responseHeader":{"status":0},"response":{"numFound":0,"start":0,"docs":[]}}`))
			return
		}
		serveFile(w, p)
	})
	mux.HandleFunc("POST /v1/querybatch", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Queries []struct {
				Package struct{ Name, Ecosystem string } `json:"package"`
				Version string                           `json:"version"`
			} `json:"queries"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		type vuln struct {
			ID       string `json:"id"`
			Modified string `json:"modified"`
		}
		type result struct {
			Vulns []vuln `json:"vulns,omitempty"`
		}
		out := struct {
			Results []result `json:"results"`
		}{Results: []result{}}
		for _, q := range req.Queries {
			var res result
			for _, rec := range osvDB.Records {
				if safeinstall.Affects(rec, safeinstall.Query{Ecosystem: q.Package.Ecosystem, Name: q.Package.Name, Version: q.Version}) {
					res.Vulns = append(res.Vulns, vuln{rec.ID, rec.Modified})
				}
			}
			out.Results = append(out.Results, res)
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(out)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func testAuditor(srv *httptest.Server, osvFromFile bool) *Auditor {
	c := srv.Client()
	c.Timeout = 10 * time.Second
	a := &Auditor{Checker: safeinstall.Checker{
		PyPI:  &safeinstall.PyPI{Base: srv.URL, Client: c},
		NPM:   &safeinstall.NPM{Base: srv.URL + "/npm", Client: c},
		Maven: &safeinstall.Maven{Base: srv.URL + "/maven", Client: c},
		OSV:   &safeinstall.OSVAPI{Base: srv.URL, Client: c},
	}, Now: func() time.Time { return time.Date(2026, 9, 28, 0, 0, 0, 0, time.UTC) }}
	if osvFromFile {
		a.OSV, _ = safeinstall.LoadOSVFile("testdata/osv.json")
	}
	return a
}

func dep(name, spec string, pinned bool) schemas.Dependency {
	return schemas.Dependency{Name: name, Spec: spec, Pinned: pinned}
}

func pyInput() Input {
	before := &schemas.Run{Side: "before",
		D1: schemas.DepSet{Deps: []schemas.Dependency{dep("cython", "", false), dep("requests", "==2.28.0", true), dep("oldlib", "==0.1", true)}},
		D2: schemas.DepSet{Deps: []schemas.Dependency{dep("oldlib", "0.1", true)}}}
	after := &schemas.Run{Side: "after",
		D1: schemas.DepSet{Deps: []schemas.Dependency{dep("cython", "<3.0.0", false), dep("requests", "==2.28.0", true),
			dep("PyYAML", "==5.3", true), dep("typo-pkg", "==1.0", true), dep("brand-new", "", false)}},
		D2: schemas.DepSet{Deps: []schemas.Dependency{dep("cython", "0.29.36", true), dep("requests", "2.28.0", true), dep("pyyaml", "5.3", true)}}}
	return Input{InstanceID: "envgap__o__py-1", Ecosystem: schemas.EcosystemPython, RegistryDate: "2023-07-30T12:48:33Z",
		Before: before, After: after,
		BeforeOutput: "ERROR: Cannot install x because these package versions have conflicting dependencies.\nERROR: ResolutionImpossible",
	}
}

func byName(rec *Record) map[string]safeinstall.PackageResult {
	m := map[string]safeinstall.PackageResult{}
	for _, p := range rec.Packages {
		m[p.Name] = p
	}
	return m
}

func TestAuditPython(t *testing.T) {
	srv := fakeUpstreams(t)
	for _, osvFile := range []bool{false, true} {
		name := "osv api"
		if osvFile {
			name = "osv file"
		}
		t.Run(name, func(t *testing.T) {
			rec, err := testAuditor(srv, osvFile).Audit(context.Background(), pyInput())
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]struct {
				role  string
				flags []schemas.SecurityFlag
				adv   []string
				ver   string
			}{
				// A constraint, not an exact pin: not unpinned (the card's example fix).
				"cython": {safeinstall.RoleChanged, nil, nil, "0.29.36"},
				// safeinstall.No constraint at all: unpinned.
				"brand-new": {safeinstall.RoleAdded, []schemas.SecurityFlag{schemas.FlagUnpinned}, nil, ""},
				"requests":  {safeinstall.RoleUnchanged, nil, nil, "2.28.0"},
				"PyYAML":    {safeinstall.RoleAdded, []schemas.SecurityFlag{schemas.FlagVulnerable}, []string{"PYSEC-2021-142"}, "5.3"},
				"typo-pkg":  {safeinstall.RoleAdded, []schemas.SecurityFlag{schemas.FlagNonexistent}, nil, "1.0"},
				"oldlib":    {safeinstall.RoleDropped, []schemas.SecurityFlag{schemas.FlagRemoved}, nil, "0.1"},
			}
			got := byName(rec)
			if len(got) != len(want) {
				t.Fatalf("packages %v, want %d", rec.Packages, len(want))
			}
			for n, w := range want {
				p := got[n]
				if p.Role != w.role || !sameFlags(p.Flags, w.flags) || !reflect.DeepEqual(nonNil(p.Advisories), nonNil(w.adv)) || p.Version != w.ver {
					t.Errorf("%s: role %s flags %v advisories %v version %s; want %s %v %v %s", n, p.Role, p.Flags, p.Advisories, p.Version, w.role, w.flags, w.adv, w.ver)
				}
			}
			wantFlags := []schemas.SecurityFlag{schemas.FlagRemoved, schemas.FlagNonexistent, schemas.FlagVulnerable, schemas.FlagUnpinned}
			if !reflect.DeepEqual(rec.SecurityFlags, wantFlags) {
				t.Errorf("flags %v, want %v", rec.SecurityFlags, wantFlags)
			}
			wantCats := []schemas.Category{schemas.CategoryMisspecification, schemas.CategoryUnderspecification, schemas.CategoryConflict, schemas.CategorySecurity}
			if !reflect.DeepEqual(rec.Categories, wantCats) {
				t.Errorf("categories %v, want %v", rec.Categories, wantCats)
			}
			for _, c := range rec.CategoryRules {
				if c.Rule == "" || c.Evidence == "" {
					t.Errorf("category %s without rule or evidence", c.Category)
				}
			}
			// requests is the only safe one of the five after-fix packages.
			if rec.SafeInstall != (safeinstall.Safety{Safe: 1, Total: 5, Share: 0.2}) {
				t.Errorf("safe install %+v", rec.SafeInstall)
			}
		})
	}
}

func sameFlags(a, b []schemas.SecurityFlag) bool { return reflect.DeepEqual(nonNil(a), nonNil(b)) }

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func TestAuditNPMAndMaven(t *testing.T) {
	srv := fakeUpstreams(t)
	a := testAuditor(srv, false)
	cases := []struct {
		name string
		eco  schemas.Ecosystem
		deps []schemas.Dependency
		want map[string][]schemas.SecurityFlag
		safe safeinstall.Safety
	}{
		{"npm", schemas.EcosystemJavaScript,
			[]schemas.Dependency{dep("left-pad", "1.3.0", true), dep("lodash", "4.17.20", true), dep("gone-pkg", "1.0.0", true),
				dep("@scope/widget", "^2.0.0", false), dep("nope-not-here", "1.0.0", true)},
			map[string][]schemas.SecurityFlag{"left-pad": nil, "lodash": {schemas.FlagVulnerable}, "gone-pkg": {schemas.FlagNonexistent},
				"@scope/widget": nil, "nope-not-here": {schemas.FlagNonexistent}},
			safeinstall.Safety{Safe: 1, Total: 5, Share: 0.2}},
		{"npm without a constraint", schemas.EcosystemJavaScript,
			[]schemas.Dependency{dep("@scope/widget", "*", false), dep("left-pad", "", false)},
			map[string][]schemas.SecurityFlag{"@scope/widget": {schemas.FlagUnpinned}, "left-pad": {schemas.FlagUnpinned}},
			safeinstall.Safety{Safe: 0, Total: 2}},
		{"maven", schemas.EcosystemJava,
			[]schemas.Dependency{dep("junit:junit", "4.13.2", true), dep("com.example:missing", "1.0", true)},
			map[string][]schemas.SecurityFlag{"junit:junit": nil, "com.example:missing": {schemas.FlagNonexistent}},
			safeinstall.Safety{Safe: 1, Total: 2, Share: 0.5}},
		{"cpp is not checked", schemas.EcosystemCPP,
			[]schemas.Dependency{dep("PNG", "", false)},
			map[string][]schemas.SecurityFlag{"PNG": nil},
			safeinstall.Safety{Unchecked: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, pkgs, err := a.SafeInstall(context.Background(), c.eco, schemas.MustParseCutoff("2021-06-01T00:00:00Z"), c.deps)
			if err != nil {
				t.Fatal(err)
			}
			if s != c.safe {
				t.Errorf("safety %+v, want %+v", s, c.safe)
			}
			for _, p := range pkgs {
				if !sameFlags(p.Flags, c.want[p.Name]) {
					t.Errorf("%s: flags %v, want %v", p.Name, p.Flags, c.want[p.Name])
				}
			}
		})
	}
}

func TestExistedAtDate(t *testing.T) {
	srv := fakeUpstreams(t)
	a := testAuditor(srv, false)
	_, pkgs, err := a.SafeInstall(context.Background(), schemas.EcosystemPython, schemas.MustParseCutoff("2023-01-01T00:00:00Z"), []schemas.Dependency{dep("brand-new", "==1.0.0", true), dep("requests", "==2.28.0", true)})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]safeinstall.Tri{}
	for _, p := range pkgs {
		got[p.Name] = p.ExistedAtDate
	}
	if got["brand-new"] != safeinstall.No || got["requests"] != safeinstall.Yes {
		t.Errorf("existed at date: %v", got)
	}
}

// A failing upstream is an error of the audit, never "nonexistent".
func TestUpstreamErrors(t *testing.T) {
	srv := fakeUpstreams(t)
	cases := []struct {
		name string
		eco  schemas.Ecosystem
		a    func() *Auditor
	}{
		{"pypi 503", schemas.EcosystemPython, func() *Auditor { return testAuditor(srv, false) }},
		{"npm 502", schemas.EcosystemJavaScript, func() *Auditor { return testAuditor(srv, false) }},
		{"unreachable", schemas.EcosystemPython, func() *Auditor {
			a := testAuditor(srv, false)
			a.PyPI = &safeinstall.PyPI{Base: "http://127.0.0.1:1", Client: &http.Client{Timeout: 2 * time.Second}}
			return a
		}},
		{"osv 500", schemas.EcosystemPython, func() *Auditor {
			a := testAuditor(srv, false)
			bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) }))
			t.Cleanup(bad.Close)
			a.OSV = &safeinstall.OSVAPI{Base: bad.URL, Client: bad.Client()}
			return a
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			deps := []schemas.Dependency{dep("flaky", "==1.0", true)}
			if c.name == "unreachable" || c.name == "osv 500" {
				deps = []schemas.Dependency{dep("requests", "==2.28.0", true)}
			}
			_, pkgs, err := c.a().SafeInstall(context.Background(), c.eco, schemas.MustParseCutoff("2023-01-01T00:00:00Z"), deps)
			if err == nil {
				t.Fatalf("no error; packages %+v", pkgs)
			}
		})
	}
}

func TestSetupShAndConflictRules(t *testing.T) {
	setup := "#!/bin/sh\nset -e\napt-get update\napt-get install -y --no-install-recommends libpng-dev zlib1g-dev\n"
	in := Input{InstanceID: "envgap__claude-code__cpp-t1-1", Ecosystem: schemas.EcosystemCPP, RegistryDate: "2025-05-01T00:00:00Z",
		After:            &schemas.Run{D1: schemas.DepSet{Deps: []schemas.Dependency{dep("PNG", "", false)}}},
		Before:           &schemas.Run{D1: schemas.DepSet{Deps: []schemas.Dependency{dep("PNG", "", false)}}},
		GoldFiles:        []schemas.File{{Path: "setup.sh", Content: &setup}},
		FailureSignature: "npm ERR! code ERESOLVE",
	}
	rec, err := (&Auditor{}).Audit(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	want := []schemas.Category{schemas.CategoryUnderspecification, schemas.CategoryConflict}
	if !reflect.DeepEqual(rec.Categories, want) {
		t.Fatalf("categories %v, want %v (%+v)", rec.Categories, want, rec.CategoryRules)
	}
	if !strings.Contains(rec.CategoryRules[0].Evidence, "libpng-dev zlib1g-dev") {
		t.Errorf("evidence %q", rec.CategoryRules[0].Evidence)
	}
	if len(rec.SecurityFlags) != 0 {
		t.Errorf("flags %v for unchecked packages", rec.SecurityFlags)
	}
}

func TestRunStoresAndRead(t *testing.T) {
	srv := fakeUpstreams(t)
	st, err := catalog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	in := pyInput()
	c := schemas.Candidate{
		Ident: schemas.Ident{InstanceID: in.InstanceID},
		Set:   schemas.SourceRepaired,
		Spec: schemas.Spec{
			Repo: "o/py", CreatedAt: "2023-07-01T00:00:00Z",
			RegistryDate: in.RegistryDate, Ecosystem: schemas.EcosystemPython,
		},
		Origin: schemas.Origin{IssueNumber: 1},
	}
	if _, err := st.AddCandidateSet("t", "t", []schemas.Candidate{c}, nil); err != nil {
		t.Fatal(err)
	}
	logD, _ := st.Put([]byte(in.BeforeOutput))
	in.Before.Steps = []schemas.StepRecord{{Name: "resolve", Output: logD}}
	bd, _ := st.PutJSON(in.Before)
	ad, _ := st.PutJSON(in.After)
	vd, _ := st.PutJSON(&schemas.Verdict{Kind: "verdict", InstanceID: c.InstanceID, Before: []schemas.Digest{bd}, After: []schemas.Digest{ad}})
	if err := st.SetRef(data.RefVerdicts+c.InstanceID, vd); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), st, testAuditor(srv, true), nil, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Audited) != 1 || len(res.Failed) != 0 {
		t.Fatalf("result %+v", res)
	}
	first, _ := st.Ref(data.RefAudits + c.InstanceID)
	// Run again with a max age: the audit of unchanged inputs is kept, no registry is
	// asked (an auditor without upstream clients would fail), the ref does not move.
	clock := time.Date(2026, 9, 30, 0, 0, 0, 0, time.UTC) // two days after testAuditor's clock
	offline := testAuditor(srv, true)
	offline.PyPI = &safeinstall.PyPI{Base: srv.URL, Client: &http.Client{Transport: failingTransport{}}}
	res, err = Run(context.Background(), st, offline, nil, RunOptions{MaxAge: 7 * 24 * time.Hour, Now: func() time.Time { return clock }})
	if err != nil || len(res.Kept) != 1 || len(res.Audited) != 0 || len(res.Failed) != 0 {
		t.Fatalf("second run: %+v, %v", res, err)
	}
	if d, _ := st.Ref(data.RefAudits + c.InstanceID); d != first {
		t.Errorf("the kept audit's ref moved")
	}
	// Older than the max age, another advisory source, or no max age: audited again.
	for name, o := range map[string]struct {
		a   *Auditor
		age time.Duration
	}{
		"old":        {testAuditor(srv, true), 24 * time.Hour},
		"osv api":    {testAuditor(srv, false), 7 * 24 * time.Hour},
		"no max age": {testAuditor(srv, true), 0},
	} {
		res, err := Run(context.Background(), st, o.a, nil, RunOptions{MaxAge: o.age, Now: func() time.Time { return clock }})
		if err != nil || len(res.Audited) != 1 || len(res.Kept) != 0 {
			t.Errorf("%s: %+v, %v", name, res, err)
		}
	}
	rec, err := Read(st, c.InstanceID)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Verdict != vd || rec.AfterRun != ad || len(rec.SecurityFlags) != 4 || !strings.Contains(strings.Join(categoryNames(rec), ","), "conflict") {
		t.Errorf("record %+v", rec)
	}
	// The plain lists export reads are at the top level of the stored JSON.
	d, _ := st.Ref(data.RefAudits + c.InstanceID)
	b, _ := st.Get(d)
	var plain struct {
		Categories    []string `json:"categories"`
		SecurityFlags []string `json:"security_flags"`
	}
	if err := json.Unmarshal(b, &plain); err != nil || len(plain.Categories) != 4 || len(plain.SecurityFlags) != 4 {
		t.Errorf("stored lists %+v, %v", plain, err)
	}
	if _, err := Read(st, "envgap__none-1"); !errors.Is(err, data.ErrNotFound) {
		t.Errorf("Read of an unaudited instance: %v", err)
	}
	// fsck walks into the audit: the verdict it audited, lost after the candidate was
	// decided again (so that only the audit reaches it), is missing under audits/<id>.
	vd2, _ := st.PutJSON(&schemas.Verdict{Kind: "verdict", InstanceID: c.InstanceID, Before: []schemas.Digest{bd}, After: []schemas.Digest{ad}, Reason: "decided again"})
	if err := st.SetRef(data.RefVerdicts+c.InstanceID, vd2); err != nil {
		t.Fatal(err)
	}
	if rep, err := st.Fsck(context.Background()); err != nil || !rep.Clean() {
		t.Fatalf("fsck before the loss: %+v %v", rep, err)
	}
	if err := os.Remove(filepath.Join(st.Dir(), "objects", vd.Hex()[:2], vd.Hex()[2:])); err != nil {
		t.Fatal(err)
	}
	rep, err := st.Fsck(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Damage) != 1 || rep.Damage[0].Kind != "missing" || rep.Damage[0].Path != "refs/"+data.RefAudits+c.InstanceID ||
		!strings.Contains(rep.Damage[0].Detail, "the verdict it audited") || !strings.Contains(rep.Damage[0].Detail, "run envgap audit again") {
		t.Errorf("fsck of an audit whose verdict is lost: %+v", rep.Damage)
	}
}

// failingTransport fails every request: a registry that must not be asked.
type failingTransport struct{}

func (failingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("the registry was asked")
}

func categoryNames(r *Record) []string {
	var out []string
	for _, c := range r.Categories {
		out = append(out, string(c))
	}
	return out
}

// TestRemovedVersions checks the version-level answers: a safeinstall.PyPI release whose files are
// all yanked or deleted and an unpublished npm version are removed (flag "removed", not
// a safe install); a release with one file left, or another spelling of a PEP 440
// version, is judged by the release; a version the registry never listed is noted and is
// not a safe install, but carries no flag.
func TestRemovedVersions(t *testing.T) {
	srv := fakeUpstreams(t)
	a := testAuditor(srv, false)
	cases := []struct {
		eco     schemas.Ecosystem
		spec    string
		removed bool
		note    string // in VersionNote
	}{
		{schemas.EcosystemPython, "==1.0", true, "yanked from PyPI (remote code execution in the loader)"},
		{schemas.EcosystemPython, "==1.0.0", true, "yanked"},
		{schemas.EcosystemPython, "==1.1", false, ""},
		{schemas.EcosystemPython, "==1.2", true, "every file of the release was deleted"},
		{schemas.EcosystemPython, "==2.0", false, ""},
		{schemas.EcosystemPython, "==3.0", false, "is not in the registry"},
		{schemas.EcosystemJavaScript, "1.1.0", true, "unpublished"},
		{schemas.EcosystemJavaScript, "1.2.0", false, ""},
		{schemas.EcosystemJavaScript, "v1.1.0", true, "unpublished"},
		{schemas.EcosystemJavaScript, "9.9.9", false, "is not in the registry"},
	}
	for _, c := range cases {
		name := "yanky"
		if c.eco == schemas.EcosystemJavaScript {
			name = "unpub"
		}
		safety, pkgs, err := a.SafeInstall(context.Background(), c.eco, schemas.MustParseCutoff("2023-01-01"), []schemas.Dependency{dep(name, c.spec, true)})
		if err != nil {
			t.Fatal(err)
		}
		p := pkgs[0]
		hasRemoved := false
		for _, f := range p.Flags {
			hasRemoved = hasRemoved || f == schemas.FlagRemoved
		}
		if p.VersionRemoved != c.removed || hasRemoved != c.removed || !strings.Contains(p.VersionNote, c.note) || (c.note == "") != (p.VersionNote == "") {
			t.Errorf("%s %s: removed %v flags %v note %q; want removed %v, note with %q", name, c.spec, p.VersionRemoved, p.Flags, p.VersionNote, c.removed, c.note)
		}
		wantSafe := !c.removed && !strings.Contains(c.note, "not in the registry")
		if p.VersionUnlisted != strings.Contains(c.note, "not in the registry") || (safety.Safe == 1) != wantSafe {
			t.Errorf("%s %s: safe install %+v (unlisted %v), want safe %v", name, c.spec, safety, p.VersionUnlisted, wantSafe)
		}
	}
}

// TestSafeInstallRules is the card's safe install, package by package: it exists (the
// registry knows the package and published the pinned version, and did not remove it), is
// pinned to an exact version and has no known advisory. Flags stay the audit's: a pin
// of a version never published is no security flag.
func TestSafeInstallRules(t *testing.T) {
	srv := fakeUpstreams(t)
	a := testAuditor(srv, false)
	py, npm, mvn := schemas.EcosystemPython, schemas.EcosystemJavaScript, schemas.EcosystemJava
	cases := []struct {
		name  string
		eco   schemas.Ecosystem
		dep   schemas.Dependency
		safe  bool
		flags []schemas.SecurityFlag
	}{
		{"exact pin that exists", py, dep("requests", "==2.28.0", true), true, nil},
		{"exact pin that exists (npm)", npm, dep("left-pad", "1.3.0", true), true, nil},
		{"exact pin that exists (maven)", mvn, dep("junit:junit", "4.13.2", true), true, nil},
		{"exact pin of a version never published", py, dep("requests", "==2.28.9", true), false, nil},
		{"exact pin of a version never published (npm)", npm, dep("left-pad", "1.3.1", true), false, nil},
		{"exact pin of a version never published (maven)", mvn, dep("junit:junit", "4.99", true), false, nil},
		{"unknown package", py, dep("typo-pkg", "==1.0", true), false, []schemas.SecurityFlag{schemas.FlagNonexistent}},
		{"unknown package (npm)", npm, dep("nope-not-here", "1.0.0", true), false, []schemas.SecurityFlag{schemas.FlagNonexistent}},
		{"unknown package (maven)", mvn, dep("com.example:missing", "1.0", true), false, []schemas.SecurityFlag{schemas.FlagNonexistent}},
		{"unpinned: a range", py, dep("requests", ">=2.28", false), false, nil},
		{"unpinned: no constraint", py, dep("requests", "", false), false, []schemas.SecurityFlag{schemas.FlagUnpinned}},
		{"unpinned: a caret range (npm)", npm, dep("left-pad", "^1.3.0", false), false, nil},
		{"vulnerable", py, dep("PyYAML", "==5.3", true), false, []schemas.SecurityFlag{schemas.FlagVulnerable}},
		{"vulnerable (npm)", npm, dep("lodash", "4.17.20", true), false, []schemas.SecurityFlag{schemas.FlagVulnerable}},
		{"yanked", py, dep("yanky", "==1.0", true), false, []schemas.SecurityFlag{schemas.FlagRemoved}},
		{"unpublished (npm)", npm, dep("unpub", "1.1.0", true), false, []schemas.SecurityFlag{schemas.FlagRemoved}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, pkgs, err := a.SafeInstall(context.Background(), c.eco, schemas.MustParseCutoff("2023-01-01T00:00:00Z"), []schemas.Dependency{c.dep})
			if err != nil {
				t.Fatal(err)
			}
			want := safeinstall.Safety{Total: 1}
			if c.safe {
				want = safeinstall.Safety{Safe: 1, Total: 1, Share: 1}
			}
			if s != want || pkgs[0].Safe() != c.safe {
				t.Errorf("safety %+v, package %+v; want safe %v", s, pkgs[0], c.safe)
			}
			if !sameFlags(pkgs[0].Flags, c.flags) {
				t.Errorf("flags %v, want %v", pkgs[0].Flags, c.flags)
			}
		})
	}
	// A registry that fails is a fault of the measurement, never "does not exist".
	for _, eco := range []schemas.Ecosystem{py, npm} {
		if s, pkgs, err := a.SafeInstall(context.Background(), eco, schemas.MustParseCutoff("2023-01-01T00:00:00Z"), []schemas.Dependency{dep("flaky", "==1.0", true)}); err == nil {
			t.Errorf("%s registry down: no error; safety %+v, packages %+v", eco, s, pkgs)
		}
	}
}

func TestUnconstrained(t *testing.T) {
	tests := []struct {
		eco  schemas.Ecosystem
		spec string
		want bool
	}{
		{schemas.EcosystemPython, "", true},
		{schemas.EcosystemPython, "*", true},
		{schemas.EcosystemPython, "; python_version < '3.8'", true},
		{schemas.EcosystemPython, "<3.0.0", false},
		{schemas.EcosystemPython, ">=0.29.21", false},
		{schemas.EcosystemPython, "==2.28.0", false},
		{schemas.EcosystemJavaScript, "", true},
		{schemas.EcosystemJavaScript, "*", true},
		{schemas.EcosystemJavaScript, "latest", true},
		{schemas.EcosystemJavaScript, "^2.0.0", false},
		{schemas.EcosystemJavaScript, ">=6.2.0", false},
		{schemas.EcosystemJava, "", false},
		{schemas.EcosystemJava, "LATEST", true},
		{schemas.EcosystemJava, "[1.0,2.0)", false},
	}
	for _, tt := range tests {
		if got := safeinstall.Unconstrained(tt.eco, tt.spec); got != tt.want {
			t.Errorf("Unconstrained(%s, %q) = %v, want %v", tt.eco, tt.spec, got, tt.want)
		}
	}
}
