package ghhttp

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/crawl/fakegithub"
	"github.com/envgap/envgap/data/catalog"
)

// Each layer of a Transport alone, below it a scripted base that answers in turn and
// records what it was sent.

var tl0 = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)

const tok = "ghp_9aZbY8xWv7UtS6rQp5OnM4lKj3IhG2fE1dC0"

type answer struct {
	status int
	header map[string]string
	body   string
	err    error
}

type scripted struct {
	answers []answer
	sent    []*http.Request
	bodies  []string
}

func (s *scripted) RoundTrip(req *http.Request) (*http.Response, error) {
	s.sent = append(s.sent, req)
	var b string
	if req.Body != nil {
		bb, _ := io.ReadAll(req.Body)
		b = string(bb)
	}
	s.bodies = append(s.bodies, b)
	if len(s.answers) == 0 {
		return nil, fmt.Errorf("scripted: no answer left for %s", req.URL)
	}
	a := s.answers[0]
	s.answers = s.answers[1:]
	if a.err != nil {
		return nil, a.err
	}
	h := http.Header{}
	for k, v := range a.header {
		h.Set(k, v)
	}
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/json")
	}
	return &http.Response{StatusCode: a.status, Header: h, Body: io.NopCloser(strings.NewReader(a.body)), Request: req}, nil
}

func get(t *testing.T, rt http.RoundTripper, url string) (*http.Response, string, error) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return nil, "", err
	}
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b), nil
}

func newMeter() *meter { return &meter{s: Stats{RateLimited: map[string]int{}}} }

func TestAuthSendsTheTokenToTheAPIHostOnly(t *testing.T) {
	base := &scripted{answers: []answer{{status: 200}, {status: 200}, {status: 200}}}
	rt := auth{token: tok, host: "api.example.test", next: base}
	for _, u := range []string{"https://api.example.test/repos/a/b", "https://API.example.test/x", "https://codeload.example.test/a.zip"} {
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("Authorization", "Bearer caller-set")
		if _, err := rt.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
		if req.Header.Get("Authorization") != "Bearer caller-set" {
			t.Errorf("%s: the caller's request was modified", u)
		}
	}
	want := []string{"Bearer " + tok, "Bearer " + tok, ""}
	for i, r := range base.sent {
		if got := r.Header.Get("Authorization"); got != want[i] {
			t.Errorf("request %d to %s: token sent %v, want %v", i, r.URL.Host, got != "", want[i] != "")
		}
	}
	base = &scripted{answers: []answer{{status: 200}}}
	if _, _, err := get(t, auth{host: "api.example.test", next: base}, "https://api.example.test/x"); err != nil {
		t.Fatal(err)
	}
	if _, ok := base.sent[0].Header["Authorization"]; ok {
		t.Error("no token configured, yet an Authorization header was sent")
	}
}

func TestCountCountsRequestsAndConditionals(t *testing.T) {
	m := newMeter()
	base := &scripted{answers: []answer{{status: 200}, {status: 304}, {status: 304}}}
	rt := count{m: m, next: base}
	for _, h := range []string{"", "If-None-Match", "If-Modified-Since"} {
		req, _ := http.NewRequest("GET", "https://api.example.test/x", nil)
		if h != "" {
			req.Header.Set(h, "v")
		}
		if _, err := rt.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
	}
	if m.s.Requests != 3 || m.s.Conditional != 2 {
		t.Errorf("stats %+v, want 3 requests, 2 conditional", m.s)
	}
}

func TestCapBodyRefusesALargerAnswer(t *testing.T) {
	for _, tc := range []struct {
		body string
		ok   bool
	}{{"12345678", true}, {"123456789", false}, {"", true}} {
		base := &scripted{answers: []answer{{status: 200, body: tc.body}}}
		resp, b, err := get(t, capBody{max: 8, next: base}, "https://api.example.test/x")
		var be *BodyError
		switch {
		case tc.ok && (err != nil || b != tc.body || resp.ContentLength != int64(len(tc.body))):
			t.Errorf("%q: body %q, err %v", tc.body, b, err)
		case !tc.ok && (!errors.As(err, &be) || !strings.Contains(err.Error(), "larger than 8 bytes")):
			t.Errorf("%q: err %v, want a BodyError naming the cap", tc.body, err)
		}
	}
	base := &scripted{answers: []answer{{err: errors.New("connection reset")}}}
	_, _, err := get(t, capBody{max: 8, next: base}, "https://api.example.test/x")
	var be *BodyError
	if err == nil || errors.As(err, &be) {
		t.Errorf("network error came back as %v, want it unchanged", err)
	}
}

