package verify

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/core/egress"
	"github.com/envgap/envgap/core/registry"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/internal/testenv"
	"github.com/envgap/envgap/schemas"
)

// openEnv opens a verify session on the real engine, or skips (fails when
// ENVGAP_REQUIRE_ENGINE=1, as in CI: testenv). npm goes through the proxy to the npm
// client's configured registry, asked as the command line asks it.
func openEnv(t *testing.T, st *catalog.Catalog, pypi string) *Session {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the container engine")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	npm, err := registry.NPMConfigRegistry(ctx)
	if err != nil {
		testenv.Missing(t, "no npm registry: %v", err)
	}
	sess, err := Open(ctx, Env{Store: st, Registry: registry.Options{PyPIUpstream: pypi, NPMUpstream: npm}, SweepOlderThan: -1})
	if err != nil {
		testenv.Missing(t, "no container engine: %v", err)
	}
	t.Cleanup(func() { sess.Close() })
	for _, name := range []string{"envgap-python-eval", "envgap-javascript-eval"} {
		if _, err := sess.Stage.Cores[0].ImageID(ctx, name); err != nil {
			testenv.Missing(t, "image missing: %v", err)
		}
	}
	return sess
}

// wheel builds a pure-Python wheel of one module.
func wheel(t *testing.T, name, version, body string) []byte {
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	mod := strings.ReplaceAll(name, "-", "_")
	dist := fmt.Sprintf("%s-%s.dist-info", mod, version)
	files := map[string]string{
		mod + "/__init__.py":    body,
		dist + "/METADATA":      fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\n", name, version),
		dist + "/WHEEL":         "Wheel-Version: 1.0\nGenerator: envgap-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
		dist + "/top_level.txt": mod + "\n",
	}
	var record strings.Builder
	for _, p := range []string{mod + "/__init__.py", dist + "/METADATA", dist + "/WHEEL", dist + "/top_level.txt"} {
		w, _ := z.Create(p)
		w.Write([]byte(files[p]))
		sum := sha256.Sum256([]byte(files[p]))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", p, base64.RawURLEncoding.EncodeToString(sum[:]), len(files[p]))
	}
	record.WriteString(dist + "/RECORD,,\n")
	w, _ := z.Create(dist + "/RECORD")
	w.Write([]byte(record.String()))
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type fixtureFile struct {
	version, uploaded string
	body              []byte
}

// pypiFixture serves a PEP 691 index of one project with the given files.
func pypiFixture(t *testing.T, name string, files []fixtureFile) *httptest.Server {
	mux := http.NewServeMux()
	var srv *httptest.Server
	mux.HandleFunc("/simple/"+name+"/", func(w http.ResponseWriter, r *http.Request) {
		var fs []map[string]any
		var versions []string
		for _, f := range files {
			fn := fmt.Sprintf("%s-%s-py3-none-any.whl", strings.ReplaceAll(name, "-", "_"), f.version)
			sum := sha256.Sum256(f.body)
			fs = append(fs, map[string]any{"filename": fn, "url": srv.URL + "/files/" + fn,
				"hashes": map[string]string{"sha256": hex.EncodeToString(sum[:])}, "upload-time": f.uploaded})
			versions = append(versions, f.version)
		}
		w.Header().Set("Content-Type", "application/vnd.pypi.simple.v1+json")
		json.NewEncoder(w).Encode(map[string]any{"meta": map[string]string{"api-version": "1.1"}, "name": name, "files": fs, "versions": versions})
	})
	mux.HandleFunc("/files/", func(w http.ResponseWriter, r *http.Request) {
		for _, f := range files {
			if strings.HasSuffix(r.URL.Path, "-"+f.version+"-py3-none-any.whl") {
				w.Write(f.body)
				return
			}
		}
		http.NotFound(w, r)
	})
	mux.HandleFunc("/", http.NotFound)
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func str(s string) *string { return &s }

func liteCandidate(id string, eco schemas.Ecosystem, project, gold map[string]string) schemas.Candidate {
	c := schemas.Candidate{
		Ident: schemas.Ident{InstanceID: id},
		Set:   schemas.SourceLite,
		Spec: schemas.Spec{
			CreatedAt:    "2023-05-01T00:00:00Z",
			RegistryDate: "2023-06-01T00:00:00Z", Ecosystem: eco,
		},
	}
	parts := strings.SplitN(strings.TrimPrefix(id, "envgap__"), "__", 2)
	repo := parts[0] + "/" + parts[1][:strings.LastIndex(parts[1], "-")]
	fmt.Sscanf(parts[1][strings.LastIndex(parts[1], "-")+1:], "%d", &c.IssueNumber)
	c.Repo = repo
	for p, b := range project {
		c.ProjectFiles = append(c.ProjectFiles, schemas.File{Path: p, Content: str(b)})
	}
	for p, b := range gold {
		c.GoldFiles = append(c.GoldFiles, schemas.File{Path: p, Content: str(b)})
	}
	return c
}

// countingRunner counts container runs (not the egress door's one read of an image's
// package sources).
type countingRunner struct {
	core.Runner
	runs atomic.Int64
}

func (c *countingRunner) Run(ctx context.Context, spec sandbox.Spec) (*sandbox.Result, error) {
	if spec.Labels[egress.ProbeLabel] == "" {
		c.runs.Add(1)
	}
	return c.Runner.Run(ctx, spec)
}

func TestVerifyPythonAgainstDateLimitedIndex(t *testing.T) {
	st, _ := catalog.Open(t.TempDir())
	fix := pypiFixture(t, "demo-pkg", []fixtureFile{
		{"1.0", "2023-01-01T00:00:00.000000Z", wheel(t, "demo-pkg", "1.0", "VALUE = 1\n")},
		{"2.0", "2023-09-01T00:00:00.000000Z", wheel(t, "demo-pkg", "2.0", "VALUE = 2\n")},
	})
	sess := openEnv(t, st, fix.URL+"/simple/")
	run := "python3 -c 'import demo_pkg; print(\"value\", demo_pkg.VALUE)'"
	recipe := func(c *schemas.Candidate) {
		c.ResolveCommand = "pip install -r requirements.txt"
		c.ReproCommand = "pip install -r requirements.txt && " + run
		c.RunCommand = run
	}
	// The requirement names a version published after the cut-off: the index cannot
	// satisfy it; pinning the old one fixes it.
	broken := liteCandidate("envgap__claude-code__python-t1-1", schemas.EcosystemPython,
		map[string]string{"requirements.txt": "demo-pkg==2.0\n"}, map[string]string{"requirements.txt": "demo-pkg==1.0\n"})
	recipe(&broken)
	broken.ExpectedFailureRegex = "No matching distribution found for demo-pkg==2\\.0"
	// Already works: nothing to repair.
	works := liteCandidate("envgap__claude-code__python-t1-2", schemas.EcosystemPython,
		map[string]string{"requirements.txt": "demo-pkg==1.0\n"}, map[string]string{"requirements.txt": "demo-pkg==1.0\n"})
	recipe(&works)
	works.ExpectedFailureRegex = "No matching distribution"
	// The fix does not make it run.
	badFix := liteCandidate("envgap__claude-code__python-t1-3", schemas.EcosystemPython,
		map[string]string{"requirements.txt": "demo-pkg==2.0\n"}, map[string]string{"requirements.txt": "demo-pkg==3.0\n"})
	recipe(&badFix)
	badFix.ExpectedFailureRegex = "No matching distribution found for demo-pkg==2\\.0"
	// The failure is not the expected one.
	wrong := liteCandidate("envgap__claude-code__python-t1-4", schemas.EcosystemPython,
		map[string]string{"requirements.txt": "demo-pkg==2.0\n"}, map[string]string{"requirements.txt": "demo-pkg==1.0\n"})
	recipe(&wrong)
	wrong.ExpectedFailureRegex = "Could not build wheels"
	// The failure reproduces but there is no fix: a reproduction, not a verdict.
	noFix := liteCandidate("envgap__claude-code__python-t1-5", schemas.EcosystemPython,
		map[string]string{"requirements.txt": "demo-pkg==2.0\n"}, nil)
	recipe(&noFix)
	noFix.ExpectedFailureRegex = broken.ExpectedFailureRegex
	if _, err := st.AddCandidateSet("test", "test", []schemas.Candidate{broken, works, badFix, wrong, noFix}, nil); err != nil {
		t.Fatal(err)
	}
	counter := &countingRunner{Runner: sess.Stage.Cores[0].Runner}
	sess.Stage.Cores[0].Runner = counter
	ctx := context.Background()
	rep, err := sess.Stage.Run(ctx, Options{Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]schemas.Outcome{broken.InstanceID: schemas.OutcomeVerified, works.InstanceID: schemas.OutcomeAlreadyWorks,
		badFix.InstanceID: schemas.OutcomeNotReproduced, wrong.InstanceID: schemas.OutcomeNotReproduced,
		noFix.InstanceID: schemas.OutcomeNotChecked}
	for _, r := range rep.Results {
		if r.Error != "" || r.Outcome != want[r.InstanceID] {
			t.Errorf("%s: got %s (%s) %s, want %s", r.InstanceID, r.Outcome, r.Reason, r.Error, want[r.InstanceID])
		}
	}
	v, _, err := st.Verdict(broken.InstanceID)
	if err != nil {
		t.Fatal(err)
	}
	var after schemas.Run
	if err := st.GetJSON(v.After[0], &after); err != nil {
		t.Fatal(err)
	}
	has := func(ds schemas.DepSet, name, spec string) bool {
		for _, d := range ds.Deps {
			if d.Name == name && (spec == "" || d.Spec == spec) {
				return true
			}
		}
		return false
	}
	// The run says which user namespace its container had: the engine's.
	if eng, ok := counter.Runner.(*sandbox.Engine); !ok || after.UserNamespace != eng.UserNS().Mode {
		t.Errorf("the run's user_namespace %q; the runner %T", after.UserNamespace, counter.Runner)
	}
	if !has(after.D1, "demo-pkg", "==1.0") || !has(after.D2, "demo-pkg", "1.0") || !has(after.D3, "demo-pkg", "") {
		t.Errorf("dependency layers: D1 %+v\nD2 %+v\nD3 %+v", after.D1, after.D2, after.D3)
	}
	var reg registry.Record
	regBytes, _ := st.Get(after.Registry)
	json.Unmarshal(regBytes, &reg)
	hid := false
	for _, e := range reg.Hidden {
		hid = hid || (e.Package == "demo-pkg" && e.Version == "2.0")
	}
	if !hid {
		t.Errorf("the registry record does not show demo-pkg 2.0 hidden: %+v", reg)
	}
	if _, _, err := st.Verdict(noFix.InstanceID); !errors.Is(err, data.ErrNotFound) {
		t.Errorf("a reproduction without a fix left a verdict: %v", err)
	}
	if _, err := st.Ref(data.RefReproductions + noFix.InstanceID); err != nil {
		t.Errorf("no reproduction recorded: %v", err)
	}
	if s, _ := st.CurrentOutcome(noFix); s.Outcome != schemas.OutcomeNotChecked || s.Reason != catalog.ReasonReproducedNoFix {
		t.Errorf("current outcome %+v", s)
	}
	runs := counter.runs.Load()
	if runs != 10 {
		t.Errorf("%d container runs for 5 candidates, want 10", runs)
	}
	// Unchanged inputs: verifying again runs no container.
	ids := []string{broken.InstanceID, works.InstanceID, badFix.InstanceID, wrong.InstanceID, noFix.InstanceID}
	rep2, err := sess.Stage.Run(ctx, Options{IDs: ids, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if counter.runs.Load() != runs || rep2.Cached != 5 {
		t.Errorf("re-verify ran %d containers, %d cached; want 0 and 5", counter.runs.Load()-runs, rep2.Cached)
	}
}

func TestVerifyRefusesEscapingFixBeforeAnyContainer(t *testing.T) {
	st, _ := catalog.Open(t.TempDir())
	sess := openEnv(t, st, "")
	c := liteCandidate("envgap__codex__javascript-t1-5", schemas.EcosystemJavaScript,
		map[string]string{"package.json": "{}", "link": "x"}, nil)
	c.GoldFiles = []schemas.File{{Path: "../outside.txt", Content: str("x")}}
	c.ResolveCommand, c.ReproCommand, c.RunCommand = "true", "false", "true"
	if _, err := st.AddCandidateSet("test", "test", []schemas.Candidate{c}, nil); err != nil {
		t.Fatal(err)
	}
	counter := &countingRunner{Runner: sess.Stage.Cores[0].Runner}
	sess.Stage.Cores[0].Runner = counter
	// The before side runs first: stop the test at the overlay, by asking for the after side.
	_, err := sess.Stage.Try(context.Background(), c.InstanceID, TryOptions{Fix: "gold"})
	if !errors.Is(err, core.ErrOverlay) {
		t.Fatalf("got %v, want an overlay refusal", err)
	}
	if counter.runs.Load() != 0 {
		t.Errorf("a container ran for a refused overlay")
	}
}

// failingRunner is an engine that disappears mid-run.
type failingRunner struct{ core.Runner }

func (failingRunner) Run(ctx context.Context, spec sandbox.Spec) (*sandbox.Result, error) {
	return nil, errors.New("engine connection reset")
}

func TestInfraFaultLeavesNoVerdict(t *testing.T) {
	st, _ := catalog.Open(t.TempDir())
	sess := openEnv(t, st, "")
	c := liteCandidate("envgap__codex__javascript-t1-6", schemas.EcosystemJavaScript,
		map[string]string{"package.json": "{}"}, map[string]string{"package.json": "{ }"})
	c.ResolveCommand, c.ReproCommand, c.RunCommand = "true", "false", "true"
	st.AddCandidateSet("test", "test", []schemas.Candidate{c}, nil)
	sess.Stage.Cores[0].Runner = failingRunner{sess.Stage.Cores[0].Runner}
	rep, err := sess.Stage.Run(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed != 1 || !rep.Results[0].Infra {
		t.Fatalf("report %+v", rep)
	}
	if _, _, err := st.Verdict(c.InstanceID); !errors.Is(err, data.ErrNotFound) {
		t.Errorf("an infrastructure fault left a verdict: %v", err)
	}
	if s, _ := st.CurrentOutcome(c); s.Outcome != schemas.OutcomeNotChecked {
		t.Errorf("outcome %s, want not_checked", s.Outcome)
	}
}
