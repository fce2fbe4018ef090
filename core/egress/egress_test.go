package egress

import (
	"archive/zip"
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
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/envgap/envgap/schemas"
)

// openLoopback is a Door whose allowed targets may be on this host (the test servers).
func openLoopback(t *testing.T, allow ...string) *Session {
	t.Helper()
	return openTLS(t, 0, nil, allow...)
}

// openTLS is openLoopback with tunnels to tlsPort (0: 443), set (if not nil) setting the
// door's bounds.
func openTLS(t *testing.T, tlsPort int, set func(*Door), allow ...string) *Session {
	t.Helper()
	door := &Door{control: func(string, string, syscall.RawConn) error { return nil }, tlsPort: tlsPort}
	if set != nil {
		set(door)
	}
	s, err := door.Open(allow)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func client(s *Session) *http.Client {
	pu, _ := url.Parse(s.URL())
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
}

func TestForwardsAllowedAndRefusesTheRest(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Proxy-Connection") != "" {
			t.Errorf("hop-by-hop header forwarded")
		}
		fmt.Fprint(w, "upstream "+r.URL.Path)
	}))
	defer up.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the door reached a host that is not allowed: %s", r.URL)
	}))
	defer other.Close()
	upHost := strings.TrimPrefix(up.URL, "http://")
	s := openLoopback(t, upHost)
	c := client(s)
	resp, err := c.Get(up.URL + "/dists/Release")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "upstream /dists/Release" {
		t.Fatalf("allowed request: %d %q", resp.StatusCode, b)
	}
	for range 2 {
		resp, err = c.Get(other.URL + "/x")
		if err != nil {
			t.Fatal(err)
		}
		b, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "refused") {
			t.Fatalf("refused request: %d %q", resp.StatusCode, b)
		}
	}
	// HTTPS through CONNECT to a host that is not allowed: the client sees the refusal.
	if _, err := c.Get("https://registry.invalid/pkg"); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Fatalf("CONNECT to a host not allowed: %v", err)
	}
	rec := s.Close()
	_, otherPort, _ := net.SplitHostPort(strings.TrimPrefix(other.URL, "http://"))
	_, upPort, _ := net.SplitHostPort(upHost)
	want := []schemas.ConnectionCount{{Host: "127.0.0.1", Port: atoi(otherPort), Reason: "not on the allowlist", Count: 2},
		{Host: "registry.invalid", Port: 443, Reason: "not on the allowlist", Count: 1}}
	if !slices.Equal(rec.Refused, want) {
		t.Errorf("refused %+v, want %+v", rec.Refused, want)
	}
	if !slices.Equal(rec.Allowed, []schemas.ConnectionCount{{Host: "127.0.0.1", Port: atoi(upPort), Count: 1}}) {
		t.Errorf("allowed %+v", rec.Allowed)
	}
	if !slices.Equal(rec.Allow, []string{upHost}) {
		t.Errorf("allow %v", rec.Allow)
	}
}

func atoi(s string) int {
	var n int
	fmt.Sscanf(s, "%d", &n)
	return n
}

func TestConnectTunnelsToAllowedHost(t *testing.T) {
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "over tls") }))
	defer up.Close()
	// By name, so that the client sends an SNI (none is sent for an address).
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(up.URL, "https://"))
	target := "localhost:" + port
	s := openTLS(t, atoi(port), nil, target)
	pu, _ := url.Parse(s.URL())
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := c.Get("https://" + target + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "over tls" {
		t.Fatalf("got %q", b)
	}
	if rec := s.Close(); len(rec.Allowed) != 1 || len(rec.Refused) != 0 {
		t.Errorf("record %+v", rec)
	}
}

// The default dialer never connects into the host, even to an allowed name.
func TestGuardRefusesLoopbackTargets(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the door connected to a loopback address")
	}))
	defer up.Close()
	s, err := (&Door{}).Open([]string{strings.TrimPrefix(up.URL, "http://")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp, err := client(s).Get(up.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(b), ErrForbiddenAddress.Error()) {
		t.Errorf("got %d %q", resp.StatusCode, b)
	}
	if err := guard("tcp", "169.254.169.254:80", nil); !errors.Is(err, ErrForbiddenAddress) {
		t.Errorf("link-local: %v", err)
	}
	if err := guard("tcp", "203.0.113.7:443", nil); err != nil {
		t.Errorf("a public address: %v", err)
	}
}

func TestBadRequestsAndBoundedRecord(t *testing.T) {
	s := openLoopback(t)
	addr := s.Addr()
	send := func(req string) string {
		req = strings.Replace(req, "\r\n", "\r\nProxy-Authorization: "+s.auth+"\r\n", 1)
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, req)
		line, _ := bufio.NewReader(c).ReadString('\n')
		return line
	}
	if got := send("GET /simple/ HTTP/1.1\r\nHost: x\r\n\r\n"); !strings.Contains(got, " 400 ") {
		t.Errorf("origin-form request: %q", got)
	}
	if got := send("CONNECT nohostport HTTP/1.1\r\nHost: nohostport\r\n\r\n"); !strings.Contains(got, " 403 ") {
		t.Errorf("CONNECT without a port: %q", got)
	}
	long := strings.Repeat("a", 1000) + ".invalid"
	if got := send("CONNECT " + long + ":443 HTTP/1.1\r\nHost: " + long + ":443\r\n\r\n"); !strings.Contains(got, " 403 ") {
		t.Errorf("CONNECT to a long name: %q", got)
	}
	for i := range MaxDistinct + 5 {
		s.count(s.refused, fmt.Sprintf("h%d.invalid", i), 443, "not on the allowlist")
	}
	rec := s.Close()
	if len(rec.Refused) != MaxDistinct+1 {
		t.Fatalf("%d distinct refused targets recorded, want %d", len(rec.Refused), MaxDistinct+1)
	}
	var other int
	for _, r := range rec.Refused {
		if len(r.Host) > maxHostLen {
			t.Errorf("host of %d bytes recorded", len(r.Host))
		}
		if r.Host == "(other)" {
			other = r.Count
		}
	}
	if other == 0 {
		t.Errorf("no (other) entry: %+v", rec.Refused[:3])
	}
}

