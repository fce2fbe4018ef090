package fakegithub

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing/fstest"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/google/go-github/v62/github"
)

// WorldFile is the name of a world's description in its folder.
const WorldFile = "world.json"

// World is a small GitHub: repositories with a git history, issues and pull requests,
// described in a folder (ReadWorld) as
//
//	world.json                     the description (the World type: repos, each with its
//	                               commits, branches, issues and pull requests)
//	<owner>/<name>/<files dir>/... the files a commit writes (its "files" folder), on top
//	                               of its first parent's tree
//	<owner>/<name>/<body file>     an issue's or pull request's body (Markdown)
//
// Build makes its repositories (bare, deterministic: fixed authors and dates give the same
// hashes every time) and renders what GitHub's REST and GraphQL APIs answer about them
// as fixtures in the layout New and NewHandler serve: the repository, its issues (pull
// requests included, as GitHub lists them), each issue, its pull requests and each one's
// files (from the git diff of base and head), the default branch's commits, and each pull
// request's GraphQL node (closingIssuesReferences from "closes").
type World struct {
	Repos []WorldRepo `json:"repos"`
	dir   string
}

// WorldRepo is one repository of a World.
type WorldRepo struct {
	FullName      string            `json:"full_name"`
	Description   string            `json:"description"`
	Language      string            `json:"language"`
	License       string            `json:"license"` // SPDX id; empty: none
	CreatedAt     string            `json:"created_at"`
	DefaultBranch string            `json:"default_branch"` // empty: main
	Commits       []WorldCommit     `json:"commits"`
	Branches      map[string]string `json:"branches"` // branch -> commit id
	Issues        []WorldIssue      `json:"issues"`
	Pulls         []WorldPull       `json:"pulls"`
}

// WorldCommit is one commit: its tree is its first parent's with the files of Files (a
// folder beside world.json, under the repository's owner/name) written and Delete removed.
type WorldCommit struct {
	ID      string   `json:"id"`
	Parents []string `json:"parents"`
	Date    string   `json:"date"`
	Author  string   `json:"author"` // "Name <email>"
	Message string   `json:"message"`
	Files   string   `json:"files"`
	Delete  []string `json:"delete"`
}

// WorldIssue is one issue.
type WorldIssue struct {
	Number    int    `json:"number"`
	Title     string `json:"title"`
	Body      string `json:"body"` // a file beside world.json, under owner/name
	User      string `json:"user"`
	CreatedAt string `json:"created_at"`
	ClosedAt  string `json:"closed_at"` // empty: open
}

// WorldPull is one pull request; it is listed among the issues too, as GitHub does.
type WorldPull struct {
	Number    int    `json:"number"`
	Title     string `json:"title"`
	Body      string `json:"body"` // a file, as WorldIssue's
	User      string `json:"user"`
	CreatedAt string `json:"created_at"`
	ClosedAt  string `json:"closed_at"`
	MergedAt  string `json:"merged_at"` // empty: not merged
	BaseRef   string `json:"base_ref"`  // empty: the default branch
	Base      string `json:"base"`      // commit ids
	Head      string `json:"head"`
	Merge     string `json:"merge"`
	HeadRef   string `json:"head_ref"`
	Closes    []int  `json:"closes"` // issues GitHub records it as closing
}

// ReadWorld reads a world's description from dir.
func ReadWorld(dir string) (*World, error) {
	b, err := os.ReadFile(filepath.Join(dir, WorldFile))
	if err != nil {
		return nil, fmt.Errorf("world: %w", err)
	}
	var w World
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("world %s: %w", filepath.Join(dir, WorldFile), err)
	}
	w.dir = dir
	return &w, nil
}

// Built is a World made real: its bare repositories under GitRoot (<owner>/<name>.git),
// the commit hash of every commit id (by "<owner>/<name>@<id>"), and the API fixtures.
type Built struct {
	GitRoot  string
	Commits  map[string]string
	Fixtures fs.FS
}

