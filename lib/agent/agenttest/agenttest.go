// Package agenttest holds the fixtures of the agent protocol's tests (lib/agent and
// harness/run): a task, a materializer that makes its git checkout, and a runner that
// answers without a container.
package agenttest

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
)

func str(s string) *string { return &s }

// GitMaterialize is a materializer (agent.MaterializeFunc) that writes the task's project_files as one commit per entry of extra+1
// (extra > 0 leaves later history in the repository) and sets base_commit to the first.
func GitMaterialize(extra int) func(context.Context, *schemas.Task, string) error {
	return func(_ context.Context, t *schemas.Task, dir string) error {
		r, err := git.PlainInit(dir, false)
		if err != nil {
			return err
		}
		wt, _ := r.Worktree()
		for _, f := range t.ProjectFiles {
			p := filepath.Join(dir, f.Path)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(*f.Content), 0o644); err != nil {
				return err
			}
			wt.Add(f.Path)
		}
		sig := &object.Signature{Name: "t", Email: "t@invalid", When: time.Unix(1e9, 0)}
		h, err := wt.Commit("base", &git.CommitOptions{Author: sig, Committer: sig})
		if err != nil {
			return err
		}
		t.BaseCommit = h.String()
		for i := 0; i < extra; i++ {
			os.WriteFile(filepath.Join(dir, "later.txt"), []byte{byte('a' + i)}, 0o644)
			wt.Add("later.txt")
			if _, err := wt.Commit("later", &git.CommitOptions{Author: sig, Committer: sig}); err != nil {
				return err
			}
		}
		if extra > 0 {
			return wt.Reset(&git.ResetOptions{Commit: h, Mode: git.HardReset})
		}
		return nil
	}
}

// Task is a Repaired Python task whose reference fix pins x==1 in requirements.txt.
func Task() *schemas.Task {
	pr := int64(2)
	return &schemas.Task{
		Ident: schemas.Ident{InstanceID: "envgap__o__r-1"},
		Spec: schemas.Spec{
			Repo: "o/r", Ecosystem: schemas.EcosystemPython,
			ProblemStatement: "it does not install", FailureSignature: "No matching distribution", ReproCommand: "pip install -r requirements.txt",
			ResolveCommand: "pip install -r requirements.txt", RunCommand: "python3 app.py", RegistryDate: "2023-01-01T00:00:00Z",
			Patch:     "secret patch",
			GoldFiles: []schemas.File{{Path: "requirements.txt", Content: str("x==1\n")}},
			ProjectFiles: []schemas.File{{Path: "requirements.txt", Content: str("x==2\n")}, {Path: "app.py", Content: str("print(1)\n")},
				{Path: ".gitignore", Content: str("*.log\n")}},
		},
		Source: schemas.SourceRepaired,
		Origin: schemas.Origin{PullRequest: str("https://github.com/o/r/pull/2"), PRNumber: &pr},
	}
}

// FakeRunner is a core.SpecRunner that resolves a run when requirements.txt pins x==1.
type FakeRunner struct {
	Store *catalog.Catalog
	Runs  atomic.Int64 // runs asked for
}

func (f *FakeRunner) ImageID(context.Context, string) (string, error) { return "sha256:img", nil }
func (f *FakeRunner) RunSpec(_ context.Context, spec core.Spec, _ string) (*schemas.Run, schemas.Digest, bool, error) {
	f.Runs.Add(1)
	files, err := core.ApplyOverlay(spec.Project, spec.Overlay)
	if err != nil {
		return nil, schemas.Digest{}, false, err
	}
	ok := false
	for _, fl := range files {
		ok = ok || fl.Path == "requirements.txt" && string(fl.Content) == "x==1\n"
	}
	r := &schemas.Run{Kind: schemas.KindRun, InstanceID: spec.InstanceID, Resolved: ok, D1: schemas.DepSet{Deps: []schemas.Dependency{}}, D3: schemas.DepSet{Deps: []schemas.Dependency{}}}
	out, err := f.Store.Put([]byte("pip says no\n"))
	if err != nil {
		return nil, schemas.Digest{}, false, err
	}
	r.Steps = []schemas.StepRecord{{Name: core.StepResolve, Command: "pip install", Output: out}}
	if !ok {
		r.Steps[0].ExitCode = 1
	}
	d, err := f.Store.PutJSON(r)
	return r, d, false, err
}