func TestRedactRemovesTheTokenFromBodyAndHeaders(t *testing.T) {
	base := &scripted{answers: []answer{{status: 401, header: map[string]string{"X-Debug": "Bearer " + tok}, body: `{"message":"bad Bearer ` + tok + `"}`}}}
	resp, b, err := get(t, redact{token: tok, next: capBody{max: 1 << 20, next: base}}, "https://api.example.test/x")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b, tok) || !strings.Contains(b, "Bearer [token]") {
		t.Errorf("body %q", b)
	}
	if h := resp.Header.Get("X-Debug"); strings.Contains(h, tok) || h != "Bearer [token]" {
		t.Errorf("header %q", h)
	}
}

func TestStripRateHidesTheRateHeaders(t *testing.T) {
	base := &scripted{answers: []answer{{status: 200, header: map[string]string{"X-RateLimit-Remaining": "0", "X-Ratelimit-Reset": "1", "Etag": `"e"`}}}}
	resp, _, err := get(t, stripRate{next: base}, "https://api.example.test/x")
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Header) != 2 || resp.Header.Get("Etag") == "" {
		t.Errorf("headers %v, want Etag and Content-Type only", resp.Header)
	}
}

func TestBufferBodyMakesTheBodyResendable(t *testing.T) {
	base := &scripted{answers: []answer{{status: 200}}}
	var seen [][]byte
	rt := bufferBody{next: roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		for range 2 {
			b, err := requestBody(r)
			if err != nil {
				return nil, err
			}
			seen = append(seen, b)
		}
		return base.RoundTrip(resend(r))
	})}
	req, _ := http.NewRequest("POST", "https://api.example.test/graphql", strings.NewReader(`{"query":"q"}`))
	if _, err := rt.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || string(seen[0]) != `{"query":"q"}` || string(seen[1]) != string(seen[0]) || base.bodies[0] != string(seen[0]) {
		t.Errorf("bodies seen %q, sent %q", seen, base.bodies)
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestClassify(t *testing.T) {
	reset := fmt.Sprint(tl0.Add(2 * time.Minute).Unix())
	for _, tc := range []struct {
		name   string
		path   string
		status int
		header map[string]string
		body   string
		want   Verdict
	}{
		{"data", "/repos/a/b", 200, nil, `{}`, Verdict{}},
		{"not found", "/repos/a/b", 404, nil, `{"message":"Not Found"}`, Verdict{}},
		{"primary 403", "/repos/a/b", 403, map[string]string{"X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": reset}, `{}`, Verdict{PrimaryLimit, 2*time.Minute + time.Second}},
		{"primary 429 no reset", "/repos/a/b", 429, map[string]string{"X-Ratelimit-Remaining": "0"}, `{}`, Verdict{PrimaryLimit, 0}},
		{"primary in the past", "/repos/a/b", 403, map[string]string{"X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": "1"}, `{}`, Verdict{PrimaryLimit, time.Second}},
		{"graphql", "/graphql", 200, map[string]string{"X-Ratelimit-Reset": reset}, `{"errors":[{"type":"RATE_LIMITED"}]}`, Verdict{PrimaryLimit, 2*time.Minute + time.Second}},
		{"graphql data naming the word", "/graphql", 200, nil, `{"data":{"title":"RATE_LIMITED"}}`, Verdict{}},
		{"not graphql", "/repos/a/b", 200, nil, `{"errors":[{"type":"RATE_LIMITED"}]}`, Verdict{}},
		{"retry-after", "/repos/a/b", 403, map[string]string{"Retry-After": "30"}, `{}`, Verdict{SecondaryLimit, 31 * time.Second}},
		{"retry-after date", "/repos/a/b", 429, map[string]string{"Retry-After": tl0.Add(time.Minute).Format(http.TimeFormat)}, `{}`, Verdict{SecondaryLimit, time.Minute + time.Second}},
		{"secondary message", "/repos/a/b", 403, nil, `{"message":"You have exceeded a secondary rate limit"}`, Verdict{SecondaryLimit, 0}},
		{"abuse docs", "/repos/a/b", 403, nil, `{"message":"x","documentation_url":"https://docs/abuse-rate-limits"}`, Verdict{SecondaryLimit, 0}},
		{"forbidden", "/repos/a/b", 403, nil, `{"message":"Resource not accessible"}`, Verdict{}},
		{"429", "/repos/a/b", 429, nil, `{}`, Verdict{TooManyRequests, 0}},
		{"html type", "/repos/a/b", 200, map[string]string{"Content-Type": "text/html; charset=utf-8"}, `x`, Verdict{HTMLPage, 0}},
		{"html body", "/repos/a/b", 403, nil, "\n <!DOCTYPE html><html>", Verdict{HTMLPage, 0}},
		{"502", "/repos/a/b", 502, nil, `{}`, Verdict{ServerError, 0}},
		{"501", "/repos/a/b", 501, nil, `{}`, Verdict{}},
	} {
		req, _ := http.NewRequest("GET", "https://api.example.test"+tc.path, nil)
		h := http.Header{}
		for k, v := range tc.header {
			h.Set(k, v)
		}
		got := Classify(req, &http.Response{StatusCode: tc.status, Header: h}, []byte(tc.body), tl0)
		if got != tc.want {
			t.Errorf("%s: %v %s, want %v %s", tc.name, got.Limit, got.Wait, tc.want.Limit, tc.want.Wait)
		}
	}
}

func newRetry(base http.RoundTripper, clock Clock, m *meter, logs *strings.Builder) *retry {
	return &retry{clock: clock, maxAttempts: 3, backoff: time.Minute, maxBackoff: 3 * time.Minute,
		logf: func(f string, a ...any) { fmt.Fprintf(logs, f+"\n", a...) }, m: m, next: capBody{max: 1 << 20, next: base},
		blocked: map[string]time.Time{}}
}

func TestRetryWaitsAndGivesUp(t *testing.T) {
	reset := fmt.Sprint(tl0.Add(2 * time.Minute).Unix())
	netErr := errors.New("connection reset by peer")
	for _, tc := range []struct {
		name    string
		answers []answer
		slept   []time.Duration
		err     string // "" : the last answer comes up
		limited map[string]int
	}{
		{"429 doubles", []answer{{status: 429}, {status: 429}, {status: 200, body: "ok"}}, []time.Duration{time.Minute, 2 * time.Minute}, "", map[string]int{"429": 2}},
		{"gives up", []answer{{status: 429}, {status: 429}, {status: 429}}, []time.Duration{time.Minute, 2 * time.Minute}, "429 Too Many Requests answer 3 times in a row (status 429)", map[string]int{"429": 3}},
		{"primary waits for the reset", []answer{{status: 403, header: map[string]string{"X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": reset}}, {status: 200}}, []time.Duration{2*time.Minute + time.Second}, "", map[string]int{"primary": 1}},
		{"primary without reset backs off", []answer{{status: 403, header: map[string]string{"X-Ratelimit-Remaining": "0"}}, {status: 200}}, []time.Duration{time.Minute}, "", map[string]int{"primary": 1}},
		{"server errors back off short", []answer{{status: 503}, {status: 500}, {status: 200}}, []time.Duration{5 * time.Second, 10 * time.Second}, "", map[string]int{}},
		{"network", []answer{{err: netErr}, {err: netErr}, {status: 200}}, []time.Duration{5 * time.Second, 10 * time.Second}, "", map[string]int{}},
		{"network gives up", []answer{{err: netErr}, {err: netErr}, {err: netErr}, {err: netErr}}, []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second}, "4 attempts failed: connection reset by peer", map[string]int{}},
		{"404 is final", []answer{{status: 404, body: `{"message":"Not Found"}`}}, nil, "", map[string]int{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := fakegithub.NewClock(tl0)
			base := &scripted{answers: tc.answers}
			m := newMeter()
			var logs strings.Builder
			resp, _, err := get(t, newRetry(base, clock, m, &logs), "https://api.example.test/repos/a/b")
			if tc.err == "" && (err != nil || resp.StatusCode != tc.answers[len(tc.answers)-1].status) {
				t.Fatalf("got %v, %v", resp, err)
			}
			if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("err %v, want %q", err, tc.err)
			}
			if got := clock.Slept(); fmt.Sprint(got) != fmt.Sprint(tc.slept) {
				t.Errorf("slept %v, want %v", got, tc.slept)
			}
			if fmt.Sprint(m.s.RateLimited) != fmt.Sprint(tc.limited) {
				t.Errorf("rate limited %v, want %v", m.s.RateLimited, tc.limited)
			}
			if len(base.answers) != 0 {
				t.Errorf("%d answers not asked for", len(base.answers))
			}
			if strings.Count(logs.String(), "\n") != len(tc.slept) {
				t.Errorf("log %q, want one line a wait", logs.String())
			}
		})
	}
}

