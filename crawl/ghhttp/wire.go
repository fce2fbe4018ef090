package ghhttp

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/envgap/envgap/schemas"
)

// The layers of a Transport that touch the wire: each is an http.RoundTripper with one
// job, wrapping the next one (see New for the order).

// memBody is a body held in memory. rec, when set, is the digest of the stored Response
// record that holds it: the cache layers pass it up so that the crawl's memo can point at
// the record the revalidation layer stored or served.
type memBody struct {
	*bytes.Reader
	b   []byte
	rec schemas.Digest
}

func (*memBody) Close() error { return nil }

func newMemBody(b []byte, rec schemas.Digest) *memBody {
	return &memBody{Reader: bytes.NewReader(b), b: b, rec: rec}
}

// bodyBytes returns the whole body of resp, reading it into memory if a layer below did
// not already.
func bodyBytes(resp *http.Response) ([]byte, error) {
	if m, ok := resp.Body.(*memBody); ok {
		return m.b, nil
	}
	if resp.Body == nil {
		return nil, nil
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = newMemBody(b, schemas.Digest{})
	return b, err
}

// setBody replaces the body of resp by b.
func setBody(resp *http.Response, b []byte, rec schemas.Digest) {
	resp.Body = newMemBody(b, rec)
	resp.ContentLength = int64(len(b))
}

// requestBody returns the body of a request that bufferBody made resendable.
func requestBody(req *http.Request) ([]byte, error) {
	if req.GetBody == nil {
		return nil, nil
	}
	rc, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// resend returns a copy of req with a fresh body, for one attempt.
func resend(req *http.Request) *http.Request {
	out := req.Clone(req.Context())
	if req.GetBody != nil {
		out.Body, _ = req.GetBody()
	}
	return out
}

// bufferBody reads a request's body once, so that the cache layers can hash it and the
// retry layer send it again.
type bufferBody struct{ next http.RoundTripper }

func (l bufferBody) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return l.next.RoundTrip(req)
	}
	b, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("github %s %s: reading request body: %w", req.Method, req.URL.Path, err)
	}
	out := req.Clone(req.Context())
	out.ContentLength = int64(len(b))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	out.Body, _ = out.GetBody()
	return l.next.RoundTrip(out)
}

// auth sends the token as a bearer token to the API host only, and no Authorization
// header anywhere else.
type auth struct {
	token, host string
	next        http.RoundTripper
}

func (l auth) RoundTrip(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	out.Header.Del("Authorization")
	if l.token != "" && strings.EqualFold(out.URL.Host, l.host) {
		out.Header.Set("Authorization", "Bearer "+l.token)
	}
	return l.next.RoundTrip(out)
}

// count counts the requests sent over the network and the conditional ones among them.
type count struct {
	m    *meter
	next http.RoundTripper
}

func (l count) RoundTrip(req *http.Request) (*http.Response, error) {
	conditional := req.Header.Get("If-None-Match") != "" || req.Header.Get("If-Modified-Since") != ""
	l.m.add(func(s *Stats) {
		s.Requests++
		if conditional {
			s.Conditional++
		}
	})
	return l.next.RoundTrip(req)
}

// BodyError is an answer whose body could not be read whole: cut off, or larger than the
// cap. The retry layer asks again.
type BodyError struct{ Err error }

func (e *BodyError) Error() string { return "reading the answer: " + e.Err.Error() }
func (e *BodyError) Unwrap() error { return e.Err }

// capBody reads an answer's body into memory, at most max bytes.
type capBody struct {
	max  int64
	next http.RoundTripper
}

func (l capBody) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, l.max+1))
	resp.Body.Close()
	if err == nil && int64(len(b)) > l.max {
		err = fmt.Errorf("answer larger than %d bytes", l.max)
	}
	if err != nil {
		return nil, &BodyError{Err: err}
	}
	setBody(resp, b, schemas.Digest{})
	return resp, nil
}

// redact removes the token from an answer's body and headers: a server may echo the
// Authorization header (in an error body, say), and the token must reach no caller, no
// error message and no cache.
type redact struct {
	token string
	next  http.RoundTripper
}

func (l redact) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(req)
	if err != nil || l.token == "" {
		return resp, err
	}
	b, err := bodyBytes(resp)
	if err != nil {
		return nil, &BodyError{Err: err}
	}
	setBody(resp, schemas.RedactToken(b, l.token), schemas.Digest{})
	for _, h := range resp.Header {
		for i := range h {
			h[i] = schemas.RedactToken(h[i], l.token)
		}
	}
	return resp, nil
}

// stripRate removes the X-RateLimit-* headers from the answers handed up, so that
// go-github's own client-side rate-limit check (which uses the real clock) never refuses
// a request the retry layer would wait for.
type stripRate struct{ next http.RoundTripper }

func (l stripRate) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	for k := range resp.Header {
		if strings.HasPrefix(strings.ToLower(k), "x-ratelimit-") {
			delete(resp.Header, k)
		}
	}
	return resp, nil
}
