package harbor

import (
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/envgap/envgap/lib/agent"
	"github.com/envgap/envgap/schemas"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Project is a task's project at base_commit as the environment holds it: the files of the
// commit and a .git folder with that one commit and nothing later (loose objects, one
// branch, an index without file times, a shallow file when the commit has parents), in a
// form that depends on the commit alone.
type Project struct {
	// Files are the worktree's files and the .git folder's, sorted by path.
	Files []File
}

// Worktree returns the project's files without .git.
func (p *Project) Worktree() []File {
	var out []File
	for _, f := range p.Files {
		if f.Path != ".git" && !hasPrefixDir(f.Path, ".git") {
			out = append(out, f)
		}
	}
	return out
}

func hasPrefixDir(p, dir string) bool { return len(p) > len(dir) && p[:len(dir)+1] == dir+"/" }

// LoadProject materializes a task's project at base_commit (materialize, as envgap run's
// workspace is made) in a temporary folder and reads it back as a Project.
func LoadProject(ctx context.Context, t *schemas.Task, materialize agent.MaterializeFunc) (*Project, error) {
	tmp, err := os.MkdirTemp("", "envgap-harbor-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	dir := tmp + "/project"
	if err := materialize(ctx, t, dir); err != nil {
		return nil, fmt.Errorf("%s: project at base_commit: %w", t.InstanceID, err)
	}
	if err := agent.CheckHistory(dir, t.BaseCommit); err != nil {
		return nil, fmt.Errorf("%s: project at base_commit: %w", t.InstanceID, err)
	}
	return ReadProject(dir, t.BaseCommit)
}

// ReadProject reads commit base of the git repository in dir as a Project.
func ReadProject(dir, base string) (*Project, error) {
	r, err := git.PlainOpen(dir)
	if err != nil {
		return nil, err
	}
	h := plumbing.NewHash(base)
	commit, err := r.CommitObject(h)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", base, err)
	}
	p := &Project{}
	loose := map[plumbing.Hash]bool{}
	addObject := func(h plumbing.Hash) error {
		if loose[h] {
			return nil
		}
		loose[h] = true
		o, err := r.Storer.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return fmt.Errorf("object %s: %w", h, err)
		}
		rd, err := o.Reader()
		if err != nil {
			return err
		}
		defer rd.Close()
		body, err := io.ReadAll(rd)
		if err != nil {
			return err
		}
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		fmt.Fprintf(zw, "%s %d\x00", o.Type(), len(body))
		zw.Write(body)
		if err := zw.Close(); err != nil {
			return err
		}
		s := h.String()
		p.Files = append(p.Files, File{Path: ".git/objects/" + s[:2] + "/" + s[2:], Mode: 0o444, Content: z.Bytes()})
		return nil
	}
	if err := addObject(h); err != nil {
		return nil, err
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil, err
	}
	if err := addObject(tree.Hash); err != nil {
		return nil, err
	}
	idx := &index.Index{Version: 2}
	epoch := time.Unix(0, 0)
	walker := object.NewTreeWalker(tree, true, nil)
	defer walker.Close()
	for {
		name, e, err := walker.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if err := addObject(e.Hash); err != nil {
			return nil, err
		}
		if e.Mode == filemode.Dir {
			continue
		}
		if e.Mode == filemode.Submodule {
			return nil, fmt.Errorf("%s is a submodule: not supported in a Harbor task", name)
		}
		blob, err := r.BlobObject(e.Hash)
		if err != nil {
			return nil, err
		}
		rd, err := blob.Reader()
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(rd)
		rd.Close()
		if err != nil {
			return nil, err
		}
		f := File{Path: name, Mode: 0o644, Content: b}
		switch e.Mode {
		case filemode.Symlink:
			f = File{Path: name, Link: string(b)}
		case filemode.Executable:
			f.Mode = 0o755
		}
		p.Files = append(p.Files, f)
		idx.Entries = append(idx.Entries, &index.Entry{Hash: e.Hash, Name: name, Mode: e.Mode, Size: uint32(len(b)), CreatedAt: epoch, ModifiedAt: epoch})
	}
	sort.Slice(idx.Entries, func(i, j int) bool { return idx.Entries[i].Name < idx.Entries[j].Name })
	var ib bytes.Buffer
	if err := index.NewEncoder(&ib).Encode(idx); err != nil {
		return nil, fmt.Errorf("git index: %w", err)
	}
	p.Files = append(p.Files,
		File{Path: ".git/HEAD", Mode: 0o644, Content: []byte("ref: refs/heads/main\n")},
		File{Path: ".git/config", Mode: 0o644, Content: []byte("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n")},
		File{Path: ".git/refs/heads/main", Mode: 0o644, Content: []byte(base + "\n")},
		File{Path: ".git/index", Mode: 0o644, Content: ib.Bytes()},
	)
	if commit.NumParents() > 0 {
		p.Files = append(p.Files, File{Path: ".git/shallow", Mode: 0o644, Content: []byte(base + "\n")})
	}
	sort.Slice(p.Files, func(i, j int) bool { return p.Files[i].Path < p.Files[j].Path })
	return p, nil
}
