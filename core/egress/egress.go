package egress

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/envgap/envgap/schemas"
)

// MaxDistinct is how many distinct refused (or allowed) targets one session records;
// the rest are counted under the host "(other)".
const MaxDistinct = 1000

// maxHostLen bounds a target host as recorded.
const maxHostLen = 255

// The door's default bounds per session (Door's fields of the same names set others).
const (
	// DefaultMaxConns is how many connections (CONNECT tunnels and forwarded requests in
	// progress) one session carries at once; pip and npm open at most 16 or so.
	DefaultMaxConns = 64
	// DefaultMaxBytes is how many bytes (both ways, through tunnels and forwarded requests)
	// one session carries in all: far more than any image's apt and Maven downloads of
	// one run.
	DefaultMaxBytes = 8 << 30
	// DefaultHelloTimeout bounds the wait for a tunnel's TLS ClientHello.
	DefaultHelloTimeout = 10 * time.Second
)

// TLSPort is the one port the door opens tunnels (CONNECT) to.
const TLSPort = 443

// ProxyUser is the user name of a session's credential (its password is the secret).
const ProxyUser = "envgap"

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
	// MaxConns bounds the connections one session carries at once (zero:
	// DefaultMaxConns); MaxBytes the bytes it carries in all (zero: DefaultMaxBytes);
	// HelloTimeout the wait for a tunnel's ClientHello (zero: DefaultHelloTimeout).
	MaxConns     int
	MaxBytes     int64
	HelloTimeout time.Duration
	// Logger receives refusals and faults. Nil: discarded.
	Logger *slog.Logger

	// control checks each address dialled (nil: guard); tests open it to loopback.
	control func(network, address string, c syscall.RawConn) error
	// tlsPort is the port tunnels may go to (0: TLSPort); tests use their servers'.
	tlsPort int

	trOnce sync.Once
	tr     *http.Transport
}

// Record is what one session let through and refused, sorted by host and port.
type Record struct {
	Allow   []string                  `json:"allow"`
	Allowed []schemas.ConnectionCount `json:"allowed"`
	Refused []schemas.ConnectionCount `json:"refused"`
}

// Session is one container run's door: a listener, its allowlist and its credential.
type Session struct {
	door    *Door
	allow   map[string]bool
	list    []string
	auth    string // the Proxy-Authorization value that opens the session
	secret  string
	ln      net.Listener
	srv     *http.Server
	done    chan struct{}
	rp      *httputil.ReverseProxy
	tr      *http.Transport
	mu      sync.Mutex
	refused map[schemas.ConnectionCount]int
	allowed map[schemas.ConnectionCount]int
	active  int
	closed  bool
	bytes   atomic.Int64
	tunnels sync.WaitGroup
	ctx     context.Context // done when the session closes
	cancel  context.CancelFunc
}

// Open starts a session that lets through only the targets of allow, each "host:port"
// (see Allowlist), to clients that send its credential (in the userinfo of URL). It
// listens until Close.
func (d *Door) Open(allow []string) (*Session, error) {
	host := d.Host
	if host == "" {
		host = "127.0.0.1"
	}
	listen := d.Listen
	if listen == nil {
		listen = func(addr string) (net.Listener, error) { return net.Listen("tcp", addr) }
	}
	var key [24]byte
	if _, err := rand.Read(key[:]); err != nil {
		return nil, fmt.Errorf("egress door: a session secret: %w", err)
	}
	ln, err := listen(net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, fmt.Errorf("egress door: listen on %s: %w", host, err)
	}
	secret := hex.EncodeToString(key[:])
	s := &Session{door: d, allow: map[string]bool{}, ln: ln, done: make(chan struct{}), secret: secret,
		auth:    "Basic " + base64.StdEncoding.EncodeToString([]byte(ProxyUser+":"+secret)),
		refused: map[schemas.ConnectionCount]int{}, allowed: map[schemas.ConnectionCount]int{}}
	for _, a := range allow {
		a = strings.ToLower(a)
		if !s.allow[a] {
			s.allow[a] = true
			s.list = append(s.list, a)
		}
	}
	slices.Sort(s.list)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.tr = d.transport()
	s.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.Host = pr.In.URL.Host
			pr.Out.Header.Del("Proxy-Authorization")
		},
		Transport: s.tr,
		ErrorLog:  log.New(io.Discard, "", 0),
		ModifyResponse: func(resp *http.Response) error {
			host, port := strings.ToLower(resp.Request.URL.Hostname()), portOf(resp.Request.URL)
			resp.Body = &meteredBody{ReadCloser: resp.Body, s: s, host: host, port: port}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			d.logger().Warn("egress door: upstream failed", "target", r.URL.Host, "err", err)
			http.Error(w, "envgap egress door: "+r.URL.Host+": "+err.Error(), http.StatusBadGateway)
		},
	}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 30 * time.Second, MaxHeaderBytes: 64 << 10,
		IdleTimeout: 30 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// transport is the connection pool to allowed upstreams, one per door: sessions share it
