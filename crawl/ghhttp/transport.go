package ghhttp

import (
	"net/http"
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
	Kind      schemas.RecordKind `json:"kind"`
	Method    string             `json:"method"`
	URL       string             `json:"url"`
	Status    int                `json:"status"`
	Header    map[string]string  `json:"header"`
	Body      schemas.Digest     `json:"body"`
	FetchedAt string             `json:"fetched_at"`
}

// keptHeaders are the response headers a cached answer keeps.
var keptHeaders = []string{"Content-Type", "Etag", "Last-Modified", "Link", "Location"}

// Transport is an http.RoundTripper for the GitHub API (see the package documentation).
// It is a stack of layers, one job each (see New). It is safe for concurrent use.
type Transport struct {
	m  *meter
	rt http.RoundTripper
}

// meter holds the counters the layers share.
type meter struct {
	mu sync.Mutex
	s  Stats
}

func (m *meter) add(f func(s *Stats)) {
	m.mu.Lock()
	f(&m.s)
	m.mu.Unlock()
}

// New returns a Transport. From the caller down to the network, a request passes:
//
//	bufferBody   reads the request body once (the cache hashes it, retries resend it)
//	replayCrawl  answers what this crawl already received (Config.CrawlID and Store set)
//	revalidate   stores final answers, asks with their ETag, serves 304s (Store set)
//	stripRate    hides the X-RateLimit-* headers from the caller
//	retry        waits out rate limits (Classify), server errors and network failures
//	redact       removes the token from the answer
//	capBody      reads the answer into memory, at most Config.MaxBody bytes
//	count        counts the requests sent
//	auth         sends the token to Config.APIHost only
//	Config.Base
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
	logf := cfg.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	m := &meter{s: Stats{RateLimited: map[string]int{}}}
	var rt http.RoundTripper = auth{token: cfg.Token, host: cfg.APIHost, next: cfg.Base}
	rt = count{m: m, next: rt}
	rt = capBody{max: cfg.MaxBody, next: rt}
	rt = redact{token: cfg.Token, next: rt}
	rt = &retry{clock: cfg.Clock, maxAttempts: cfg.MaxAttempts, backoff: cfg.Backoff, maxBackoff: cfg.MaxBackoff,
		logf: logf, m: m, next: rt, blocked: map[string]time.Time{}}
	rt = stripRate{next: rt}
	if cfg.Store != nil {
		rt = revalidate{store: cfg.Store, clock: cfg.Clock, m: m, next: rt}
		if cfg.CrawlID != "" {
			rt = replayCrawl{store: cfg.Store, crawlID: cfg.CrawlID, m: m, next: rt}
		}
	}
	rt = bufferBody{next: rt}
	return &Transport{m: m, rt: rt}
}

// RoundTrip sends req, or answers it from the cache (see the package documentation).
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Request = req
	return resp, nil
}

// Client returns an http.Client that sends through t. It has no overall timeout: a
// request may wait for a rate limit to reset.
func (t *Transport) Client() *http.Client { return &http.Client{Transport: t} }

// Stats returns a copy of the counters.
func (t *Transport) Stats() Stats {
	t.m.mu.Lock()
	defer t.m.mu.Unlock()
	s := t.m.s
	s.RateLimited = make(map[string]int, len(t.m.s.RateLimited))
	for k, v := range t.m.s.RateLimited {
		s.RateLimited[k] = v
	}
	return s
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
