package ghhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/schemas"
)

// Memo stages of the HTTP cache (see the package documentation).
const (
	StageHTTP  = data.MemoGitHubHTTP
	StageCrawl = data.MemoGitHubCrawl
)

// Defaults of Config.
const (
	DefaultMaxAttempts = 8
	DefaultBackoff     = time.Minute
	DefaultMaxBackoff  = 15 * time.Minute
	DefaultMaxBody     = 1 << 30
	// maxNetworkAttempts bounds the attempts of a request that fails without an answer
	// (connection refused, reset, DNS): such a failure is either brief or a wrong URL.
	maxNetworkAttempts = 4
	// maxPrimaryWaits bounds the waits for primary limits of one request, so a server
	// that keeps answering "no requests left" with a reset in the past cannot loop forever.
	maxPrimaryWaits = 24
)

// Cache is the part of the store the HTTP cache uses: objects and memo entries.
type Cache interface {
	data.Objects
	data.Memos
}

// Config configures a Transport. Store, Token and CrawlID may be empty.
type Config struct {
	// Store holds the HTTP cache; nil disables caching.
	Store Cache
	// CrawlID names the crawl whose answers are replayed without a request; empty: every
	// cached answer is revalidated with its ETag.
	CrawlID string
	// Token is sent as a bearer token to APIHost only.
	Token string
	// APIHost is the host (with port, as in URL.Host) that receives the token.
	APIHost string
	// Clock waits out rate limits; nil is the wall clock.
	Clock Clock
	// Base sends the requests; nil is http.DefaultTransport.
	Base http.RoundTripper
	// MaxAttempts bounds the retries of one request after secondary limits, 429s, HTML
	// pages, server errors and network errors; 0 is DefaultMaxAttempts.
	MaxAttempts int
	// Backoff is the first back-off wait; 0 is DefaultBackoff. It doubles per attempt up
	// to MaxBackoff (0: DefaultMaxBackoff).
	Backoff    time.Duration
	MaxBackoff time.Duration
	// MaxBody caps a response body in bytes; 0 is DefaultMaxBody.
	MaxBody int64
	// Logf reports waits; nil is silent. It never receives the token.
	Logf func(format string, args ...any)
}

// Stats counts what a Transport did. Requests counts every request sent over the network,
// retries included; FromCache the answers replayed from this crawl's cache without one.
type Stats struct {
	Requests      int            `json:"requests"`
	Conditional   int            `json:"conditional"`
	NotModified   int            `json:"not_modified"`
	FromCache     int            `json:"from_cache"`
	Retried       int            `json:"retried"`
	RateLimited   map[string]int `json:"rate_limited"`
	WaitedSeconds float64        `json:"waited_seconds"`
}

// Response is the stored record of one final answer (kind "github_response").
type Response struct {
	Kind      string            `json:"kind"`
	Method    string            `json:"method"`
	URL       string            `json:"url"`
	Status    int               `json:"status"`
	Header    map[string]string `json:"header"`
	Body      schemas.Digest    `json:"body"`
	FetchedAt string            `json:"fetched_at"`
}

// keptHeaders are the response headers a cached answer keeps.
var keptHeaders = []string{"Content-Type", "Etag", "Last-Modified", "Link", "Location"}

// Transport is an http.RoundTripper for the GitHub API (see the package documentation).
// It is safe for concurrent use.
type Transport struct {
	cfg Config

	mu      sync.Mutex
	stats   Stats
	blocked map[string]time.Time // rate-limit category -> no request before
}

// New returns a Transport.
func New(cfg Config) *Transport {
	if cfg.Clock == nil {
		cfg.Clock = RealClock()
	}
	if cfg.Base == nil {
		cfg.Base = http.DefaultTransport
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	return &Transport{cfg: cfg, stats: Stats{RateLimited: map[string]int{}}, blocked: map[string]time.Time{}}
}

// Client returns an http.Client that sends through t. It has no overall timeout: a
// request may wait for a rate limit to reset.
func (t *Transport) Client() *http.Client { return &http.Client{Transport: t} }

// Stats returns a copy of the counters.
func (t *Transport) Stats() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.stats
	s.RateLimited = make(map[string]int, len(t.stats.RateLimited))
	for k, v := range t.stats.RateLimited {
		s.RateLimited[k] = v
	}
	return s
}

