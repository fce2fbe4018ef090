package crawl

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/envgap/envgap/crawl/ghhttp"
	"github.com/envgap/envgap/crawl/gitfetch"
	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/lib/envfiles"
	"github.com/envgap/envgap/schemas"
	"github.com/google/go-github/v62/github"
)

// DefaultAPIURL is GitHub's REST base.
const DefaultAPIURL = "https://api.github.com/"

// MaxProblemBody is where problem_statement cuts a pathologically long issue body, in
// bytes (1 MiB; the cut falls on a character boundary). Bodies up to it are kept whole.
// problem_statement_truncated is true for a body cut here, as it is for the bodies an
// earlier collection cut at 3,000 characters.
const MaxProblemBody = 1 << 20

// MaxPRFiles is the most files GitHub lists for a pull request; a longer list is cut.
const MaxPRFiles = 3000

// GitStage is the memo stage of git results (trees' manifest lists, fixes' files).
const GitStage = "crawl-git"

// gitMemoVersion changes whenever what the git memo records depends on changes.
const gitMemoVersion = "2"

// Options configure one GitHub crawl.
type Options struct {
	// CrawlID names the crawl: its report ref crawls/<id>, its candidate set, the
	// crawl_id of Repaired candidates, and the cache of answers it already received.
	CrawlID string
	// Repos are the repositories, owner/name.
	Repos []string
	// Since keeps issues opened (Reported) or pull requests merged (Repaired) at or
	// after it; zero keeps all.
	Since time.Time
	// APIURL is the REST base; GraphQL is at GraphQLURL(APIURL). Empty: DefaultAPIURL.
	APIURL string
	// GitURLTemplate is where repositories are fetched from ({repo}, {owner}, {name});
	// empty: gitfetch.DefaultURLTemplate.
	GitURLTemplate string
	// Token authenticates to the API. It is never printed or stored.
	Token string
	// WorkDir holds temporary git repositories; empty: the system's temp directory.
	WorkDir string
}

// Store is what the crawl reads and writes: the catalogue (to skip candidates already
// stored), candidate sets, its report and the HTTP cache.
type Store interface {
	catalog.Store
	catalog.Adder
}

// Deps are the crawl's dependencies.
type Deps struct {
	Store Store
	// HTTP sends the API requests; nil: http.DefaultTransport.
	HTTP http.RoundTripper
	// Clock waits out rate limits and dates the report; nil: the wall clock.
	Clock ghhttp.Clock
	// Logf prints progress; nil is silent.
	Logf func(format string, args ...any)
	// Backoff overrides the transport's first back-off wait (0: its default).
	Backoff time.Duration
}

// Reject reason codes: the first word of every CrawlReject.Reason.
const (
	ReasonRepoNotFound    = "repo_not_found"
	ReasonRepoRenamed     = "repo_renamed"
	ReasonRepoUnavailable = "repo_unavailable"
	ReasonNoFailure       = "no_failure_message"
	ReasonNoBaseCommit    = "no_base_commit"
	ReasonBaseUnavailable = "base_unavailable"
	ReasonHeadUnavailable = "head_unavailable"
	ReasonNoEcosystem     = "no_ecosystem"
	ReasonNoLinkedIssue   = "no_linked_issue"
	ReasonFilesTruncated  = "files_truncated"
	ReasonNotEnvOnly      = "not_env_only"
	ReasonReadmeOnly      = "readme_only"
	ReasonBinaryFile      = "binary_file"
	ReasonDuplicate       = "duplicate"
	ReasonIssueNotFound   = "issue_not_found"
	ReasonIssueMoved      = "issue_moved"
	ReasonNotMerged       = "not_merged"
	ReasonPullNotFound    = "pull_not_found"
	ReasonAlreadyStored   = "already_stored"
	ReasonInvalid         = "invalid_candidate"
)

var crawlIDRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// CheckCrawlID checks a crawl id (one ref name part).
func CheckCrawlID(id string) error {
	if !crawlIDRe.MatchString(id) || strings.Contains(id, "..") || len(id) > 100 {
		return fmt.Errorf("crawl id %q: use letters, digits, '.', '_' and '-' (e.g. pr-20260924)", id)
	}
	return nil
}