// Build makes the world's repositories under gitRoot (which must not hold them yet) and
// renders its fixtures.
func (w *World) Build(gitRoot string) (*Built, error) {
	b := &Built{GitRoot: gitRoot, Commits: map[string]string{}}
	fix := fstest.MapFS{}
	for i := range w.Repos {
		r := &w.Repos[i]
		if r.DefaultBranch == "" {
			r.DefaultBranch = "main"
		}
		shas, repo, err := w.buildRepo(r, filepath.Join(gitRoot, filepath.FromSlash(r.FullName)+".git"))
		if err != nil {
			return nil, fmt.Errorf("world: %s: %w", r.FullName, err)
		}
		for id, h := range shas {
			b.Commits[r.FullName+"@"+id] = h
		}
		if err := w.render(fix, r, shas, repo); err != nil {
			return nil, fmt.Errorf("world: %s: %w", r.FullName, err)
		}
	}
	b.Fixtures = fix
	return b, nil
}

var authorRe = regexp.MustCompile(`^(.+?) <([^>]+)>$`)

func worldTime(field, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s %q: want an RFC 3339 time", field, s)
	}
	return t.UTC(), nil
}

// buildRepo writes the repository's objects and refs into a new bare repository.
func (w *World) buildRepo(r *WorldRepo, dir string) (map[string]string, *git.Repository, error) {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return nil, nil, fmt.Errorf("%s is not empty", dir)
	}
	repo, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{Bare: true,
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName(r.DefaultBranch)}})
	if err != nil {
		return nil, nil, err
	}
	cfg, err := repo.Config()
	if err != nil {
		return nil, nil, err
	}
	// GitHub serves any reachable commit by hash; git does when told so.
	cfg.Raw.Section("uploadpack").SetOption("allowReachableSHA1InWant", "true")
	cfg.Raw.Section("http").SetOption("uploadpack", "true")
	if err := repo.SetConfig(cfg); err != nil {
		return nil, nil, err
	}
	shas := map[string]string{}
	trees := map[string]map[string][]byte{}
	for _, c := range r.Commits {
		if _, dup := shas[c.ID]; dup || c.ID == "" {
			return nil, nil, fmt.Errorf("commit id %q empty or repeated", c.ID)
		}
		files := map[string][]byte{}
		var parents []plumbing.Hash
		for i, p := range c.Parents {
			h, ok := shas[p]
			if !ok {
				return nil, nil, fmt.Errorf("commit %s: parent %s is not an earlier commit", c.ID, p)
			}
			parents = append(parents, plumbing.NewHash(h))
			if i == 0 {
				for k, v := range trees[p] {
					files[k] = v
				}
			}
		}
		if c.Files != "" {
			root := filepath.Join(w.dir, filepath.FromSlash(r.FullName), filepath.FromSlash(c.Files))
			err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				rel, err := filepath.Rel(root, p)
				if err != nil {
					return err
				}
				b, err := os.ReadFile(p)
				files[filepath.ToSlash(rel)] = b
				return err
			})
			if err != nil {
				return nil, nil, fmt.Errorf("commit %s: %w", c.ID, err)
			}
		}
		for _, p := range c.Delete {
			if _, ok := files[p]; !ok {
				return nil, nil, fmt.Errorf("commit %s: deletes %s, which its parent does not have", c.ID, p)
			}
			delete(files, p)
		}
		tree, err := writeTree(repo.Storer, files)
		if err != nil {
			return nil, nil, fmt.Errorf("commit %s: %w", c.ID, err)
		}
		m := authorRe.FindStringSubmatch(c.Author)
		if m == nil {
			return nil, nil, fmt.Errorf("commit %s: author %q: want \"Name <email>\"", c.ID, c.Author)
		}
		when, err := worldTime("commit "+c.ID+" date", c.Date)
		if err != nil {
			return nil, nil, err
		}
		sig := object.Signature{Name: m[1], Email: m[2], When: when}
		co := &object.Commit{Author: sig, Committer: sig, Message: strings.TrimRight(c.Message, "\n") + "\n",
			TreeHash: tree, ParentHashes: parents}
		h, err := store(repo.Storer, co)
		if err != nil {
			return nil, nil, err
		}
		shas[c.ID], trees[c.ID] = h.String(), files
	}
	refs := map[string]string{}
	for br, id := range r.Branches {
		refs["refs/heads/"+br] = id
	}
	for _, p := range r.Pulls {
		refs[fmt.Sprintf("refs/pull/%d/head", p.Number)] = p.Head
	}
	if _, ok := r.Branches[r.DefaultBranch]; !ok {
		return nil, nil, fmt.Errorf("no branch %s (the default branch)", r.DefaultBranch)
	}
	for name, id := range refs {
		h, ok := shas[id]
		if !ok {
			return nil, nil, fmt.Errorf("%s: no commit %q", name, id)
		}
		if err := repo.Storer.SetReference(plumbing.NewHashReference(plumbing.ReferenceName(name), plumbing.NewHash(h))); err != nil {
			return nil, nil, err
		}
	}
	return shas, repo, nil
}

