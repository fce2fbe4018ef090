package egress

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/envgap/envgap/internal/testenv"
	"github.com/envgap/envgap/schemas"
)

// hello returns the first flight a real TLS client (crypto/tls) sends for serverName
// ("" sends none): its ClientHello record(s).
func hello(t *testing.T, serverName string) []byte {
	t.Helper()
	c1, c2 := net.Pipe()
	var got bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		br := bufio.NewReader(c2)
		hdr := make([]byte, 5)
		if _, err := io.ReadFull(br, hdr); err != nil {
			return
		}
		body := make([]byte, int(hdr[3])<<8|int(hdr[4]))
		io.ReadFull(br, body)
		got.Write(hdr)
		got.Write(body)
		c2.Close()
	}()
	tc := tls.Client(c1, &tls.Config{ServerName: serverName, InsecureSkipVerify: serverName == ""})
	tc.Handshake()
	c1.Close()
	<-done
	if got.Len() < 50 {
		t.Fatalf("no ClientHello captured (%d bytes)", got.Len())
	}
	return got.Bytes()
}

// fragment re-cuts the handshake message of one record into records of at most n bytes.
func fragment(rec []byte, n int) []byte {
	msg := rec[5:]
	var out []byte
	for len(msg) > 0 {
		k := min(n, len(msg))
		out = append(out, 0x16, 3, 1, byte(k>>8), byte(k))
		out = append(out, msg[:k]...)
		msg = msg[k:]
	}
	return out
}

func TestClientHelloSNI(t *testing.T) {
	h := hello(t, "Pkgs.Example.org")
	raw, sni, err := readClientHello(bytes.NewReader(append(append([]byte{}, h...), "after"...)))
	if err != nil || sni != "pkgs.example.org" || !bytes.Equal(raw, h) {
		t.Fatalf("sni %q err %v, %d of %d bytes", sni, err, len(raw), len(h))
	}
	// Fragmented into records of 1, 7 and 100 bytes: the same name, every byte kept, and
	// nothing read past the hello.
	for _, n := range []int{1, 7, 100} {
		f := fragment(h, n)
		r := bytes.NewReader(append(append([]byte{}, f...), "after"...))
		raw, sni, err := readClientHello(r)
		if err != nil || sni != "pkgs.example.org" || !bytes.Equal(raw, f) || r.Len() != len("after") {
			t.Errorf("fragments of %d: sni %q err %v, %d of %d bytes, %d left", n, sni, err, len(raw), len(f), r.Len())
		}
	}
	// No SNI (a client dialling an address sends none).
	if _, sni, err := readClientHello(bytes.NewReader(hello(t, ""))); err != nil || sni != "" {
		t.Errorf("no SNI: %q %v", sni, err)
	}
}