// crawler is one crawl in progress.
type crawler struct {
	cmd     string
	opts    Options
	deps    Deps
	clock   ghhttp.Clock
	tr      *ghhttp.Transport
	gh      *github.Client
	gql     *graphQL
	workDir string

	cands   []schemas.Candidate
	rejects []schemas.CrawlReject
	report  *Report

	// stored are the candidates the store held when the crawl started, by instance id.
	stored map[string]catalog.CandidateEntry
	// covered maps "owner/name#issue" to the Repaired candidate whose pull request closes
	// that issue (from the reports of earlier prs crawls and from this one).
	covered map[string]string
	// breakages are this crawl's Repaired candidates' breakages, by instance id.
	breakages map[string]Breakage
}

func newCrawler(cmd string, opts Options, deps Deps) (*crawler, error) {
	if deps.Store == nil {
		return nil, errors.New("crawl: no store")
	}
	if err := CheckCrawlID(opts.CrawlID); err != nil {
		return nil, err
	}
	if len(opts.Repos) == 0 {
		return nil, errors.New("crawl: no repositories")
	}
	for _, r := range opts.Repos {
		if err := CheckRepoName(r); err != nil {
			return nil, fmt.Errorf("crawl: %w", err)
		}
	}
	if opts.APIURL == "" {
		opts.APIURL = DefaultAPIURL
	}
	if opts.GitURLTemplate == "" {
		opts.GitURLTemplate = gitfetch.DefaultURLTemplate
	}
	if _, err := gitfetch.URL(opts.GitURLTemplate, "owner/name"); err != nil {
		return nil, err
	}
	base, err := url.Parse(opts.APIURL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("api url %q: want an http(s) URL such as %s", opts.APIURL, DefaultAPIURL)
	}
	if base.User != nil {
		return nil, fmt.Errorf("api url: do not put credentials in it; set GITHUB_TOKEN")
	}
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	opts.APIURL = base.String()
	if prev, err := deps.Store.Ref(data.CrawlRef(opts.CrawlID)); err == nil {
		var old Report
		if err := deps.Store.GetJSON(prev, &old); err == nil && old.Command != "" && old.Command != cmd {
			return nil, fmt.Errorf("crawl id %s already names a crawl %s run; give this crawl %s its own id", opts.CrawlID, old.Command, cmd)
		}
	}
	clock := deps.Clock
	if clock == nil {
		clock = ghhttp.RealClock()
	}
	tr := ghhttp.New(ghhttp.Config{
		Store: deps.Store, CrawlID: opts.CrawlID, Token: opts.Token, APIHost: base.Host,
		Clock: clock, Base: deps.HTTP, Logf: deps.Logf, Backoff: deps.Backoff,
	})
	hc := tr.Client()
	gh := github.NewClient(hc)
	gh.BaseURL = base
	work := opts.WorkDir
	if work == "" {
		work = os.TempDir()
	}
	work, err = os.MkdirTemp(work, "envgap-crawl-*")
	if err != nil {
		return nil, fmt.Errorf("crawl: work directory: %w", err)
	}
	c := &crawler{cmd: cmd, opts: opts, deps: deps, clock: clock, tr: tr, gh: gh,
		gql: &graphQL{url: GraphQLURL(base), hc: hc}, workDir: work}
	c.report = &Report{Kind: schemas.KindCrawlReport, CrawlID: opts.CrawlID, Command: cmd, APIURL: opts.APIURL,
		GitURLTemplate: opts.GitURLTemplate, Repos: len(opts.Repos), StartedAt: clock.Now().UTC().Format(time.RFC3339),
		Skipped: map[string]int{}, RejectedByReason: map[string]int{}}
	if !opts.Since.IsZero() {
		c.report.Since = opts.Since.UTC().Format(time.RFC3339)
	}
	if err := c.loadStored(); err != nil {
		os.RemoveAll(work)
		return nil, err
	}
	return c, nil
}