// (kept-alive connections to an image's package sources outlive a run), as each
// session's requests are checked before they reach it.
func (d *Door) transport() *http.Transport {
	d.trOnce.Do(func() {
		dialer := &net.Dialer{Timeout: d.dialTimeout(), Control: d.dialControl()}
		d.tr = &http.Transport{Proxy: nil, DialContext: dialer.DialContext, ForceAttemptHTTP2: false,
			MaxIdleConnsPerHost: 4, ResponseHeaderTimeout: 2 * time.Minute, IdleConnTimeout: 30 * time.Second}
	})
	return d.tr
}

func (d *Door) dialTimeout() time.Duration {
	if d.DialTimeout > 0 {
		return d.DialTimeout
	}
	return 30 * time.Second
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
	return discard
}

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

func (d *Door) maxConns() int {
	if d.MaxConns > 0 {
		return d.MaxConns
	}
	return DefaultMaxConns
}

func (d *Door) maxBytes() int64 {
	if d.MaxBytes > 0 {
		return d.MaxBytes
	}
	return DefaultMaxBytes
}

func (d *Door) helloTimeout() time.Duration {
	if d.HelloTimeout > 0 {
		return d.HelloTimeout
	}
	return DefaultHelloTimeout
}

func (d *Door) connectPort() int {
	if d.tlsPort != 0 {
		return d.tlsPort
	}
	return TLSPort
}

// URL returns the proxy URL containers use, with the session's credential:
// "http://envgap:<secret>@<advertise host>:<port>". Give it only to the container the
// session is for, and never log or store it.
func (s *Session) URL() string {
	return "http://" + ProxyUser + ":" + s.secret + "@" + s.Addr()
}

// Addr is "<advertise host>:<port>": where the session listens, without its credential.
func (s *Session) Addr() string {
	h := s.door.AdvertiseHost
	if h == "" {
		h = s.door.Host
	}
	if h == "" {
		h = "127.0.0.1"
	}
	_, port, _ := net.SplitHostPort(s.ln.Addr().String())
	return net.JoinHostPort(h, port)
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
		s.cancel()
		s.tunnels.Wait()
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
		if a.Port != b.Port {
			return a.Port - b.Port
		}
		return strings.Compare(a.Reason, b.Reason)
	})
	return out
}

func (s *Session) count(m map[schemas.ConnectionCount]int, host string, port int, reason string) {
	k := schemas.ConnectionCount{Host: trunc(host), Port: port, Reason: reason}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := m[k]; !ok && len(m) >= MaxDistinct {
		k = schemas.ConnectionCount{Host: "(other)", Reason: fmt.Sprintf("more than %d distinct targets", MaxDistinct)}
	}
	m[k]++
}

// authorized reports whether r carries the session's credential. A request without it
// is answered 407 and counted nowhere: it is not this session's container asking.
func (s *Session) authorized(w http.ResponseWriter, r *http.Request) bool {
	if subtle.ConstantTimeCompare([]byte(r.Header.Get("Proxy-Authorization")), []byte(s.auth)) == 1 {
		return true
	}
	why := "no credential"
	if r.Header.Get("Proxy-Authorization") != "" {
		why = "a wrong credential"
	}
	s.door.logger().Info("egress door: refused a request with "+why+" (not this session's container)", "target", trunc(r.Host))
	w.Header().Set("Proxy-Authenticate", `Basic realm="envgap egress door"`)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusProxyAuthRequired)
	fmt.Fprintf(w, "envgap egress door: %s: each door session serves only the container it was opened for, with the credential of its proxy URL\n", why)
	return false
}

