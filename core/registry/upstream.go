package registry

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// httpError is an answer the proxy gives instead of content: a status and a message a
// person can act on. Upstream faults are 502, absent things 404.
type httpError struct {
	status int
	msg    string
	err    error
}

func (e *httpError) Error() string {
	if e.err != nil {
		return e.msg + ": " + e.err.Error()
	}
	return e.msg
}

func (e *httpError) Unwrap() error { return e.err }

func notFound(format string, a ...any) error {
	return &httpError{status: http.StatusNotFound, msg: fmt.Sprintf(format, a...)}
}

func badGateway(err error, format string, a ...any) error {
	return &httpError{status: http.StatusBadGateway, msg: fmt.Sprintf(format, a...), err: err}
}

// statusOf maps an error to the HTTP status the proxy answers with: 404 only for an
// explicit not-found, 502 for everything else that came from upstream or the cache.
func statusOf(err error) int {
	var he *httpError
	if errors.As(err, &he) {
		return he.status
	}
	return http.StatusBadGateway
}

// docMeta is the cached record of one upstream metadata document.
type docMeta struct {
	URL          string    `json:"url"`    // final URL after redirects (base for relative links)
	Accept       string    `json:"accept"` // Accept header sent
	ETag         string    `json:"etag,omitempty"`
	LastModified string    `json:"last_modified,omitempty"`
	SHA256       string    `json:"sha256"` // body in the BlobCache
	Size         int64     `json:"size"`
	FetchedAt    time.Time `json:"fetched_at"` // last time upstream confirmed the body
}

// doc is a cached document with its parsed form (an index the handlers filter per request).
type doc struct {
	meta   docMeta
	parsed any
}

// parseFunc reads a document body and returns its parsed form or an error (malformed).
type parseFunc func(io.Reader) (any, error)

// fetcher talks to upstreams through the caches.
type fetcher struct {
	client       *http.Client
	blobs        BlobCache
	refs         RefStore
	ttl          time.Duration
	timeout      time.Duration
	maxDoc       int64
	staleOnError bool
	tmpDir       string
	now          func() time.Time
	log          *slog.Logger

	flight flightGroup

	mu     sync.Mutex
	parsed map[string]any // key: parser kind + sha256
	order  []string       // FIFO eviction of parsed
	maxPar int

	upstreamRequests counter
}

type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) add(kind string) {
	c.mu.Lock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[kind]++
	c.mu.Unlock()
}

func (c *counter) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.n))
	for k, v := range c.n {
		out[k] = v
	}
	return out
}

func refKey(prefix, s string) string {
	sum := sha256.Sum256([]byte(s))
	return prefix + "/" + hex.EncodeToString(sum[:])
}

// getDoc returns the document at url. A cached copy younger than the TTL (or of any age
// when anyAge is set) is used as is; an older one is revalidated with If-None-Match /
// If-Modified-Since. parse validates and indexes new bodies; its result is memoised by the
// body's digest. kind names the parser for the memo.
func (f *fetcher) getDoc(ctx context.Context, url, accept, kind string, anyAge bool, parse parseFunc) (*doc, error) {
	key := refKey("meta", accept+"\n"+url)
	// lookup returns a usable cached copy, or the stale record to revalidate.
	lookup := func(fresh func(docMeta) bool) (*doc, *docMeta) {
		b, err := f.refs.GetRef(key)
		if err != nil {
			return nil, nil
		}
		var m docMeta
		if json.Unmarshal(b, &m) != nil || m.SHA256 == "" {
			return nil, nil
		}
		if hc, ok := f.blobs.(interface{ Has(string) bool }); ok && !hc.Has(m.SHA256) {
			return nil, nil // the body was evicted from a bounded cache: fetch it again
		}
		if fresh(m) {
			if p, err := f.parsedFor(kind, m.SHA256, parse); err == nil {
				return &doc{meta: m, parsed: p}, nil
			}
			return nil, nil // body gone or unreadable: fetch again
		}
		return nil, &m
	}
	start := f.now()
	d, _ := lookup(func(m docMeta) bool {
		return anyAge || (f.ttl > 0 && start.Sub(m.FetchedAt) < f.ttl)
	})
	if d != nil {
		return d, nil
	}
	v, err := f.flight.do("doc\n"+key, func() (any, error) {
		// Another request may have refreshed the copy since this one looked.
		d, cached := lookup(func(m docMeta) bool {
			return anyAge || (f.ttl > 0 && start.Sub(m.FetchedAt) < f.ttl) || !m.FetchedAt.Before(start)
		})
		if d != nil {
			return d, nil
		}
		return f.fetchDoc(url, accept, key, kind, cached, parse)
	})
	if err != nil {
		return nil, err
	}
	return v.(*doc), nil
}