// loadStored reads what earlier crawls left: the stored candidates and the breakages the
// prs crawls' reports list (only those whose candidate is still stored count). A
// candidate whose record is lost (store fsck: missing) is known by its set: a crawl's
// own set says which (the crawl writes the record back in finish); a lost record of
// another writer (add, crawl lite) stops the crawl, which cannot tell its set.
func (c *crawler) loadStored() error {
	st := c.deps.Store
	ids, err := st.CandidateIDs()
	if err != nil {
		return err
	}
	c.stored = make(map[string]catalog.CandidateEntry, len(ids))
	for _, id := range ids {
		e, err := st.CandidateByID(id)
		if errors.Is(err, data.ErrDangling) {
			d, ref, derr := st.CandidateDigest(id)
			set, ok := crawlSetSource(ref)
			if derr != nil || !ok {
				return err
			}
			e = catalog.CandidateEntry{Candidate: schemas.Candidate{Ident: schemas.Ident{InstanceID: id}, Set: set}, Digest: d, Ref: ref}
		} else if err != nil {
			return err
		}
		c.stored[id] = e
	}
	c.covered, c.breakages = map[string]string{}, map[string]Breakage{}
	refs, err := st.Refs(data.RefCrawls)
	if err != nil {
		return err
	}
	for _, r := range refs {
		var rep Report
		if err := st.GetJSON(r.Digest, &rep); err != nil {
			return fmt.Errorf("crawl report %s: %w", r.Name, err)
		}
		for _, b := range rep.Breakages {
			if e, ok := c.stored[b.Candidate]; !ok || e.Set != schemas.SourceRepaired {
				continue
			}
			for _, n := range b.Issues {
				c.covered[issueKey(b.Repo, n)] = b.Candidate
			}
		}
	}
	return nil
}

// crawlSetPrefix names a crawl's candidate sets: candidates/crawl-<command>-<crawl id>-<hex>.
func crawlSetPrefix(cmd, crawlID string) string { return "crawl-" + cmd + "-" + crawlID }

// crawlSetSource returns the set of the candidates a crawl's candidate-set ref holds (a
// crawl prs makes Repaired candidates, a crawl issues Reported ones); false for a set
// another writer made.
func crawlSetSource(ref string) (schemas.Source, bool) {
	switch {
	case strings.HasPrefix(ref, data.CandidateSetRef(crawlSetPrefix("prs", ""))):
		return schemas.SourceRepaired, true
	case strings.HasPrefix(ref, data.CandidateSetRef(crawlSetPrefix("issues", ""))):
		return schemas.SourceReported, true
	}
	return "", false
}

func issueKey(repo string, n int) string { return fmt.Sprintf("%s#%d", strings.ToLower(repo), n) }

// coveredBy returns the Repaired candidate (other than id) whose pull request closes the
// issue, if any: the issue is part of that candidate's breakage.
func (c *crawler) coveredBy(repo string, n int, id string) (string, bool) {
	by, ok := c.covered[issueKey(repo, n)]
	return by, ok && by != id
}

func (c *crawler) close() { os.RemoveAll(c.workDir) }

func (c *crawler) logf(format string, args ...any) {
	if c.deps.Logf != nil {
		c.deps.Logf(format, args...)
	}
}

// reject records something looked at that did not become a candidate.
func (c *crawler) reject(ref, code, detail string) {
	c.rejects = append(c.rejects, schemas.CrawlReject{Ref: ref, Reason: code + ": " + detail})
	c.logf("reject %s: %s: %s", ref, code, detail)
}

func (c *crawler) skip(why string) { c.report.Skipped[why]++ }

// repoInfo is what a crawl needs to know about a repository.
type repoInfo struct {
	full, owner, name string
	defaultBranch     string
	language          string
	license           *string
	gitURL            string
	snaps             *gitfetch.Snapshots
	snapDir           string
}

func issueRef(repo string, n int) string { return fmt.Sprintf("%s/issues/%d", repo, n) }
func pullRef(repo string, n int) string  { return fmt.Sprintf("%s/pull/%d", repo, n) }

// statusOf returns the HTTP status of a go-github error, or 0.
func statusOf(err error) int {
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return er.Response.StatusCode
	}
	return 0
}

// repo reads a repository; ok false when it was rejected (deleted, renamed, blocked).
func (c *crawler) repo(ctx context.Context, full string) (*repoInfo, bool, error) {
	owner, name, _ := strings.Cut(full, "/")
	r, _, err := c.gh.Repositories.Get(ctx, owner, name)
	switch st := statusOf(err); {
	case err == nil:
	case st == http.StatusNotFound:
		c.reject(full, ReasonRepoNotFound, "GitHub answers 404 (deleted, private or misspelled); remove it from the repos file or fix the name")
		return nil, false, nil
	case st == http.StatusMovedPermanently:
		c.reject(full, ReasonRepoRenamed, "GitHub answers 301 Moved Permanently; put the repository's new name in the repos file")
		return nil, false, nil
	case st == http.StatusUnauthorized:
		return nil, false, fmt.Errorf("repository %s: GitHub answers 401 Bad credentials; check GITHUB_TOKEN: %w", full, err)
	case st == http.StatusForbidden || st == http.StatusUnavailableForLegalReasons || st == http.StatusGone:
		c.reject(full, ReasonRepoUnavailable, fmt.Sprintf("GitHub answers %d (access blocked or repository disabled)", st))
		return nil, false, nil
	default:
		return nil, false, fmt.Errorf("repository %s: %w", full, err)
	}
	if !strings.EqualFold(r.GetFullName(), full) {
		c.reject(full, ReasonRepoRenamed, fmt.Sprintf("renamed or transferred to %s; put the new name in the repos file", r.GetFullName()))
		return nil, false, nil
	}
	info := &repoInfo{full: full, owner: owner, name: name, defaultBranch: r.GetDefaultBranch(), language: r.GetLanguage()}
	if l := r.GetLicense(); l != nil {
		if id := l.GetSPDXID(); id != "" && id != "NOASSERTION" {
			info.license = &id
		}
	}
	info.gitURL, err = gitfetch.URL(c.opts.GitURLTemplate, full)
	if err != nil {
		return nil, false, err
	}
	return info, true, nil
}