// acquire takes one of the session's connections; false when all are in use.
func (s *Session) acquire() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active >= s.door.maxConns() {
		return false
	}
	s.active++
	return true
}

func (s *Session) release() {
	s.mu.Lock()
	s.active--
	s.mu.Unlock()
}

// spend counts n bytes carried; false once the session is over its bound.
func (s *Session) spend(n int) bool {
	return s.take(n) == n
}

// take counts n bytes carried and returns how many of them fit in the session's bound.
func (s *Session) take(n int) int {
	total, bound := s.bytes.Add(int64(n)), s.door.maxBytes()
	if total <= bound {
		return n
	}
	return int(max(0, min(int64(n), bound-(total-int64(n)))))
}

func (s *Session) overBytes() string {
	if m := s.door.maxBytes(); m%(1<<20) != 0 {
		return fmt.Sprintf("over the session's bound of %d bytes carried", m)
	}
	return fmt.Sprintf("over the session's bound of %d MiB carried", s.door.maxBytes()>>20)
}

// ServeHTTP implements the forward proxy: CONNECT host:443 and absolute-form http
// requests, from clients with the session's credential.
func (s *Session) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	if r.Method == http.MethodConnect {
		s.connect(w, r)
		return
	}
	if !r.URL.IsAbs() || r.URL.Host == "" {
		http.Error(w, "envgap egress door: this is a forward proxy; send an absolute URL or CONNECT", http.StatusBadRequest)
		return
	}
	host, port := strings.ToLower(r.URL.Hostname()), portOf(r.URL)
	if r.URL.Scheme != "http" {
		s.refuse(w, host, port, "scheme "+trunc(r.URL.Scheme)+" is not forwarded", http.StatusForbidden)
		return
	}
	if !s.admit(w, host, port) {
		return
	}
	defer s.release()
	s.count(s.allowed, host, port, "")
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = &meteredBody{ReadCloser: r.Body, s: s, host: host, port: port}
	}
	s.rp.ServeHTTP(w, r)
}

// admit takes one of the session's connections for host:port, or refuses (and records) a
// target off the allowlist, a session over its byte bound, or one over its connections.
// The caller releases what it took.
func (s *Session) admit(w http.ResponseWriter, host string, port int) bool {
	switch {
	case !s.allowedTarget(host, port):
		s.refuse(w, host, port, "not on the allowlist", http.StatusForbidden)
	case s.bytes.Load() > s.door.maxBytes():
		s.refuse(w, host, port, s.overBytes(), http.StatusForbidden)
	case !s.acquire():
		s.refuse(w, host, port, fmt.Sprintf("more than %d connections at once", s.door.maxConns()), http.StatusServiceUnavailable)
	default:
		return true
	}
	return false
}

// meteredBody counts a forwarded body's bytes against the session's bound and cuts it
// (an error, so the connection ends) when the session goes over it.
type meteredBody struct {
	io.ReadCloser
	s    *Session
	host string
	port int
	over bool
}

func (b *meteredBody) Read(p []byte) (int, error) {
	if b.over {
		return 0, errOverBytes
	}
	n, err := b.ReadCloser.Read(p)
	if k := b.s.take(n); k < n {
		b.over = true
		b.s.count(b.s.refused, b.host, b.port, b.s.overBytes())
		return k, errOverBytes
	}
	return n, err
}

var errOverBytes = errors.New("envgap egress door: the session's byte bound is reached")