func (f *fetcher) fetchDoc(url, accept, key, kind string, cached *docMeta, parse parseFunc) (*doc, error) {
	// Shared by every waiting request: not tied to one client's context.
	ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, badGateway(err, "bad upstream url %q", url)
	}
	req.Header.Set("Accept", accept)
	if cached != nil {
		if cached.ETag != "" {
			req.Header.Set("If-None-Match", cached.ETag)
		}
		if cached.LastModified != "" {
			req.Header.Set("If-Modified-Since", cached.LastModified)
		}
	}
	f.upstreamRequests.add("metadata")
	resp, err := f.client.Do(req)
	if err != nil {
		return f.stale(cached, kind, parse, badGateway(err, "upstream %s unreachable", url))
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotModified && cached != nil:
		m := *cached
		m.FetchedAt = f.now()
		if et := resp.Header.Get("ETag"); et != "" {
			m.ETag = et
		}
		p, err := f.parsedFor(kind, m.SHA256, parse)
		if err != nil {
			return nil, badGateway(err, "cached copy of %s unreadable", url)
		}
		f.putMeta(key, m)
		return &doc{meta: m, parsed: p}, nil
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return nil, notFound("not found upstream (%s answered %d)", url, resp.StatusCode)
	case resp.StatusCode != http.StatusOK:
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return f.stale(cached, kind, parse, badGateway(nil, "upstream %s answered %s", url, resp.Status))
	}
	sp, err := f.spool(resp.Body, f.maxDoc, nil)
	if err != nil {
		return f.stale(cached, kind, parse, badGateway(err, "reading %s", url))
	}
	defer sp.close()
	r, err := sp.open()
	if err != nil {
		return nil, badGateway(err, "spool")
	}
	p, err := parse(r)
	r.Close()
	if err != nil {
		return f.stale(cached, kind, parse, badGateway(err, "malformed document from %s", url))
	}
	r, err = sp.open()
	if err != nil {
		return nil, badGateway(err, "spool")
	}
	err = f.blobs.PutBlob(r, sp.sha256)
	r.Close()
	if err != nil {
		return nil, badGateway(err, "caching %s", url)
	}
	m := docMeta{
		URL: resp.Request.URL.String(), Accept: accept, ETag: resp.Header.Get("ETag"),
		LastModified: resp.Header.Get("Last-Modified"), SHA256: sp.sha256, Size: sp.size, FetchedAt: f.now(),
	}
	f.putMeta(key, m)
	f.remember(kind+":"+m.SHA256, p)
	return &doc{meta: m, parsed: p}, nil
}

// stale serves the cached copy when upstream fails (if allowed), else returns err.
func (f *fetcher) stale(cached *docMeta, kind string, parse parseFunc, err error) (*doc, error) {
	f.log.Warn("registry upstream fault", "err", err)
	if cached == nil || !f.staleOnError {
		return nil, err
	}
	p, perr := f.parsedFor(kind, cached.SHA256, parse)
	if perr != nil {
		return nil, err
	}
	f.log.Warn("serving stale cached copy", "url", cached.URL, "fetched_at", cached.FetchedAt)
	return &doc{meta: *cached, parsed: p}, nil
}