func (t *Transport) count(f func(s *Stats)) {
	t.mu.Lock()
	f(&t.stats)
	t.mu.Unlock()
}

func (t *Transport) logf(format string, args ...any) {
	if t.cfg.Logf != nil {
		t.cfg.Logf(format, args...)
	}
}

// identity is what names a request in the cache. The token is not part of it.
type identity struct {
	Method string `json:"method"`
	URL    string `json:"url"`
	Accept string `json:"accept"`
	Body   string `json:"body"`
}

// Key returns the memo key of a request in stage StageHTTP.
func Key(method, url, accept string, body []byte) schemas.Digest {
	id := identity{Method: method, URL: url, Accept: accept}
	if len(body) > 0 {
		id.Body = schemas.Hash(body).String()
	}
	d, _ := schemas.DigestOf(id)
	return d
}

// CrawlKey returns the memo key of a request in stage StageCrawl.
func CrawlKey(crawlID string, key schemas.Digest) schemas.Digest {
	d, _ := schemas.DigestOf(struct {
		Crawl string         `json:"crawl"`
		Key   schemas.Digest `json:"key"`
	}{crawlID, key})
	return d
}

// RoundTrip sends req, or answers it from the cache (see the package documentation).
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("github %s %s: reading request body: %w", req.Method, req.URL.Path, err)
		}
		body = b
	}
	key := Key(req.Method, req.URL.String(), req.Header.Get("Accept"), body)
	var crawlKey schemas.Digest
	cacheOn := t.cfg.Store != nil
	if cacheOn && t.cfg.CrawlID != "" {
		crawlKey = CrawlKey(t.cfg.CrawlID, key)
		if rec, b, ok := t.lookup(StageCrawl, crawlKey); ok {
			t.count(func(s *Stats) { s.FromCache++ })
			return replay(req, rec, b), nil
		}
	}
	var prev *Response
	var prevBody []byte
	if cacheOn {
		if rec, b, ok := t.lookup(StageHTTP, key); ok && (rec.Header["Etag"] != "" || rec.Header["Last-Modified"] != "") {
			prev, prevBody = rec, b
		}
	}
	category := categoryOf(req)
	attempts, primaryWaits, netFailures := 0, 0, 0
	for {
		if err := t.waitBlocked(ctx, category); err != nil {
			return nil, err
		}
		out := req.Clone(ctx)
		out.Body = io.NopCloser(bytes.NewReader(body))
		out.ContentLength = int64(len(body))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		if body == nil {
			out.Body, out.GetBody = nil, nil
		}
		out.Header.Del("Authorization")
		if t.cfg.Token != "" && strings.EqualFold(out.URL.Host, t.cfg.APIHost) {
			out.Header.Set("Authorization", "Bearer "+t.cfg.Token)
		}
		conditional := false
		if prev != nil {
			if et := prev.Header["Etag"]; et != "" {
				out.Header.Set("If-None-Match", et)
			} else {
				out.Header.Set("If-Modified-Since", prev.Header["Last-Modified"])
			}
			conditional = true
		}
		t.count(func(s *Stats) {
			s.Requests++
			if conditional {
				s.Conditional++
			}
		})
		resp, err := t.cfg.Base.RoundTrip(out)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			netFailures++
			if netFailures >= maxNetworkAttempts {
				return nil, fmt.Errorf("github %s %s: %d attempts failed: %w", req.Method, req.URL.Path, netFailures, err)
			}
			if err := t.backoff(ctx, req, "network error", netFailures, maxNetworkAttempts, t.shortBackoff(netFailures)); err != nil {
				return nil, err
			}
			continue
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, t.cfg.MaxBody+1))
		resp.Body.Close()
		if err == nil && int64(len(b)) > t.cfg.MaxBody {
			err = fmt.Errorf("answer larger than %d bytes", t.cfg.MaxBody)
		}
		// A server may echo the Authorization header (in an error body, say): the token
		// never reaches a caller, an error message or the cache.
		b = schemas.RedactToken(b, t.cfg.Token)
		for _, h := range resp.Header {
			for i := range h {
				h[i] = schemas.RedactToken(h[i], t.cfg.Token)
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			attempts++
			if attempts >= t.cfg.MaxAttempts {
				return nil, fmt.Errorf("github %s %s: reading the answer: %w", req.Method, req.URL.Path, err)
			}
			if err := t.backoff(ctx, req, "truncated answer", attempts, t.cfg.MaxAttempts, 0); err != nil {
				return nil, err
			}
			continue
		}
		t.noteRemaining(resp, category)
		kind, wait := t.classify(req, resp, b)
		switch kind {
		case "":
		case "primary":
			primaryWaits++
			t.count(func(s *Stats) { s.RateLimited[kind]++; s.Retried++ })
			if primaryWaits > maxPrimaryWaits {
				return nil, fmt.Errorf("github %s %s: still rate limited after %d waits for the reset", req.Method, req.URL.Path, primaryWaits-1)
			}
			t.logf("github: primary rate limit on %s %s: waiting %s for the reset", req.Method, req.URL.Path, wait.Round(time.Second))
			if err := t.sleep(ctx, wait); err != nil {
				return nil, err
			}
			continue
		default:
			attempts++
			t.count(func(s *Stats) {
				if kind != "server" {
					s.RateLimited[kind]++
				}
				s.Retried++
			})
			if attempts >= t.cfg.MaxAttempts {
				return nil, fmt.Errorf("github %s %s: %s answer %d times in a row (status %d); giving up for now, run the crawl again to resume", req.Method, req.URL.Path, kindText(kind), attempts, resp.StatusCode)
			}
			if kind == "server" {
				wait = t.shortBackoff(attempts)
			}
			if err := t.backoff(ctx, req, kindText(kind), attempts, t.cfg.MaxAttempts, wait); err != nil {
				return nil, err
			}
			continue
		}
		if resp.StatusCode == http.StatusNotModified && prev != nil {
			t.count(func(s *Stats) { s.NotModified++ })
			if cacheOn && t.cfg.CrawlID != "" {
				if err := t.cfg.Store.SetMemo(StageCrawl, crawlKey, t.recordDigest(prev)); err != nil {
					return nil, fmt.Errorf("github cache: %w", err)
				}
			}
			return replay(req, prev, prevBody), nil
		}
		if cacheOn && resp.StatusCode < 500 && resp.StatusCode != http.StatusNotModified {
			if err := t.store(req, resp, b, key, crawlKey); err != nil {
				return nil, err
			}
		}
		stripRate(resp.Header)
		resp.Body = io.NopCloser(bytes.NewReader(b))
		resp.ContentLength = int64(len(b))
		resp.Request = req
		return resp, nil
	}
}

