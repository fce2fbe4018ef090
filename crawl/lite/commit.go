package lite

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/envgap/envgap/schemas"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// The fixed identity and message of every base commit.
const (
	CommitAuthorName  = schemas.BaseCommitAuthorName
	CommitAuthorEmail = schemas.BaseCommitAuthorEmail
	CommitMessage     = schemas.BaseCommitMessage
	CommitBranch      = "main"
)

// BaseCommit returns the hash of the one commit made from a project's files: every file
// mode 100644, author and committer "envgap <envgap@invalid>" at createdAt in UTC, the
// message "project as written\n", no parent. The same files and time always give the same
// hash, and it equals what the git CLI makes from the same inputs (see doc.go).
//
// It is schemas.LiteBaseCommit, which validation uses too; Materialize writes the same
// commit with go-git, and the tests check both against the git CLI.
func BaseCommit(files []schemas.File, createdAt time.Time) (string, error) {
	return schemas.LiteBaseCommit(files, createdAt)
}

// Materialize writes the base commit of a project into dir, which must not exist or be
// empty: a git repository whose branch main (checked out) holds the one commit BaseCommit
// names, with the files in the worktree and a clean index. It returns the commit hash.
func Materialize(dir string, files []schemas.File, createdAt time.Time) (string, error) {
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return "", fmt.Errorf("materialize base commit: %s is not empty; give a new or empty directory", dir)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("materialize base commit: %w", err)
	}
	repo, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName(CommitBranch)},
	})
	if err != nil {
		return "", fmt.Errorf("materialize base commit: init %s: %w", dir, err)
	}
	h, err := writeCommit(repo.Storer, files, createdAt)
	if err != nil {
		return "", err
	}
	ref := plumbing.NewHashReference(plumbing.NewBranchReferenceName(CommitBranch), h)
	if err := repo.Storer.SetReference(ref); err != nil {
		return "", fmt.Errorf("materialize base commit: set %s: %w", ref.Name(), err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		return "", fmt.Errorf("materialize base commit: %w", err)
	}
	if err := wt.Reset(&git.ResetOptions{Commit: h, Mode: git.HardReset}); err != nil {
		return "", fmt.Errorf("materialize base commit: check out %s: %w", h, err)
	}
	return h.String(), nil
}

// writeCommit stores the blobs, trees and the commit of a project and returns the commit.
func writeCommit(st storer.EncodedObjectStorer, files []schemas.File, createdAt time.Time) (plumbing.Hash, error) {
	if createdAt.IsZero() {
		return plumbing.ZeroHash, errors.New("base commit: created_at is not set")
	}
	root, err := buildTree(files)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	treeHash, err := root.store(st)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	sig := object.Signature{Name: CommitAuthorName, Email: CommitAuthorEmail, When: createdAt.UTC()}
	c := &object.Commit{Author: sig, Committer: sig, Message: CommitMessage, TreeHash: treeHash}
	o := st.NewEncodedObject()
	if err := c.Encode(o); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("base commit: encode commit: %w", err)
	}
	h, err := st.SetEncodedObject(o)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("base commit: store commit: %w", err)
	}
	return h, nil
}

// dirNode is one directory of a project while its tree is built.
type dirNode struct {
	files map[string]string
	dirs  map[string]*dirNode
}

func newDir() *dirNode { return &dirNode{files: map[string]string{}, dirs: map[string]*dirNode{}} }

func buildTree(files []schemas.File) (*dirNode, error) {
	root := newDir()
	for i, f := range files {
		if err := schemas.CheckRelPath(f.Path); err != nil {
			return nil, fmt.Errorf("base commit: file %d: %w", i, err)
		}
		if f.Content == nil {
			return nil, fmt.Errorf("base commit: %s has no content (project files are never deletions)", f.Path)
		}
		parts := strings.Split(f.Path, "/")
		d := root
		for _, p := range parts[:len(parts)-1] {
			if _, clash := d.files[p]; clash {
				return nil, fmt.Errorf("base commit: %s is under %s, which is a file", f.Path, p)
			}
			next, ok := d.dirs[p]
			if !ok {
				next = newDir()
				d.dirs[p] = next
			}
			d = next
		}
		name := parts[len(parts)-1]
		if _, dup := d.files[name]; dup {
			return nil, fmt.Errorf("base commit: %s is given twice", f.Path)
		}
		if _, clash := d.dirs[name]; clash {
			return nil, fmt.Errorf("base commit: %s is both a file and a directory", f.Path)
		}
		d.files[name] = *f.Content
	}
	return root, nil
}

func (d *dirNode) store(st storer.EncodedObjectStorer) (plumbing.Hash, error) {
	var entries []object.TreeEntry
	for name, content := range d.files {
		o := st.NewEncodedObject()
		o.SetType(plumbing.BlobObject)
		w, err := o.Writer()
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if _, err := w.Write([]byte(content)); err != nil {
			return plumbing.ZeroHash, err
		}
		if err := w.Close(); err != nil {
			return plumbing.ZeroHash, err
		}
		h, err := st.SetEncodedObject(o)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("base commit: store blob: %w", err)
		}
		entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h})
	}
	for name, sub := range d.dirs {
		h, err := sub.store(st)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
	}
	sort.Sort(object.TreeEntrySorter(entries))
	t := &object.Tree{Entries: entries}
	o := st.NewEncodedObject()
	if err := t.Encode(o); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("base commit: encode tree: %w", err)
	}
	h, err := st.SetEncodedObject(o)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("base commit: store tree: %w", err)
	}
	return h, nil
}
