// Package fakegithub is an in-process fake of GitHub's REST and GraphQL APIs, fed by JSON
// fixtures shaped like the real answers. The tests start it with New; the demo's GitHub
// stand-in (envgap github-serve) serves a World (world.go: fixtures rendered from a small
// world description and git repositories built from it, served over git's smart HTTP
// protocol) with Handler.
//
// Fixture layout (under the root given to New), by request path:
//
//	repos/acme/widgets.json               GET /repos/acme/widgets
//	repos/acme/widgets/issues.json        GET /repos/acme/widgets/issues (a list)
//	repos/acme/widgets/pulls/3/files.json GET /repos/acme/widgets/pulls/3/files
//	repos/acme/oldname.301.json           a 301 to the body's "url" (a renamed repository)
//	graphql/acme/widgets/pull-3.json      the PullRequest node GraphQL answers for #3
//
// A missing fixture answers 404 as GitHub does. Text "{{name}}" in a fixture is replaced by
// the variable name (e.g. {{sha:base}} by a commit hash the test made); {{api}} is the
// server's URL. Lists are filtered (state, since, until), sorted (sort, direction) and
// paged (per_page, page, Link headers) like GitHub's. Every answer has an ETag, and a
// request whose If-None-Match matches it gets 304. Faults make chosen paths answer with a
// rate limit (primary, secondary, 429, an HTML page) a number of times first.
package fakegithub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Fault kinds.
const (
	Primary   = "primary"   // 403, X-RateLimit-Remaining: 0, reset in two minutes
	Secondary = "secondary" // 403 with Retry-After and the secondary-limit message
	TooMany   = "429"       // 429 without rate-limit headers
	HTML      = "html"      // 403 with GitHub's HTML "Whoa there!" page
	HTML200   = "html200"   // 200 with an HTML page
	GraphQL   = "graphql"   // 200 with a GraphQL RATE_LIMITED error, remaining 0
	Exhaust   = "exhaust"   // the real answer, saying no requests remain until the reset
	Unicorn   = "502"       // 502 Bad Gateway with GitHub's JSON
	// EchoAuth is a misbehaving server (a proxy, an enterprise server) that echoes the
	// request's Authorization header in a 401 body and a response header.
	EchoAuth = "echo-auth"
)

// Fault makes requests to Path answer with Kind, Times times, before the real answer.
type Fault struct {
	Method string // empty: any
	Path   string
	Kind   string
	Times  int
}

// Request is one request the fake received.
type Request struct {
	Method      string
	Path        string
	Query       string
	Conditional bool
	Status      int
}

// Options configure a Server.
type Options struct {
	// Token, when set, must come as "Authorization: Bearer <token>"; otherwise 401.
	Token string
	// Vars replace {{name}} in fixtures.
	Vars map[string]string
	// Now dates rate-limit resets; nil is time.Now.
	Now func() time.Time
	// MaxPerPage caps page sizes (to make tests page); 0 is GitHub's 100.
	MaxPerPage int
	// Faults to play.
	Faults []Fault
	// Errorf reports a broken fixture (an unexpanded placeholder, a list that is not
	// JSON) or an unknown fault; nil: the test's Errorf (New) or nothing (Handler).
	Errorf func(format string, args ...any)
}

// TB is the part of testing.TB that New uses.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Cleanup(func())
}

// Server is a running fake.
type Server struct {
	*httptest.Server
	*Handler
}

// Handler answers GitHub's REST and GraphQL requests from fixtures.
type Handler struct {
	fsys fs.FS
	opts Options
	// BaseURL is the API's base URL, the fixtures' {{api}} (no trailing slash); New sets
	// it, a caller of NewHandler sets it before serving.
	BaseURL string

	mu     sync.Mutex
	faults []*Fault
	log    []Request
}

// New starts a fake serving the fixtures of fsys. It stops when the test ends.
func New(t TB, fsys fs.FS, opts Options) *Server {
	t.Helper()
	if opts.Errorf == nil {
		opts.Errorf = t.Errorf
	}
	h := NewHandler(fsys, opts)
	s := &Server{Handler: h, Server: httptest.NewServer(h)}
	h.BaseURL = s.Server.URL
	t.Cleanup(s.Close)
	return s
}