func TestRetryResendsTheBodyAndWaitsOutAnExhaustedLimit(t *testing.T) {
	clock := fakegithub.NewClock(tl0)
	reset := fmt.Sprint(tl0.Add(time.Minute).Unix())
	base := &scripted{answers: []answer{
		{status: 502},
		{status: 200, header: map[string]string{"X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": reset, "X-Ratelimit-Resource": "graphql"}},
		{status: 200},
	}}
	var logs strings.Builder
	rt := bufferBody{next: newRetry(base, clock, newMeter(), &logs)}
	for range 2 {
		req, _ := http.NewRequest("POST", "https://api.example.test/graphql", strings.NewReader(`{"query":"q"}`))
		if _, err := rt.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
	}
	if fmt.Sprint(base.bodies) != `[{"query":"q"} {"query":"q"} {"query":"q"}]` {
		t.Errorf("bodies sent %q", base.bodies)
	}
	if got := clock.Slept(); fmt.Sprint(got) != "[5s 56s]" { // the reset is at 1m, +1s, 5s later
		t.Errorf("slept %v, want the short back-off, then the wait for the reset before the second request", got)
	}
}

func openStore(t *testing.T) Cache {
	t.Helper()
	st, err := catalog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestRevalidateAsksWithTheETagAndServes304s(t *testing.T) {
	store := openStore(t)
	m := newMeter()
	base := &scripted{answers: []answer{
		{status: 200, header: map[string]string{"Etag": `"v1"`, "X-Other": "dropped"}, body: `{"n":1}`},
		{status: 304},
		{status: 200, header: map[string]string{"Etag": `"v2"`}, body: `{"n":2}`},
		{status: 404, body: `{"message":"Not Found"}`},
		{status: 404, body: `{"message":"Not Found"}`},
		{status: 503},
	}}
	rt := revalidate{store: store, clock: fakegithub.NewClock(tl0), m: m, next: base}
	var got []string
	for _, u := range []string{"/x", "/x", "/x", "/gone", "/gone", "/down"} {
		resp, b, err := get(t, rt, "https://api.example.test"+u)
		if err != nil {
			t.Fatal(err)
		}
		mb, ok := resp.Body.(*memBody)
		rec := ok && !mb.rec.IsZero()
		got = append(got, fmt.Sprintf("%d %s %s rec=%v", resp.StatusCode, b, resp.Header.Get("X-From-Cache"), rec))
	}
	want := []string{`200 {"n":1}  rec=true`, `200 {"n":1} 1 rec=true`, `200 {"n":2}  rec=true`,
		`404 {"message":"Not Found"}  rec=true`, `404 {"message":"Not Found"}  rec=true`, `503   rec=false`}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("answers\n%q\nwant\n%q", got, want)
	}
	sentIfNone := []string{}
	for _, r := range base.sent {
		sentIfNone = append(sentIfNone, r.Header.Get("If-None-Match"))
	}
	if fmt.Sprint(sentIfNone) != `[ "v1" "v1"   ]` {
		t.Errorf("If-None-Match sent %q", sentIfNone)
	}
	if m.s.NotModified != 1 {
		t.Errorf("not modified %d, want 1", m.s.NotModified)
	}
}

