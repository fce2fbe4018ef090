package hub

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/envgap/envgap/schemas"
)

// DefaultEndpoint is the Hugging Face Hub.
const DefaultEndpoint = "https://huggingface.co"

// DefaultRevision is the branch a publish commits to.
const DefaultRevision = "main"

// EnvToken is the environment variable that holds the Hub token.
const EnvToken = "HF_TOKEN"

// Client talks to one Hub endpoint. The zero HTTP uses http.DefaultClient.
type Client struct {
	Endpoint string
	// Token is sent as a Bearer token to Endpoint's origin only. It is never printed.
	Token string
	HTTP  *http.Client
}

// ErrRepoNotFound is returned when the dataset repository does not exist (or the token
// may not see it).
var ErrRepoNotFound = errors.New("dataset repository not found")

// HTTPError is a Hub answer other than success. Its text names the method, the URL without
// its query (presigned URLs carry signatures there) and the Hub's message.
type HTTPError struct {
	Method string
	URL    string
	Status int
	Code   string // X-Error-Code, e.g. RepoNotFound
	Msg    string
}

// Error names the method, the URL without its query, the status and the Hub's message.
func (e *HTTPError) Error() string {
	msg := e.Msg
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	return fmt.Sprintf("hub: %s %s: %d: %s", e.Method, e.URL, e.Status, msg)
}

var repoRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$`)

// CheckRepo checks a repository id (OWNER/NAME).
func CheckRepo(repo string) error {
	if !repoRe.MatchString(repo) || strings.Contains(repo, "..") {
		return fmt.Errorf("hub: repository %q: want OWNER/NAME (letters, digits, ._-)", repo)
	}
	return nil
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

func (c *Client) endpoint() string {
	if c.Endpoint == "" {
		return DefaultEndpoint
	}
	return strings.TrimRight(c.Endpoint, "/")
}

// sameOrigin reports whether u is on the endpoint's scheme, host and port: the only place
// the token may go.
func (c *Client) sameOrigin(u string) bool {
	a, err1 := url.Parse(c.endpoint())
	b, err2 := url.Parse(u)
	return err1 == nil && err2 == nil && a.Scheme == b.Scheme && strings.EqualFold(a.Host, b.Host)
}

func (c *Client) apiURL(repo, verb, rev string) string {
	return fmt.Sprintf("%s/api/datasets/%s/%s/%s", c.endpoint(), repo, verb, url.PathEscape(rev))
}

// do sends a request; auth adds the token when the URL is on the endpoint's origin. The
// answer's body is returned for 2xx; anything else is an *HTTPError.
func (c *Client) do(ctx context.Context, method, u string, body io.Reader, header http.Header, auth bool) ([]byte, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, nil, fmt.Errorf("hub: %s %s: %w", method, stripQuery(u), err)
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if auth && c.Token != "" && c.sameOrigin(u) {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		// The transport's error text repeats the URL; never the headers.
		return nil, nil, fmt.Errorf("hub: %s %s: %w", method, stripQuery(u), unwrapURLError(err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, nil, fmt.Errorf("hub: %s %s: reading the answer: %w", method, stripQuery(u), err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, resp.Header, &HTTPError{Method: method, URL: stripQuery(u), Status: resp.StatusCode,
			Code: resp.Header.Get("X-Error-Code"), Msg: c.redact(errorMessage(resp.Header, b))}
	}
	return b, resp.Header, nil
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// redact removes the token from text that came from elsewhere (a server echoing a header).
func (c *Client) redact(s string) string { return schemas.RedactToken(s, c.Token) }

func errorMessage(h http.Header, body []byte) string {
	if m := h.Get("X-Error-Message"); m != "" {
		return m
	}
	var e struct {
		Error any `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error != nil {
		return fmt.Sprint(e.Error)
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

func stripQuery(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		return u[:i]
	}
	return u
}