// snapshots opens the repository's scratch git repository on first use.
func (c *crawler) snapshots(info *repoInfo) (*gitfetch.Snapshots, error) {
	if info.snaps != nil {
		return info.snaps, nil
	}
	dir := filepath.Join(c.workDir, strings.ReplaceAll(info.full, "/", "__"))
	s, err := gitfetch.Open(dir, info.gitURL)
	if err != nil {
		return nil, err
	}
	info.snaps, info.snapDir = s, dir
	return s, nil
}

// doneWithRepo removes the repository's scratch git repository.
func (c *crawler) doneWithRepo(info *repoInfo) {
	if info.snaps != nil {
		c.report.GitFetches += info.snaps.Fetches
		os.RemoveAll(info.snapDir)
		info.snaps = nil
	}
}

// missingRecord records (kind "crawl_missing") that a commit could not be fetched from a
// URL during a crawl, so the same crawl run again does not try again; a new crawl does.
type missingRecord struct {
	Kind   schemas.RecordKind `json:"kind"`
	URL    string             `json:"url"`
	Commit string             `json:"commit"`
	Error  string             `json:"error"`
}

// fetch fetches commit into s, unless this crawl already found that the server does not
// have it.
func (c *crawler) fetch(ctx context.Context, info *repoInfo, s *gitfetch.Snapshots, commit string) error {
	key, _ := schemas.DigestOf(map[string]string{"kind": "missing", "v": gitMemoVersion, "crawl": c.opts.CrawlID, "url": info.gitURL, "commit": commit})
	var rec missingRecord
	if d, err := c.deps.Store.Memo(GitStage, key); err == nil && c.deps.Store.GetJSON(d, &rec) == nil && rec.Kind == schemas.KindCrawlMissing {
		c.report.GitFromCache++
		return fmt.Errorf("%s (%s): %w", commit, rec.Error, gitfetch.ErrCommitNotFound)
	}
	err := s.Fetch(ctx, commit)
	if errors.Is(err, gitfetch.ErrCommitNotFound) {
		rec = missingRecord{Kind: schemas.KindCrawlMissing, URL: info.gitURL, Commit: commit, Error: err.Error()}
		d, perr := c.deps.Store.PutJSON(&rec)
		if perr != nil {
			return perr
		}
		if perr := c.deps.Store.SetMemo(GitStage, key, d); perr != nil {
			return perr
		}
	}
	return err
}

// treeRecord is the memo record of a tree: its manifests (kind "crawl_tree").
type treeRecord struct {
	Kind      schemas.RecordKind `json:"kind"`
	Commit    string             `json:"commit"`
	Manifests []string           `json:"manifests"`
}