type encoder interface {
	Encode(plumbing.EncodedObject) error
}

func store(s storer.EncodedObjectStorer, o encoder) (plumbing.Hash, error) {
	obj := s.NewEncodedObject()
	if err := o.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.SetEncodedObject(obj)
}

// writeTree stores the blobs and trees of files and returns the root tree's hash.
func writeTree(s storer.EncodedObjectStorer, files map[string][]byte) (plumbing.Hash, error) {
	blobs := map[string]plumbing.Hash{}
	sub := map[string]map[string][]byte{}
	for p, b := range files {
		dir, rest, nested := strings.Cut(p, "/")
		if nested {
			if sub[dir] == nil {
				sub[dir] = map[string][]byte{}
			}
			sub[dir][rest] = b
			continue
		}
		obj := s.NewEncodedObject()
		obj.SetType(plumbing.BlobObject)
		wr, err := obj.Writer()
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if _, err := wr.Write(b); err != nil {
			return plumbing.ZeroHash, err
		}
		if err := wr.Close(); err != nil {
			return plumbing.ZeroHash, err
		}
		h, err := s.SetEncodedObject(obj)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		blobs[p] = h
	}
	t := &object.Tree{}
	for name, h := range blobs {
		t.Entries = append(t.Entries, object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h})
	}
	for name, fs := range sub {
		h, err := writeTree(s, fs)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		t.Entries = append(t.Entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
	}
	// git orders entries by name, a folder's as if it ended in '/'.
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(t.Entries, func(i, j int) bool { return key(t.Entries[i]) < key(t.Entries[j]) })
	return store(s, t)
}

// user is a GitHub user as REST answers embed it.
func user(login string) *github.User {
	return &github.User{Login: github.String(login), Type: github.String("User"), SiteAdmin: github.Bool(false),
		HTMLURL: github.String("https://github.com/" + login), URL: github.String("{{api}}/users/" + login)}
}

func ts(field, s string) (*github.Timestamp, error) {
	if s == "" {
		return nil, nil
	}
	t, err := worldTime(field, s)
	if err != nil {
		return nil, err
	}
	return &github.Timestamp{Time: t}, nil
}

func putJSON(fix fstest.MapFS, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	fix[name] = &fstest.MapFile{Data: append(b, '\n'), Mode: 0o644}
	return nil
}