func (s *Session) connect(w http.ResponseWriter, r *http.Request) {
	h, p, err := net.SplitHostPort(r.Host)
	port, perr := strconv.Atoi(p)
	if err != nil || perr != nil || port <= 0 || port > 65535 {
		s.refuse(w, r.Host, 0, "CONNECT needs host:port", http.StatusForbidden)
		return
	}
	host := strings.ToLower(h)
	if port != s.door.connectPort() {
		s.refuse(w, host, port, fmt.Sprintf("CONNECT only to port %d", TLSPort), http.StatusForbidden)
		return
	}
	if !s.admit(w, host, port) {
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		s.release()
		http.Error(w, "envgap egress door: CONNECT needs HTTP/1.1", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.release()
		http.Error(w, "envgap egress door: the session is closed", http.StatusServiceUnavailable)
		return
	}
	s.tunnels.Add(1)
	s.mu.Unlock()
	conn, buf, err := hj.Hijack()
	if err != nil {
		s.tunnels.Done()
		s.release()
		return
	}
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		s.tunnels.Done()
		s.release()
		conn.Close()
		return
	}
	go s.tunnel(conn, buf.Reader, host, port)
}

// tunnel reads the client's TLS ClientHello (without terminating TLS), checks that its
// SNI is the CONNECT host, and only then dials the target and pipes the two ways,
// counting the bytes against the session's bound.
func (s *Session) tunnel(conn net.Conn, br *bufio.Reader, host string, port int) {
	defer s.tunnels.Done()
	defer conn.Close()
	defer s.release() // before the client sees the end
	// Closing the session cuts its tunnels, from the wait for the hello on.
	defer context.AfterFunc(s.ctx, func() { conn.Close() })()
	conn.SetReadDeadline(time.Now().Add(s.door.helloTimeout()))
	hello, sni, err := readClientHello(br)
	conn.SetReadDeadline(time.Time{})
	switch {
	case s.ctx.Err() != nil:
		return
	case err != nil && errors.Is(err, os.ErrDeadlineExceeded):
		s.refuseTunnel(host, port, fmt.Sprintf("no TLS ClientHello within %s", s.door.helloTimeout()))
		return
	case err != nil:
		s.refuseTunnel(host, port, trunc(err.Error()))
		return
	case sni == "":
		s.refuseTunnel(host, port, "no SNI in the TLS ClientHello")
		return
	case sni != host:
		s.refuseTunnel(host, port, "TLS SNI "+sni+" is not the CONNECT host")
		return
	}
	if !s.spend(len(hello)) {
		s.refuseTunnel(host, port, s.overBytes())
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.door.dialTimeout())
	up, err := (&net.Dialer{Control: s.door.dialControl()}).DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	cancel()
	if err != nil {
		s.door.logger().Warn("egress door: dial failed", "target", net.JoinHostPort(host, strconv.Itoa(port)), "err", err)
		return
	}
	defer up.Close()
	s.count(s.allowed, host, port, "")
	defer context.AfterFunc(s.ctx, func() { up.Close() })()
	if _, err := up.Write(hello); err != nil {
		return
	}
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		if s.pipe(up, br, host, port) {
			conn.Close()
			up.Close()
			return
		}
		if tc, ok := up.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
	}()
	s.pipe(conn, up, host, port)
	conn.Close()
	up.Close()
	<-sent
}

// pipe copies src to dst, counting bytes; it reports whether it stopped at the bound.
func (s *Session) pipe(dst io.Writer, src io.Reader, host string, port int) bool {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			k := s.take(n)
			if k > 0 {
				if _, werr := dst.Write(buf[:k]); werr != nil {
					return false
				}
			}
			if k < n {
				s.refuseTunnel(host, port, s.overBytes())
				return true
			}
		}
		if err != nil {
			return false
		}
	}
}

func (s *Session) refuseTunnel(host string, port int, why string) {
	s.count(s.refused, host, port, why)
	s.door.logger().Info("egress door: refused a tunnel", "host", trunc(host), "port", port, "why", why)
}

func (s *Session) allowedTarget(host string, port int) bool {
	return s.allow[net.JoinHostPort(host, strconv.Itoa(port))]
}

func (s *Session) refuse(w http.ResponseWriter, host string, port int, why string, status int) {
	s.count(s.refused, host, port, why)
	s.door.logger().Info("egress door: refused", "host", trunc(host), "port", port, "why", why)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
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
