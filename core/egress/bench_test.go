package egress

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkFirstRequest measures, per session, the time from Door.Open to the end of the
// first request through the door to an allowed upstream (a fresh client: a new
// connection to the door and from the door upstream), beside the same request made
// directly, and a second request on the session (kept-alive connections).
func BenchmarkFirstRequest(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "release\n") }))
	defer up.Close()
	d := &Door{control: func(string, string, syscall.RawConn) error { return nil }}
	allow := []string{strings.TrimPrefix(up.URL, "http://")}
	get := func(c *http.Client) {
		resp, err := c.Get(up.URL + "/dists/Release")
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
	var first, second, direct time.Duration
	for b.Loop() {
		t0 := time.Now()
		s, err := d.Open(allow)
		if err != nil {
			b.Fatal(err)
		}
		c := client(s)
		get(c)
		t1 := time.Now()
		get(c)
		t2 := time.Now()
		get(&http.Client{Transport: &http.Transport{}})
		t3 := time.Now()
		s.Close()
		c.CloseIdleConnections()
		first += t1.Sub(t0)
		second += t2.Sub(t1)
		direct += t3.Sub(t2)
	}
	n := float64(b.N)
	b.ReportMetric(float64(first.Microseconds())/n, "open+first-us")
	b.ReportMetric(float64(second.Microseconds())/n, "second-us")
	b.ReportMetric(float64(direct.Microseconds())/n, "direct-first-us")
}
