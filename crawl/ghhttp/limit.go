package ghhttp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Limit is what an answer is when it is not data: one of GitHub's rate limits, or another
// answer worth asking again. The zero value is a final answer.
type Limit int

// The kinds of answer the retry layer waits out (see the package documentation).
const (
	NotLimited      Limit = iota // a final answer: data, or an error to hand to the caller
	PrimaryLimit                 // no requests left until X-RateLimit-Reset
	SecondaryLimit               // the secondary (abuse) limit
	TooManyRequests              // a 429 without rate-limit headers
	HTMLPage                     // an HTML page instead of JSON
	ServerError                  // 500, 502, 503, 504
)

// String is the limit's name in Stats.RateLimited ("" for NotLimited).
func (l Limit) String() string {
	switch l {
	case PrimaryLimit:
		return "primary"
	case SecondaryLimit:
		return "secondary"
	case TooManyRequests:
		return "429"
	case HTMLPage:
		return "html"
	case ServerError:
		return "server"
	}
	return ""
}

// describe is the limit in an error or log line.
func (l Limit) describe() string {
	switch l {
	case SecondaryLimit:
		return "secondary rate limit"
	case TooManyRequests:
		return "429 Too Many Requests"
	case HTMLPage:
		return "HTML page instead of JSON"
	case ServerError:
		return "server error"
	}
	return l.String()
}

// rateLimit reports whether the limit counts in Stats.RateLimited.
func (l Limit) rateLimit() bool { return l != NotLimited && l != ServerError }

// Verdict is the classification of one answer: its Limit and how long GitHub asks to wait
// (0: no wait given, back off).
type Verdict struct {
	Limit Limit
	Wait  time.Duration
}

// Classify says whether an answer to req (its status, headers and body b) is a rate limit
// or another answer to ask again, and how long GitHub asks to wait; now is the clock's
// time, against which the reset and Retry-After dates are measured.
func Classify(req *http.Request, resp *http.Response, b []byte, now time.Time) Verdict {
	st := resp.StatusCode
	h := resp.Header
	if (st == http.StatusForbidden || st == http.StatusTooManyRequests) && h.Get("X-Ratelimit-Remaining") == "0" {
		return Verdict{PrimaryLimit, untilReset(h, now)}
	}
	if st == http.StatusOK && isGraphQL(req) && bytes.Contains(b, []byte(`RATE_LIMITED`)) && graphQLRateLimited(b) {
		return Verdict{PrimaryLimit, untilReset(h, now)}
	}
	if st == http.StatusForbidden || st == http.StatusTooManyRequests {
		if ra := retryAfter(h.Get("Retry-After"), now); ra > 0 {
			return Verdict{SecondaryLimit, ra}
		}
	}
	if isHTML(h, b) {
		return Verdict{HTMLPage, 0}
	}
	if st == http.StatusForbidden {
		var e struct {
			Message          string `json:"message"`
			DocumentationURL string `json:"documentation_url"`
		}
		_ = json.Unmarshal(b, &e)
		msg := strings.ToLower(e.Message + " " + e.DocumentationURL)
		if strings.Contains(msg, "secondary rate limit") || strings.Contains(msg, "abuse") || strings.Contains(msg, "secondary-rate-limits") {
			return Verdict{SecondaryLimit, 0}
		}
	}
	if st == http.StatusTooManyRequests {
		return Verdict{TooManyRequests, 0}
	}
	if st == http.StatusBadGateway || st == http.StatusServiceUnavailable || st == http.StatusGatewayTimeout || st == http.StatusInternalServerError {
		return Verdict{ServerError, 0}
	}
	return Verdict{}
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

// categoryOf is the rate-limit category (GitHub's resource) a request counts against.
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

// untilReset is how long to wait for the primary limit's reset (one second of slack);
// 0 when the answer does not say.
func untilReset(h http.Header, now time.Time) time.Duration {
	v, err := strconv.ParseInt(h.Get("X-Ratelimit-Reset"), 10, 64)
	if err != nil {
		return 0
	}
	return max(time.Unix(v, 0).Sub(now)+time.Second, time.Second)
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
