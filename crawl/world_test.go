package crawl_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/envgap/envgap/crawl"
	"github.com/envgap/envgap/crawl/fakegithub"
	"github.com/envgap/envgap/crawl/gittest"
	"github.com/envgap/envgap/data/catalog"
)

// testToken is shaped like a real token so that a leak would be caught by any scanner.
const testToken = "ghp_R3aLlyN0tAT0k3nBu7Sh4p3dL1k30n3xYzW"

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// File contents of the scenario's repositories.
const (
	setupV1   = "from setuptools import setup\nsetup(\n    name='widgets',\n    install_requires=['requests'],\n)\n"
	setupPin  = "from setuptools import setup\nsetup(\n    name='widgets',\n    install_requires=['requests<3'],\n)\n"
	setup1x   = "from setuptools import setup\nsetup(\n    name='widgets',\n    version='1.9',\n    install_requires=['requests<3'],\n)\n"
	setupCol  = "from setuptools import setup\nsetup(\n    name='widgets',\n    install_requires=['requests<3', 'colorama'],\n)\n"
	setupYaml = "from setuptools import setup\nsetup(\n    name='widgets',\n    install_requires=['requests<3', 'colorama', 'pyyaml>=6'],\n)\n"
	reqsV1    = "requests\n"
	reqsPin   = "requests<3\n"
	pkgJSON   = "{\n  \"name\": \"webapp\",\n  \"dependencies\": {\"left-pad\": \"^9.0.0\", \"express\": \"^4.18.0\"}\n}\n"
)

// world is the scenario: two git repositories served through file://, and a fake GitHub
// whose fixtures name their commits.
type world struct {
	t       testing.TB
	fake    *fakegithub.Server
	clock   *fakegithub.Clock
	gitRoot string
	sha     map[string]string
	repos   []string
	logs    *logBuf
}

