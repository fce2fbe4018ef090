package registry

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestUpstreamFaults(t *testing.T) {
	up := newUpstream(t)
	up.setStatus("/simple/broken/", 500)
	up.setStatus("/npm/broken-pkg", 503)
	up.setStatus("/simple/slow/", -1)
	up.setStatus("/npm/slow-pkg", -1)
	up.setStatus("/files/demo-1.0.tar.gz", 500)
	up.mu.Lock()
	up.corrupt["/files/corrupt-1.0-py3-none-any.whl"] = true
	up.corrupt[npmTarballPath("corrupt-pkg", "1.0.0")] = true
	up.mu.Unlock()
	_, srv := newTestProxy(t, up, func(o *Options) { o.UpstreamTimeout = 300 * time.Millisecond })

	dead := httptestClosedURL(t)
	_, deadSrv := newTestProxy(t, up, func(o *Options) { o.PyPIUpstream = dead + "/simple/"; o.NPMUpstream = dead + "/npm/" })

	tests := []struct {
		name, url string
		status    int
		msg       string
	}{
		{"pypi 404", srv.URL + "/c/" + testCutoff + "/pypi/simple/no-such-project/", 404, "not found upstream"},
		{"npm 404", srv.URL + "/c/" + testCutoff + "/npm/no-such-pkg", 404, "not found upstream"},
		{"pypi 500", srv.URL + "/c/" + testCutoff + "/pypi/simple/broken/", 502, "500"},
		{"npm 503", srv.URL + "/c/" + testCutoff + "/npm/broken-pkg", 502, "503"},
		{"pypi timeout", srv.URL + "/c/" + testCutoff + "/pypi/simple/slow/", 502, "unreachable"},
		{"npm timeout", srv.URL + "/c/" + testCutoff + "/npm/slow-pkg", 502, "unreachable"},
		{"pypi malformed", srv.URL + "/c/" + testCutoff + "/pypi/simple/malformed/", 502, "malformed"},
		{"pypi html upstream", srv.URL + "/c/" + testCutoff + "/pypi/simple/html-only/", 502, "PEP 691"},
		{"npm malformed", srv.URL + "/c/" + testCutoff + "/npm/malformed-pkg", 502, "malformed"},
		{"pypi connection refused", deadSrv.URL + "/c/" + testCutoff + "/pypi/simple/demo/", 502, "unreachable"},
		{"npm connection refused", deadSrv.URL + "/c/" + testCutoff + "/npm/demo-pkg", 502, "unreachable"},
		{"pypi hash mismatch", srv.URL + "/c/" + testCutoff + "/pypi/files/corrupt/corrupt-1.0-py3-none-any.whl", 502, "digest mismatch"},
		{"npm integrity mismatch", srv.URL + "/c/" + testCutoff + "/npm/corrupt-pkg/-/corrupt-pkg-1.0.0.tgz", 502, "digest mismatch"},
		{"artifact 500", srv.URL + "/c/" + testCutoff + "/pypi/files/demo/demo-1.0.tar.gz", 502, "500"},
		{"bad cut-off", srv.URL + "/c/2023-07-30T12:00:00/pypi/simple/demo/", 400, "no offset"},
		{"no cut-off", srv.URL + "/pypi/simple/demo/", 404, "no cut-off"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := get(t, tt.url, "Accept", pipAccept)
			if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.msg) {
				t.Errorf("got %d %q, want %d containing %q", resp.StatusCode, body, tt.status, tt.msg)
			}
		})
	}
	// A failed fetch is not cached: once upstream recovers, the answer is right.
	up.setStatus("/simple/broken/", 0)
	if resp, body := get(t, srv.URL+"/c/"+testCutoff+"/pypi/simple/broken/"); resp.StatusCode != 404 {
		t.Errorf("after recovery: %d %s (the fixture has no 'broken' project: want 404)", resp.StatusCode, body)
	}
}

// httptestClosedURL returns the URL of a port that refuses connections.
func httptestClosedURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

func TestStaleOnError(t *testing.T) {
	for _, noStale := range []bool{false, true} {
		up := newUpstream(t)
		_, srv := newTestProxy(t, up, func(o *Options) { o.MetadataTTL = -1; o.NoStaleOnError = noStale })
		u := srv.URL + "/c/" + testCutoff + "/pypi/simple/demo/"
		if resp, _ := get(t, u); resp.StatusCode != 200 {
			t.Fatalf("first fetch %d", resp.StatusCode)
		}
		up.setStatus("/simple/demo/", 500)
		resp, body := get(t, u)
		want := 200
		if noStale {
			want = 502
		}
		if resp.StatusCode != want {
			t.Errorf("NoStaleOnError=%v: status %d, want %d: %s", noStale, resp.StatusCode, want, body)
		}
	}
}

func TestNPMUpstreamUnknown(t *testing.T) {
	up := newUpstream(t)
	_, srv := newTestProxy(t, up, func(o *Options) {
		o.NPMUpstream = ""
	})
	resp, body := get(t, srv.URL+"/c/"+testCutoff+"/npm/demo-pkg")
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(body), "pass Options.NPMUpstream") {
		t.Errorf("got %d %s", resp.StatusCode, body)
	}
	// PyPI still works.
	if resp, _ := get(t, srv.URL+"/c/"+testCutoff+"/pypi/simple/demo/"); resp.StatusCode != 200 {
		t.Errorf("pypi: %d", resp.StatusCode)
	}
}
