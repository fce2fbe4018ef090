// Package hubfetch downloads an EnvGap release from the Hugging Face Hub for scoring
// (envgap eval/run --tasks hf://OWNER/NAME[@REVISION]): the task configs (data/<config>/,
// not the candidates) and the harness zip, through the Hub's HTTP API, into a cache
// folder named by the commit the revision resolves to. A release is kept only when its
// task rows give the corpus id its harness zip records; a cached commit is never fetched
// again.
//
// The cache (Options.Cache, default <user cache dir>/envgap/hub) holds
// OWNER/NAME/<commit>/ with the files at their repository paths, written to a temporary
// folder beside it and renamed into place once complete and checked.
package hubfetch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/envgap/envgap/lib/release"
	"github.com/envgap/envgap/schemas"
)

// Scheme starts a Hub reference.
const Scheme = "hf://"

// DefaultEndpoint is the Hub's address; HF_ENDPOINT overrides it, as for the Hub's own
// clients.
const DefaultEndpoint = "https://huggingface.co"

// Ref names a release on the Hub: a dataset repository and a revision (a branch, tag or
// commit; default main).
type Ref struct {
	Repo     string
	Revision string
}

func (r Ref) String() string { return Scheme + r.Repo + "@" + r.Revision }

var repoRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$`)

// IsRef says whether s is meant as a Hub reference (starts with hf://).
func IsRef(s string) bool { return strings.HasPrefix(s, Scheme) }

// ParseRef reads hf://OWNER/NAME[@REVISION].
func ParseRef(s string) (Ref, error) {
	rest, ok := strings.CutPrefix(s, Scheme)
	if !ok {
		return Ref{}, fmt.Errorf("%q: a Hub release is hf://OWNER/NAME[@REVISION]", s)
	}
	repo, rev, _ := strings.Cut(rest, "@")
	if rev == "" {
		rev = "main"
	}
	if !repoRe.MatchString(repo) || strings.Contains(repo, "..") || strings.ContainsAny(rev, " \t\n") {
		return Ref{}, fmt.Errorf("%q: a Hub release is hf://OWNER/NAME[@REVISION] (a dataset repository and a branch, tag or commit)", s)
	}
	return Ref{Repo: repo, Revision: rev}, nil
}

// Options say where the Hub is, the token to send and where the cache is.
type Options struct {
	// Endpoint is the Hub's root URL (DefaultEndpoint when empty).
	Endpoint string
	// Token, when set, is sent as a Bearer token to the Hub (never stored or printed).
	Token string
	// Cache is the cache folder (required).
	Cache  string
	Client *http.Client
}

// Fetched is a release on disk.
type Fetched struct {
	// Dir is the release's folder in the cache (a Hub folder: data/<config>/ and the
	// harness zip).
	Dir string
	// Commit is the commit the revision resolved to; CorpusID the release's.
	Commit, CorpusID string
	// Cached is true when the commit was in the cache already (nothing downloaded).
	Cached bool
}

// Fetch resolves ref's revision to a commit and returns that commit's release from the
// cache, downloading it first when it is not there. A release whose task rows do not give
// the corpus id its harness zip records is refused and not cached.
func Fetch(ctx context.Context, ref Ref, o Options) (*Fetched, error) {
	if o.Cache == "" {
		return nil, errors.New("hub fetch: no cache folder")
	}
	if o.Endpoint == "" {
		o.Endpoint = DefaultEndpoint
	}
	o.Endpoint = strings.TrimSuffix(o.Endpoint, "/")
	if o.Client == nil {
		o.Client = http.DefaultClient
	}
	var rev struct {
		SHA string `json:"sha"`
	}
	if err := o.getJSON(ctx, o.apiURL(ref.Repo, "revision", ref.Revision, ""), &rev); err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(rev.SHA) {
		return nil, fmt.Errorf("%s: the Hub gave commit %q for the revision", ref, rev.SHA)
	}
	dir := filepath.Join(o.Cache, filepath.FromSlash(ref.Repo), rev.SHA)
	if id, err := check(dir); err == nil {
		return &Fetched{Dir: dir, Commit: rev.SHA, CorpusID: id, Cached: true}, nil
	}
	files, err := o.tree(ctx, ref.Repo, rev.SHA)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("hub cache: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+rev.SHA+".fetch-*")
	if err != nil {
		return nil, fmt.Errorf("hub cache: %w", err)
	}
	defer os.RemoveAll(tmp)
	for _, f := range files {
		if err := o.download(ctx, ref.Repo, rev.SHA, f, tmp); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", ref, f.Path, err)
		}
	}
	id, err := check(tmp)
	if err != nil {
		return nil, fmt.Errorf("%s (commit %s): %w; nothing was cached", ref, rev.SHA, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, again := check(dir); again != nil {
			return nil, fmt.Errorf("hub cache: %w", err)
		}
	}
	return &Fetched{Dir: dir, Commit: rev.SHA, CorpusID: id}, nil
}

// check reads a release folder's full config and harness zip and returns the corpus id
// when both give the same one.
func check(dir string) (string, error) {
	if _, err := os.Stat(dir); err != nil {
		return "", err
	}
	ts, err := release.ReadTasks(dir)
	if err != nil {
		return "", fmt.Errorf("the release's task rows: %w", err)
	}
	if len(ts) == 0 {
		return "", errors.New("the release has no task rows (data/full)")
	}
	id, err := schemas.CorpusID(ts)
	if err != nil {
		return "", err
	}
	h, err := release.ReadHarness(filepath.Join(dir, filepath.FromSlash(release.HarnessPath)))
	if err != nil {
		return "", fmt.Errorf("the release's harness zip: %w", err)
	}
	if h.CorpusID != id || h.Manifest.CorpusID != id {
		return "", &CorpusError{Rows: id, Harness: h.Manifest.CorpusID, HarnessRows: h.CorpusID}
	}
	return id, nil
}

// CorpusError is a release whose task rows and harness zip are not of one corpus.
type CorpusError struct {
	// Rows is the corpus id of data/full; Harness what the zip's release.json records,
	// HarnessRows what the zip's own task rows give.
	Rows, Harness, HarnessRows string
}

func (e *CorpusError) Error() string {
	return fmt.Sprintf("corpus id mismatch: the task rows (data/full) give %s, the harness zip records %s (its own rows give %s): not one release", e.Rows, e.Harness, e.HarnessRows)
}

// treeEntry is one entry of the Hub's tree listing.
type treeEntry struct {
	Type string `json:"type"`
	Path string `json:"path"`
	Size int64  `json:"size"`
	LFS  *struct {
		OID  string `json:"oid"`
		Size int64  `json:"size"`
	} `json:"lfs"`
}

// wanted says whether a file of the repository is part of what scoring reads: the task
// configs and the harness zip.
func wanted(p string) bool {
	if p == release.HarnessPath {
		return true
	}
	return strings.HasPrefix(p, "data/") && !strings.HasPrefix(p, "data/"+release.ConfigCandidates+"/")
}

// tree lists the commit's files scoring reads (following the listing's pages).
func (o Options) tree(ctx context.Context, repo, commit string) ([]treeEntry, error) {
	next := o.apiURL(repo, "tree", commit, "recursive=true")
	var out []treeEntry
	for next != "" {
		var page []treeEntry
		req, err := o.request(ctx, next)
		if err != nil {
			return nil, err
		}
		resp, err := o.Client.Do(req)
		if err != nil {
			return nil, err
		}
		err = decode(resp, &page)
		next = nextLink(resp.Header.Get("Link"))
		if err != nil {
			return nil, err
		}
		for _, e := range page {
			if e.Type == "file" && wanted(e.Path) {
				if err := schemas.CheckRelPath(e.Path); err != nil {
					return nil, fmt.Errorf("the Hub listed a path %q: %w", e.Path, err)
				}
				out = append(out, e)
			}
		}
	}
	return out, nil
}

// download writes one file of the commit under dir, checking its size and, for an LFS
// file, its SHA-256.
func (o Options) download(ctx context.Context, repo, commit string, f treeEntry, dir string) error {
	u := o.Endpoint + "/datasets/" + repo + "/resolve/" + commit + "/" + escapePath(f.Path)
	req, err := o.request(ctx, u)
	if err != nil {
		return err
	}
	resp, err := o.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return statusError(resp)
	}
	dst := filepath.Join(dir, filepath.FromSlash(f.Path))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	fh, err := os.Create(dst)
	if err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(fh, h), resp.Body)
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	want := f.Size
	if f.LFS != nil {
		want = f.LFS.Size
		if got := hex.EncodeToString(h.Sum(nil)); got != f.LFS.OID {
			return fmt.Errorf("downloaded bytes have SHA-256 %s, the Hub lists %s", got, f.LFS.OID)
		}
	}
	if n != want {
		return fmt.Errorf("downloaded %d bytes, the Hub lists %d", n, want)
	}
	return nil
}

func (o Options) apiURL(repo, verb, rev, query string) string {
	u := fmt.Sprintf("%s/api/datasets/%s/%s/%s", o.Endpoint, repo, verb, url.PathEscape(rev))
	if query != "" {
		u += "?" + query
	}
	return u
}

// request is a GET with the token, when there is one. The token goes to the Hub only:
// Go's client drops it on a redirect to another host (the Hub's file storage).
func (o Options) request(ctx context.Context, u string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if o.Token != "" {
		req.Header.Set("Authorization", "Bearer "+o.Token)
	}
	return req, nil
}

func (o Options) getJSON(ctx context.Context, u string, v any) error {
	req, err := o.request(ctx, u)
	if err != nil {
		return err
	}
	resp, err := o.Client.Do(req)
	if err != nil {
		return err
	}
	return decode(resp, v)
}

func decode(resp *http.Response, v any) error {
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return statusError(resp)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("the Hub's answer: %w", err)
	}
	return nil
}

// statusError says what a refusal of the Hub means and what to do.
func statusError(resp *http.Response) error {
	var body struct {
		Error string `json:"error"`
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	_ = json.Unmarshal(b, &body)
	msg := body.Error
	if msg == "" {
		msg = strings.TrimSpace(string(b))
	}
	code := resp.Header.Get("X-Error-Code")
	switch {
	case resp.StatusCode == http.StatusUnauthorized && code == "RepoNotFound":
		// The Hub's answer to a read without a token of a repository that does not exist or
		// is private: it does not say which.
		return fmt.Errorf("not found on the Hub, or private (HTTP 401 %s): %s; check OWNER/NAME, and for a private or gated release set HF_TOKEN to a token that can read it", code, msg)
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("the Hub refused access (HTTP %d %s): %s; a private or gated release needs HF_TOKEN set to a token that can read it", resp.StatusCode, code, msg)
	case resp.StatusCode == http.StatusNotFound:
		if code == "RepoNotFound" {
			return fmt.Errorf("not found on the Hub (HTTP 404 %s): %s; check OWNER/NAME, and for a private or gated release set HF_TOKEN to a token that can read it", code, msg)
		}
		return fmt.Errorf("not found on the Hub (HTTP 404 %s): %s; check OWNER/NAME and @REVISION", code, msg)
	}
	return fmt.Errorf("the Hub answered HTTP %d: %s", resp.StatusCode, msg)
}

// nextLink reads the URL of a Link header's rel="next".
func nextLink(h string) string {
	for _, part := range strings.Split(h, ",") {
		seg := strings.Split(part, ";")
		if len(seg) < 2 || !strings.Contains(seg[1], `rel="next"`) {
			continue
		}
		return strings.Trim(strings.TrimSpace(seg[0]), "<>")
	}
	return ""
}

func escapePath(p string) string {
	parts := strings.Split(path.Clean(p), "/")
	for i := range parts {
		parts[i] = url.PathEscape(parts[i])
	}
	return strings.Join(parts, "/")
}
