// Package hubtest is an in-process fake of the Hugging Face Hub's HTTP API for tests: the
// endpoints package hub uses, with the Hub's wire format and its strictness. It checks the
// Bearer token, refuses malformed NDJSON, unknown keys and unknown LFS objects, stores what
// was committed, and records every request (method, path, whether it carried a token) so a
// test can check where the token went.
package hubtest

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Request is one request the fake received.
type Request struct {
	Method string
	Path   string
	// Auth is the Authorization header as received.
	Auth string
	Body []byte
}

// File is one file of a fake repository.
type File struct {
	Content []byte
	LFS     bool
}

// Commit is one commit of a fake repository.
type Commit struct {
	OID     string
	Summary string
	Parent  string
	Lines   []string // the NDJSON keys, in order
}

type repo struct {
	private bool
	files   map[string]File
	commits []Commit
	// at holds the files as each commit left them, by commit id (served at a revision).
	at map[string]map[string]File
}

// Hub is the fake. Create it with New; its URL is Server.URL.
type Hub struct {
	Server *httptest.Server
	// Token is the only token with write access.
	Token string
	// PageSize is how many tree entries one page holds (Link: rel="next" for more).
	PageSize int
	// LFSThreshold: files at least this large go through LFS (besides *.parquet and *.png).
	LFSThreshold int64
	// ChunkSize, when > 0, makes LFS uploads of larger objects multipart.
	ChunkSize int64

	mu       sync.Mutex
	repos    map[string]*repo
	lfs      map[string][]byte
	requests []Request
	seq      int
}

// New starts a fake Hub that accepts token for writes.
func New(token string) *Hub {
	h := &Hub{Token: token, PageSize: 1000, LFSThreshold: 10 << 20, repos: map[string]*repo{}, lfs: map[string][]byte{}}
	h.Server = httptest.NewServer(http.HandlerFunc(h.serve))
	return h
}

// Close stops the server.
func (h *Hub) Close() { h.Server.Close() }

// Requests returns every request received so far.
func (h *Hub) Requests() []Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Request(nil), h.requests...)
}

// Files returns the files of a repository's head, LFS files resolved to their bytes.
func (h *Hub) Files(name string) map[string][]byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.repos[name]
	if r == nil {
		return nil
	}
	out := map[string][]byte{}
	for p, f := range r.files {
		out[p] = f.Content
	}
	return out
}

// Commits returns a repository's commits, oldest first.
func (h *Hub) Commits(name string) []Commit {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r := h.repos[name]; r != nil {
		return append([]Commit(nil), r.commits...)
	}
	return nil
}

// AddRepo creates a repository with files (as if committed), for test setup.
func (h *Hub) AddRepo(name string, files map[string][]byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.newRepo(name, false)
	for p, b := range files {
		r.files[p] = File{Content: b, LFS: h.isLFS(p, int64(len(b)))}
		if r.files[p].LFS {
			h.lfs[hexSHA256(b)] = b
		}
	}
	h.commitLocked(r, "setup", "", nil)
}

func (h *Hub) newRepo(name string, private bool) *repo {
	r := &repo{private: private, at: map[string]map[string]File{}, files: map[string]File{".gitattributes": {Content: []byte("*.parquet filter=lfs diff=lfs merge=lfs -text\n*.png filter=lfs diff=lfs merge=lfs -text\n")}}}
	h.repos[name] = r
	h.commitLocked(r, "initial commit", "", nil)
	return r
}

func (h *Hub) commitLocked(r *repo, summary, parent string, lines []string) string {
	h.seq++
	sum := sha1.Sum([]byte("commit " + strconv.Itoa(h.seq)))
	oid := hex.EncodeToString(sum[:])
	r.commits = append(r.commits, Commit{OID: oid, Summary: summary, Parent: parent, Lines: lines})
	snap := make(map[string]File, len(r.files))
	for p, f := range r.files {
		snap[p] = f
	}
	r.at[oid] = snap
	return oid
}