// render writes the repository's fixtures into fix.
func (w *World) render(fix fstest.MapFS, r *WorldRepo, shas map[string]string, repo *git.Repository) error {
	owner, name, _ := strings.Cut(r.FullName, "/")
	api := "{{api}}/repos/" + r.FullName
	html := "https://github.com/" + r.FullName
	created, err := ts("created_at", r.CreatedAt)
	if err != nil {
		return err
	}
	gr := &github.Repository{ID: github.Int64(int64(len(r.FullName)) * 1000003), Name: github.String(name),
		FullName: github.String(r.FullName), Owner: user(owner), HTMLURL: github.String(html), URL: github.String(api),
		Description: github.String(r.Description), Language: github.String(r.Language), DefaultBranch: github.String(r.DefaultBranch),
		CreatedAt: created, Private: github.Bool(false), Fork: github.Bool(false), Visibility: github.String("public"),
		HasIssues: github.Bool(true)}
	gr.Owner.Type = github.String("Organization")
	if r.License != "" {
		gr.License = &github.License{Key: github.String(strings.ToLower(r.License)), SPDXID: github.String(r.License),
			Name: github.String(r.License), URL: github.String("{{api}}/licenses/" + strings.ToLower(r.License))}
	}
	if err := putJSON(fix, "repos/"+r.FullName+".json", gr); err != nil {
		return err
	}
	body := func(file string) (string, error) {
		if file == "" {
			return "", nil
		}
		b, err := os.ReadFile(filepath.Join(w.dir, filepath.FromSlash(r.FullName), filepath.FromSlash(file)))
		return string(b), err
	}

	// Issues, and pull requests as GitHub lists them among the issues.
	var issues []*github.Issue
	for _, is := range r.Issues {
		b, err := body(is.Body)
		if err != nil {
			return fmt.Errorf("issue #%d: %w", is.Number, err)
		}
		gi, err := issueOf(r.FullName, is.Number, is.Title, b, is.User, is.CreatedAt, is.ClosedAt)
		if err != nil {
			return fmt.Errorf("issue #%d: %w", is.Number, err)
		}
		issues = append(issues, gi)
	}
	var pulls []*github.PullRequest
	for _, p := range r.Pulls {
		b, err := body(p.Body)
		if err != nil {
			return fmt.Errorf("pull request #%d: %w", p.Number, err)
		}
		gi, err := issueOf(r.FullName, p.Number, p.Title, b, p.User, p.CreatedAt, p.ClosedAt)
		if err != nil {
			return fmt.Errorf("pull request #%d: %w", p.Number, err)
		}
		gi.PullRequestLinks = &github.PullRequestLinks{URL: github.String(fmt.Sprintf("%s/pulls/%d", api, p.Number)),
			HTMLURL: github.String(fmt.Sprintf("%s/pull/%d", html, p.Number))}
		issues = append(issues, gi)
		gp, files, err := w.pull(r, p, b, shas, repo)
		if err != nil {
			return fmt.Errorf("pull request #%d: %w", p.Number, err)
		}
		pulls = append(pulls, gp)
		if err := putJSON(fix, fmt.Sprintf("repos/%s/pulls/%d.json", r.FullName, p.Number), gp); err != nil {
			return err
		}
		if err := putJSON(fix, fmt.Sprintf("repos/%s/pulls/%d/files.json", r.FullName, p.Number), files); err != nil {
			return err
		}
		if err := putJSON(fix, fmt.Sprintf("graphql/%s/pull-%d.json", r.FullName, p.Number), w.pullNode(r, p, shas, len(files))); err != nil {
			return err
		}
	}
	sort.Slice(issues, func(i, j int) bool { return issues[i].GetNumber() > issues[j].GetNumber() })
	for _, gi := range issues {
		if err := putJSON(fix, fmt.Sprintf("repos/%s/issues/%d.json", r.FullName, gi.GetNumber()), gi); err != nil {
			return err
		}
	}
	if err := putJSON(fix, "repos/"+r.FullName+"/issues.json", issues); err != nil {
		return err
	}
	sort.Slice(pulls, func(i, j int) bool { return pulls[i].GetNumber() > pulls[j].GetNumber() })
	if err := putJSON(fix, "repos/"+r.FullName+"/pulls.json", pulls); err != nil {
		return err
	}

	// The default branch's commits, newest first.
	head, err := repo.CommitObject(plumbing.NewHash(shas[r.Branches[r.DefaultBranch]]))
	if err != nil {
		return err
	}
	var commits []*github.RepositoryCommit
	err = object.NewCommitPreorderIter(head, nil, nil).ForEach(func(c *object.Commit) error {
		sha := c.Hash.String()
		var parents []*github.Commit
		for _, p := range c.ParentHashes {
			parents = append(parents, &github.Commit{SHA: github.String(p.String()), URL: github.String(api + "/commits/" + p.String())})
		}
		sig := func(s object.Signature) *github.CommitAuthor {
			return &github.CommitAuthor{Name: github.String(s.Name), Email: github.String(s.Email), Date: &github.Timestamp{Time: s.When.UTC()}}
		}
		commits = append(commits, &github.RepositoryCommit{SHA: github.String(sha), NodeID: github.String("C_" + sha[:12]),
			Commit: &github.Commit{Author: sig(c.Author), Committer: sig(c.Committer), Message: github.String(strings.TrimRight(c.Message, "\n")),
				Tree: &github.Tree{SHA: github.String(c.TreeHash.String())}},
			URL: github.String(api + "/commits/" + sha), HTMLURL: github.String(html + "/commit/" + sha), Parents: parents})
		return nil
	})
	if err != nil {
		return err
	}
	sort.SliceStable(commits, func(i, j int) bool {
		return commits[i].Commit.Committer.Date.After(commits[j].Commit.Committer.Date.Time)
	})
	return putJSON(fix, "repos/"+r.FullName+"/commits.json", commits)
}