func TestReplayCrawlAnswersWithoutARequest(t *testing.T) {
	store := openStore(t)
	m := newMeter()
	base := &scripted{answers: []answer{
		{status: 200, header: map[string]string{"Etag": `"v1"`}, body: `{"n":1}`},
		{status: 503},
		{status: 503},
	}}
	stack := func(crawl string) http.RoundTripper {
		return replayCrawl{store: store, crawlID: crawl, m: m, next: revalidate{store: store, clock: fakegithub.NewClock(tl0), m: m, next: base}}
	}
	for i, tc := range []struct {
		crawl, url, want string
	}{
		{"c1", "/x", `200 {"n":1} `},
		{"c1", "/x", `200 {"n":1} 1`}, // replayed, no request
		{"c1", "/down", `503  `},      // not recorded
		{"c1", "/down", `503  `},      // so asked again
		{"c2", "/x", `unanswered`},    // another crawl asks (and the script is empty)
	} {
		resp, b, err := get(t, stack(tc.crawl), "https://api.example.test"+tc.url)
		got := "unanswered"
		if err == nil {
			got = fmt.Sprintf("%d %s %s", resp.StatusCode, b, resp.Header.Get("X-From-Cache"))
		}
		if got != tc.want {
			t.Errorf("%d: %s %s: %q, want %q", i, tc.crawl, tc.url, got, tc.want)
		}
	}
	if len(base.sent) != 4 || m.s.FromCache != 1 {
		t.Errorf("%d requests, %d from cache; want 4 and 1", len(base.sent), m.s.FromCache)
	}
}
