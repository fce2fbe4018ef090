package core

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/envgap/envgap/core/registry"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/schemas"
)

// okRunner is a Runner whose every step exits 0, in the user namespace mode userns; it
// keeps the files it was given.
type okRunner struct {
	files  []sandbox.File
	userns string
}

func (r *okRunner) ImageID(context.Context, string) (string, error) {
	return "sha256:" + strings.Repeat("cd", 32), nil
}

func (r *okRunner) Run(_ context.Context, spec sandbox.Spec) (*sandbox.Result, error) {
	r.files = spec.Files
	res := &sandbox.Result{ImageID: "sha256:" + strings.Repeat("cd", 32), Collected: map[string][]byte{}, UserNS: r.userns}
	for _, st := range spec.Steps {
		res.Steps = append(res.Steps, sandbox.StepResult{Name: st.Name, Command: st.Command, OutputSHA256: schemas.Hash(nil).Hex()})
	}
	return res, nil
}

// The project's links that are not written into the container are recorded in the run;
// a run without such links stores no field for them (old runs read the same).
func TestRunRecordsSkippedLinks(t *testing.T) {
	st, err := data.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := registry.New(registry.Options{NPMUpstream: "http://127.0.0.1:1/"})
	if err != nil {
		t.Fatal(err)
	}
	r := &okRunner{}
	c := &Core{Runner: r, Proxy: proxy, ProxyURL: "http://127.0.0.1:1", Store: st}
	spec := Spec{InstanceID: "envgap__a__b-1", Side: SideBefore, Cutoff: schemas.MustParseCutoff("2026-11-30"),
		Recipe: schemas.Recipe{Ecosystem: schemas.EcosystemPython, ResolveCommand: "true", ReproCommand: "true", RunCommand: "true"},
		Project: []File{
			{Path: "main.py", Content: []byte("print(1)\n"), Mode: 0o644},
			{Path: "z-out", Link: "/etc/passwd"},
			{Path: "alias.py", Link: "main.py"},
			{Path: "a-gone", Link: "nowhere.py"},
		}}
	run, d, err := c.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a-gone", "z-out"}; !slices.Equal(run.SkippedLinks, want) {
		t.Errorf("SkippedLinks = %v, want %v", run.SkippedLinks, want)
	}
	var stored schemas.Run
	if err := st.GetJSON(d, &stored); err != nil || !slices.Equal(stored.SkippedLinks, run.SkippedLinks) {
		t.Errorf("stored run: %v %v", stored.SkippedLinks, err)
	}
	if len(r.files) != 2 {
		t.Errorf("files written: %+v", r.files)
	}
	spec.Project = spec.Project[:1]
	run, _, err = c.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(run)
	if run.SkippedLinks != nil || strings.Contains(string(b), "skipped_links") {
		t.Errorf("a run without skipped links writes the field: %s", b)
	}
}

// The run record says which user namespace its container had (the sandbox's result).
func TestRunRecordsTheUserNamespace(t *testing.T) {
	st, err := data.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := registry.New(registry.Options{NPMUpstream: "http://127.0.0.1:1/"})
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{InstanceID: "envgap__a__b-1", Side: SideBefore, Cutoff: schemas.MustParseCutoff("2026-11-30"),
		Recipe:  schemas.Recipe{Ecosystem: schemas.EcosystemPython, ResolveCommand: "true", ReproCommand: "true", RunCommand: "true"},
		Project: []File{{Path: "main.py", Content: []byte("print(1)\n"), Mode: 0o644}}}
	for _, mode := range []string{sandbox.UserNSAuto, sandbox.UserNSNone} {
		c := &Core{Runner: &okRunner{userns: mode}, Proxy: proxy, ProxyURL: "http://127.0.0.1:1", Store: st}
		run, d, err := c.Run(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		var stored map[string]any
		if err := st.GetJSON(d, &stored); err != nil || run.UserNamespace != mode || stored["user_namespace"] != mode {
			t.Errorf("mode %s: the run says %q, stored %v (%v)", mode, run.UserNamespace, stored["user_namespace"], err)
		}
	}
}