// manifestsAt returns the manifest paths of the tree at commit, from the git memo or by
// fetching the commit alone. The error wraps gitfetch.ErrCommitNotFound when the server
// does not have it.
func (c *crawler) manifestsAt(ctx context.Context, info *repoInfo, commit string) (map[schemas.Ecosystem][]string, error) {
	key, _ := schemas.DigestOf(map[string]string{"kind": "tree", "v": gitMemoVersion, "commit": commit})
	var rec treeRecord
	if d, err := c.deps.Store.Memo(GitStage, key); err == nil && c.deps.Store.GetJSON(d, &rec) == nil && rec.Kind == schemas.KindCrawlTree {
		c.report.GitFromCache++
		return FindManifests(rec.Manifests), nil
	}
	s, err := c.snapshots(info)
	if err != nil {
		return nil, err
	}
	if err := c.fetch(ctx, info, s, commit); err != nil {
		return nil, err
	}
	paths, err := s.Paths(commit)
	if err != nil {
		return nil, err
	}
	rec = treeRecord{Kind: schemas.KindCrawlTree, Commit: commit, Manifests: []string{}}
	for _, p := range paths {
		if envfiles.ClassifyPath(p).Kind != envfiles.KindManifest {
			continue
		}
		if strings.EqualFold(path.Base(p), "Pipfile") {
			// A Pipfile that lists only dev-packages declares nothing the project needs
			// to run (PyRoaringBitMap's lists Cython and test tools there).
			f, ok, err := s.ReadFile(commit, p)
			if err != nil {
				return nil, err
			}
			if !ok || !PipfileDeclaresPackages(string(f.Content)) {
				continue
			}
		}
		rec.Manifests = append(rec.Manifests, p)
	}
	d, err := c.deps.Store.PutJSON(&rec)
	if err != nil {
		return nil, err
	}
	if err := c.deps.Store.SetMemo(GitStage, key, d); err != nil {
		return nil, err
	}
	return FindManifests(rec.Manifests), nil
}

// fixRecord is the memo record of a fix (kind "crawl_fix"): the files at the head commit
// (a nil digest: deleted), the unified diff from the base, and the binary paths.
type fixRecord struct {
	Kind   schemas.RecordKind `json:"kind"`
	Base   string             `json:"base"`
	Head   string             `json:"head"`
	Files  []fixFileRecord    `json:"files"`
	Patch  schemas.Digest     `json:"patch"`
	Binary []string           `json:"binary"`
}

type fixFileRecord struct {
	Path    string          `json:"path"`
	Content *schemas.Digest `json:"content"`
}

// fix reads the files of paths at head and the diff from base to head for them.
func (c *crawler) fix(ctx context.Context, info *repoInfo, base, head string, paths []string) (gold []schemas.File, patch string, binary []string, err error) {
	key, _ := schemas.DigestOf(map[string]any{"kind": "fix", "v": gitMemoVersion, "base": base, "head": head, "paths": paths})
	var rec fixRecord
	if d, err := c.deps.Store.Memo(GitStage, key); err == nil && c.deps.Store.GetJSON(d, &rec) == nil && rec.Kind == schemas.KindCrawlFix {
		if gold, patch, err := c.loadFix(&rec); err == nil {
			c.report.GitFromCache++
			return gold, patch, rec.Binary, nil
		}
	}
	s, err := c.snapshots(info)
	if err != nil {
		return nil, "", nil, err
	}
	// The head first: a pull request's head is the commit that may be gone.
	if err := c.fetch(ctx, info, s, head); err != nil {
		return nil, "", nil, fmt.Errorf("head: %w", err)
	}
	if err := c.fetch(ctx, info, s, base); err != nil {
		return nil, "", nil, fmt.Errorf("base: %w", err)
	}
	rec = fixRecord{Kind: schemas.KindCrawlFix, Base: base, Head: head, Files: []fixFileRecord{}, Binary: []string{}}
	for _, p := range paths {
		f, ok, err := s.ReadFile(head, p)
		if err != nil {
			return nil, "", nil, err
		}
		fr := fixFileRecord{Path: p}
		if ok {
			if f.Binary || !utf8.Valid(f.Content) {
				rec.Binary = append(rec.Binary, p)
				continue
			}
			d, err := c.deps.Store.Put(f.Content)
			if err != nil {
				return nil, "", nil, err
			}
			fr.Content = &d
		}
		rec.Files = append(rec.Files, fr)
	}
	diff, err := s.Diff(ctx, base, head, paths)
	if err != nil {
		return nil, "", nil, err
	}
	if rec.Patch, err = c.deps.Store.Put([]byte(diff)); err != nil {
		return nil, "", nil, err
	}
	d, err := c.deps.Store.PutJSON(&rec)
	if err != nil {
		return nil, "", nil, err
	}
	if err := c.deps.Store.SetMemo(GitStage, key, d); err != nil {
		return nil, "", nil, err
	}
	gold, patch, err = c.loadFix(&rec)
	return gold, patch, rec.Binary, err
}