// NewHandler returns a handler serving the fixtures of fsys; set its BaseURL before it serves.
func NewHandler(fsys fs.FS, opts Options) *Handler {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxPerPage <= 0 {
		opts.MaxPerPage = 100
	}
	if opts.Errorf == nil {
		opts.Errorf = func(string, ...any) {}
	}
	s := &Handler{fsys: fsys, opts: opts}
	for i := range opts.Faults {
		f := opts.Faults[i]
		s.faults = append(s.faults, &f)
	}
	return s
}

// AddFault adds a fault to play.
func (s *Handler) AddFault(f Fault) {
	s.mu.Lock()
	s.faults = append(s.faults, &f)
	s.mu.Unlock()
}

// Requests returns the requests received so far.
func (s *Handler) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(code int) { r.status = code; r.ResponseWriter.WriteHeader(code) }

// ServeHTTP answers one request.
func (s *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &recorder{ResponseWriter: w, status: 200}
	defer func() {
		s.mu.Lock()
		s.log = append(s.log, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
			Conditional: r.Header.Get("If-None-Match") != "", Status: rec.status})
		s.mu.Unlock()
	}()
	if s.opts.Token != "" && r.Header.Get("Authorization") != "Bearer "+s.opts.Token {
		writeJSON(rec, http.StatusUnauthorized, nil, `{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest"}`)
		return
	}
	handled, exhaust := s.playFault(rec, r)
	if handled {
		return
	}
	if exhaust {
		rec.Header().Set("X-Envgap-Exhaust", "1")
	}
	if r.Method == http.MethodPost && r.URL.Path == "/graphql" {
		s.graphql(rec, r)
		return
	}
	if r.Method != http.MethodGet {
		writeJSON(rec, http.StatusNotFound, nil, notFound)
		return
	}
	s.rest(rec, r)
}

const notFound = `{"message":"Not Found","documentation_url":"https://docs.github.com/rest","status":"404"}`

func (s *Handler) rateHeaders(h http.Header, remaining int, resource string) {
	h.Set("X-RateLimit-Limit", "5000")
	h.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	h.Set("X-RateLimit-Used", strconv.Itoa(5000-remaining))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(s.opts.Now().Add(2*time.Minute).Unix(), 10))
	h.Set("X-RateLimit-Resource", resource)
}

func (s *Handler) playFault(w http.ResponseWriter, r *http.Request) (handled, exhaust bool) {
	s.mu.Lock()
	var f *Fault
	for _, x := range s.faults {
		if x.Times > 0 && x.Path == r.URL.Path && (x.Method == "" || x.Method == r.Method) {
			x.Times--
			f = x
			break
		}
	}
	s.mu.Unlock()
	if f == nil {
		return false, false
	}
	if f.Kind == Exhaust {
		return false, true
	}
	h := w.Header()
	resource := "core"
	if r.URL.Path == "/graphql" {
		resource = "graphql"
	}
	switch f.Kind {
	case Primary:
		s.rateHeaders(h, 0, resource)
		writeJSON(w, http.StatusForbidden, nil, `{"message":"API rate limit exceeded for user ID 1. If you reach out to GitHub Support for help, please include the request ID.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}`)
	case Secondary:
		s.rateHeaders(h, 4000, resource)
		h.Set("Retry-After", "30")
		writeJSON(w, http.StatusForbidden, nil, `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`)
	case TooMany:
		writeJSON(w, http.StatusTooManyRequests, nil, `{"message":"Too Many Requests"}`)
	case Unicorn:
		writeJSON(w, http.StatusBadGateway, nil, `{"message":"Server Error"}`)
	case EchoAuth:
		auth := r.Header.Get("Authorization")
		msg, _ := json.Marshal(map[string]string{"message": "Bad credentials: " + auth, "documentation_url": "https://docs.github.com/rest"})
		writeJSON(w, http.StatusUnauthorized, http.Header{"X-Debug-Authorization": {auth}}, string(msg))
	case HTML, HTML200:
		h.Set("Content-Type", "text/html; charset=utf-8")
		st := http.StatusForbidden
		if f.Kind == HTML200 {
			st = http.StatusOK
		}
		w.WriteHeader(st)
		io.WriteString(w, "<!DOCTYPE html>\n<html><head><title>Rate limit &middot; GitHub</title></head><body><h1>Whoa there!</h1><p>You have exceeded a secondary rate limit.</p></body></html>\n")
	case GraphQL:
		s.rateHeaders(h, 0, "graphql")
		writeJSON(w, http.StatusOK, nil, `{"errors":[{"type":"RATE_LIMITED","code":"graphql_rate_limit","message":"API rate limit already exceeded for user ID 1."}]}`)
	default:
		s.opts.Errorf("fakegithub: unknown fault kind %q", f.Kind)
		return false, false
	}
	return true, false
}

