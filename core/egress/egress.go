package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/envgap/envgap/schemas"
)

// MaxDistinct is how many distinct refused (or allowed) targets one session records;
// the rest are counted under the host "(other)".
const MaxDistinct = 1000

// maxHostLen bounds a target host as recorded.
const maxHostLen = 255

// Door opens sessions of the forward proxy. The zero value listens on 127.0.0.1; set
// Host to the address containers reach the host at (the sandbox network's gateway).
type Door struct {
	// Host is the address each session listens on (port chosen per session). Empty:
	// 127.0.0.1.
	Host string
	// AdvertiseHost is the host containers use in the proxy URL. Empty: Host.
	AdvertiseHost string
	// Listen opens a session's listener on "host:0". Nil: net.Listen("tcp", addr).
	Listen func(addr string) (net.Listener, error)
	// DialTimeout bounds a connection to an allowed host. Zero: 30 seconds.
	DialTimeout time.Duration
	// Logger receives refusals and faults. Nil: discarded.
	Logger *slog.Logger

	// control checks each address dialled (nil: guard); tests open it to loopback.
	control func(network, address string, c syscall.RawConn) error
}

// Record is what one session let through and refused, sorted by host and port.
type Record struct {
	Allow   []string                  `json:"allow"`
	Allowed []schemas.ConnectionCount `json:"allowed"`
	Refused []schemas.ConnectionCount `json:"refused"`
}

// Session is one container run's door: a listener and its allowlist.
type Session struct {
	door    *Door
	allow   map[string]bool
	list    []string
	ln      net.Listener
	srv     *http.Server
	done    chan struct{}
	rp      *httputil.ReverseProxy
	tr      *http.Transport
	mu      sync.Mutex
	refused map[schemas.ConnectionCount]int
	allowed map[schemas.ConnectionCount]int
	closed  bool
}

// Open starts a session that lets through only the targets of allow, each "host:port"
// (see Allowlist). It listens until Close.
func (d *Door) Open(allow []string) (*Session, error) {
	host := d.Host
	if host == "" {
		host = "127.0.0.1"
	}
	listen := d.Listen
	if listen == nil {
		listen = func(addr string) (net.Listener, error) { return net.Listen("tcp", addr) }
	}
	ln, err := listen(net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, fmt.Errorf("egress door: listen on %s: %w", host, err)
	}
	s := &Session{door: d, allow: map[string]bool{}, ln: ln, done: make(chan struct{}),
		refused: map[schemas.ConnectionCount]int{}, allowed: map[schemas.ConnectionCount]int{}}
	for _, a := range allow {
		a = strings.ToLower(a)
		if !s.allow[a] {
			s.allow[a] = true
			s.list = append(s.list, a)
		}
	}
	slices.Sort(s.list)
	timeout := d.DialTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	dialer := &net.Dialer{Timeout: timeout, Control: d.dialControl()}
	s.tr = &http.Transport{Proxy: nil, DialContext: dialer.DialContext, ForceAttemptHTTP2: false,
		MaxIdleConnsPerHost: 4, ResponseHeaderTimeout: 2 * time.Minute, IdleConnTimeout: 30 * time.Second}
	s.rp = &httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.Out.Host = pr.In.URL.Host },
		Transport: s.tr,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			d.logger().Warn("egress door: upstream failed", "target", r.URL.Host, "err", err)
			http.Error(w, "envgap egress door: "+r.URL.Host+": "+err.Error(), http.StatusBadGateway)
		},
	}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 30 * time.Second, MaxHeaderBytes: 64 << 10}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

func (d *Door) dialControl() func(network, address string, c syscall.RawConn) error {
	if d.control != nil {
		return d.control
	}
	return guard
}

func (d *Door) logger() *slog.Logger {
	if d.Logger != nil {
		return d.Logger
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// URL returns the proxy URL containers use: "http://<advertise host>:<port>".
func (s *Session) URL() string {
	h := s.door.AdvertiseHost
	if h == "" {
		h = s.door.Host
	}
	if h == "" {
		h = "127.0.0.1"
	}
	_, port, _ := net.SplitHostPort(s.ln.Addr().String())
	return "http://" + net.JoinHostPort(h, port)
}

// Close stops the session (open tunnels are cut) and returns its record. It may be
// called more than once.
func (s *Session) Close() Record {
	s.mu.Lock()
	already := s.closed
	s.closed = true
	s.mu.Unlock()
	if !already {
		s.srv.Close()
		<-s.done
		s.tr.CloseIdleConnections()
	}
	return s.Record()
}

// Record returns what the session has let through and refused so far.
func (s *Session) Record() Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Record{Allow: append([]string{}, s.list...), Allowed: counts(s.allowed), Refused: counts(s.refused)}
}

func counts(m map[schemas.ConnectionCount]int) []schemas.ConnectionCount {
	out := make([]schemas.ConnectionCount, 0, len(m))
	for k, n := range m {
		k.Count = n
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b schemas.ConnectionCount) int {
		if c := strings.Compare(a.Host, b.Host); c != 0 {
			return c
		}
		return a.Port - b.Port
	})
	return out
}

