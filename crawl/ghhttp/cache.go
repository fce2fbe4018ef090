package ghhttp

import (
	"fmt"
	"net/http"
	"time"

	"github.com/envgap/envgap/schemas"
)

// The two cache layers of a Transport (see the package documentation, "Cache").

// replayCrawl answers a request this crawl already received from the crawl's memo
// (StageCrawl), without a request; any other request goes on, and the record of its
// final answer (stored or served by revalidate) is memoised for the crawl.
type replayCrawl struct {
	store   Cache
	crawlID string
	m       *meter
	next    http.RoundTripper
}

func (l replayCrawl) RoundTrip(req *http.Request) (*http.Response, error) {
	key, err := keyOf(req)
	if err != nil {
		return nil, err
	}
	crawlKey := CrawlKey(l.crawlID, key)
	if rec, b, d, ok := lookup(l.store, StageCrawl, crawlKey); ok {
		l.m.add(func(s *Stats) { s.FromCache++ })
		return replay(req, rec, b, d), nil
	}
	resp, err := l.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if m, ok := resp.Body.(*memBody); ok && !m.rec.IsZero() {
		if err := l.store.SetMemo(StageCrawl, crawlKey, m.rec); err != nil {
			resp.Body.Close()
			return nil, fmt.Errorf("github cache: %w", err)
		}
	}
	return resp, nil
}

// revalidate keeps the latest final answer to each request in the store (StageHTTP when
// it has a validator), asks with If-None-Match (or If-Modified-Since) when one is stored,
// and answers a 304 from the stored body. Answers with a status of 500 or more and 304s
// are not stored.
type revalidate struct {
	store Cache
	clock Clock
	m     *meter
	next  http.RoundTripper
}

func (l revalidate) RoundTrip(req *http.Request) (*http.Response, error) {
	key, err := keyOf(req)
	if err != nil {
		return nil, err
	}
	prev, prevBody, prevDigest, ok := lookup(l.store, StageHTTP, key)
	ok = ok && (prev.Header["Etag"] != "" || prev.Header["Last-Modified"] != "")
	out := req
	if ok {
		out = req.Clone(req.Context())
		if et := prev.Header["Etag"]; et != "" {
			out.Header.Set("If-None-Match", et)
		} else {
			out.Header.Set("If-Modified-Since", prev.Header["Last-Modified"])
		}
	}
	resp, err := l.next.RoundTrip(out)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusNotModified && ok {
		resp.Body.Close()
		l.m.add(func(s *Stats) { s.NotModified++ })
		return replay(req, prev, prevBody, prevDigest), nil
	}
	if resp.StatusCode >= 500 || resp.StatusCode == http.StatusNotModified {
		return resp, nil
	}
	b, err := bodyBytes(resp)
	if err != nil {
		return nil, fmt.Errorf("github %s %s: reading the answer: %w", req.Method, req.URL.Path, err)
	}
	d, err := l.put(req, resp, b, key)
	if err != nil {
		return nil, err
	}
	setBody(resp, b, d)
	return resp, nil
}

// put stores the record of a final answer and, when it has a validator, memoises it.
func (l revalidate) put(req *http.Request, resp *http.Response, b []byte, key schemas.Digest) (schemas.Digest, error) {
	bd, err := l.store.Put(b)
	if err != nil {
		return schemas.Digest{}, fmt.Errorf("github cache: %w", err)
	}
	rec := Response{Kind: schemas.KindGitHubResponse, Method: req.Method, URL: req.URL.String(), Status: resp.StatusCode,
		Header: map[string]string{}, Body: bd, FetchedAt: l.clock.Now().UTC().Format(time.RFC3339)}
	for _, h := range keptHeaders {
		if v := resp.Header.Get(h); v != "" {
			rec.Header[h] = v
		}
	}
	d, err := l.store.PutJSON(&rec)
	if err != nil {
		return schemas.Digest{}, fmt.Errorf("github cache: %w", err)
	}
	if rec.Header["Etag"] != "" || rec.Header["Last-Modified"] != "" {
		if err := l.store.SetMemo(StageHTTP, key, d); err != nil {
			return schemas.Digest{}, fmt.Errorf("github cache: %w", err)
		}
	}
	return d, nil
}

// keyOf is the memo key of a request (Key).
func keyOf(req *http.Request) (schemas.Digest, error) {
	body, err := requestBody(req)
	if err != nil {
		return schemas.Digest{}, fmt.Errorf("github %s %s: reading request body: %w", req.Method, req.URL.Path, err)
	}
	return Key(req.Method, req.URL.String(), req.Header.Get("Accept"), body), nil
}

// lookup returns the record a memo entry points at, its body and its digest.
func lookup(store Cache, stage string, key schemas.Digest) (*Response, []byte, schemas.Digest, bool) {
	d, err := store.Memo(stage, key)
	if err != nil {
		return nil, nil, d, false
	}
	var rec Response
	if err := store.GetJSON(d, &rec); err != nil || rec.Kind != schemas.KindGitHubResponse {
		return nil, nil, d, false
	}
	b, err := store.Get(rec.Body)
	if err != nil {
		return nil, nil, d, false
	}
	return &rec, b, d, true
}

// replay builds the response of a cached answer; d is its record's digest.
func replay(req *http.Request, rec *Response, b []byte, d schemas.Digest) *http.Response {
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
		Body:          newMemBody(b, d),
		ContentLength: int64(len(b)),
		Request:       req,
	}
}