// SetPrivate makes a repository private (reads then need the token) or public.
func (h *Hub) SetPrivate(name string, private bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r := h.repos[name]; r != nil {
		r.private = private
	}
}

func (h *Hub) isLFS(path string, size int64) bool {
	return strings.HasSuffix(path, ".parquet") || strings.HasSuffix(path, ".png") || size >= h.LFSThreshold
}

func hexSHA256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func gitOID(b []byte) string {
	s := sha1.New()
	fmt.Fprintf(s, "blob %d\x00", len(b))
	s.Write(b)
	return hex.EncodeToString(s.Sum(nil))
}

func fail(w http.ResponseWriter, status int, code, msg string) {
	if code != "" {
		w.Header().Set("X-Error-Code", code)
	}
	w.Header().Set("X-Error-Message", msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// auth checks the Authorization header: a wrong token is refused everywhere; a missing
// one only where write access is needed.
func (h *Hub) auth(w http.ResponseWriter, r *http.Request, write bool) bool {
	a := r.Header.Get("Authorization")
	if a == "" {
		if write {
			fail(w, http.StatusUnauthorized, "", "Invalid credentials in Authorization header")
			return false
		}
		return true
	}
	if a != "Bearer "+h.Token {
		fail(w, http.StatusUnauthorized, "", "Invalid credentials in Authorization header")
		return false
	}
	return true
}

// strictDecode decodes JSON into v, refusing unknown fields and trailing data.
func strictDecode(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data")
	}
	return nil
}

func (h *Hub) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	h.requests = append(h.requests, Request{Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Body: body})
	h.mu.Unlock()
	p := r.URL.Path
	switch {
	case r.Method == http.MethodPost && p == "/api/repos/create":
		h.createRepo(w, r, body)
	case strings.HasPrefix(p, "/api/datasets/"):
		h.api(w, r, strings.TrimPrefix(p, "/api/datasets/"), body)
	case r.Method == http.MethodPost && strings.HasPrefix(p, "/datasets/") && strings.HasSuffix(p, ".git/info/lfs/objects/batch"):
		h.lfsBatch(w, r, strings.TrimSuffix(strings.TrimPrefix(p, "/datasets/"), ".git/info/lfs/objects/batch"), body)
	case r.Method == http.MethodPost && strings.HasPrefix(p, "/datasets/") && strings.HasSuffix(p, ".git/info/lfs/objects/verify"):
		h.lfsVerify(w, r, body)
	case r.Method == http.MethodGet && strings.HasPrefix(p, "/datasets/") && strings.Contains(p, "/resolve/"):
		h.resolve(w, r, strings.TrimPrefix(p, "/datasets/"))
	case r.Method == http.MethodGet && strings.HasPrefix(p, "/lfs-download/"):
		h.lfsDownload(w, strings.TrimPrefix(p, "/lfs-download/"))
	case strings.HasPrefix(p, "/lfs-upload/"):
		h.lfsUpload(w, r, strings.TrimPrefix(p, "/lfs-upload/"), body)
	default:
		fail(w, http.StatusNotFound, "", "no such endpoint: "+r.Method+" "+p)
	}
}

func (h *Hub) createRepo(w http.ResponseWriter, r *http.Request, body []byte) {
	if !h.auth(w, r, true) {
		return
	}
	var req struct {
		Name         string `json:"name"`
		Organization string `json:"organization"`
		Type         string `json:"type"`
		Private      *bool  `json:"private"`
	}
	if err := strictDecode(body, &req); err != nil {
		fail(w, http.StatusBadRequest, "", "invalid body: "+err.Error())
		return
	}
	if req.Type != "dataset" || req.Name == "" || req.Organization == "" {
		fail(w, http.StatusBadRequest, "", "want name, organization and type dataset")
		return
	}
	name := req.Organization + "/" + req.Name
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.repos[name] != nil {
		fail(w, http.StatusConflict, "", "You already created this dataset repo")
		return
	}
	h.newRepo(name, req.Private != nil && *req.Private)
	reply(w, map[string]string{"url": h.Server.URL + "/datasets/" + name, "name": name})
}