func (s *Session) count(m map[schemas.ConnectionCount]int, host string, port int) {
	if len(host) > maxHostLen {
		host = host[:maxHostLen]
	}
	k := schemas.ConnectionCount{Host: host, Port: port}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := m[k]; !ok && len(m) >= MaxDistinct {
		k = schemas.ConnectionCount{Host: "(other)"}
	}
	m[k]++
}

// ServeHTTP implements the forward proxy: CONNECT host:port and absolute-form requests.
func (s *Session) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		s.connect(w, r)
		return
	}
	if !r.URL.IsAbs() || r.URL.Host == "" {
		http.Error(w, "envgap egress door: this is a forward proxy; send an absolute URL or CONNECT", http.StatusBadRequest)
		return
	}
	if r.URL.Scheme != "http" {
		s.refuse(w, r.URL.Hostname(), portOf(r.URL), "scheme "+r.URL.Scheme+" is not forwarded")
		return
	}
	host, port := strings.ToLower(r.URL.Hostname()), portOf(r.URL)
	if !s.allowedTarget(host, port) {
		s.refuse(w, host, port, "not on the allowlist")
		return
	}
	s.count(s.allowed, host, port)
	s.rp.ServeHTTP(w, r)
}

func (s *Session) connect(w http.ResponseWriter, r *http.Request) {
	h, p, err := net.SplitHostPort(r.Host)
	port, perr := strconv.Atoi(p)
	if err != nil || perr != nil || port <= 0 || port > 65535 {
		s.refuse(w, r.Host, 0, "CONNECT needs host:port")
		return
	}
	host := strings.ToLower(h)
	if !s.allowedTarget(host, port) {
		s.refuse(w, host, port, "not on the allowlist")
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "envgap egress door: CONNECT needs HTTP/1.1", http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.dialTimeout())
	up, err := (&net.Dialer{Control: s.door.dialControl()}).DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	cancel()
	if err != nil {
		s.door.logger().Warn("egress door: dial failed", "target", r.Host, "err", err)
		http.Error(w, "envgap egress door: "+r.Host+": "+err.Error(), http.StatusBadGateway)
		return
	}
	s.count(s.allowed, host, port)
	conn, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		conn.Close()
		up.Close()
		return
	}
	go func() {
		// Bytes the client sent after the CONNECT line and already buffered go first.
		if n := buf.Reader.Buffered(); n > 0 {
			b, _ := buf.Reader.Peek(n)
			up.Write(b)
		}
		io.Copy(up, conn)
		if tc, ok := up.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
	}()
	go func() {
		io.Copy(conn, up)
		conn.Close()
		up.Close()
	}()
}

func (s *Session) dialTimeout() time.Duration {
	if s.door.DialTimeout > 0 {
		return s.door.DialTimeout
	}
	return 30 * time.Second
}

func (s *Session) allowedTarget(host string, port int) bool {
	return s.allow[net.JoinHostPort(host, strconv.Itoa(port))]
}

func (s *Session) refuse(w http.ResponseWriter, host string, port int, why string) {
	s.count(s.refused, host, port)
	s.door.logger().Info("egress door: refused", "host", host, "port", port, "why", why)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusForbidden)
	fmt.Fprintf(w, "envgap egress door: %s:%d refused (%s): the sandbox reaches only the date-limited registry proxy and the image's package sources\n", trunc(host), port, why)
}

func trunc(s string) string {
	if len(s) > maxHostLen {
		return s[:maxHostLen]
	}
	return s
}

func portOf(u *url.URL) int {
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			return 0
		}
		return n
	}
	switch u.Scheme {
	case "https":
		return 443
	case "http":
		return 80
	}
	return 0
}

// ErrForbiddenAddress is the dial error for an allowed name that resolves to an address
// the door never connects to (loopback, link-local, multicast, unspecified).
var ErrForbiddenAddress = errors.New("address not reachable through the door")

// guard refuses, at dial time, addresses that would lead into the host.
func guard(_, address string, _ syscall.RawConn) error {
	h, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip := net.ParseIP(h)
	if ip == nil || ip.IsLoopback() || ip.IsUnspecified() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() {
		return fmt.Errorf("%s: %w", address, ErrForbiddenAddress)
	}
	return nil
}