func kindText(kind string) string {
	switch kind {
	case "secondary":
		return "secondary rate limit"
	case "429":
		return "429 Too Many Requests"
	case "html":
		return "HTML page instead of JSON"
	case "server":
		return "server error"
	}
	return kind
}

// classify says whether an answer is a rate limit or another answer to retry, and how
// long to wait (0: back off).
func (t *Transport) classify(req *http.Request, resp *http.Response, b []byte) (kind string, wait time.Duration) {
	st := resp.StatusCode
	h := resp.Header
	if (st == http.StatusForbidden || st == http.StatusTooManyRequests) && h.Get("X-Ratelimit-Remaining") == "0" {
		return "primary", t.untilReset(h)
	}
	if st == http.StatusOK && isGraphQL(req) && bytes.Contains(b, []byte(`RATE_LIMITED`)) && graphQLRateLimited(b) {
		return "primary", t.untilReset(h)
	}
	if st == http.StatusForbidden || st == http.StatusTooManyRequests {
		if ra := retryAfter(h.Get("Retry-After"), t.cfg.Clock.Now()); ra > 0 {
			return "secondary", ra
		}
	}
	if isHTML(h, b) {
		return "html", 0
	}
	if st == http.StatusForbidden {
		var e struct {
			Message          string `json:"message"`
			DocumentationURL string `json:"documentation_url"`
		}
		_ = json.Unmarshal(b, &e)
		msg := strings.ToLower(e.Message + " " + e.DocumentationURL)
		if strings.Contains(msg, "secondary rate limit") || strings.Contains(msg, "abuse") || strings.Contains(msg, "secondary-rate-limits") {
			return "secondary", 0
		}
	}
	if st == http.StatusTooManyRequests {
		return "429", 0
	}
	if st == http.StatusBadGateway || st == http.StatusServiceUnavailable || st == http.StatusGatewayTimeout || st == http.StatusInternalServerError {
		return "server", 0
	}
	return "", 0
}

