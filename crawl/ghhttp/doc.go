// Package ghhttp is the HTTP layer of envgap's GitHub crawls: an http.RoundTripper that
// authenticates, waits out rate limits, and keeps an HTTP cache in the content-addressed
// store, so that a crawl killed halfway resumes without asking GitHub again for what it
// already has, and a finished crawl run again makes no request at all.
//
// # Layers
//
// A Transport is a stack of small RoundTrippers, one job each, in the manner of
// go-containerregistry's transport package: request buffering, crawl replay, ETag
// revalidation, rate-header stripping, retry, token redaction, the body cap, counting and
// auth scoping (New lists the order). Classify, the rate-limit classification, is a pure
// function returning a typed Verdict. Each layer is tested alone (layers_test.go) and the
// stack against the fake GitHub (transport_test.go).
//
// # Authentication
//
// The token is sent as "Authorization: Bearer <token>" to the API host only. It is never
// part of a cache key, a stored record, an error or a log line.
//
// # Rate limits
//
// Every kind of answer GitHub gives instead of data is recognised and waited out with the
// injected Clock (tests use a fake clock, so nothing really sleeps), then the request is
// sent again; none of them ever reaches the caller as "no data":
//
//   - primary: 403 or 429 with X-RateLimit-Remaining: 0 (and GraphQL's 200 with an error
//     of type RATE_LIMITED): wait until X-RateLimit-Reset;
//   - secondary: 403 or 429 with Retry-After, or a 403 whose message or documentation_url
//     names the secondary (abuse) limit: wait Retry-After, else back off;
//   - a 429 without those headers: back off;
//   - an HTML page instead of JSON (GitHub's per-IP limit page, proxies' error pages):
//     back off.
//
// Back-off doubles from Config.Backoff up to Config.MaxBackoff; server errors (500, 502,
// 503, 504) and network failures back off from a twelfth of it. After Config.MaxAttempts
// such answers in a row (4 network failures) the request fails with an error: the crawl
// stops, what it fetched stays cached, and running it again resumes. A success that reports zero remaining requests makes the next request
// wait for the reset first. X-RateLimit-* headers are removed from the responses handed to
// the caller, so that go-github's own client-side rate-limit check (which uses the real
// clock) never refuses a request this transport would wait for.
//
// # Cache (on-disk format)
//
// A request is identified by method, URL, Accept header and the SHA-256 of its body
// (GraphQL queries are POSTs); the identity's digest is the memo key. Two memo stages of
// the store hold it:
//
//	memo/github-http/<key>    the latest answer GitHub gave, with its ETag: a later crawl
//	                          sends If-None-Match and a 304 is served from the stored body
//	memo/github-crawl/<key'>  key' = digest of (crawl id, key): the answer this crawl id
//	                          already received; served without any request
//
// Both point at a Response record (canonical JSON, kind "github_response") whose Body is
// the digest of the stored body blob. Only final answers are recorded (2xx, 3xx, 4xx other
// than rate limits); retried answers never are.
package ghhttp