func TestClientHelloHostileInput(t *testing.T) {
	h := hello(t, "pkgs.example.org")
	body := h[9:] // after the record header (5) and the handshake header (4)
	withMsg := func(msg []byte) []byte {
		m := append([]byte{1, byte(len(msg) >> 16), byte(len(msg) >> 8), byte(len(msg))}, msg...)
		return append([]byte{0x16, 3, 1, byte(len(m) >> 8), byte(len(m))}, m...)
	}
	// A hello whose extensions are only a server_name extension built from names.
	sniHello := func(entries ...[]byte) []byte {
		var list []byte
		for _, e := range entries {
			list = append(list, e...)
		}
		ext := append([]byte{0, 0, byte((len(list) + 2) >> 8), byte(len(list) + 2), byte(len(list) >> 8), byte(len(list))}, list...)
		msg := append([]byte{3, 3}, make([]byte, 32)...)
		msg = append(msg, 0, 0, 2, 0x13, 0x01, 1, 0)
		msg = append(msg, byte(len(ext)>>8), byte(len(ext)))
		return withMsg(append(msg, ext...))
	}
	name := func(s string) []byte { return append([]byte{0, byte(len(s) >> 8), byte(len(s))}, s...) }
	huge := []byte{0x16, 3, 1, 0x40, 0x00}
	// A hello of 32 KiB said, sent one byte a record: its records exceed the bound.
	many := []byte{0x16, 3, 1, 0, 4, 1, 0, 0x80, 0}
	for len(many) < 4*MaxHelloBytes {
		many = append(many, 0x16, 3, 1, 0, 1, 0)
	}
	cases := []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"truncated header", h[:3]},
		{"truncated record", h[:len(h)/2]},
		{"truncated fragments", fragment(h, 10)[:200]},
		{"plain HTTP", []byte("GET / HTTP/1.1\r\nHost: pkgs.example.org\r\n\r\n")},
		{"SSLv2-style hello", append([]byte{0x80, 0x2e, 1, 3, 1}, make([]byte, 46)...)},
		{"application data first", append([]byte{0x17, 3, 3, 0, 5}, "hello"...)},
		{"bad version", append([]byte{0x16, 9, 9}, h[3:]...)},
		{"empty record", []byte{0x16, 3, 1, 0, 0}},
		{"record over 16 KiB", append(append([]byte{}, huge[:3]...), 0x40, 0x01)},
		{"a 16 MiB handshake message", withMsg(nil)[:5:5]},
		{"not a ClientHello", withMsg(append([]byte{}, body...))[:0]},
		{"many tiny records", many},
		{"two host names", sniHello(name("a.example"), name("b.example"))},
		{"server_name without a host name", sniHello()},
		{"a name with a NUL", sniHello(name("pkgs.example.org\x00.evil"))},
		{"a name with a slash", sniHello(name("pkgs.example.org/x"))},
		{"an empty name", sniHello(name(""))},
		{"a name longer than its list", sniHello(append([]byte{0, 0, 50}, "short"...))},
		{"extensions shorter than said", withMsg(append([]byte{}, body[:len(body)-3]...))},
	}
	// The message header of "a 16 MiB handshake message" and "not a ClientHello".
	cases[10].in = []byte{0x16, 3, 1, 0, 4, 1, 0xff, 0xff, 0xff}
	cases[11].in = []byte{0x16, 3, 1, 0, 8, 2, 0, 0, 4, 1, 2, 3, 4}
	for _, c := range cases {
		raw, sni, err := readClientHello(bytes.NewReader(c.in))
		if err == nil || !errors.Is(err, ErrNotTLS) {
			t.Errorf("%s: sni %q, err %v; want ErrNotTLS", c.name, sni, err)
		}
		if len(raw) > MaxHelloBytes+5 {
			t.Errorf("%s: read %d bytes", c.name, len(raw))
		}
	}
	// A good hello built the same way parses, so the cases above fail for their flaw.
	if _, sni, err := readClientHello(bytes.NewReader(sniHello(name("Pkgs.example.org")))); err != nil || sni != "pkgs.example.org" {
		t.Errorf("the well-formed built hello: %q %v", sni, err)
	}
}

// tunnel sends CONNECT target over a new connection to s with auth (as is) and returns
// the connection and the status line.
func tunnel(t *testing.T, s *Session, target, auth string) (net.Conn, *bufio.Reader, string) {
	t.Helper()
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	req := "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n"
	if auth != "" {
		req += "Proxy-Authorization: " + auth + "\r\n"
	}
	io.WriteString(c, req+"\r\n")
	br := bufio.NewReader(c)
	line, _ := br.ReadString('\n')
	for {
		l, err := br.ReadString('\n')
		if err != nil || l == "\r\n" {
			break
		}
	}
	return c, br, strings.TrimSpace(line)
}

func reasons(rs []schemas.ConnectionCount) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "%s:%d %s (%d); ", r.Host, r.Port, r.Reason, r.Count)
	}
	return b.String()
}

func hasRefusal(rs []schemas.ConnectionCount, host string, port int, reason string) bool {
	for _, r := range rs {
		if r.Host == host && r.Port == port && strings.Contains(r.Reason, reason) && r.Count > 0 {
			return true
		}
	}
	return false
}