func graphQLRateLimited(b []byte) bool {
	var r struct {
		Errors []struct {
			Type string `json:"type"`
		} `json:"errors"`
	}
	if json.Unmarshal(b, &r) != nil {
		return false
	}
	for _, e := range r.Errors {
		if e.Type == "RATE_LIMITED" {
			return true
		}
	}
	return false
}

func isHTML(h http.Header, b []byte) bool {
	if strings.HasPrefix(strings.ToLower(h.Get("Content-Type")), "text/html") {
		return true
	}
	s := bytes.TrimSpace(b)
	if len(s) > 0 && s[0] == '<' {
		head := strings.ToLower(string(s[:min(len(s), 64)]))
		return strings.HasPrefix(head, "<!doctype html") || strings.HasPrefix(head, "<html")
	}
	return false
}

func isGraphQL(req *http.Request) bool { return strings.HasSuffix(req.URL.Path, "/graphql") }

func categoryOf(req *http.Request) string {
	p := req.URL.Path
	switch {
	case isGraphQL(req):
		return "graphql"
	case strings.Contains(p, "/search/"):
		return "search"
	}
	return "core"
}

// untilReset is how long to wait for the primary limit's reset (one second of slack).
func (t *Transport) untilReset(h http.Header) time.Duration {
	if v, err := strconv.ParseInt(h.Get("X-Ratelimit-Reset"), 10, 64); err == nil {
		d := time.Unix(v, 0).Sub(t.cfg.Clock.Now()) + time.Second
		if d < time.Second {
			d = time.Second
		}
		return d
	}
	return t.cfg.Backoff
}

func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
		return time.Duration(n)*time.Second + time.Second
	}
	if at, err := http.ParseTime(v); err == nil {
		if d := at.Sub(now); d > 0 {
			return d + time.Second
		}
		return time.Second
	}
	return 0
}

// noteRemaining remembers a success that used the last request of a category, so the
// next request waits for the reset instead of being refused.
func (t *Transport) noteRemaining(resp *http.Response, category string) {
	if resp.StatusCode >= 300 || resp.Header.Get("X-Ratelimit-Remaining") != "0" {
		return
	}
	if r := resp.Header.Get("X-Ratelimit-Resource"); r != "" {
		category = r
	}
	v, err := strconv.ParseInt(resp.Header.Get("X-Ratelimit-Reset"), 10, 64)
	if err != nil {
		return
	}
	t.mu.Lock()
	t.blocked[category] = time.Unix(v, 0).Add(time.Second)
	t.mu.Unlock()
}

func (t *Transport) waitBlocked(ctx context.Context, category string) error {
	t.mu.Lock()
	until, ok := t.blocked[category]
	delete(t.blocked, category)
	t.mu.Unlock()
	if !ok {
		return nil
	}
	if d := until.Sub(t.cfg.Clock.Now()); d > 0 {
		t.logf("github: no %s requests left: waiting %s for the reset", category, d.Round(time.Second))
		return t.sleep(ctx, d)
	}
	return nil
}