func (f *fetcher) putMeta(key string, m docMeta) {
	b, _ := json.Marshal(m)
	if err := f.refs.PutRef(key, b); err != nil {
		f.log.Warn("caching validators failed", "url", m.URL, "err", err)
	}
}

func (f *fetcher) parsedFor(kind, sha string, parse parseFunc) (any, error) {
	k := kind + ":" + sha
	f.mu.Lock()
	p, ok := f.parsed[k]
	f.mu.Unlock()
	if ok {
		return p, nil
	}
	v, err := f.flight.do("parse\n"+k, func() (any, error) {
		rc, err := f.blobs.OpenBlob(sha)
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		p, err := parse(rc)
		if err != nil {
			return nil, err
		}
		f.remember(k, p)
		return p, nil
	})
	return v, err
}

func (f *fetcher) remember(k string, p any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.parsed[k]; ok {
		return
	}
	f.parsed[k] = p
	f.order = append(f.order, k)
	for len(f.order) > f.maxPar {
		delete(f.parsed, f.order[0])
		f.order = f.order[1:]
	}
}

// digests are the hashes an artifact is known by before download. Any that is set is
// verified; at least the SHA-256 is computed for the cache.
type digests struct {
	sha256    string // hex
	integrity string // SRI, e.g. "sha512-<base64>"
	sha1      string // hex (npm shasum)
}

// aliasKey names the ref that maps a non-SHA-256 identity (an SRI string or, lacking any
// digest, a URL) to the SHA-256 of the cached bytes.
func (d digests) aliasKey(url string) string {
	switch {
	case d.integrity != "":
		return refKey("alias", "sri\n"+d.integrity)
	case d.sha1 != "":
		return refKey("alias", "sha1\n"+d.sha1)
	}
	return refKey("alias", "url\n"+url)
}

// getBlob makes sure the artifact at url is in the BlobCache and returns its SHA-256.
// The second request for the same artifact never goes upstream. A digest mismatch is a 502.
func (f *fetcher) getBlob(ctx context.Context, url string, want digests) (string, error) {
	sha := want.sha256
	if sha == "" {
		if b, err := f.refs.GetRef(want.aliasKey(url)); err == nil && validHex(string(b)) {
			sha = string(b)
		}
	}
	if sha != "" {
		if rc, err := f.blobs.OpenBlob(sha); err == nil {
			rc.Close()
			return sha, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", badGateway(err, "artifact cache")
		}
	}
	v, err := f.flight.do("blob\n"+url, func() (any, error) {
		if want.sha256 != "" {
			if rc, err := f.blobs.OpenBlob(want.sha256); err == nil {
				rc.Close()
				return want.sha256, nil
			}
		} else if b, err := f.refs.GetRef(want.aliasKey(url)); err == nil && validHex(string(b)) {
			if rc, err := f.blobs.OpenBlob(string(b)); err == nil {
				rc.Close()
				return string(b), nil
			}
		}
		return f.fetchBlob(url, want)
	})
	if err != nil {
		return "", err
	}
	return v.(string), nil
}