func writeJSON(w http.ResponseWriter, status int, h http.Header, body string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	for k, v := range h {
		w.Header()[k] = v
	}
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// fixture reads and expands a fixture; ok false when it does not exist.
func (s *Handler) fixture(name string) ([]byte, bool) {
	b, err := fs.ReadFile(s.fsys, name)
	if err != nil {
		return nil, false
	}
	text := strings.ReplaceAll(string(b), "{{api}}", s.BaseURL)
	for k, v := range s.opts.Vars {
		text = strings.ReplaceAll(text, "{{"+k+"}}", v)
	}
	if i := strings.Index(text, "{{"); i >= 0 {
		end := min(len(text), i+40)
		s.opts.Errorf("fakegithub: %s: unexpanded placeholder near %q", name, text[i:end])
	}
	return []byte(text), true
}

func (s *Handler) rest(w http.ResponseWriter, r *http.Request) {
	p := strings.Trim(r.URL.Path, "/")
	if b, ok := s.fixture(p + ".301.json"); ok {
		var m struct {
			URL string `json:"url"`
		}
		_ = json.Unmarshal(b, &m)
		h := http.Header{}
		h.Set("Location", m.URL)
		writeJSON(w, http.StatusMovedPermanently, h, string(b))
		return
	}
	b, ok := s.fixture(p + ".json")
	if !ok {
		writeJSON(w, http.StatusNotFound, nil, notFound)
		return
	}
	h := http.Header{}
	remaining := 4999
	if w.Header().Get("X-Envgap-Exhaust") != "" {
		w.Header().Del("X-Envgap-Exhaust")
		remaining = 0
	}
	s.rateHeaders(h, remaining, "core")
	if len(b) > 0 && b[0] == '[' {
		var items []map[string]any
		if err := json.Unmarshal(b, &items); err != nil {
			s.opts.Errorf("fakegithub: %s.json: %v", p, err)
			writeJSON(w, 500, nil, `{"message":"bad fixture"}`)
			return
		}
		items = filterList(items, r.URL.Query())
		page, link := s.paginate(r, items)
		out, _ := json.Marshal(page)
		b = out
		if link != "" {
			h.Set("Link", link)
		}
	}
	etag := `"` + hexSum(b) + `"`
	h.Set("ETag", etag)
	if r.Header.Get("If-None-Match") == etag {
		for k, v := range h {
			w.Header()[k] = v
		}
		w.WriteHeader(http.StatusNotModified)
		return
	}
	writeJSON(w, http.StatusOK, h, string(b))
}

func hexSum(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

func timeField(item map[string]any, field string) (time.Time, bool) {
	var v any = item
	for _, part := range strings.Split(field, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return time.Time{}, false
		}
		v = m[part]
	}
	s, ok := v.(string)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, s)
	return t, err == nil
}