// Head returns the commit a revision points at, or ErrRepoNotFound.
func (c *Client) Head(ctx context.Context, repo, rev string) (string, error) {
	b, _, err := c.do(ctx, http.MethodGet, c.apiURL(repo, "revision", rev), nil, nil, true)
	var he *HTTPError
	if errors.As(err, &he) && (he.Status == http.StatusNotFound || he.Code == "RepoNotFound") {
		return "", fmt.Errorf("hub: %s: %w", repo, ErrRepoNotFound)
	}
	if err != nil {
		return "", err
	}
	var info struct {
		ID  string `json:"id"`
		SHA string `json:"sha"`
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return "", fmt.Errorf("hub: revision of %s: %w", repo, err)
	}
	return info.SHA, nil
}

// CreateRepo creates a dataset repository. An existing one is not an error.
func (c *Client) CreateRepo(ctx context.Context, repo string, private bool) error {
	owner, name, _ := strings.Cut(repo, "/")
	body, _ := json.Marshal(map[string]any{"name": name, "organization": owner, "type": "dataset", "private": private})
	_, _, err := c.do(ctx, http.MethodPost, c.endpoint()+"/api/repos/create", bytes.NewReader(body),
		http.Header{"Content-Type": {"application/json"}}, true)
	var he *HTTPError
	if errors.As(err, &he) && he.Status == http.StatusConflict {
		return nil
	}
	return err
}

// RemoteFile is one file of the remote tree.
type RemoteFile struct {
	Type string `json:"type"`
	Path string `json:"path"`
	OID  string `json:"oid"`
	Size int64  `json:"size"`
	LFS  *struct {
		OID         string `json:"oid"`
		Size        int64  `json:"size"`
		PointerSize int64  `json:"pointerSize"`
	} `json:"lfs,omitempty"`
}

var linkNextRe = regexp.MustCompile(`<([^>]+)>;\s*rel="next"`)