func issueOf(repo string, n int, title, body, login, created, closed string) (*github.Issue, error) {
	c, err := ts("created_at", created)
	if err != nil {
		return nil, err
	}
	cl, err := ts("closed_at", closed)
	if err != nil {
		return nil, err
	}
	state, updated := "open", c
	if cl != nil {
		state, updated = "closed", cl
	}
	api := "{{api}}/repos/" + repo
	gi := &github.Issue{ID: github.Int64(int64(100000 + n)), Number: github.Int(n), Title: github.String(title), Body: github.String(body),
		User: user(login), State: github.String(state), Locked: github.Bool(false), Labels: []*github.Label{}, Assignees: []*github.User{},
		CreatedAt: c, UpdatedAt: updated, ClosedAt: cl, AuthorAssociation: github.String("NONE"),
		URL: github.String(fmt.Sprintf("%s/issues/%d", api, n)), RepositoryURL: github.String(api),
		HTMLURL: github.String(fmt.Sprintf("https://github.com/%s/issues/%d", repo, n))}
	if cl != nil {
		gi.StateReason = github.String("completed")
	}
	return gi, nil
}

// pull renders a pull request and its changed files (the diff of its base and head trees).
func (w *World) pull(r *WorldRepo, p WorldPull, body string, shas map[string]string, repo *git.Repository) (*github.PullRequest, []*github.CommitFile, error) {
	api := "{{api}}/repos/" + r.FullName
	html := "https://github.com/" + r.FullName
	base, head := shas[p.Base], shas[p.Head]
	if base == "" || head == "" {
		return nil, nil, fmt.Errorf("base %q or head %q is not a commit id", p.Base, p.Head)
	}
	gi, err := issueOf(r.FullName, p.Number, p.Title, body, p.User, p.CreatedAt, p.ClosedAt)
	if err != nil {
		return nil, nil, err
	}
	merged, err := ts("merged_at", p.MergedAt)
	if err != nil {
		return nil, nil, err
	}
	baseRef := p.BaseRef
	if baseRef == "" {
		baseRef = r.DefaultBranch
	}
	owner, _, _ := strings.Cut(r.FullName, "/")
	gp := &github.PullRequest{ID: github.Int64(int64(200000 + p.Number)), Number: github.Int(p.Number), State: gi.State,
		Locked: github.Bool(false), Title: gi.Title, Body: gi.Body, User: gi.User, CreatedAt: gi.CreatedAt, UpdatedAt: gi.UpdatedAt,
		ClosedAt: gi.ClosedAt, MergedAt: merged, Draft: github.Bool(false), AuthorAssociation: github.String("MEMBER"),
		URL: github.String(fmt.Sprintf("%s/pulls/%d", api, p.Number)), HTMLURL: github.String(fmt.Sprintf("%s/pull/%d", html, p.Number)),
		DiffURL: github.String(fmt.Sprintf("%s/pull/%d.diff", html, p.Number)), Labels: []*github.Label{},
		Head: &github.PullRequestBranch{Label: github.String(p.User + ":" + p.HeadRef), Ref: github.String(p.HeadRef), SHA: github.String(head), User: gi.User},
		Base: &github.PullRequestBranch{Label: github.String(owner + ":" + baseRef), Ref: github.String(baseRef), SHA: github.String(base), User: user(owner)}}
	if merged != nil {
		m := shas[p.Merge]
		if m == "" {
			return nil, nil, fmt.Errorf("merged, but merge %q is not a commit id", p.Merge)
		}
		gp.MergeCommitSHA = github.String(m)
		gp.Merged = github.Bool(true)
	}
	files, err := changedFiles(repo, base, head, r.FullName)
	if err != nil {
		return nil, nil, err
	}
	gp.ChangedFiles = github.Int(len(files))
	return gp, files, nil
}