type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) logf(format string, args ...any) {
	l.mu.Lock()
	fmt.Fprintf(&l.b, format+"\n", args...)
	l.mu.Unlock()
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newWorld(t testing.TB, faults ...fakegithub.Fault) *world {
	t.Helper()
	return newWorldFS(t, os.DirFS("testdata/github"), faults...)
}

// newWorldFS is newWorld with the fake's fixtures read from fsys.
func newWorldFS(t testing.TB, fsys fs.FS, faults ...fakegithub.Fault) *world {
	t.Helper()
	w := &world{t: t, gitRoot: t.TempDir(), sha: map[string]string{}, logs: &logBuf{},
		repos: []string{"acme/widgets", "acme/webapp", "acme/gone", "acme/oldname"}}
	w.buildWidgets()
	w.buildWebapp()
	vars := map[string]string{}
	for k, v := range w.sha {
		vars["sha:"+k] = v
	}
	// A commit that only ever existed on a branch that was force-pushed away.
	vars["sha:g7"] = w.sha["g7"]
	w.clock = fakegithub.NewClock(at("2024-06-01T00:00:00Z"))
	w.fake = fakegithub.New(t, fsys, fakegithub.Options{
		Token: testToken, Vars: vars, Now: w.clock.Now, MaxPerPage: 2, Faults: faults})
	return w
}

func (w *world) buildWidgets() {
	r := gittest.Init(w.t, filepath.Join(w.gitRoot, "acme", "widgets"))
	s := gittest.S
	c := func(name, parent, when, msg string, files map[string]*string, extra ...string) {
		var ps []string
		for _, e := range extra {
			ps = append(ps, w.sha[e])
		}
		w.sha[name] = r.Commit(w.sha[parent], at(when), msg, files, ps...)
	}
	c("c1", "", "2023-01-10T09:00:00Z", "Initial commit", map[string]*string{
		"setup.py": s(setupV1), "requirements.txt": s(reqsV1), "widgets/__init__.py": s("VERSION = '1.0'\n"),
		"README.md": s("# widgets\n"), "tests/test_widgets.py": s("def test_version():\n    pass\n"),
		"docs/package.json": s("{\"name\": \"widgets-docs\"}\n"),
	})
	c("c2", "c1", "2023-02-01T09:00:00Z", "Faster widgets", map[string]*string{"widgets/__init__.py": s("VERSION = '1.1'\nFAST = True\n")})
	fix3 := map[string]*string{"setup.py": s(setupPin), "requirements.txt": nil, "requirements/base.txt": s(reqsPin)}
	c("fix3", "c2", "2023-02-06T09:00:00Z", "Pin requests below 3", fix3)
	c("m3", "c2", "2023-02-07T10:00:00Z", "Merge pull request #3", fix3, "fix3")
	c("bp4", "c1", "2023-02-08T08:00:00Z", "[1.x] Pin requests below 3", map[string]*string{"setup.py": s(setup1x)})
	c("mb4", "c1", "2023-02-08T09:00:00Z", "Merge pull request #4", map[string]*string{"setup.py": s(setup1x)}, "bp4")
	col := map[string]*string{"setup.py": s(setupCol), "widgets/__init__.py": s("import colorama\nVERSION = '1.1'\n")}
	c("h5", "m3", "2023-02-09T09:00:00Z", "Colours", col)
	c("m5", "m3", "2023-02-10T09:00:00Z", "Merge pull request #5", col, "h5")
	bump := map[string]*string{"requirements/base.txt": s("requests<3,>=2.28\n")}
	c("h6", "m5", "2023-02-11T08:00:00Z", "Bump requests", bump)
	c("m6", "m5", "2023-02-11T09:00:00Z", "Merge pull request #6", bump, "h6")
	yaml := map[string]*string{"setup.py": s(setupYaml)}
	c("g7", "m6", "2023-02-12T08:00:00Z", "Require PyYAML 6 (before the force-push)", yaml)
	c("m7", "m6", "2023-02-12T09:00:00Z", "Require PyYAML 6 (#7)", yaml)
	vend := map[string]*string{"requirements/base.txt": s("requests<3,>=2.28\nurllib3<2\n")}
	c("h9", "m7", "2023-02-13T08:00:00Z", "Vendor everything", vend)
	c("m9", "m7", "2023-02-13T09:00:00Z", "Merge pull request #9", vend, "h9")
	docs := map[string]*string{"README.md": s("# widgets\n\nInstall with pip.\n"), "requirements/base.txt": s("requests<3,>=2.28\nurllib3<2\ncertifi\n")}
	c("h11", "m9", "2023-02-14T08:00:00Z", "Document the requirements", docs)
	c("m11", "m9", "2023-02-14T09:00:00Z", "Merge pull request #11", docs, "h11")
	r.SetRef("refs/heads/1.x", w.sha["mb4"])
	for pr, head := range map[int]string{3: "fix3", 4: "bp4", 5: "h5", 6: "h6", 7: "m7", 9: "h9", 11: "h11"} {
		r.SetRef(fmt.Sprintf("refs/pull/%d/head", pr), w.sha[head])
	}
	r.SetRef("refs/heads/main", w.sha["m11"])
}

func (w *world) buildWebapp() {
	r := gittest.Init(w.t, filepath.Join(w.gitRoot, "acme", "webapp"))
	s := gittest.S
	w.sha["w1"] = r.Commit("", at("2023-03-01T09:00:00Z"), "Initial commit", map[string]*string{
		"package.json": s(pkgJSON), "src/index.js": s("const express = require('express');\n"), "README.md": s("# webapp\n"),
		"examples/demo/package.json": s("{}\n"),
	})
	w.sha["w2"] = r.Commit(w.sha["w1"], at("2023-03-10T09:00:00Z"), "Serve static files", map[string]*string{
		"src/static.js": s("module.exports = {};\n"), "packages/ui/package.json": s("{\"name\": \"ui\"}\n"),
	})
	r.SetRef("refs/heads/main", w.sha["w2"])
}

func (w *world) options(crawlID string) crawl.Options {
	return crawl.Options{CrawlID: crawlID, Repos: w.repos, APIURL: w.fake.URL + "/",
		GitURLTemplate: "file://" + filepath.ToSlash(w.gitRoot) + "/{owner}/{name}", Token: testToken, WorkDir: w.t.TempDir()}
}

func (w *world) deps(st *catalog.Catalog) crawl.Deps {
	return crawl.Deps{Store: st, Clock: w.clock, Logf: w.logs.logf}
}

func newStore(t testing.TB) *catalog.Catalog {
	t.Helper()
	st, err := catalog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// rejectsByRef returns the set's rejects as ref -> reason code.
func rejectsByRef(t *testing.T, st *catalog.Catalog, r *crawl.Report) map[string]string {
	t.Helper()
	var set struct {
		Rejects []struct{ Ref, Reason string }
	}
	if err := st.GetJSON(r.CandidateSetDigest, &set); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, rj := range set.Rejects {
		code, _, _ := strings.Cut(rj.Reason, ":")
		out[rj.Ref] = code
	}
	return out
}