// Tree lists every file of a revision.
func (c *Client) Tree(ctx context.Context, repo, rev string) ([]RemoteFile, error) {
	u := c.apiURL(repo, "tree", rev) + "?recursive=true"
	var out []RemoteFile
	for page := 0; u != ""; page++ {
		if page > 10000 {
			return nil, fmt.Errorf("hub: tree of %s: more than 10000 pages", repo)
		}
		b, h, err := c.do(ctx, http.MethodGet, u, nil, nil, true)
		if err != nil {
			return nil, err
		}
		var items []RemoteFile
		if err := json.Unmarshal(b, &items); err != nil {
			return nil, fmt.Errorf("hub: tree of %s: %w", repo, err)
		}
		for _, it := range items {
			if it.Type == "file" {
				out = append(out, it)
			}
		}
		u = ""
		if m := linkNextRe.FindStringSubmatch(h.Get("Link")); m != nil {
			u = m[1]
			if !c.sameOrigin(u) {
				return nil, fmt.Errorf("hub: tree of %s: next page %s is not on %s", repo, stripQuery(u), c.endpoint())
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// LocalFile is one file of the folder to publish.
type LocalFile struct {
	Path   string `json:"path"` // relative, forward slashes
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	// GitOID is the git blob id of the bytes (what the tree shows for regular files).
	GitOID string `json:"git_oid"`
	abs    string
	sample []byte
}

// ScanFolder lists the files of dir (skipping names that start with a dot), sorted.
func ScanFolder(dir string) ([]LocalFile, error) {
	var out []LocalFile
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file (links are not published)", p)
		}
		rel, _ := filepath.Rel(dir, p)
		lf, err := hashFile(p)
		if err != nil {
			return err
		}
		lf.Path = filepath.ToSlash(rel)
		out = append(out, lf)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("hub: scanning %s: %w", dir, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("hub: %s has no files to publish", dir)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func hashFile(p string) (LocalFile, error) {
	f, err := os.Open(p)
	if err != nil {
		return LocalFile{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return LocalFile{}, err
	}
	s2 := schemas.NewHasher()
	s1 := sha1.New()
	fmt.Fprintf(s1, "blob %d\x00", st.Size())
	sample := make([]byte, 512)
	n, _ := io.ReadFull(f, sample)
	sample = sample[:n]
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return LocalFile{}, err
	}
	size, err := io.Copy(io.MultiWriter(s1, s2), f)
	if err != nil {
		return LocalFile{}, err
	}
	return LocalFile{Size: size, SHA256: s2.Digest().Hex(), GitOID: hex.EncodeToString(s1.Sum(nil)), abs: p, sample: sample}, nil
}

// Change actions of a plan.
const (
	ChangeAdd       = "add"
	ChangeUpdate    = "update"
	ChangeDelete    = "delete"
	ChangeUnchanged = "unchanged"
)

// Change is what a publish does to one path.
type Change struct {
	Path   string `json:"path"`
	Action string `json:"action"`
	Size   int64  `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
}

// Plan is what publishing a folder would change.
type Plan struct {
	Repo     string `json:"repo"`
	Revision string `json:"revision"`
	// RepoExists is false when the repository has to be created first.
	RepoExists bool `json:"repo_exists"`
	// Parent is the commit the plan was made against; the commit names it, so a change
	// pushed by someone else in between makes the publish fail instead of merging blindly.
	Parent  string   `json:"parent,omitempty"`
	Changes []Change `json:"changes"`
	files   map[string]LocalFile
}

// Counts returns how many paths each action touches.
func (p *Plan) Counts() map[string]int {
	m := map[string]int{}
	for _, c := range p.Changes {
		m[c.Action]++
	}
	return m
}

// Pending reports whether the plan changes anything.
func (p *Plan) Pending() bool {
	for _, c := range p.Changes {
		if c.Action != ChangeUnchanged {
			return true
		}
	}
	return false
}

// DeletePrefix is the folder whose remote files are deleted when the local folder no
// longer has them.
const DeletePrefix = "data/"

// MakePlan compares the folder dir with the repository's revision.
func (c *Client) MakePlan(ctx context.Context, repo, rev, dir string) (*Plan, error) {
	if err := CheckRepo(repo); err != nil {
		return nil, err
	}
	local, err := ScanFolder(dir)
	if err != nil {
		return nil, err
	}
	p := &Plan{Repo: repo, Revision: rev, files: map[string]LocalFile{}}
	head, err := c.Head(ctx, repo, rev)
	var remote []RemoteFile
	switch {
	case errors.Is(err, ErrRepoNotFound):
	case err != nil:
		return nil, err
	default:
		p.RepoExists, p.Parent = true, head
		if remote, err = c.Tree(ctx, repo, rev); err != nil {
			return nil, err
		}
	}
	byPath := make(map[string]RemoteFile, len(remote))
	for _, r := range remote {
		byPath[r.Path] = r
	}
	for _, l := range local {
		p.files[l.Path] = l
		ch := Change{Path: l.Path, Size: l.Size, SHA256: l.SHA256, Action: ChangeAdd}
		if r, ok := byPath[l.Path]; ok {
			same := r.OID == l.GitOID
			if r.LFS != nil {
				same = r.LFS.OID == l.SHA256
			}
			ch.Action = ChangeUpdate
			if same {
				ch.Action = ChangeUnchanged
			}
		}
		p.Changes = append(p.Changes, ch)
	}
	for _, r := range remote {
		if _, ok := p.files[r.Path]; !ok && strings.HasPrefix(r.Path, DeletePrefix) {
			p.Changes = append(p.Changes, Change{Path: r.Path, Action: ChangeDelete})
		}
	}
	sort.Slice(p.Changes, func(i, j int) bool { return p.Changes[i].Path < p.Changes[j].Path })
	return p, nil
}

// Result says what Publish did.
type Result struct {
	Plan      *Plan  `json:"plan"`
	Created   bool   `json:"created"`
	Commit    string `json:"commit,omitempty"`
	CommitURL string `json:"commit_url,omitempty"`
	Uploaded  int    `json:"lfs_uploaded"`
}

// PublishOptions configure Publish.
type PublishOptions struct {
	Revision string
	Summary  string
	// Private applies when the repository is created.
	Private bool
}

// Publish uploads the folder dir to the dataset repository repo in one commit, creating
// the repository when it is missing. Unchanged files are not sent; when nothing changed,
// no commit is made.
func (c *Client) Publish(ctx context.Context, repo, dir string, opts PublishOptions) (*Result, error) {
	if c.Token == "" {
		return nil, fmt.Errorf("hub: no token: set %s to a token with write access to %s", EnvToken, repo)
	}
	rev := opts.Revision
	if rev == "" {
		rev = DefaultRevision
	}
	plan, err := c.MakePlan(ctx, repo, rev, dir)
	if err != nil {
		return nil, err
	}
	res := &Result{Plan: plan}
	if !plan.RepoExists {
		if err := c.CreateRepo(ctx, repo, opts.Private); err != nil {
			return nil, err
		}
		res.Created = true
		// A new repository has a first commit (its .gitattributes); plan against it.
		if plan, err = c.MakePlan(ctx, repo, rev, dir); err != nil {
			return nil, err
		}
		res.Plan = plan
	}
	if !plan.Pending() {
		return res, nil
	}
	var uploads []LocalFile
	for _, ch := range plan.Changes {
		if ch.Action == ChangeAdd || ch.Action == ChangeUpdate {
			uploads = append(uploads, plan.files[ch.Path])
		}
	}
	modes, err := c.preupload(ctx, repo, rev, uploads)
	if err != nil {
		return nil, err
	}
	var lfs []LocalFile
	for _, f := range uploads {
		if modes[f.Path] == "lfs" {
			lfs = append(lfs, f)
		}
	}
	if res.Uploaded, err = c.uploadLFS(ctx, repo, rev, lfs); err != nil {
		return nil, err
	}
	summary := opts.Summary
	if summary == "" {
		summary = "Publish EnvGap"
	}
	commit, err := c.commit(ctx, repo, rev, summary, plan, modes)
	if err != nil {
		return nil, err
	}
	res.Commit, res.CommitURL = commit.OID, commit.URL
	return res, nil
}

// preupload asks the Hub which files go through LFS, 256 files per call.
func (c *Client) preupload(ctx context.Context, repo, rev string, files []LocalFile) (map[string]string, error) {
	modes := map[string]string{}
	for start := 0; start < len(files); start += 256 {
		batch := files[start:min(start+256, len(files))]
		type item struct {
			Path   string `json:"path"`
			Sample string `json:"sample"`
			Size   int64  `json:"size"`
			SHA    string `json:"sha"`
		}
		req := struct {
			Files []item `json:"files"`
		}{}
		for _, f := range batch {
			req.Files = append(req.Files, item{f.Path, base64.StdEncoding.EncodeToString(f.sample), f.Size, f.SHA256})
		}
		body, _ := json.Marshal(req)
		b, _, err := c.do(ctx, http.MethodPost, c.apiURL(repo, "preupload", rev), bytes.NewReader(body),
			http.Header{"Content-Type": {"application/json"}}, true)
		if err != nil {
			return nil, err
		}
		var ans struct {
			Files []struct {
				Path       string `json:"path"`
				UploadMode string `json:"uploadMode"`
			} `json:"files"`
		}
		if err := json.Unmarshal(b, &ans); err != nil {
			return nil, fmt.Errorf("hub: preupload: %w", err)
		}
		for _, f := range ans.Files {
			if f.UploadMode != "lfs" && f.UploadMode != "regular" {
				return nil, fmt.Errorf("hub: preupload: %s: upload mode %q is neither lfs nor regular", f.Path, f.UploadMode)
			}
			modes[f.Path] = f.UploadMode
		}
		for _, f := range batch {
			if modes[f.Path] == "" {
				return nil, fmt.Errorf("hub: preupload: no upload mode for %s", f.Path)
			}
		}
	}
	return modes, nil
}

type lfsAction struct {
	Href   string            `json:"href"`
	Header map[string]string `json:"header,omitempty"`
}

type lfsObject struct {
	OID     string `json:"oid"`
	Size    int64  `json:"size"`
	Actions *struct {
		Upload *lfsAction `json:"upload,omitempty"`
		Verify *lfsAction `json:"verify,omitempty"`
	} `json:"actions,omitempty"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

var lfsHeaders = http.Header{"Accept": {"application/vnd.git-lfs+json"}, "Content-Type": {"application/vnd.git-lfs+json"}}

// uploadLFS runs the git-lfs batch flow for the files; it returns how many were uploaded
// (objects the Hub already has are skipped).
func (c *Client) uploadLFS(ctx context.Context, repo, rev string, files []LocalFile) (int, error) {
	if len(files) == 0 {
		return 0, nil
	}
	byOID := map[string]LocalFile{}
	uploaded := 0
	for start := 0; start < len(files); start += 256 {
		batch := files[start:min(start+256, len(files))]
		req := map[string]any{"operation": "upload", "transfers": []string{"basic", "multipart"},
			"hash_algo": "sha256", "ref": map[string]string{"name": rev}}
		objs := []map[string]any{}
		for _, f := range batch {
			byOID[f.SHA256] = f
			objs = append(objs, map[string]any{"oid": f.SHA256, "size": f.Size})
		}
		req["objects"] = objs
		body, _ := json.Marshal(req)
		u := fmt.Sprintf("%s/datasets/%s.git/info/lfs/objects/batch", c.endpoint(), repo)
		b, _, err := c.do(ctx, http.MethodPost, u, bytes.NewReader(body), lfsHeaders, true)
		if err != nil {
			return uploaded, err
		}
		var ans struct {
			Objects []lfsObject `json:"objects"`
		}
		if err := json.Unmarshal(b, &ans); err != nil {
			return uploaded, fmt.Errorf("hub: lfs batch: %w", err)
		}
		for _, o := range ans.Objects {
			f, ok := byOID[o.OID]
			if !ok {
				return uploaded, fmt.Errorf("hub: lfs batch: the Hub answered for an object it was not asked about (%s)", o.OID)
			}
			if o.Error != nil {
				return uploaded, fmt.Errorf("hub: lfs batch: %s: %d %s", f.Path, o.Error.Code, o.Error.Message)
			}
			if o.Actions == nil || o.Actions.Upload == nil {
				continue // already stored
			}
			if err := c.putObject(ctx, f, o.Actions.Upload); err != nil {
				return uploaded, err
			}
			if v := o.Actions.Verify; v != nil {
				body, _ := json.Marshal(map[string]any{"oid": f.SHA256, "size": f.Size})
				h := http.Header{"Content-Type": {"application/json"}}
				for k, val := range v.Header {
					h.Set(k, val)
				}
				if _, _, err := c.do(ctx, http.MethodPost, v.Href, bytes.NewReader(body), h, true); err != nil {
					return uploaded, fmt.Errorf("hub: verifying %s: %w", f.Path, err)
				}
			}
			uploaded++
		}
	}
	return uploaded, nil
}

// putObject uploads one LFS object, in one PUT or, when the action names a chunk size, in
// parts followed by a completion request. Upload URLs are presigned: no token goes there.
func (c *Client) putObject(ctx context.Context, f LocalFile, a *lfsAction) error {
	fh, err := os.Open(f.abs)
	if err != nil {
		return fmt.Errorf("hub: %s: %w", f.Path, err)
	}
	defer fh.Close()
	chunk, isMulti := a.Header["chunk_size"]
	if !isMulti {
		h := http.Header{}
		for k, v := range a.Header {
			h.Set(k, v)
		}
		req := io.NewSectionReader(fh, 0, f.Size)
		if _, _, err := c.doSized(ctx, http.MethodPut, a.Href, req, f.Size, h); err != nil {
			return fmt.Errorf("hub: uploading %s: %w", f.Path, err)
		}
		return nil
	}
	size, err := strconv.ParseInt(chunk, 10, 64)
	if err != nil || size <= 0 {
		return fmt.Errorf("hub: uploading %s: chunk_size %q is not a positive integer", f.Path, chunk)
	}
	var parts []int
	for k := range a.Header {
		if n, err := strconv.Atoi(k); err == nil && n > 0 {
			parts = append(parts, n)
		}
	}
	sort.Ints(parts)
	if int64(len(parts)) != (f.Size+size-1)/size {
		return fmt.Errorf("hub: uploading %s: %d part URLs for %d bytes in chunks of %d", f.Path, len(parts), f.Size, size)
	}
	type part struct {
		PartNumber int    `json:"partNumber"`
		ETag       string `json:"etag"`
	}
	var done []part
	for i, n := range parts {
		off := int64(i) * size
		sec := io.NewSectionReader(fh, off, min(size, f.Size-off))
		_, h, err := c.doSized(ctx, http.MethodPut, a.Header[strconv.Itoa(n)], sec, sec.Size(), nil)
		if err != nil {
			return fmt.Errorf("hub: uploading %s part %d: %w", f.Path, n, err)
		}
		etag := h.Get("ETag")
		if etag == "" {
			return fmt.Errorf("hub: uploading %s part %d: no ETag in the answer", f.Path, n)
		}
		done = append(done, part{i + 1, etag})
	}
	body, _ := json.Marshal(map[string]any{"oid": f.SHA256, "parts": done})
	if _, _, err := c.do(ctx, http.MethodPost, a.Href, bytes.NewReader(body), lfsHeaders, false); err != nil {
		return fmt.Errorf("hub: completing the upload of %s: %w", f.Path, err)
	}
	return nil
}

// doSized sends a body of known length without the token.
func (c *Client) doSized(ctx context.Context, method, u string, body io.Reader, size int64, h http.Header) ([]byte, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", method, stripQuery(u), err)
	}
	req.ContentLength = size
	for k, vs := range h {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", method, stripQuery(u), unwrapURLError(err))
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return nil, resp.Header, &HTTPError{Method: method, URL: stripQuery(u), Status: resp.StatusCode, Msg: c.redact(errorMessage(resp.Header, b))}
	}
	return b, resp.Header, nil
}

type commitAnswer struct {
	OID string
	URL string
}

// commit sends the NDJSON commit: a header line, then one line per file.
func (c *Client) commit(ctx context.Context, repo, rev, summary string, plan *Plan, modes map[string]string) (commitAnswer, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf) // one JSON value per line
	enc.SetEscapeHTML(false)
	header := map[string]string{"summary": summary, "description": ""}
	if plan.Parent != "" {
		header["parentCommit"] = plan.Parent
	}
	if err := enc.Encode(map[string]any{"key": "header", "value": header}); err != nil {
		return commitAnswer{}, err
	}
	for _, ch := range plan.Changes {
		var line map[string]any
		switch ch.Action {
		case ChangeAdd, ChangeUpdate:
			f := plan.files[ch.Path]
			if modes[ch.Path] == "lfs" {
				line = map[string]any{"key": "lfsFile", "value": map[string]any{"path": f.Path, "algo": "sha256", "oid": f.SHA256, "size": f.Size}}
			} else {
				b, err := os.ReadFile(f.abs)
				if err != nil {
					return commitAnswer{}, fmt.Errorf("hub: %s: %w", f.Path, err)
				}
				if int64(len(b)) != f.Size || schemas.Hash(b).Hex() != f.SHA256 {
					return commitAnswer{}, fmt.Errorf("hub: %s changed while publishing; run the publish again", f.Path)
				}
				line = map[string]any{"key": "file", "value": map[string]any{"content": base64.StdEncoding.EncodeToString(b), "path": f.Path, "encoding": "base64"}}
			}
		case ChangeDelete:
			line = map[string]any{"key": "deletedFile", "value": map[string]any{"path": ch.Path}}
		default:
			continue
		}
		if err := enc.Encode(line); err != nil {
			return commitAnswer{}, err
		}
	}
	b, _, err := c.do(ctx, http.MethodPost, c.apiURL(repo, "commit", rev), &buf,
		http.Header{"Content-Type": {"application/x-ndjson"}}, true)
	if err != nil {
		return commitAnswer{}, err
	}
	var ans struct {
		Success   bool   `json:"success"`
		CommitOID string `json:"commitOid"`
		CommitURL string `json:"commitUrl"`
	}
	if err := json.Unmarshal(b, &ans); err != nil {
		return commitAnswer{}, fmt.Errorf("hub: commit: %w", err)
	}
	if !ans.Success || ans.CommitOID == "" {
		return commitAnswer{}, fmt.Errorf("hub: commit: the Hub did not confirm the commit")
	}
	return commitAnswer{OID: ans.CommitOID, URL: ans.CommitURL}, nil
}