func (c *crawler) loadFix(rec *fixRecord) ([]schemas.File, string, error) {
	gold := make([]schemas.File, 0, len(rec.Files))
	for _, f := range rec.Files {
		gf := schemas.File{Path: f.Path}
		if f.Content != nil {
			b, err := c.deps.Store.Get(*f.Content)
			if err != nil {
				return nil, "", err
			}
			s := string(b)
			gf.Content = &s
		}
		gold = append(gold, gf)
	}
	sort.Slice(gold, func(i, j int) bool { return gold[i].Path < gold[j].Path })
	p, err := c.deps.Store.Get(rec.Patch)
	if err != nil {
		return nil, "", err
	}
	return gold, string(p), nil
}

// problemStatement is the card's problem_statement: the title, a blank line, then the
// whole body, cut only when it is longer than MaxProblemBody bytes (truncated is then
// true).
func problemStatement(title, body string) (string, bool) {
	truncated := false
	if len(body) > MaxProblemBody {
		cut := MaxProblemBody
		for cut > 0 && !utf8.RuneStart(body[cut]) {
			cut--
		}
		body = body[:cut]
		truncated = true
	}
	return title + "\n\n" + body, truncated
}

func rfc3339(t github.Timestamp) string { return t.Time.UTC().Format(time.RFC3339) }

// addCandidate validates a candidate and keeps it, or records why it is invalid.
func (c *crawler) addCandidate(ref string, cand schemas.Candidate) {
	cand.Outcome = schemas.OutcomeNotChecked
	if ps := cand.Validate(); len(ps) > 0 {
		msgs := make([]string, len(ps))
		for i, p := range ps {
			msgs[i] = p.Field + " " + p.Msg
		}
		c.reject(ref, ReasonInvalid, strings.Join(msgs, "; "))
		return
	}
	c.cands = append(c.cands, cand)
	c.logf("candidate %s from %s", cand.InstanceID, ref)
}

// finish stores the candidate set and the report.
func (c *crawler) finish() (*Report, error) {
	st := c.deps.Store
	// Compare with the index only: a stored record that was lost is written back by the
	// add below.
	var keep []schemas.Candidate
	for _, cand := range c.cands {
		have, setRef, err := st.CandidateDigest(cand.InstanceID)
		if err != nil && !errors.Is(err, data.ErrNotFound) {
			return nil, err
		}
		if err == nil {
			d, err := schemas.DigestOf(&cand)
			if err != nil {
				return nil, err
			}
			if d != have {
				ref := issueRef(cand.Repo, int(cand.IssueNumber))
				if cand.PRNumber != nil {
					ref = pullRef(cand.Repo, int(*cand.PRNumber))
				}
				set := "a stored"
				if e, err := st.CandidateByID(cand.InstanceID); err == nil {
					set = "a " + string(e.Set)
				}
				c.reject(ref, ReasonAlreadyStored, fmt.Sprintf("%s is already %s candidate in %s; one candidate per breakage", cand.InstanceID, set, setRef))
				continue
			}
		}
		keep = append(keep, cand)
		if b, ok := c.breakages[cand.InstanceID]; ok {
			c.report.Breakages = append(c.report.Breakages, b)
		}
	}
	sort.Slice(keep, func(i, j int) bool { return keep[i].InstanceID < keep[j].InstanceID })
	sort.Slice(c.report.Breakages, func(i, j int) bool { return c.report.Breakages[i].Candidate < c.report.Breakages[j].Candidate })
	sort.SliceStable(c.rejects, func(i, j int) bool { return c.rejects[i].Ref < c.rejects[j].Ref })
	res, err := st.AddCandidateSet(crawlSetPrefix(c.cmd, c.opts.CrawlID), "crawl "+c.cmd+" "+c.opts.CrawlID, keep, c.rejects)
	if err != nil {
		return nil, err
	}
	r := c.report
	r.CandidateSet, r.CandidateSetDigest, r.NewCandidates, r.Unchanged = res.Ref, res.Set, res.New, res.Unchanged
	r.Candidates = len(keep)
	r.Rejected = len(c.rejects)
	for _, rj := range c.rejects {
		code, _, _ := strings.Cut(rj.Reason, ":")
		r.RejectedByReason[code]++
	}
	r.HTTP = c.tr.Stats()
	if r.Candidates > 0 {
		r.RequestsPerCandidate = float64(r.HTTP.Requests) / float64(r.Candidates)
	}
	r.FinishedAt = c.clock.Now().UTC().Format(time.RFC3339)
	d, err := st.PutJSON(r)
	if err != nil {
		return nil, err
	}
	if err := st.SetRef(data.CrawlRef(c.opts.CrawlID), d); err != nil {
		return nil, err
	}
	r.Digest = d
	return r, nil
}