// The door opens a tunnel only to an allowed :443 target, and passes it on only when the
// client's TLS ClientHello names the CONNECT host; the rest is refused and recorded with
// its reason, and the upstream never sees a byte of it.
func TestTunnelChecksPortAndSNI(t *testing.T) {
	var reached atomic.Int32
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "over tls") }))
	up.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			reached.Add(1)
		}
	}
	up.StartTLS()
	defer up.Close()
	_, port, _ := net.SplitHostPort(up.Listener.Addr().String())
	target := "localhost:" + port
	s := openTLS(t, atoi(port), nil, target, "plain.example:80")

	// CONNECT to port 80 of an allowed host (the default door allows only 443).
	d := openLoopback(t, "plain.example:80")
	if _, _, line := tunnel(t, d, "plain.example:80", d.auth); !strings.Contains(line, " 403 ") {
		t.Errorf("CONNECT to :80: %q", line)
	}
	if rec := d.Close(); !hasRefusal(rec.Refused, "plain.example", 80, "CONNECT only to port 443") {
		t.Errorf("CONNECT to :80 not recorded: %s", reasons(rec.Refused))
	}

	// Another SNI than the CONNECT host, no SNI, and no TLS at all: 200, then closed.
	for _, c := range []struct {
		name, reason string
		first        []byte
	}{
		{"another SNI", "TLS SNI pkgs.other.example is not the CONNECT host", hello(t, "pkgs.other.example")},
		{"no SNI", "no SNI in the TLS ClientHello", hello(t, "")},
		{"plain text", "not a TLS ClientHello", []byte("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")},
	} {
		conn, br, line := tunnel(t, s, target, s.auth)
		if !strings.Contains(line, " 200 ") {
			t.Fatalf("%s: CONNECT answered %q", c.name, line)
		}
		conn.Write(c.first)
		conn.SetReadDeadline(time.Now().Add(time.Minute))
		if n, err := io.Copy(io.Discard, br); err != nil || n != 0 {
			t.Errorf("%s: the tunnel gave %d bytes (%v), want it closed", c.name, n, err)
		}
		if rec := s.Record(); !hasRefusal(rec.Refused, "localhost", atoi(port), c.reason) {
			t.Errorf("%s: not recorded: %s", c.name, reasons(rec.Refused))
		}
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the upstream was reached %d times by refused tunnels", n)
	}
	// The same target with its own name as SNI goes through.
	conn, _, line := tunnel(t, s, target, s.auth)
	if !strings.Contains(line, " 200 ") {
		t.Fatalf("CONNECT answered %q", line)
	}
	tc := tls.Client(conn, &tls.Config{ServerName: "localhost", InsecureSkipVerify: true})
	if err := tc.Handshake(); err != nil {
		t.Fatalf("TLS through the tunnel: %v", err)
	}
	tc.Close()
	rec := s.Close()
	if len(rec.Allowed) != 1 || rec.Allowed[0].Host != "localhost" || len(rec.Refused) != 3 {
		t.Errorf("record: allowed %+v, refused %s", rec.Allowed, reasons(rec.Refused))
	}
}

// A session serves only clients with its credential: none, a wrong one, or another
// session's is answered 407, and counted in neither session's record.
func TestSessionCredential(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Proxy-Authorization") != "" {
			t.Errorf("the credential was forwarded upstream")
		}
		fmt.Fprint(w, "ok")
	}))
	defer up.Close()
	upHost := strings.TrimPrefix(up.URL, "http://")
	a, b := openLoopback(t, upHost), openLoopback(t, upHost)
	if a.secret == b.secret || a.Addr() == b.Addr() || strings.Contains(a.Addr(), a.secret) {
		t.Fatalf("sessions share a secret or an address")
	}
	get := func(proxy string) (int, string) {
		pu, _ := url.Parse(proxy)
		c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
		resp, err := c.Get(up.URL + "/x")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(body)
	}
	bu, _ := url.Parse(b.URL())
	for name, proxy := range map[string]string{
		"no credential":             "http://" + b.Addr(),
		"a wrong secret":            "http://envgap:" + strings.Repeat("0", 48) + "@" + b.Addr(),
		"another session's secret":  "http://envgap:" + a.secret + "@" + b.Addr(),
		"the right secret, no user": "http://:" + a.secret + "@" + b.Addr(),
	} {
		if code, body := get(proxy); code != http.StatusProxyAuthRequired || !strings.Contains(body, "credential") {
			t.Errorf("%s: %d %q", name, code, body)
		}
	}
	if _, _, line := tunnel(t, b, "registry.invalid:443", ""); !strings.Contains(line, " 407 ") {
		t.Errorf("CONNECT without a credential: %q", line)
	}
	if code, body := get(bu.String()); code != 200 || body != "ok" {
		t.Errorf("with the session's credential: %d %q", code, body)
	}
	ra, rb := a.Close(), b.Close()
	if len(ra.Allowed)+len(ra.Refused) != 0 || len(rb.Refused) != 0 || len(rb.Allowed) != 1 || rb.Allowed[0].Count != 1 {
		t.Errorf("records: a %+v, b %+v", ra, rb)
	}
}

