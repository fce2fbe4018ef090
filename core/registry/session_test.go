package registry

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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
	s := p.NewSession(cut)
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
	get(t, other.BaseURL(srv.URL)+"/npm/@scope%2fpkg")
	get(t, srv.URL+"/c/"+testCutoff+"/npm/untimed-pkg")
	for _, e := range s.Record().Served {
		if e.Package == "@scope/pkg" || e.Package == "untimed-pkg" {
			t.Errorf("foreign event %+v", e)
		}
	}
	// A wrong cut-off under a session is refused; a closed session answers 503, not 404.
	if resp, _ := get(t, srv.URL+"/s/"+s.ID()+"/c/2024-01-01/npm/demo-pkg"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("mismatched cut-off: %d", resp.StatusCode)
	}
	final := s.Close()
	if len(final.Hidden) != len(rec.Hidden) {
		t.Errorf("Close record differs")
	}
	if resp, _ := get(t, base+"/npm/demo-pkg"); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("closed session: %d", resp.StatusCode)
	}
}

func TestSessionEventCap(t *testing.T) {
	up := newUpstream(t)
	p, srv := newTestProxy(t, up, func(o *Options) { o.MaxLogEvents = 2 })
	s := p.NewSession(schemas.CutoffAt(time.Date(2023, 7, 30, 12, 0, 0, 0, time.UTC)))
	get(t, s.BaseURL(srv.URL)+"/npm/demo-pkg")
	rec := s.Record()
	if n := len(rec.Served) + len(rec.Hidden) + len(rec.Errors); n != 2 || rec.Dropped == 0 {
		t.Errorf("events %d dropped %d", n, rec.Dropped)
	}
}

func TestConcurrentRequests(t *testing.T) {
	up := newUpstream(t)
	p, srv := newTestProxy(t, up, nil)
	s := p.NewSession(schemas.CutoffAt(time.Date(2023, 7, 30, 12, 0, 0, 0, time.UTC)))
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
