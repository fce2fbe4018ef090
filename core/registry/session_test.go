package registry

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/envgap/envgap/schemas"
)

func TestSessionRecord(t *testing.T) {
	up := newUpstream(t)
	up.setStatus("/npm/broken-pkg", 500)
	p, srv := newTestProxy(t, up, nil)
	cut := schemas.CutoffAt(time.Date(2023, 7, 30, 14, 0, 0, 0, time.FixedZone("x", 2*3600))) // = testCutoff
	s := localSession(t, p, cut)
	base := s.BaseURL(srv.URL)
	if want := srv.URL + "/s/" + s.ID() + "/c/" + testCutoff; base != want {
		t.Fatalf("BaseURL = %q, want %q", base, want)
	}
	for _, path := range []string{"/pypi/simple/demo/", "/pypi/files/demo/demo-1.0-py3-none-any.whl", "/pypi/files/demo/demo-2.0.tar.gz",
		"/npm/demo-pkg", "/npm/demo-pkg/-/demo-pkg-1.2.0.tgz", "/npm/broken-pkg"} {
		get(t, base+path)
	}
	rec := s.Record()
	wantHidden := []Event{
		{Ecosystem: "npm", Package: "demo-pkg", Version: "1.3.0", Reason: "published 2023-07-30T12:00:00.000001Z after cut-off 2023-07-30T12:00:00Z"},
		{Ecosystem: "pypi", Package: "demo", Version: "1.2", File: "demo-1.2-py3-none-any.whl", Reason: "no upload time"},
		{Ecosystem: "pypi", Package: "demo", Version: "2.0", File: "demo-2.0.tar.gz", Reason: "uploaded 2024-01-02T09:30:00.000000Z after cut-off 2023-07-30T12:00:00Z"},
	}
	for _, w := range wantHidden {
		if !slices.Contains(rec.Hidden, w) {
			t.Errorf("hidden lacks %+v\nhave %+v", w, rec.Hidden)
		}
	}
	wantServed := []Event{
		{Ecosystem: "pypi", Package: "demo", Version: "1.0", File: "demo-1.0-py3-none-any.whl"},
		{Ecosystem: "npm", Package: "demo-pkg", Version: "1.2.0", File: "demo-pkg-1.2.0.tgz"},
	}
	for _, w := range wantServed {
		if !slices.Contains(rec.Served, w) {
			t.Errorf("served lacks %+v\nhave %+v", w, rec.Served)
		}
	}
	var sawMeta bool
	for _, e := range rec.Served {
		sawMeta = sawMeta || (e.Package == "demo-pkg" && strings.Contains(e.Reason, "4 of 7 versions, latest 1.2.0"))
	}
	if !sawMeta {
		t.Errorf("no metadata event for demo-pkg: %+v", rec.Served)
	}
	if len(rec.Errors) != 1 || rec.Errors[0].Package != "broken-pkg" {
		t.Errorf("errors = %+v", rec.Errors)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	var back Record
	if err := json.Unmarshal(b, &back); err != nil || back.Cutoff != testCutoff || len(back.Hidden) != len(rec.Hidden) {
		t.Errorf("round trip: %v %+v", err, back)
	}
	// Other sessions and plain requests do not leak into this record.
	other := p.NewSession(cut)
	if err := other.BindAnyAddress(); err != nil {
		t.Fatal(err)
	}
	get(t, other.BaseURL(srv.URL)+"/npm/@scope%2fpkg")
	get(t, srv.URL+"/c/"+testCutoff+"/npm/untimed-pkg")
	for _, e := range s.Record().Served {
		if e.Package == "@scope/pkg" || e.Package == "untimed-pkg" {
			t.Errorf("foreign event %+v", e)
		}
	}
	// A wrong cut-off under a session is refused; so is a closed session (never a 404).
	if resp, _ := get(t, srv.URL+"/s/"+s.ID()+"/c/2024-01-01/npm/demo-pkg"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("mismatched cut-off: %d", resp.StatusCode)
	}
	final := s.Close()
	if len(final.Hidden) != len(rec.Hidden) || len(final.Refused) != 1 {
		t.Errorf("Close record differs: %d hidden (want %d), refused %+v", len(final.Hidden), len(rec.Hidden), final.Refused)
	}
	if resp, _ := get(t, base+"/npm/demo-pkg"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("closed session: %d", resp.StatusCode)
	}
}

func TestSessionEventCap(t *testing.T) {
	up := newUpstream(t)
	p, srv := newTestProxy(t, up, func(o *Options) { o.MaxLogEvents = 2 })
	s := localSession(t, p, schemas.CutoffAt(time.Date(2023, 7, 30, 12, 0, 0, 0, time.UTC)))
	get(t, s.BaseURL(srv.URL)+"/npm/demo-pkg")
	rec := s.Record()
	if n := len(rec.Served) + len(rec.Hidden) + len(rec.Errors); n != 2 || rec.Dropped == 0 {
		t.Errorf("events %d dropped %d", n, rec.Dropped)
	}
}

func TestConcurrentRequests(t *testing.T) {
	up := newUpstream(t)
	p, srv := newTestProxy(t, up, nil)
	s := localSession(t, p, schemas.CutoffAt(time.Date(2023, 7, 30, 12, 0, 0, 0, time.UTC)))
	type check struct {
		url, accept string
		ok          func([]byte) error
	}
	checks := []check{
		{s.BaseURL(srv.URL) + "/pypi/simple/demo/", pipAccept, func(b []byte) error {
			var page pypiOutPage
			if err := json.Unmarshal(b, &page); err != nil || strings.Join(page.Versions, ",") != "0.8,0.9,1.0,1.1" {
				return fmt.Errorf("versions %v %v", page.Versions, err)
			}
			return nil
		}},
		{srv.URL + "/c/2024-01-15/pypi/simple/demo/", pipAccept, func(b []byte) error {
			var page pypiOutPage
			if err := json.Unmarshal(b, &page); err != nil || strings.Join(page.Versions, ",") != "0.8,0.9,1.0,1.1,2.0" {
				return fmt.Errorf("versions %v %v", page.Versions, err)
			}
			return nil
		}},
		{s.BaseURL(srv.URL) + "/npm/demo-pkg", npmAccept, func(b []byte) error {
			var pk packument
			if err := json.Unmarshal(b, &pk); err != nil || pk.DistTags["latest"] != "1.2.0" {
				return fmt.Errorf("latest %v %v", pk.DistTags, err)
			}
			return nil
		}},
		{srv.URL + "/c/2024-01-15/npm/demo-pkg", "", func(b []byte) error {
			var pk packument
			if err := json.Unmarshal(b, &pk); err != nil || pk.DistTags["latest"] != "2.0.0" {
				return fmt.Errorf("latest %v %v", pk.DistTags, err)
			}
			return nil
		}},
		{s.BaseURL(srv.URL) + "/npm/demo-pkg/-/demo-pkg-1.0.0.tgz", "", func(b []byte) error {
			if string(b) != string(npmTarballBytes("demo-pkg", "1.0.0")) {
				return fmt.Errorf("tarball differs")
			}
			return nil
		}},
		{s.BaseURL(srv.URL) + "/pypi/files/demo/demo-1.0-py3-none-any.whl", "", func(b []byte) error {
			if string(b) != string(makeWheel("demo-1.0-py3-none-any.whl")) {
				return fmt.Errorf("wheel differs")
			}
			return nil
		}},
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16*len(checks))
	for g := 0; g < 16; g++ {
		wg.Go(func() {
			for i := range checks {
				c := checks[(i+g)%len(checks)]
				req, _ := http.NewRequest("GET", c.url, nil)
				req.Header.Set("Accept", c.accept)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					errs <- err
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					errs <- fmt.Errorf("%s: %d", c.url, resp.StatusCode)
				} else if err := c.ok(b); err != nil {
					errs <- fmt.Errorf("%s: %w", c.url, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, path := range []string{"/simple/demo/", "/npm/demo-pkg", npmTarballPath("demo-pkg", "1.0.0"), "/files/demo-1.0-py3-none-any.whl"} {
		if n := up.count(path); n != 1 {
			t.Errorf("%s fetched upstream %d times under concurrency, want 1", path, n)
		}
	}
}

func TestClientEnv(t *testing.T) {
	cut := schemas.CutoffAt(time.Date(2023, 7, 30, 12, 0, 0, 0, time.UTC))
	env := ClientEnv("http://host.containers.internal:8080/s/abc/", cut)
	want := map[string]string{
		"PIP_INDEX_URL":                 "http://host.containers.internal:8080/s/abc/c/2023-07-30T12:00:00Z/pypi/simple/",
		"UV_INDEX_URL":                  "http://host.containers.internal:8080/s/abc/c/2023-07-30T12:00:00Z/pypi/simple/",
		"PIP_TRUSTED_HOST":              "host.containers.internal:8080",
		"npm_config_registry":           "http://host.containers.internal:8080/s/abc/c/2023-07-30T12:00:00Z/npm/",
		"npm_config_before":             "2023-07-30T12:00:00Z",
		"PIP_DISABLE_PIP_VERSION_CHECK": "1",
		"YARN_UNSAFE_HTTP_WHITELIST":    "host.containers.internal",
	}
	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = v
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if !slices.IsSorted(env) {
		t.Errorf("env not sorted")
	}
	for _, kv := range ClientEnv("https://proxy.example", cut) {
		if strings.HasPrefix(kv, "PIP_TRUSTED_HOST=") {
			t.Errorf("https proxy got %s", kv)
		}
	}
}

// TestSessionIsTheCutoff: the core's proxy (no AnyCutoff) serves only within a session
// bound to the asking address, at the session's cut-off. A request outside the session,
// under another cut-off, under another container's session or an unbound one is refused
// with 403 and a message naming what was asked and what the session allows, and recorded
// in the session the asking address holds (never in another's).
func TestSessionIsTheCutoff(t *testing.T) {
	up := newUpstream(t)
	p, srv := newTestProxy(t, up, func(o *Options) { o.AnyCutoff = false })
	cut := mustCutoff(t, testCutoff)
	here := netip.MustParseAddr("127.0.0.1")

	// Before any session is bound to this address, a request outside a session is refused
	// and recorded nowhere.
	unbound := p.NewSession(cut)
	resp, body := get(t, srv.URL+"/c/"+testCutoff+"/npm/demo-pkg")
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "outside a registry session") {
		t.Fatalf("no session: %d %s", resp.StatusCode, body)
	}
	resp, body = get(t, unbound.BaseURL(srv.URL)+"/npm/demo-pkg")
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "not bound to a container") {
		t.Errorf("unbound session: %d %s", resp.StatusCode, body)
	}

	mine := p.NewSession(cut)
	if err := mine.Bind(here); err != nil {
		t.Fatal(err)
	}
	if a, err := mine.Addr(); err != nil || a != here {
		t.Errorf("Addr = %v, %v", a, err)
	}
	if err := mine.Bind(netip.MustParseAddr("10.0.0.8")); err == nil {
		t.Errorf("a second address was bound")
	}
	other := p.NewSession(cut)
	if err := other.Bind(netip.MustParseAddr("10.0.0.9")); err != nil {
		t.Fatal(err)
	}
	if resp, body := get(t, mine.BaseURL(srv.URL)+"/npm/demo-pkg"); resp.StatusCode != 200 {
		t.Fatalf("own session: %d %s", resp.StatusCode, body)
	}
	if resp, body := get(t, mine.BaseURL(srv.URL)+"/"); resp.StatusCode != 200 || !strings.Contains(string(body), testCutoff) {
		t.Errorf("own session's root: %d %s", resp.StatusCode, body)
	}
	refusals := []struct {
		name, url, want string
		npm             bool
	}{
		{"outside the session", srv.URL + "/c/" + testCutoff + "/npm/demo-pkg", "outside a registry session", true},
		{"a later cut-off", srv.URL + "/s/" + mine.ID() + "/c/2030-01-01/pypi/simple/demo/", "another cut-off than " + testCutoff, false},
		{"a later cut-off without the session", srv.URL + "/c/2030-01-01/npm/demo-pkg", "outside a registry session", true},
		{"another container's session", other.BaseURL(srv.URL) + "/npm/demo-pkg", "belongs to another container", true},
		{"an unknown session", srv.URL + "/s/0123/c/" + testCutoff + "/npm/demo-pkg", "unknown or closed", true},
	}
	for _, r := range refusals {
		resp, body := get(t, r.url)
		if resp.StatusCode != RefusedStatus {
			t.Errorf("%s: %d %s", r.name, resp.StatusCode, body)
			continue
		}
		msg := string(body)
		if r.npm {
			var e struct{ Error string }
			if err := json.Unmarshal(body, &e); err != nil || e.Error == "" {
				t.Errorf("%s: npm refusal is not {\"error\": ...}: %s", r.name, body)
			}
			msg = e.Error
		}
		for _, w := range []string{r.want, "serves cut-off " + testCutoff + " only", "/s/" + mine.ID() + "/c/" + testCutoff + "/", "cut-off is fixed"} {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: message lacks %q: %s", r.name, w, msg)
			}
		}
	}
	rec := mine.Record()
	if len(rec.Refused) != len(refusals) {
		t.Errorf("recorded %d refusals, want %d: %+v", len(rec.Refused), len(refusals), rec.Refused)
	}
	for _, r := range refusals {
		found := false
		for _, e := range rec.Refused {
			found = found || strings.Contains(e.Reason, r.want)
		}
		if !found {
			t.Errorf("%s: not in the record %+v", r.name, rec.Refused)
		}
	}
	if n := len(other.Record().Refused) + len(unbound.Record().Refused); n != 0 {
		t.Errorf("refusals recorded in sessions the asker does not hold: %d", n)
	}
	// The engine gives a removed container's address to a new one: binding it moves it.
	next := p.NewSession(cut)
	if err := next.Bind(here); err != nil {
		t.Fatal(err)
	}
	if resp, _ := get(t, mine.BaseURL(srv.URL)+"/npm/demo-pkg"); resp.StatusCode != RefusedStatus {
		t.Errorf("a session whose address moved on still serves: %d", resp.StatusCode)
	}
	if resp, _ := get(t, next.BaseURL(srv.URL)+"/npm/demo-pkg"); resp.StatusCode != 200 {
		t.Errorf("the new session does not serve: %d", resp.StatusCode)
	}
	next.Close()
	if err := next.Bind(here); err == nil {
		t.Errorf("a closed session was bound")
	}
	// A session bound to any address (a remote engine behind NAT) serves its id's holder.
	anyone := p.NewSession(cut)
	if err := anyone.BindAnyAddress(); err != nil {
		t.Fatal(err)
	}
	if resp, _ := get(t, anyone.BaseURL(srv.URL)+"/npm/demo-pkg"); resp.StatusCode != 200 {
		t.Errorf("any-address session: %d", resp.StatusCode)
	}
	if resp, _ := get(t, anyone.Root(srv.URL)+"/c/2030-01-01/npm/demo-pkg"); resp.StatusCode != RefusedStatus || len(anyone.Record().Refused) != 1 {
		t.Errorf("any-address session, later cut-off: %d, %+v", resp.StatusCode, anyone.Record().Refused)
	}
}

// TestFixedCutoff: a Harbor task's registry (Options.Cutoff) serves the task's cut-off
// alone, whatever the URL names, and has no sessions.
func TestFixedCutoff(t *testing.T) {
	up := newUpstream(t)
	cut := mustCutoff(t, testCutoff)
	_, srv := newTestProxy(t, up, func(o *Options) { o.AnyCutoff, o.Cutoff = false, cut })
	if resp, body := get(t, srv.URL+"/c/"+testCutoff+"/npm/demo-pkg"); resp.StatusCode != 200 {
		t.Fatalf("the task's cut-off: %d %s", resp.StatusCode, body)
	}
	for _, u := range []string{"/c/2030-01-01/npm/demo-pkg", "/c/2023-07-30/pypi/simple/demo/", "/s/abc/c/" + testCutoff + "/npm/demo-pkg"} {
		resp, body := get(t, srv.URL+u)
		if resp.StatusCode != RefusedStatus || !strings.Contains(string(body), "the task's cut-off "+testCutoff+" only") {
			t.Errorf("%s: %d %s", u, resp.StatusCode, body)
		}
	}
	if _, err := New(Options{Cutoff: cut, AnyCutoff: true}); err == nil {
		t.Errorf("Cutoff with AnyCutoff was accepted")
	}
}
