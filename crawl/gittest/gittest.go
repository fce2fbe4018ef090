// Package gittest builds small local git repositories for tests, with fixed authors and
// dates so that commit hashes are the same on every run, configured so that any reachable
// commit can be fetched by hash through file:// (uploadpack.allowReachableSHA1InWant).
package gittest

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Repo is a repository under construction.
type Repo struct {
	Dir string
	r   *git.Repository
	t   testing.TB
}

// Init creates a non-bare repository in dir whose default branch is main.
func Init(t testing.TB, dir string) *Repo {
	t.Helper()
	r, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")},
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := r.Config()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Raw.Section("uploadpack").SetOption("allowReachableSHA1InWant", "true")
	if err := r.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	return &Repo{Dir: dir, r: r, t: t}
}

// Commit makes a commit whose tree is parent's (none when parent is "") with files
// written (nil content: deleted), and returns its hash. Extra parents make a merge
// commit. The author and committer are fixed; when sets both dates (keep it in UTC).
func (r *Repo) Commit(parent string, when time.Time, msg string, files map[string]*string, extraParents ...string) string {
	r.t.Helper()
	wt, err := r.r.Worktree()
	if err != nil {
		r.t.Fatal(err)
	}
	if parent != "" {
		if err := wt.Checkout(&git.CheckoutOptions{Hash: plumbing.NewHash(parent), Force: true}); err != nil {
			r.t.Fatal(err)
		}
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		full := filepath.Join(r.Dir, filepath.FromSlash(p))
		if files[p] == nil {
			if err := os.Remove(full); err != nil {
				r.t.Fatal(err)
			}
			if _, err := wt.Remove(p); err != nil {
				r.t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(*files[p]), 0o644); err != nil {
			r.t.Fatal(err)
		}
		if _, err := wt.Add(p); err != nil {
			r.t.Fatal(err)
		}
	}
	sig := &object.Signature{Name: "Envgap Test", Email: "test@envgap.invalid", When: when.UTC()}
	var parents []plumbing.Hash
	if parent != "" {
		parents = append(parents, plumbing.NewHash(parent))
	}
	for _, p := range extraParents {
		parents = append(parents, plumbing.NewHash(p))
	}
	h, err := wt.Commit(msg+"\n", &git.CommitOptions{Author: sig, Committer: sig, Parents: parents, AllowEmptyCommits: true})
	if err != nil {
		r.t.Fatal(err)
	}
	return h.String()
}

// SetRef points a ref (e.g. refs/heads/main, refs/pull/3/head) at a commit. Setting
// refs/heads/main also points HEAD at main again, as on a server (commits detach it).
func (r *Repo) SetRef(name, commit string) {
	r.t.Helper()
	if err := r.r.Storer.SetReference(plumbing.NewHashReference(plumbing.ReferenceName(name), plumbing.NewHash(commit))); err != nil {
		r.t.Fatal(err)
	}
	if name == "refs/heads/main" {
		head := plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName("main"))
		if err := r.r.Storer.SetReference(head); err != nil {
			r.t.Fatal(err)
		}
	}
}

// S returns a pointer to s, for file contents.
func S(s string) *string { return &s }