// The bounds: a connection over MaxConns and bytes over MaxBytes are refused and recorded;
// a tunnel whose client never sends a hello is refused after HelloTimeout.
func TestSessionBounds(t *testing.T) {
	big := strings.Repeat("x", 64<<10)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, big) }))
	defer up.Close()
	upHost := strings.TrimPrefix(up.URL, "http://")
	_, upPort, _ := net.SplitHostPort(upHost)
	s := openTLS(t, 443, func(d *Door) { d.MaxConns = 1; d.MaxBytes = 100 << 10; d.HelloTimeout = 200 * time.Millisecond },
		upHost, "slow.example:443")
	// One tunnel waiting for its hello holds the one connection.
	_, br, line := tunnel(t, s, "slow.example:443", s.auth)
	if !strings.Contains(line, " 200 ") {
		t.Fatalf("first CONNECT: %q", line)
	}
	if _, _, line := tunnel(t, s, "slow.example:443", s.auth); !strings.Contains(line, " 503 ") {
		t.Errorf("a second connection over MaxConns 1: %q", line)
	}
	io.Copy(io.Discard, br) // the door closes it at HelloTimeout
	rec := s.Record()
	if !hasRefusal(rec.Refused, "slow.example", 443, "more than 1 connections at once") ||
		!hasRefusal(rec.Refused, "slow.example", 443, "no TLS ClientHello within") {
		t.Errorf("refusals: %s", reasons(rec.Refused))
	}
	// 64 KiB, then the second response crosses the 100 KiB bound and is cut; then refused.
	c := client(s)
	var got []int
	for range 3 {
		resp, err := c.Get(up.URL)
		if err != nil {
			got = append(got, -1)
			continue
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		got = append(got, resp.StatusCode*1000000+int(n))
	}
	if got[0] != 200*1000000+len(big) || got[1] == 200*1000000+len(big) || got[2]/1000000 != 403 {
		t.Errorf("responses (status*1e6+bytes): %v", got)
	}
	if rec := s.Close(); !hasRefusal(rec.Refused, "127.0.0.1", atoi(upPort), "over the session's bound") {
		t.Errorf("byte bound not recorded: %s", reasons(rec.Refused))
	}
}

// curl sends the credential of the proxy URL's userinfo, for plain requests and tunnels,
// and a tunnel it opens by name passes the SNI check.
func TestCurlThroughTheDoor(t *testing.T) {
	curl := testenv.Tool(t, "curl")
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "plain ok") }))
	defer plain.Close()
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "tls ok") }))
	defer secure.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(secure.URL, "https://"))
	s := openTLS(t, atoi(port), nil, strings.TrimPrefix(plain.URL, "http://"), "localhost:"+port)
	for _, c := range []struct{ url, want string }{{plain.URL + "/", "plain ok"}, {"https://localhost:" + port + "/", "tls ok"}} {
		out, err := exec.Command(curl, "-sS", "-k", "--noproxy", "", "-x", s.URL(), c.url).CombinedOutput()
		if err != nil || string(out) != c.want {
			t.Errorf("curl %s: %v %q", c.url, err, out)
		}
	}
	out, _ := exec.Command(curl, "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--noproxy", "", "-x", "http://"+s.Addr(), plain.URL).CombinedOutput()
	if string(out) != "407" {
		t.Errorf("curl without the credential: %q", out)
	}
	if rec := s.Close(); len(rec.Allowed) != 2 || len(rec.Refused) != 0 {
		t.Errorf("record %+v", rec)
	}
}

// A plain request goes to its URL's host with Host forced to it, whatever Host it sends.
func TestPlainRequestHostForced(t *testing.T) {
	hosts := make(chan string, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hosts <- r.Host }))
	defer up.Close()
	upHost := strings.TrimPrefix(up.URL, "http://")
	s := openLoopback(t, upHost)
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET http://"+upHost+"/x HTTP/1.1\r\nHost: other-tenant.example\r\nProxy-Authorization: "+s.auth+"\r\n\r\n")
	line, _ := bufio.NewReader(c).ReadString('\n')
	if !strings.Contains(line, " 200 ") {
		t.Fatalf("status %q", line)
	}
	if h := <-hosts; h != upHost {
		t.Errorf("upstream saw Host %q, want %q", h, upHost)
	}
}

// Closing a session cuts a tunnel still waiting for its ClientHello at once.
func TestCloseCutsATunnelWaitingForItsHello(t *testing.T) {
	s := openTLS(t, 443, func(d *Door) { d.HelloTimeout = time.Hour }, "slow.example:443")
	_, br, line := tunnel(t, s, "slow.example:443", s.auth)
	if !strings.Contains(line, " 200 ") {
		t.Fatalf("CONNECT: %q", line)
	}
	rec := s.Close() // returns only once the tunnel is gone
	if n, _ := io.Copy(io.Discard, br); n != 0 {
		t.Errorf("%d bytes from a cut tunnel", n)
	}
	if len(rec.Refused)+len(rec.Allowed) != 0 {
		t.Errorf("record %+v", rec)
	}
}