func TestEnvAndFiles(t *testing.T) {
	s := openLoopback(t)
	u := s.URL()
	env := strings.Join(s.Env("10.89.0.1"), "\n")
	for _, want := range []string{"HTTP_PROXY=" + u, "https_proxy=" + u, "NO_PROXY=localhost,127.0.0.1,10.89.0.1",
		"npm_config_https_proxy=" + u, "npm_config_noproxy=localhost,127.0.0.1,10.89.0.1", "-Dhttps.proxyHost=127.0.0.1",
		"-Dhttps.proxyUser=envgap -Dhttps.proxyPassword=" + s.secret} {
		if !strings.Contains(env, want) {
			t.Errorf("env lacks %q:\n%s", want, env)
		}
	}
	files := s.Files("10.89.0.1")
	if len(files) != 2 || files[0].Path != AptConfPath || !strings.Contains(string(files[0].Content), `Acquire::http::Proxy "`+u+`/";`) {
		t.Errorf("apt conf %+v", files)
	}
	urls, err := MavenURLs(files[1].Content)
	if err != nil || len(urls) != 0 || !bytes.Contains(files[1].Content, []byte("<nonProxyHosts>localhost|127.0.0.1|10.89.0.1</nonProxyHosts>")) ||
		!bytes.Contains(files[1].Content, []byte("<username>envgap</username>\n      <password>"+s.secret+"</password>")) {
		t.Errorf("maven settings %s (%v)", files[1].Content, err)
	}
}

func TestAptSourceURLs(t *testing.T) {
	text := `# comment
deb http://mirror.example/debian bookworm main
deb [arch=amd64 signed-by=/k.gpg] https://Secure.Example:8443/deb stable main # trailing
deb-src http://src.example/debian bookworm main
deb cdrom:[Disc 1]/ bookworm main
Types: deb
URIs: http://a.example/ubuntu http://b.example/ubuntu
Suites: jammy
`
	got := AptSourceURLs([]byte(text))
	want := []string{"http://mirror.example/debian", "https://Secure.Example:8443/deb", "http://src.example/debian", "cdrom:[Disc", "http://a.example/ubuntu", "http://b.example/ubuntu"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	set := map[string]bool{}
	for _, u := range got {
		addURL(set, u)
	}
	for _, h := range []string{"mirror.example:80", "secure.example:8443", "src.example:80", "a.example:80", "b.example:80"} {
		if !set[h] {
			t.Errorf("allowlist lacks %s: %v", h, set)
		}
	}
	if len(set) != 5 {
		t.Errorf("allowlist %v", set)
	}
}

func TestMavenURLsFromSettingsAndSuperPOM(t *testing.T) {
	settings := `<settings><mirrors><mirror><id>m</id><url>https://maven.example/repo</url><mirrorOf>*</mirrorOf></mirror></mirrors>
<profiles><profile><repositories><repository><url>file:///usr/share/maven-repo</url></repository></repositories>
<pluginRepositories><pluginRepository><url>http://plugins.example/m2</url></pluginRepository></pluginRepositories></profile></profiles>
<proxies><proxy><url>http://not-a-repo.example</url></proxy></proxies></settings>`
	got, err := MavenURLs([]byte(settings))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"https://maven.example/repo", "file:///usr/share/maven-repo", "http://plugins.example/m2"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	w, _ := z.Create(superPOM)
	io.WriteString(w, `<project><repositories><repository><id>central</id><url>https://central.example/maven2</url></repository></repositories></project>`)
	z.Close()
	got, err = superPOMURLs(buf.Bytes())
	if err != nil || !slices.Equal(got, []string{"https://central.example/maven2"}) {
		t.Fatalf("super POM: %q %v", got, err)
	}
	if _, err := superPOMURLs([]byte("not a zip")); err == nil {
		t.Error("a broken jar gave no error")
	}
}