func (t *Transport) backoff(ctx context.Context, req *http.Request, why string, attempt, max int, wait time.Duration) error {
	if wait <= 0 {
		wait = t.cfg.Backoff
		for i := 1; i < attempt && wait < t.cfg.MaxBackoff; i++ {
			wait *= 2
		}
		if wait > t.cfg.MaxBackoff {
			wait = t.cfg.MaxBackoff
		}
	}
	t.logf("github: %s on %s %s: waiting %s (attempt %d of %d)", why, req.Method, req.URL.Path, wait.Round(time.Second), attempt, max)
	return t.sleep(ctx, wait)
}

// shortBackoff is the wait before retrying a server error or a network failure: a
// twelfth of Backoff (5s by default), doubling.
func (t *Transport) shortBackoff(attempt int) time.Duration {
	d := t.cfg.Backoff / 12
	for i := 1; i < attempt && d < t.cfg.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, t.cfg.MaxBackoff)
}

func (t *Transport) sleep(ctx context.Context, d time.Duration) error {
	t.count(func(s *Stats) { s.WaitedSeconds += d.Seconds() })
	return t.cfg.Clock.Sleep(ctx, d)
}

// stripRate removes the rate-limit headers (see the package documentation).
func stripRate(h http.Header) {
	for k := range h {
		if strings.HasPrefix(strings.ToLower(k), "x-ratelimit-") {
			delete(h, k)
		}
	}
}

func (t *Transport) lookup(stage string, key schemas.Digest) (*Response, []byte, bool) {
	d, err := t.cfg.Store.Memo(stage, key)
	if err != nil {
		return nil, nil, false
	}
	var rec Response
	if err := t.cfg.Store.GetJSON(d, &rec); err != nil || rec.Kind != "github_response" {
		return nil, nil, false
	}
	b, err := t.cfg.Store.Get(rec.Body)
	if err != nil {
		return nil, nil, false
	}
	return &rec, b, true
}

func (t *Transport) recordDigest(rec *Response) schemas.Digest {
	d, _ := schemas.DigestOf(rec)
	return d
}

func (t *Transport) store(req *http.Request, resp *http.Response, b []byte, key, crawlKey schemas.Digest) error {
	bd, err := t.cfg.Store.Put(b)
	if err != nil {
		return fmt.Errorf("github cache: %w", err)
	}
	rec := Response{Kind: "github_response", Method: req.Method, URL: req.URL.String(), Status: resp.StatusCode,
		Header: map[string]string{}, Body: bd, FetchedAt: t.cfg.Clock.Now().UTC().Format(time.RFC3339)}
	for _, h := range keptHeaders {
		if v := resp.Header.Get(h); v != "" {
			rec.Header[h] = v
		}
	}
	d, err := t.cfg.Store.PutJSON(&rec)
	if err != nil {
		return fmt.Errorf("github cache: %w", err)
	}
	if rec.Header["Etag"] != "" || rec.Header["Last-Modified"] != "" {
		if err := t.cfg.Store.SetMemo(StageHTTP, key, d); err != nil {
			return fmt.Errorf("github cache: %w", err)
		}
	}
	if t.cfg.CrawlID != "" {
		if err := t.cfg.Store.SetMemo(StageCrawl, crawlKey, d); err != nil {
			return fmt.Errorf("github cache: %w", err)
		}
	}
	return nil
}

// replay builds the response of a cached answer.
func replay(req *http.Request, rec *Response, b []byte) *http.Response {
	h := http.Header{}
	for k, v := range rec.Header {
		h.Set(k, v)
	}
	h.Set("X-From-Cache", "1")
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", rec.Status, http.StatusText(rec.Status)),
		StatusCode:    rec.Status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(bytes.NewReader(b)),
		ContentLength: int64(len(b)),
		Request:       req,
	}
}