// changedFiles lists the files of the diff from base to head as GitHub's pulls/N/files.
func changedFiles(repo *git.Repository, base, head, full string) ([]*github.CommitFile, error) {
	tree := func(h string) (*object.Tree, error) {
		c, err := repo.CommitObject(plumbing.NewHash(h))
		if err != nil {
			return nil, err
		}
		return c.Tree()
	}
	bt, err := tree(base)
	if err != nil {
		return nil, err
	}
	ht, err := tree(head)
	if err != nil {
		return nil, err
	}
	changes, err := object.DiffTree(bt, ht)
	if err != nil {
		return nil, err
	}
	var out []*github.CommitFile
	for _, ch := range changes {
		action, err := ch.Action()
		if err != nil {
			return nil, err
		}
		name := ch.To.Name
		status := map[string]string{"Insert": "added", "Delete": "removed", "Modify": "modified"}[action.String()]
		if name == "" {
			name = ch.From.Name
		}
		p, err := ch.Patch()
		if err != nil {
			return nil, err
		}
		add, del := 0, 0
		for _, st := range p.Stats() {
			add += st.Addition
			del += st.Deletion
		}
		text := p.String()
		if i := strings.Index(text, "@@"); i >= 0 {
			text = text[i:]
		}
		sha := ch.To.TreeEntry.Hash.String()
		if status == "removed" {
			sha = ch.From.TreeEntry.Hash.String()
		}
		out = append(out, &github.CommitFile{SHA: github.String(sha), Filename: github.String(name), Status: github.String(status),
			Additions: github.Int(add), Deletions: github.Int(del), Changes: github.Int(add + del), Patch: github.String(strings.TrimRight(text, "\n")),
			BlobURL: github.String(fmt.Sprintf("https://github.com/%s/blob/%s/%s", full, head, name)),
			RawURL:  github.String(fmt.Sprintf("https://github.com/%s/raw/%s/%s", full, head, name))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetFilename() < out[j].GetFilename() })
	return out, nil
}

// pullNode is the GraphQL PullRequest node the crawl asks for (crawl's prLinkFields).
func (w *World) pullNode(r *WorldRepo, p WorldPull, shas map[string]string, changed int) map[string]any {
	var nodes []map[string]any
	for _, n := range p.Closes {
		nodes = append(nodes, map[string]any{"number": n, "url": fmt.Sprintf("https://github.com/%s/issues/%d", r.FullName, n),
			"repository": map[string]any{"nameWithOwner": r.FullName}})
	}
	if nodes == nil {
		nodes = []map[string]any{}
	}
	baseRef := p.BaseRef
	if baseRef == "" {
		baseRef = r.DefaultBranch
	}
	var merge any
	if p.MergedAt != "" {
		merge = map[string]any{"oid": shas[p.Merge]}
	}
	return map[string]any{"number": p.Number, "merged": p.MergedAt != "", "changedFiles": changed,
		"baseRefName": baseRef, "baseRefOid": shas[p.Base], "headRefOid": shas[p.Head], "mergeCommit": merge,
		"closingIssuesReferences": map[string]any{"totalCount": len(nodes), "nodes": nodes}}
}

// gitPathRe matches the smart HTTP paths of a repository: /<owner>/<name>.git/...
var gitPathRe = regexp.MustCompile(`^/[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+\.git/(info/refs|git-upload-pack)$`)

// GitHandler serves the bare repositories under root (<owner>/<name>.git) over git's smart
// HTTP protocol, fetching only, through git http-backend; ErrNoGit when git is missing.
func GitHandler(root string) (http.Handler, error) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoGit, err)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	cg := &cgi.Handler{Path: gitBin, Args: []string{"http-backend"},
		Env: []string{"GIT_PROJECT_ROOT=" + abs, "GIT_HTTP_EXPORT_ALL=1"}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !gitPathRe.MatchString(r.URL.Path) || strings.Contains(r.URL.Path, "..") ||
			(strings.HasSuffix(r.URL.Path, "/info/refs") && r.URL.Query().Get("service") != "git-upload-pack") {
			http.NotFound(w, r)
			return
		}
		cg.ServeHTTP(w, r)
	}), nil
}

// ErrNoGit says the git binary (git http-backend) is missing.
var ErrNoGit = errors.New("git is needed to serve the repositories (git http-backend)")

// WorldHandler serves a built world: git's smart HTTP for /<owner>/<name>.git/..., the
// API fixtures for everything else. Its git URL template is <base>/{owner}/{name}.git.
func WorldHandler(b *Built, opts Options) (*Handler, http.Handler, error) {
	gh, err := GitHandler(b.GitRoot)
	if err != nil {
		return nil, nil, err
	}
	api := NewHandler(b.Fixtures, opts)
	return api, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(path.Dir(r.URL.Path), ".git") || strings.Contains(r.URL.Path, ".git/") {
			gh.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	}), nil
}