// filterList applies GitHub's list parameters that the crawl uses.
func filterList(items []map[string]any, q url.Values) []map[string]any {
	var out []map[string]any
	state := q.Get("state")
	since, hasSince := parseTime(q.Get("since"))
	until, hasUntil := parseTime(q.Get("until"))
	for _, it := range items {
		if st, ok := it["state"].(string); ok && state != "" && state != "all" && st != state {
			continue
		}
		if _, isCommit := it["commit"]; isCommit {
			d, _ := timeField(it, "commit.committer.date")
			if hasUntil && d.After(until) || hasSince && d.Before(since) {
				continue
			}
		} else if hasSince {
			if d, ok := timeField(it, "updated_at"); ok && d.Before(since) {
				continue
			}
		}
		out = append(out, it)
	}
	if s := q.Get("sort"); s == "created" || s == "updated" {
		field := s + "_at"
		desc := q.Get("direction") != "asc"
		sort.SliceStable(out, func(i, j int) bool {
			a, _ := timeField(out[i], field)
			b, _ := timeField(out[j], field)
			if desc {
				return a.After(b)
			}
			return a.Before(b)
		})
	}
	return out
}

func parseTime(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, s)
	return t, err == nil
}

func (s *Handler) paginate(r *http.Request, items []map[string]any) ([]map[string]any, string) {
	q := r.URL.Query()
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = 30
	}
	per = min(per, s.opts.MaxPerPage)
	page, _ := strconv.Atoi(q.Get("page"))
	if page <= 0 {
		page = 1
	}
	start := min((page-1)*per, len(items))
	end := min(start+per, len(items))
	last := (len(items) + per - 1) / per
	if last == 0 {
		last = 1
	}
	pageItems := items[start:end]
	if pageItems == nil {
		pageItems = []map[string]any{}
	}
	link := func(n int, rel string) string {
		q2 := url.Values{}
		for k, v := range q {
			q2[k] = v
		}
		q2.Set("page", strconv.Itoa(n))
		q2.Set("per_page", strconv.Itoa(per))
		return fmt.Sprintf(`<%s%s?%s>; rel="%s"`, s.BaseURL, r.URL.Path, q2.Encode(), rel)
	}
	var links []string
	if page < last {
		links = append(links, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"), link(page-1, "prev"))
	}
	return pageItems, strings.Join(links, ", ")
}

var aliasRe = regexp.MustCompile(`(\w+): pullRequest\(number: (\d+)\)`)

func (s *Handler) graphql(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Query     string         `json:"query"`
		Variables map[string]any `json:"variables"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, nil, `{"message":"Problems parsing JSON"}`)
		return
	}
	owner, _ := req.Variables["owner"].(string)
	name, _ := req.Variables["name"].(string)
	repo := map[string]json.RawMessage{}
	var errs []map[string]any
	for _, m := range aliasRe.FindAllStringSubmatch(req.Query, -1) {
		alias, num := m[1], m[2]
		b, ok := s.fixture(fmt.Sprintf("graphql/%s/%s/pull-%s.json", owner, name, num))
		if !ok {
			repo[alias] = json.RawMessage("null")
			errs = append(errs, map[string]any{"type": "NOT_FOUND", "path": []string{"repository", alias},
				"message": fmt.Sprintf("Could not resolve to a PullRequest with the number of %s.", num)})
			continue
		}
		repo[alias] = json.RawMessage(b)
	}
	resp := map[string]any{"data": map[string]any{"repository": repo}}
	if len(errs) > 0 {
		resp["errors"] = errs
	}
	b, _ := json.Marshal(resp)
	h := http.Header{}
	s.rateHeaders(h, 4990, "graphql")
	writeJSON(w, http.StatusOK, h, string(b))
}

// Clock is a fake clock: Sleep advances it at once and records the wait.
type Clock struct {
	mu    sync.Mutex
	now   time.Time
	slept []time.Duration
}

// NewClock returns a Clock at t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep advances the clock by d.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.slept = append(c.slept, d)
	c.mu.Unlock()
	return ctx.Err()
}

// Slept returns the waits so far.
func (c *Clock) Slept() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.slept...)
}
