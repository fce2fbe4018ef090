package gitfetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// DefaultURLTemplate is where GitHub serves repositories.
const DefaultURLTemplate = "https://github.com/{repo}.git"

// ErrCommitNotFound is returned when the server does not have the commit or will not
// serve it by hash (e.g. a pull request head that was force-pushed away).
var ErrCommitNotFound = errors.New("commit not found on the remote")

var commitRe = regexp.MustCompile(`^[0-9a-f]{40}$`)

// URL expands a template's {repo} (owner/name), {owner} and {name} for repo.
func URL(template, repo string) (string, error) {
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" {
		return "", fmt.Errorf("git url: repo %q is not owner/name", repo)
	}
	if !strings.Contains(template, "{repo}") && !(strings.Contains(template, "{owner}") && strings.Contains(template, "{name}")) {
		return "", fmt.Errorf("git url template %q: use {repo}, or {owner} and {name}, e.g. %s", template, DefaultURLTemplate)
	}
	r := strings.NewReplacer("{repo}", repo, "{owner}", owner, "{name}", name)
	return r.Replace(template), nil
}

// Checkout makes dir (absent or empty) a git repository whose only commit is commit,
// fetched alone with depth 1 from gitURL, with the work tree checked out and HEAD
// detached at it. No remote is configured and no ref other than HEAD is kept, so the
// repository holds nothing of the later history. It returns ErrCommitNotFound (wrapped)
// when the server does not have the commit.
func Checkout(ctx context.Context, gitURL, commit, dir string) error {
	if !commitRe.MatchString(commit) {
		return fmt.Errorf("checkout: %q is not a 40-hex commit id", commit)
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("checkout into %s: directory is not empty", dir)
	}
	r, err := git.PlainInit(dir, false)
	if err != nil {
		return fmt.Errorf("checkout: init %s: %w", dir, err)
	}
	if err := fetch(ctx, r, gitURL, commit); err != nil {
		return fmt.Errorf("checkout %s: %w", commit, err)
	}
	wt, err := r.Worktree()
	if err != nil {
		return fmt.Errorf("checkout %s: %w", commit, err)
	}
	if err := wt.Checkout(&git.CheckoutOptions{Hash: plumbing.NewHash(commit), Force: true}); err != nil {
		return fmt.Errorf("checkout %s: %w", commit, err)
	}
	if err := r.Storer.RemoveReference(tempRef(commit)); err != nil {
		return fmt.Errorf("checkout %s: %w", commit, err)
	}
	return nil
}

func tempRef(commit string) plumbing.ReferenceName {
	return plumbing.ReferenceName("refs/envgap/fetch/" + commit)
}

// fetch fetches commit alone (depth 1) into r, unless r already has it.
func fetch(ctx context.Context, r *git.Repository, gitURL, commit string) error {
	h := plumbing.NewHash(commit)
	if _, err := r.CommitObject(h); err == nil {
		return nil
	}
	rem := git.NewRemote(r.Storer, &config.RemoteConfig{Name: "envgap-fetch", URLs: []string{gitURL}})
	spec := config.RefSpec(commit + ":" + tempRef(commit).String())
	var err error
	// A transport that breaks off (a pipe or connection closed under the client) is
	// tried again, twice, after a pause: it says nothing about the commit.
	for attempt, pause := 0, 200*time.Millisecond; ; attempt, pause = attempt+1, pause*4 {
		err = rem.FetchContext(ctx, &git.FetchOptions{RefSpecs: []config.RefSpec{spec}, Depth: 1, Tags: git.NoTags})
		if err == nil || errors.Is(err, git.NoErrAlreadyUpToDate) || attempt == 2 || !transient(err) || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
	}
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if isNotFound(err) {
			return fmt.Errorf("fetching from %s: %w (%v)", gitURL, ErrCommitNotFound, err)
		}
		return fmt.Errorf("fetching from %s: %w", gitURL, err)
	}
	if _, err := r.CommitObject(h); err != nil {
		return fmt.Errorf("fetching from %s: %w", gitURL, ErrCommitNotFound)
	}
	return nil
}