func (f *fetcher) fetchBlob(url string, want digests) (string, error) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		return "", badGateway(err, "bad upstream url %q", url)
	}
	f.upstreamRequests.add("artifact")
	resp, err := f.client.Do(req)
	if err != nil {
		return "", badGateway(err, "upstream %s unreachable", url)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return "", notFound("file not found upstream (%s answered %d)", url, resp.StatusCode)
	case resp.StatusCode != http.StatusOK:
		return "", badGateway(nil, "upstream %s answered %s", url, resp.Status)
	}
	var extra hash.Hash
	algo, wantSRI := "", ""
	if want.integrity != "" {
		a, v, ok := strings.Cut(want.integrity, "-")
		switch {
		case ok && a == "sha512":
			extra, algo, wantSRI = sha512.New(), a, v
		case ok && a == "sha1":
			extra, algo, wantSRI = sha1.New(), a, v
		}
	}
	var sh1 hash.Hash
	if want.sha1 != "" && extra == nil {
		sh1 = sha1.New()
	}
	hs := []hash.Hash{}
	if extra != nil {
		hs = append(hs, extra)
	}
	if sh1 != nil {
		hs = append(hs, sh1)
	}
	sp, err := f.spool(resp.Body, -1, hs)
	if err != nil {
		return "", badGateway(err, "downloading %s", url)
	}
	defer sp.close()
	if want.sha256 != "" && sp.sha256 != want.sha256 {
		return "", badGateway(ErrHashMismatch, "%s: upstream sent sha256 %s, index says %s", url, sp.sha256, want.sha256)
	}
	if extra != nil {
		if got := base64.StdEncoding.EncodeToString(extra.Sum(nil)); got != wantSRI {
			return "", badGateway(ErrHashMismatch, "%s: upstream sent %s-%s, index says %s", url, algo, got, want.integrity)
		}
	}
	if sh1 != nil {
		if got := hex.EncodeToString(sh1.Sum(nil)); got != want.sha1 {
			return "", badGateway(ErrHashMismatch, "%s: upstream sent sha1 %s, index says %s", url, got, want.sha1)
		}
	}
	r, err := sp.open()
	if err != nil {
		return "", badGateway(err, "spool")
	}
	err = f.blobs.PutBlob(r, sp.sha256)
	r.Close()
	if err != nil {
		return "", badGateway(err, "caching %s", url)
	}
	if want.sha256 == "" {
		if err := f.refs.PutRef(want.aliasKey(url), []byte(sp.sha256)); err != nil {
			f.log.Warn("caching alias failed", "url", url, "err", err)
		}
	}
	return sp.sha256, nil
}

// spooled is an upstream body written to a temporary file while hashing it.
type spooled struct {
	path   string
	sha256 string
	size   int64
}

func (s *spooled) open() (io.ReadCloser, error) { return os.Open(s.path) }
func (s *spooled) close()                       { os.Remove(s.path) }

func (f *fetcher) spool(r io.Reader, limit int64, extra []hash.Hash) (*spooled, error) {
	tmp, err := os.CreateTemp(f.tmpDir, "envgap-registry-*")
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	h := sha256.New()
	ws := []io.Writer{tmp, h}
	for _, e := range extra {
		ws = append(ws, e)
	}
	src := r
	if limit > 0 {
		src = io.LimitReader(r, limit+1)
	}
	n, err := io.Copy(io.MultiWriter(ws...), src)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil && limit > 0 && n > limit {
		err = fmt.Errorf("document larger than %d bytes", limit)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return nil, err
	}
	return &spooled{path: tmp.Name(), sha256: hex.EncodeToString(h.Sum(nil)), size: n}, nil
}

// flightGroup runs one call per key at a time and shares its result with concurrent callers.
type flightGroup struct {
	mu    sync.Mutex
	calls map[string]*flightCall
}

type flightCall struct {
	done chan struct{}
	val  any
	err  error
}

func (g *flightGroup) do(key string, fn func() (any, error)) (any, error) {
	g.mu.Lock()
	if g.calls == nil {
		g.calls = map[string]*flightCall{}
	}
	if c, ok := g.calls[key]; ok {
		g.mu.Unlock()
		<-c.done
		return c.val, c.err
	}
	c := &flightCall{done: make(chan struct{})}
	g.calls[key] = c
	g.mu.Unlock()
	c.val, c.err = fn()
	g.mu.Lock()
	delete(g.calls, key)
	g.mu.Unlock()
	close(c.done)
	return c.val, c.err
}