// api serves /api/datasets/{owner}/{name}/{verb}/{rev}.
func (h *Hub) api(w http.ResponseWriter, r *http.Request, rest string, body []byte) {
	parts := strings.SplitN(rest, "/", 4)
	if len(parts) < 4 {
		fail(w, http.StatusNotFound, "", "no such endpoint")
		return
	}
	name, verb, rev := parts[0]+"/"+parts[1], parts[2], parts[3]
	write := r.Method != http.MethodGet
	if !h.auth(w, r, write) {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	rp := h.repos[name]
	if rp == nil || (rp.private && r.Header.Get("Authorization") == "") {
		repoNotFound(w, r)
		return
	}
	head := rp.commits[len(rp.commits)-1].OID
	at, files := rp.revision(rev)
	if files == nil || (write && rev != "main") {
		fail(w, http.StatusNotFound, "RevisionNotFound", "Invalid rev id: "+rev)
		return
	}
	switch {
	case r.Method == http.MethodGet && verb == "revision":
		reply(w, map[string]any{"id": name, "sha": at, "private": rp.private})
	case r.Method == http.MethodGet && verb == "tree":
		h.tree(w, r, files)
	case r.Method == http.MethodPost && verb == "preupload":
		h.preupload(w, body)
	case r.Method == http.MethodPost && verb == "commit":
		h.commit(w, r, name, rp, head, body)
	default:
		fail(w, http.StatusNotFound, "", "no such endpoint")
	}
}

// revision resolves a revision the Hub's way: main (the head) or a full commit id; it
// returns the commit and its files (nil when the revision is unknown).
func (rp *repo) revision(rev string) (string, map[string]File) {
	if rev == "main" {
		rev = rp.commits[len(rp.commits)-1].OID
	}
	return rev, rp.at[rev]
}

// resolve serves GET /datasets/{owner}/{name}/resolve/{rev}/{path}: the file's bytes as
// the revision holds them, with X-Repo-Commit; an LFS file is a 302 to its storage URL,
// as the Hub redirects to its CDN (which takes no token).
func (h *Hub) resolve(w http.ResponseWriter, r *http.Request, rest string) {
	parts := strings.SplitN(rest, "/", 5)
	if len(parts) < 5 || parts[2] != "resolve" {
		fail(w, http.StatusNotFound, "", "no such endpoint")
		return
	}
	name, rev, path := parts[0]+"/"+parts[1], parts[3], parts[4]
	if !h.auth(w, r, false) {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	rp := h.repos[name]
	if rp == nil || (rp.private && r.Header.Get("Authorization") == "") {
		repoNotFound(w, r)
		return
	}
	at, files := rp.revision(rev)
	if files == nil {
		fail(w, http.StatusNotFound, "RevisionNotFound", "Invalid rev id: "+rev)
		return
	}
	f, ok := files[path]
	if !ok {
		fail(w, http.StatusNotFound, "EntryNotFound", path+" does not exist on \""+rev+"\"")
		return
	}
	w.Header().Set("X-Repo-Commit", at)
	if f.LFS {
		w.Header().Set("Location", h.Server.URL+"/lfs-download/"+hexSHA256(f.Content))
		w.WriteHeader(http.StatusFound)
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(f.Content)))
	w.Write(f.Content)
}

// lfsDownload serves an LFS object by its SHA-256, as the storage behind the Hub's
// redirect does.
func (h *Hub) lfsDownload(w http.ResponseWriter, oid string) {
	h.mu.Lock()
	b, ok := h.lfs[oid]
	h.mu.Unlock()
	if !ok {
		fail(w, http.StatusNotFound, "", "no such object")
		return
	}
	w.Write(b)
}

func (h *Hub) tree(w http.ResponseWriter, r *http.Request, files map[string]File) {
	if r.URL.Query().Get("recursive") != "true" && r.URL.Query().Get("recursive") != "True" {
		fail(w, http.StatusBadRequest, "", "this fake only serves recursive trees")
		return
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	start, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
	end := min(start+h.PageSize, len(paths))
	items := []map[string]any{}
	for _, p := range paths[start:end] {
		f := files[p]
		it := map[string]any{"type": "file", "path": p, "size": len(f.Content), "oid": gitOID(f.Content)}
		if f.LFS {
			ptr := fmt.Sprintf("version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n", hexSHA256(f.Content), len(f.Content))
			it["oid"] = gitOID([]byte(ptr))
			it["lfs"] = map[string]any{"oid": hexSHA256(f.Content), "size": len(f.Content), "pointerSize": len(ptr)}
		}
		items = append(items, it)
	}
	if end < len(paths) {
		next := fmt.Sprintf("%s%s?recursive=true&cursor=%d", h.Server.URL, r.URL.Path, end)
		w.Header().Set("Link", fmt.Sprintf("<%s>; rel=\"next\"", next))
	}
	reply(w, items)
}

func (h *Hub) preupload(w http.ResponseWriter, body []byte) {
	var req struct {
		Files []struct {
			Path   string `json:"path"`
			Sample string `json:"sample"`
			Size   int64  `json:"size"`
			SHA    string `json:"sha"`
		} `json:"files"`
	}
	if err := strictDecode(body, &req); err != nil {
		fail(w, http.StatusBadRequest, "", "invalid body: "+err.Error())
		return
	}
	out := []map[string]any{}
	for _, f := range req.Files {
		if _, err := base64.StdEncoding.DecodeString(f.Sample); err != nil || f.Path == "" {
			fail(w, http.StatusBadRequest, "", "invalid file entry")
			return
		}
		mode := "regular"
		if h.isLFS(f.Path, f.Size) {
			mode = "lfs"
		}
		out = append(out, map[string]any{"path": f.Path, "uploadMode": mode, "shouldIgnore": false})
	}
	reply(w, map[string]any{"files": out})
}

func (h *Hub) commit(w http.ResponseWriter, r *http.Request, name string, rp *repo, head string, body []byte) {
	if ct := r.Header.Get("Content-Type"); ct != "application/x-ndjson" {
		fail(w, http.StatusBadRequest, "", "want Content-Type application/x-ndjson, got "+ct)
		return
	}
	type header struct {
		Summary      string  `json:"summary"`
		Description  *string `json:"description"`
		ParentCommit *string `json:"parentCommit"`
	}
	type file struct {
		Content  string `json:"content"`
		Path     string `json:"path"`
		Encoding string `json:"encoding"`
	}
	type lfsFile struct {
		Path string `json:"path"`
		Algo string `json:"algo"`
		OID  string `json:"oid"`
		Size *int64 `json:"size"`
	}
	type deleted struct {
		Path string `json:"path"`
	}
	next := map[string]File{}
	for p, f := range rp.files {
		next[p] = f
	}
	var keys []string
	var hd *header
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var item struct {
			Key   string          `json:"key"`
			Value json.RawMessage `json:"value"`
		}
		if err := strictDecode(line, &item); err != nil {
			fail(w, http.StatusBadRequest, "", fmt.Sprintf("line %d: invalid NDJSON: %v", n, err))
			return
		}
		if (hd == nil) != (item.Key == "header") {
			fail(w, http.StatusBadRequest, "", fmt.Sprintf("line %d: the first line, and only it, must be the header", n))
			return
		}
		keys = append(keys, item.Key)
		var err error
		switch item.Key {
		case "header":
			hd = &header{}
			if err = strictDecode(item.Value, hd); err == nil && hd.Summary == "" {
				err = fmt.Errorf("empty summary")
			}
		case "file":
			var f file
			if err = strictDecode(item.Value, &f); err == nil {
				var b []byte
				if f.Encoding != "base64" {
					err = fmt.Errorf("encoding %q", f.Encoding)
				} else if b, err = base64.StdEncoding.DecodeString(f.Content); err == nil {
					if f.Path == "" {
						err = fmt.Errorf("empty path")
					}
					next[f.Path] = File{Content: b}
				}
			}
		case "lfsFile":
			var f lfsFile
			if err = strictDecode(item.Value, &f); err == nil {
				b, ok := h.lfs[f.OID]
				switch {
				case f.Algo != "sha256":
					err = fmt.Errorf("algo %q", f.Algo)
				case !ok:
					err = fmt.Errorf("lfs object %s was never uploaded", f.OID)
				case f.Size != nil && *f.Size != int64(len(b)):
					err = fmt.Errorf("lfs object %s has %d bytes, not %d", f.OID, len(b), *f.Size)
				default:
					next[f.Path] = File{Content: b, LFS: true}
				}
			}
		case "deletedFile":
			var d deleted
			if err = strictDecode(item.Value, &d); err == nil {
				if _, ok := next[d.Path]; !ok {
					err = fmt.Errorf("A file with this name doesn't exist: %s", d.Path)
				}
				delete(next, d.Path)
			}
		default:
			err = fmt.Errorf("unknown key %q", item.Key)
		}
		if err != nil {
			fail(w, http.StatusBadRequest, "", fmt.Sprintf("line %d (%s): %v", n, item.Key, err))
			return
		}
	}
	if err := sc.Err(); err != nil || hd == nil {
		fail(w, http.StatusBadRequest, "", "no header line")
		return
	}
	if hd.ParentCommit != nil && *hd.ParentCommit != head {
		fail(w, http.StatusPreconditionFailed, "", "A commit has happened since. Please refresh and try again.")
		return
	}
	rp.files = next
	oid := h.commitLocked(rp, hd.Summary, head, keys)
	reply(w, map[string]any{"success": true, "commitOid": oid, "commitUrl": h.Server.URL + "/datasets/" + name + "/commit/" + oid, "hookOutput": ""})
}

func (h *Hub) lfsBatch(w http.ResponseWriter, r *http.Request, name string, body []byte) {
	if r.Header.Get("Accept") != "application/vnd.git-lfs+json" || r.Header.Get("Content-Type") != "application/vnd.git-lfs+json" {
		fail(w, http.StatusNotAcceptable, "", "want git-lfs media types")
		return
	}
	if !h.auth(w, r, true) {
		return
	}
	var req struct {
		Operation string   `json:"operation"`
		Transfers []string `json:"transfers"`
		HashAlgo  string   `json:"hash_algo"`
		Ref       *struct {
			Name string `json:"name"`
		} `json:"ref"`
		Objects []struct {
			OID  string `json:"oid"`
			Size int64  `json:"size"`
		} `json:"objects"`
	}
	if err := strictDecode(body, &req); err != nil || req.Operation != "upload" || req.HashAlgo != "sha256" {
		fail(w, http.StatusUnprocessableEntity, "", "invalid batch request")
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.repos[name] == nil {
		fail(w, http.StatusNotFound, "RepoNotFound", "Repository not found")
		return
	}
	objs := []map[string]any{}
	for _, o := range req.Objects {
		obj := map[string]any{"oid": o.OID, "size": o.Size}
		if _, ok := h.lfs[o.OID]; !ok {
			href := fmt.Sprintf("%s/lfs-upload/%s?size=%d&X-Signature=presigned", h.Server.URL, o.OID, o.Size)
			up := map[string]any{"href": href}
			if h.ChunkSize > 0 && o.Size > h.ChunkSize {
				hdr := map[string]string{"chunk_size": strconv.FormatInt(h.ChunkSize, 10)}
				for i := int64(0); i*h.ChunkSize < o.Size; i++ {
					hdr[strconv.FormatInt(i+1, 10)] = fmt.Sprintf("%s/lfs-upload/%s/part/%d?X-Signature=presigned", h.Server.URL, o.OID, i+1)
				}
				up["header"] = hdr
			}
			obj["authenticated"] = true
			obj["actions"] = map[string]any{"upload": up,
				"verify": map[string]any{"href": fmt.Sprintf("%s/datasets/%s.git/info/lfs/objects/verify", h.Server.URL, name)}}
		}
		objs = append(objs, obj)
	}
	w.Header().Set("Content-Type", "application/vnd.git-lfs+json")
	json.NewEncoder(w).Encode(map[string]any{"transfer": "basic", "objects": objs})
}

func (h *Hub) lfsUpload(w http.ResponseWriter, r *http.Request, rest string, body []byte) {
	// Presigned storage URLs refuse an Authorization header (as S3 does).
	if r.Header.Get("Authorization") != "" {
		fail(w, http.StatusBadRequest, "", "presigned URL: an Authorization header is not allowed")
		return
	}
	if r.URL.Query().Get("X-Signature") != "presigned" {
		fail(w, http.StatusForbidden, "", "bad signature")
		return
	}
	oid, part, isPart := strings.Cut(rest, "/part/")
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case isPart && r.Method == http.MethodPut:
		h.lfs["part:"+oid+":"+part] = body
		w.Header().Set("ETag", `"`+hexSHA256(body)[:16]+`"`)
		w.WriteHeader(http.StatusOK)
	case r.Method == http.MethodPut:
		if hexSHA256(body) != oid || strconv.Itoa(len(body)) != r.URL.Query().Get("size") {
			fail(w, http.StatusBadRequest, "", "content does not match the oid or size")
			return
		}
		h.lfs[oid] = body
		w.WriteHeader(http.StatusOK)
	case r.Method == http.MethodPost: // multipart completion
		var req struct {
			OID   string `json:"oid"`
			Parts []struct {
				PartNumber int    `json:"partNumber"`
				ETag       string `json:"etag"`
			} `json:"parts"`
		}
		if err := strictDecode(body, &req); err != nil || req.OID != oid {
			fail(w, http.StatusBadRequest, "", "invalid completion")
			return
		}
		var all []byte
		for i, p := range req.Parts {
			b, ok := h.lfs["part:"+oid+":"+strconv.Itoa(p.PartNumber)]
			if !ok || p.PartNumber != i+1 || p.ETag != `"`+hexSHA256(b)[:16]+`"` {
				fail(w, http.StatusBadRequest, "", "part missing or etag mismatch")
				return
			}
			all = append(all, b...)
			delete(h.lfs, "part:"+oid+":"+strconv.Itoa(p.PartNumber))
		}
		if hexSHA256(all) != oid {
			fail(w, http.StatusBadRequest, "", "assembled content does not match the oid")
			return
		}
		h.lfs[oid] = all
		w.WriteHeader(http.StatusOK)
	default:
		fail(w, http.StatusMethodNotAllowed, "", "")
	}
}

func (h *Hub) lfsVerify(w http.ResponseWriter, r *http.Request, body []byte) {
	if !h.auth(w, r, true) {
		return
	}
	var req struct {
		OID  string `json:"oid"`
		Size int64  `json:"size"`
	}
	if err := strictDecode(body, &req); err != nil {
		fail(w, http.StatusBadRequest, "", "invalid body")
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	b, ok := h.lfs[req.OID]
	if !ok || int64(len(b)) != req.Size {
		fail(w, http.StatusNotFound, "", "No file uploaded for oid: "+req.OID)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// repoNotFound answers a read of a repository that does not exist, or is private and the
// request carries no token, as the Hub does: 401 without a token (the Hub does not say
// whether a private repository exists), 404 with one; X-Error-Code RepoNotFound either way.
func repoNotFound(w http.ResponseWriter, r *http.Request) {
	status := http.StatusNotFound
	if r.Header.Get("Authorization") == "" {
		status = http.StatusUnauthorized
	}
	fail(w, status, "RepoNotFound", "Repository Not Found for url: "+r.URL.Path+". Please make sure you specified the correct `repo_id` and `repo_type`. If you are trying to access a private or gated repo, make sure you are authenticated.")
}