// transient reports whether a fetch error is the transport breaking off.
func transient(err error) bool {
	s := strings.ToLower(err.Error())
	for _, m := range []string{"broken pipe", "connection reset", "unexpected eof", "use of closed", "early eof"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

func isNotFound(err error) bool {
	if errors.Is(err, git.ErrExactSHA1NotSupported) || errors.Is(err, plumbing.ErrObjectNotFound) {
		return true
	}
	s := strings.ToLower(err.Error())
	for _, m := range []string{"not our ref", "unadvertised object", "object not found", "no such remote ref", "not a valid object", "bad object"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// Snapshots is a bare repository that collects single commits of one remote, each
// fetched alone with depth 1, for reading their trees and files.
type Snapshots struct {
	url  string
	repo *git.Repository
	// Fetches counts the fetches that went to the remote.
	Fetches int
}

// Open makes dir (absent or empty) a bare repository for commits of gitURL. The caller
// removes dir when done.
func Open(dir, gitURL string) (*Snapshots, error) {
	r, err := git.PlainInit(dir, true)
	if err != nil {
		return nil, fmt.Errorf("snapshots: init %s: %w", dir, err)
	}
	return &Snapshots{url: gitURL, repo: r}, nil
}

// Fetch fetches commit (alone, depth 1) unless it is already present.
func (s *Snapshots) Fetch(ctx context.Context, commit string) error {
	if !commitRe.MatchString(commit) {
		return fmt.Errorf("fetch: %q is not a 40-hex commit id", commit)
	}
	if _, err := s.repo.CommitObject(plumbing.NewHash(commit)); err == nil {
		return nil
	}
	s.Fetches++
	if err := fetch(ctx, s.repo, s.url, commit); err != nil {
		return fmt.Errorf("fetch %s: %w", commit, err)
	}
	return nil
}

func (s *Snapshots) tree(commit string) (*object.Tree, error) {
	c, err := s.repo.CommitObject(plumbing.NewHash(commit))
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w (fetch it first)", commit, err)
	}
	t, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("commit %s: tree: %w", commit, err)
	}
	return t, nil
}

// Paths lists every file path (blobs and symlinks, not submodules) of commit's tree,
// sorted.
func (s *Snapshots) Paths(commit string) ([]string, error) {
	t, err := s.tree(commit)
	if err != nil {
		return nil, err
	}
	w := object.NewTreeWalker(t, true, nil)
	defer w.Close()
	var out []string
	for {
		name, e, err := w.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("commit %s: walking the tree: %w", commit, err)
		}
		if e.Mode == filemode.Dir || e.Mode == filemode.Submodule {
			continue
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out, nil
}

// File is a file read at a commit.
type File struct {
	Content []byte
	Binary  bool
}

// ReadFile returns the file at path in commit, or ok false when the path does not exist.
func (s *Snapshots) ReadFile(commit, path string) (f File, ok bool, err error) {
	t, err := s.tree(commit)
	if err != nil {
		return File{}, false, err
	}
	of, err := t.File(path)
	if errors.Is(err, object.ErrFileNotFound) || errors.Is(err, object.ErrDirectoryNotFound) || errors.Is(err, object.ErrEntryNotFound) {
		return File{}, false, nil
	}
	if err != nil {
		return File{}, false, fmt.Errorf("commit %s: %s: %w", commit, path, err)
	}
	rd, err := of.Reader()
	if err != nil {
		return File{}, false, fmt.Errorf("commit %s: %s: %w", commit, path, err)
	}
	defer rd.Close()
	b, err := io.ReadAll(rd)
	if err != nil {
		return File{}, false, fmt.Errorf("commit %s: %s: %w", commit, path, err)
	}
	return File{Content: b, Binary: bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0}, true, nil
}

// Diff returns the unified diff (git's format) from commit from to commit to, limited to
// paths; both commits must have been fetched.
func (s *Snapshots) Diff(ctx context.Context, from, to string, paths []string) (string, error) {
	a, err := s.tree(from)
	if err != nil {
		return "", err
	}
	b, err := s.tree(to)
	if err != nil {
		return "", err
	}
	changes, err := object.DiffTreeWithOptions(ctx, a, b, &object.DiffTreeOptions{})
	if err != nil {
		return "", fmt.Errorf("diff %s..%s: %w", from, to, err)
	}
	want := map[string]bool{}
	for _, p := range paths {
		want[p] = true
	}
	var keep object.Changes
	for _, c := range changes {
		if want[c.From.Name] || want[c.To.Name] {
			keep = append(keep, c)
		}
	}
	if len(keep) == 0 {
		return "", nil
	}
	sort.Sort(keep)
	p, err := keep.PatchContext(ctx)
	if err != nil {
		return "", fmt.Errorf("diff %s..%s: %w", from, to, err)
	}
	return PatchText(p), nil
}

// TreeFile is one file of a commit's tree.
type TreeFile struct {
	Path    string
	Content []byte      // empty for symbolic links
	Mode    os.FileMode // 0o644 or 0o755; os.ModeSymlink|0o777 for links
	Link    string      // a symbolic link's target
}

// ReadCommit fetches commit alone (depth 1) from gitURL into a temporary repository under
// tmpDir (empty: the system's), and returns every file of its tree (submodules left out)
// sorted by path, with modes and link targets. Nothing of the later history is fetched.
func ReadCommit(ctx context.Context, gitURL, commit, tmpDir string) ([]TreeFile, error) {
	dir, err := os.MkdirTemp(tmpDir, "envgap-commit-*")
	if err != nil {
		return nil, fmt.Errorf("read commit: %w", err)
	}
	defer os.RemoveAll(dir)
	s, err := Open(dir, gitURL)
	if err != nil {
		return nil, err
	}
	if err := s.Fetch(ctx, commit); err != nil {
		return nil, err
	}
	t, err := s.tree(commit)
	if err != nil {
		return nil, err
	}
	var out []TreeFile
	err = t.Files().ForEach(func(f *object.File) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		rd, err := f.Reader()
		if err != nil {
			return err
		}
		b, err := io.ReadAll(rd)
		rd.Close()
		if err != nil {
			return err
		}
		tf := TreeFile{Path: f.Name, Mode: 0o644}
		switch f.Mode {
		case filemode.Symlink:
			tf.Mode, tf.Link = os.ModeSymlink|0o777, string(b)
		case filemode.Executable:
			tf.Mode, tf.Content = 0o755, b
		default:
			tf.Content = b
		}
		out = append(out, tf)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", commit, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// PatchText writes a patch in the card's form: git's unified diff ("diff --git" headers,
// mode, rename, new and deleted file lines, three lines of context) without the "index"
// lines of blob hashes and with bare hunk headers ("@@ -72,7 +72,7 @@", no heading after
// them). `git apply` and `patch -p1` apply it as they apply git's own output.
func PatchText(p *object.Patch) string {
	return CardPatch(p.String())
}

// CardPatch rewrites a git unified diff in the card's form (see PatchText).
func CardPatch(diff string) string {
	if diff == "" {
		return ""
	}
	lines := strings.SplitAfter(diff, "\n")
	var b strings.Builder
	b.Grow(len(diff))
	header := false // between "diff --git" and the first hunk
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "diff --git "):
			header = true
		case header && strings.HasPrefix(l, "index "):
			continue
		case strings.HasPrefix(l, "@@ "):
			header = false
			if end := strings.Index(l[3:], " @@"); end >= 0 {
				nl := ""
				if strings.HasSuffix(l, "\n") {
					nl = "\n"
				}
				l = l[:3+end+3] + nl
			}
		}
		b.WriteString(l)
	}
	return b.String()
}
