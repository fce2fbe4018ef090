package ghhttp_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/envgap/envgap/crawl/fakegithub"
	"github.com/envgap/envgap/crawl/ghhttp"
	"github.com/envgap/envgap/data/catalog"
	"github.com/google/go-github/v62/github"
)

var t0 = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)

const token = "ghp_9aZbY8xWv7UtS6rQp5OnM4lKj3IhG2fE1dC0"

type env struct {
	fake  *fakegithub.Server
	clock *fakegithub.Clock
	store *catalog.Catalog
	logs  *logBuf
}

type logBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuf) logf(format string, args ...any) {
	l.mu.Lock()
	fmt.Fprintf(&l.b, format+"\n", args...)
	l.mu.Unlock()
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newEnv(t *testing.T, opts fakegithub.Options) *env {
	t.Helper()
	return newEnvAt(t, t0, opts)
}

func newEnvAt(t *testing.T, start time.Time, opts fakegithub.Options) *env {
	t.Helper()
	clock := fakegithub.NewClock(start)
	opts.Now = clock.Now
	opts.Token = token
	st, err := catalog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &env{fake: fakegithub.New(t, os.DirFS("testdata"), opts), clock: clock, store: st, logs: &logBuf{}}
}

func (e *env) transport(crawlID string, cfg ghhttp.Config) *ghhttp.Transport {
	u, _ := url.Parse(e.fake.URL)
	cfg.Store, cfg.CrawlID, cfg.Token, cfg.APIHost, cfg.Clock, cfg.Logf = e.store, crawlID, token, u.Host, e.clock, e.logs.logf
	return ghhttp.New(cfg)
}

func (e *env) client(tr *ghhttp.Transport) *github.Client {
	c := github.NewClient(tr.Client())
	c.BaseURL, _ = url.Parse(e.fake.URL + "/")
	return c
}

func TestRateLimitsAreWaitedOut(t *testing.T) {
	for _, tc := range []struct {
		kind     string
		times    int
		minWait  time.Duration // total wait at least
		maxWait  time.Duration
		retried  int
		category string
	}{
		{fakegithub.Primary, 1, 2 * time.Minute, 2*time.Minute + 2*time.Second, 1, "primary"},
		{fakegithub.Secondary, 1, 30 * time.Second, 32 * time.Second, 1, "secondary"},
		{fakegithub.TooMany, 1, time.Minute, time.Minute, 1, "429"},
		{fakegithub.HTML, 1, time.Minute, time.Minute, 1, "html"},
		{fakegithub.HTML200, 1, time.Minute, time.Minute, 1, "html"},
		{fakegithub.TooMany, 3, 7 * time.Minute, 7 * time.Minute, 3, "429"}, // 1 + 2 + 4 minutes
		{fakegithub.Unicorn, 2, 15 * time.Second, 15 * time.Second, 2, ""},  // 5 + 10 seconds
	} {
		t.Run(fmt.Sprintf("%s-%d", tc.kind, tc.times), func(t *testing.T) {
			e := newEnv(t, fakegithub.Options{Faults: []fakegithub.Fault{{Path: "/repos/acme/widgets", Kind: tc.kind, Times: tc.times}}})
			tr := e.transport("c1", ghhttp.Config{})
			repo, _, err := e.client(tr).Repositories.Get(context.Background(), "acme", "widgets")
			if err != nil {
				t.Fatalf("get: %v", err)
			}
			if repo.GetFullName() != "acme/widgets" || repo.GetLicense().GetSPDXID() != "MIT" {
				t.Fatalf("got %q %q: the rate-limit answer was taken for data", repo.GetFullName(), repo.GetLicense().GetSPDXID())
			}
			var waited time.Duration
			for _, d := range e.clock.Slept() {
				waited += d
			}
			if waited < tc.minWait || waited > tc.maxWait {
				t.Errorf("waited %s, want between %s and %s (%v)", waited, tc.minWait, tc.maxWait, e.clock.Slept())
			}
			st := tr.Stats()
			if st.Requests != tc.times+1 || st.Retried != tc.retried || tc.category != "" && st.RateLimited[tc.category] != tc.times ||
				tc.category == "" && len(st.RateLimited) != 0 {
				t.Errorf("stats %+v", st)
			}
			if n := len(e.fake.Requests()); n != tc.times+1 {
				t.Errorf("fake saw %d requests, want %d", n, tc.times+1)
			}
		})
	}
}

func TestGraphQLRateLimitIsWaitedOut(t *testing.T) {
	e := newEnv(t, fakegithub.Options{Faults: []fakegithub.Fault{{Path: "/graphql", Kind: fakegithub.GraphQL, Times: 1}}})
	tr := e.transport("c1", ghhttp.Config{})
	body := `{"query":"query($owner: String!, $name: String!) { repository(owner: $owner, name: $name) { pr1: pullRequest(number: 1) { number } } }","variables":{"owner":"acme","name":"widgets"}}`
	resp, err := tr.Client().Post(e.fake.URL+"/graphql", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if bytes.Contains(b, []byte("RATE_LIMITED")) || !bytes.Contains(b, []byte(`"repository"`)) {
		t.Fatalf("answer %s", b)
	}
	if st := tr.Stats(); st.RateLimited["primary"] != 1 || st.WaitedSeconds < 120 {
		t.Errorf("stats %+v", st)
	}
}

func TestExhaustedLimitWaitsBeforeTheNextRequest(t *testing.T) {
	// A clock far ahead of the real one: go-github's own check compares the reset with
	// the real time, and must never see it.
	e := newEnvAt(t, time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC), fakegithub.Options{Faults: []fakegithub.Fault{{Path: "/repos/acme/widgets", Kind: fakegithub.Exhaust, Times: 1}}})
	tr := e.transport("", ghhttp.Config{})
	c := e.client(tr)
	for i := 0; i < 2; i++ {
		// go-github would refuse the second call on its own (its check uses the real
		// clock) if the transport passed the rate headers up.
		if _, _, err := c.Repositories.Get(context.Background(), "acme", "widgets"); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if slept := e.clock.Slept(); len(slept) != 1 || slept[0] < 2*time.Minute {
		t.Errorf("slept %v, want one wait for the reset", slept)
	}
	if n := len(e.fake.Requests()); n != 2 {
		t.Errorf("fake saw %d requests, want 2", n)
	}
}

func TestGivesUpWithAnErrorNotData(t *testing.T) {
	e := newEnv(t, fakegithub.Options{Faults: []fakegithub.Fault{{Path: "/repos/acme/widgets/tags", Kind: fakegithub.HTML200, Times: 100}}})
	tr := e.transport("c1", ghhttp.Config{MaxAttempts: 3})
	tags, _, err := e.client(tr).Repositories.ListTags(context.Background(), "acme", "widgets", nil)
	if err == nil || !strings.Contains(err.Error(), "HTML page") {
		t.Fatalf("tags %v, err %v: want an error naming the HTML page", tags, err)
	}
	if len(tags) != 0 {
		t.Errorf("tags %v from an HTML page", tags)
	}
	if n := len(e.fake.Requests()); n != 3 {
		t.Errorf("fake saw %d requests, want 3", n)
	}
	// Nothing of the failed answers was cached: once GitHub answers, the data comes.
	e2 := e.transport("c1", ghhttp.Config{MaxAttempts: 200})
	tags, _, err = e.client(e2).Repositories.ListTags(context.Background(), "acme", "widgets", nil)
	if err != nil || len(tags) != 3 {
		t.Fatalf("after the limit: %d tags, %v", len(tags), err)
	}
}

func TestCacheReplaysWithinACrawlAndRevalidatesAcrossCrawls(t *testing.T) {
	e := newEnv(t, fakegithub.Options{MaxPerPage: 2})
	ctx := context.Background()
	fetch := func(tr *ghhttp.Transport) string {
		t.Helper()
		c := e.client(tr)
		repo, _, err := c.Repositories.Get(ctx, "acme", "widgets")
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		lo := &github.ListOptions{PerPage: 100}
		for {
			tags, resp, err := c.Repositories.ListTags(ctx, "acme", "widgets", lo)
			if err != nil {
				t.Fatal(err)
			}
			for _, tg := range tags {
				names = append(names, tg.GetName())
			}
			if resp.NextPage == 0 {
				break
			}
			lo.Page = resp.NextPage
		}
		if _, _, err := c.Repositories.Get(ctx, "acme", "missing"); err == nil {
			t.Fatal("missing repository found")
		}
		return repo.GetFullName() + " " + strings.Join(names, ",")
	}
	first := e.transport("c1", ghhttp.Config{})
	want := fetch(first)
	if want != "acme/widgets v1.2.0,v1.1.0,v1.0.0" {
		t.Fatalf("first crawl read %q", want)
	}
	sent := first.Stats().Requests
	if sent != 4 {
		t.Fatalf("first crawl sent %d requests, want 4 (repo, two pages, 404)", sent)
	}

	again := e.transport("c1", ghhttp.Config{})
	if got := fetch(again); got != want {
		t.Errorf("same crawl again read %q", got)
	}
	if st := again.Stats(); st.Requests != 0 || st.FromCache != sent {
		t.Errorf("same crawl again: %+v, want no request and %d answers from the cache", st, sent)
	}
	if n := len(e.fake.Requests()); n != sent {
		t.Errorf("fake saw %d requests, want %d", n, sent)
	}

	next := e.transport("c2", ghhttp.Config{})
	if got := fetch(next); got != want {
		t.Errorf("next crawl read %q", got)
	}
	st := next.Stats()
	// The 404 has no ETag, so it is asked again unconditionally.
	if st.Requests != sent || st.Conditional != sent-1 || st.NotModified != sent-1 || st.FromCache != 0 {
		t.Errorf("next crawl: %+v, want %d conditional requests answered 304", st, sent-1)
	}
}

func TestTokenGoesOnlyToTheAPIHostAndIsNeverStored(t *testing.T) {
	e := newEnv(t, fakegithub.Options{})
	var otherAuth string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherAuth = r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{}`)
	}))
	defer other.Close()
	tr := e.transport("c1", ghhttp.Config{MaxAttempts: 2})
	c := e.client(tr)
	ctx := context.Background()
	if _, _, err := c.Repositories.Get(ctx, "acme", "widgets"); err != nil {
		t.Fatal(err)
	}
	_, _, err := c.Repositories.Get(ctx, "acme", "nothere")
	if err == nil || strings.Contains(err.Error(), token) {
		t.Errorf("error %v", err)
	}
	resp, err := tr.Client().Get(other.URL + "/x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if otherAuth != "" {
		t.Errorf("another host received Authorization %q", otherAuth)
	}
	if strings.Contains(e.logs.String(), token) {
		t.Error("the token is in the log")
	}
	walkStore(t, e.store.Dir())
}

type flaky struct {
	fails int
	base  http.RoundTripper
}

func (f *flaky) RoundTrip(r *http.Request) (*http.Response, error) {
	if f.fails > 0 {
		f.fails--
		return nil, fmt.Errorf("connection reset by peer")
	}
	return f.base.RoundTrip(r)
}

func TestNetworkFailures(t *testing.T) {
	for _, tc := range []struct {
		fails int
		ok    bool
	}{{2, true}, {4, false}} {
		e := newEnv(t, fakegithub.Options{})
		tr := e.transport("", ghhttp.Config{Base: &flaky{fails: tc.fails, base: http.DefaultTransport}})
		_, _, err := e.client(tr).Repositories.Get(context.Background(), "acme", "widgets")
		if (err == nil) != tc.ok {
			t.Errorf("%d failures: err = %v", tc.fails, err)
		}
		if !tc.ok && (err == nil || !strings.Contains(err.Error(), "4 attempts failed")) {
			t.Errorf("%d failures: err = %v, want it to say how many attempts failed", tc.fails, err)
		}
	}
}

// TestEchoedTokenIsRedacted: a server that echoes the Authorization header in its error
// body and headers gets the token into no error, no answer and no store object.
func TestEchoedTokenIsRedacted(t *testing.T) {
	e := newEnv(t, fakegithub.Options{})
	e.fake.AddFault(fakegithub.Fault{Path: "/repos/acme/widgets", Kind: fakegithub.EchoAuth, Times: 1})
	tr := e.transport("c1", ghhttp.Config{MaxAttempts: 2})
	c := e.client(tr)
	_, resp, err := c.Repositories.Get(context.Background(), "acme", "widgets")
	if err == nil {
		t.Fatal("no error from a 401")
	}
	if strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), "Bearer [token]") {
		t.Errorf("error %q: want the token redacted", err)
	}
	if resp == nil || strings.Contains(resp.Header.Get("X-Debug-Authorization"), token) {
		t.Errorf("response header %v holds the token", resp)
	}
	walkStore(t, e.store.Dir())
}

// walkStore fails the test when a file of the store holds the token or its prefix.
func walkStore(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(token[:12])) {
			t.Errorf("%s holds the token", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
