package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/envgap/envgap/schemas"
)

// DefaultPyPIUpstream is the PEP 691 index used when Options.PyPIUpstream is empty.
const DefaultPyPIUpstream = "https://pypi.org/simple/"

// YankPolicy says what to do with files an index marks as yanked. The simple API has no
// yank time, so a file yanked after the cut-off looks yanked before it too.
type YankPolicy int

const (
	// YankKeep passes the yank flag and reason through (the default): pip and uv then
	// skip the file unless it is pinned exactly, as the real index would today.
	YankKeep YankPolicy = iota
	// YankIgnore serves yanked files as if they were never yanked.
	YankIgnore
	// YankHide withholds yanked files altogether.
	YankHide
)

// Options configures a Proxy. The zero value is usable: PyPI from DefaultPyPIUpstream, npm
// from the npm client's configuration, in-memory caches, strict mode.
type Options struct {
	// PyPIUpstream is a PEP 691 JSON simple index that reports upload-time (PEP 700),
	// e.g. "https://pypi.org/simple/". Empty: DefaultPyPIUpstream.
	PyPIUpstream string
	// NPMUpstream is the npm registry root (the command line passes the npm client's,
	// NPMConfigRegistry). Empty: npm requests answer 502 with a message saying to pass
	// the upstream.
	NPMUpstream string
	// Client is used for upstream requests. Nil: a client with UpstreamTimeout as its
	// response-header timeout.
	Client *http.Client
	// Blobs caches artifacts and raw metadata documents by SHA-256. Nil: in memory.
	Blobs BlobCache
	// Refs holds validators and digest aliases. Nil: in memory.
	Refs RefStore
	// TempDir holds upstream bodies while they are hashed. Empty: os.TempDir().
	TempDir string
	// MetadataTTL is how long a cached metadata document is used without revalidation.
	// Zero: 5 minutes; negative: revalidate every time.
	MetadataTTL time.Duration
	// UpstreamTimeout bounds each metadata fetch and the wait for an artifact's response
	// headers. Zero: 60 seconds.
	UpstreamTimeout time.Duration
	// MaxDocumentBytes bounds one metadata document. Zero: 1 GiB.
	MaxDocumentBytes int64
	// NoStaleOnError turns off serving a cached metadata document when revalidating it
	// fails with an upstream fault (default: the stale copy is served and the fault logged).
	NoStaleOnError bool
	// IncludeUntimed serves files and versions that have no upload or publish time. The
	// default hides them: their age is unknown.
	IncludeUntimed bool
	// Yanked is the yank policy (default YankKeep).
	Yanked YankPolicy
	// Lenient serves artifacts of files and versions hidden at the cut-off when asked for
	// by URL. The default (strict) answers 404.
	Lenient bool
	// PublicURL is the proxy's root as clients reach it, used in rewritten file and
	// tarball URLs. Empty: derived from each request's Host.
	PublicURL string
	// Logger receives faults and start-up messages. Nil: discarded.
	Logger *slog.Logger
	// Now is the clock (for cache ages). Nil: time.Now.
	Now func() time.Time
	// MaxLogEvents caps the events one session records. Zero: 200000.
	MaxLogEvents int
	// Cutoff, when set, is the one cut-off requests outside a session are served at (a
	// Harbor task's registry: its task's cut-off, whatever a URL names); any other date is
	// refused. Zero with AnyCutoff false: only sessions are served (the evaluation core's
	// proxy: every request outside a session the harness opened is refused).
	Cutoff schemas.Cutoff
	// AnyCutoff serves requests outside a session at the cut-off their path names (the
	// stand-alone proxy a person runs on the host: envgap registry serve).
	AnyCutoff bool
}

// Proxy is the date-limited registry proxy, an http.Handler. Paths (the /s/<session>
// prefix is required unless Options.Cutoff or Options.AnyCutoff is set; see the package
// doc's Sessions):
//
//	[/s/<session>]/c/<cutoff>/pypi/simple/<project>/     PEP 503 HTML / PEP 691 JSON
//	[/s/<session>]/c/<cutoff>/pypi/files/<project>/<file>[.metadata]
//	[/s/<session>]/c/<cutoff>/npm/<name>                  packument (full or abbreviated)
//	[/s/<session>]/c/<cutoff>/npm/<name>/-/<file>.tgz     tarball
type Proxy struct {
	opts     Options
	pypi     *url.URL
	npm      *url.URL
	npmErr   error
	f        *fetcher
	log      *slog.Logger
	smu      sync.Mutex
	sessions map[string]*Session
	byAddr   map[netip.Addr]*Session // bound sessions by their container's address
}

// New builds a Proxy. It runs `npm config get registry` once when Options.NPMUpstream is
// empty.
func New(opts Options) (*Proxy, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MetadataTTL == 0 {
		opts.MetadataTTL = 5 * time.Minute
	}
	if opts.UpstreamTimeout <= 0 {
		opts.UpstreamTimeout = 60 * time.Second
	}
	if opts.MaxDocumentBytes <= 0 {
		opts.MaxDocumentBytes = 1 << 30
	}
	if opts.MaxLogEvents == 0 {
		opts.MaxLogEvents = 200000
	}
	if opts.Blobs == nil {
		opts.Blobs = NewMemBlobCache()
	}
	if opts.Refs == nil {
		opts.Refs = NewMemRefStore()
	}
	if opts.Client == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.ResponseHeaderTimeout = opts.UpstreamTimeout
		tr.MaxIdleConnsPerHost = 16
		opts.Client = &http.Client{Transport: tr}
	}
	if opts.PyPIUpstream == "" {
		opts.PyPIUpstream = DefaultPyPIUpstream
	}
	if !opts.Cutoff.IsZero() && opts.AnyCutoff {
		return nil, errors.New("registry proxy: a fixed cut-off (Options.Cutoff) and AnyCutoff exclude each other")
	}
	p := &Proxy{opts: opts, log: opts.Logger, sessions: map[string]*Session{}, byAddr: map[netip.Addr]*Session{}}
	var err error
	if p.pypi, err = parseUpstream(opts.PyPIUpstream); err != nil {
		return nil, fmt.Errorf("pypi upstream: %w", err)
	}
	npmURL := opts.NPMUpstream
	if npmURL == "" {
		p.npmErr = errors.New("no npm upstream given: pass Options.NPMUpstream (--npm-upstream URL; cmd takes the npm client's configured registry by default, see NPMConfigRegistry)")
		p.log.Warn("npm requests will fail", "err", p.npmErr)
	}
	if p.npmErr == nil {
		if p.npm, err = parseUpstream(npmURL); err != nil {
			return nil, fmt.Errorf("npm upstream: %w", err)
		}
	}
	p.f = &fetcher{
		client: opts.Client, blobs: opts.Blobs, refs: opts.Refs, ttl: opts.MetadataTTL,
		timeout: opts.UpstreamTimeout, maxDoc: opts.MaxDocumentBytes, staleOnError: !opts.NoStaleOnError,
		tmpDir: opts.TempDir, now: opts.Now, log: opts.Logger, parsed: map[string]any{}, maxPar: 256,
	}
	return p, nil
}

// NPMConfigRegistry returns the registry the host's npm client is configured with (`npm
// config get registry`). It is the project's one way of asking: the command line calls it
// once, where it wires a command, and passes the URL to the proxy (Options.NPMUpstream),
// the registry audit and the image build.
func NPMConfigRegistry(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "npm", "config", "get", "registry").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			return "", fmt.Errorf("npm config get registry: %w: %s", err, strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("npm config get registry: %w (install npm, or give the registry URL)", err)
	}
	s := strings.TrimSpace(string(out))
	if s == "" || s == "undefined" {
		return "", errors.New("npm config get registry printed nothing: give the registry URL")
	}
	if _, err := url.ParseRequestURI(s); err != nil {
		return "", fmt.Errorf("npm config get registry gave %q, not a URL: give the registry URL", s)
	}
	return s, nil
}

func parseUpstream(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", s, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http(s) URL", s)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
		u.RawPath = ""
	}
	return u, nil
}

// Upstreams returns the PyPI and npm upstream roots in use (npm empty when unknown, with
// the reason as error).
func (p *Proxy) Upstreams() (pypi, npm string, npmErr error) {
	if p.npm != nil {
		npm = p.npm.String()
	}
	return p.pypi.String(), npm, p.npmErr
}

// UpstreamRequests returns how many requests went upstream, by kind ("metadata",
// "artifact"). Tests and benchmarks use it to check caching.
func (p *Proxy) UpstreamRequests() map[string]int { return p.f.upstreamRequests.snapshot() }

// reqCtx is one parsed request.
type reqCtx struct {
	w      http.ResponseWriter
	r      *http.Request
	cutoff schemas.Cutoff
	prefix string // escaped path prefix up to and including the cut-off segment, no trailing slash
	root   string // absolute URL of prefix
	log    *Log   // nil outside sessions
	rest   []string
	raw    []string // escaped forms of rest
	trail  bool     // the path ended with "/"
}

// ServeHTTP implements http.Handler.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		httpErrorText(w, http.StatusMethodNotAllowed, "only GET and HEAD are served")
		return
	}
	raw := r.URL.EscapedPath()
	trail := strings.HasSuffix(raw, "/")
	segs := strings.Split(strings.Trim(raw, "/"), "/")
	if len(segs) == 1 && segs[0] == "" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "envgap date-limited registry proxy: use /c/<cutoff>/pypi/simple/ or /c/<cutoff>/npm/ under your session's root\n")
		return
	}
	src := remoteAddr(r)
	prefix := ""
	p.smu.Lock()
	holder := p.byAddr[src] // the session the asking container holds, if any
	var sess *Session
	var refusal string
	if len(segs) >= 2 && segs[0] == "s" {
		sess = p.sessions[segs[1]]
		switch {
		case sess == nil:
			refusal = "registry session " + segs[1] + " is unknown or closed"
		case sess.anyAddr:
		case !sess.addr.IsValid():
			refusal = "registry session " + segs[1] + " is not bound to a container yet"
		case sess.addr != src:
			refusal = "registry session " + segs[1] + " belongs to another container"
		}
		if refusal == "" {
			holder = sess
		}
		prefix = "/s/" + segs[1]
		segs = segs[2:]
	} else if p.opts.Cutoff.IsZero() && !p.opts.AnyCutoff {
		refusal = "a request outside a registry session"
	}
	p.smu.Unlock()
	asked := ""
	if len(segs) >= 2 && segs[0] == "c" {
		asked, _ = url.PathUnescape(segs[1])
	}
	eco := ""
	if len(segs) >= 3 {
		eco = segs[2]
	}
	if refusal != "" {
		p.refuse(w, r, holder, eco, refusal, asked)
		return
	}
	if len(segs) < 2 || segs[0] != "c" {
		httpErrorText(w, http.StatusNotFound, "no cut-off in path: use [/s/<session>]/c/<cutoff>/pypi/simple/<project>/ or /c/<cutoff>/npm/<package>")
		return
	}
	cutoff, err := schemas.ParseCutoff(asked)
	if err != nil {
		httpErrorText(w, http.StatusBadRequest, "bad cut-off segment: "+err.Error())
		return
	}
	fixed := p.opts.Cutoff
	if sess != nil {
		fixed = sess.cutoff
	}
	if !fixed.IsZero() && !fixed.Equal(cutoff) {
		if sess == nil {
			holder = nil // a fixed proxy (a Harbor task's) has no sessions: its log records it
		}
		p.refuse(w, r, holder, eco, "another cut-off than "+fixed.String(), asked)
		return
	}
	prefix += "/c/" + segs[1]
	rc := &reqCtx{w: w, r: r, cutoff: cutoff, prefix: prefix, trail: trail}
	rc.root = p.publicRoot(r) + prefix
	if sess != nil {
		rc.log = sess.log
	}
	for _, s := range segs[2:] {
		u, err := url.PathUnescape(s)
		if err != nil {
			httpErrorText(w, http.StatusBadRequest, "bad path segment: "+err.Error())
			return
		}
		rc.rest = append(rc.rest, u)
		rc.raw = append(rc.raw, s)
	}
	if len(rc.rest) == 0 {
		if sess != nil || !fixed.IsZero() {
			// The root of a session: a request within it, answered (sandbox check's control).
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			io.WriteString(w, "envgap registry at cut-off "+cutoff.String()+": use pypi/simple/<project>/ or npm/<package> below this URL\n")
			return
		}
		httpErrorText(w, http.StatusNotFound, "use pypi/simple/<project>/ or npm/<package> under the cut-off")
		return
	}
	switch rc.rest[0] {
	case "pypi":
		p.servePyPI(rc)
	case "npm":
		p.serveNPM(rc)
	default:
		httpErrorText(w, http.StatusNotFound, "unknown registry "+rc.rest[0]+": use pypi or npm")
	}
}

// remoteAddr is the address a request came from (invalid when it cannot be read).
func remoteAddr(r *http.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// RefusedStatus is the status of a refused request (outside its session, another
// cut-off, another container's session): 403, which package clients do not retry.
const RefusedStatus = http.StatusForbidden

// refuse answers a request the proxy does not serve to its sender, and records it in the
// session the sender holds (holder; nil when it holds none) and in the proxy's log. why
// says what is wrong; asked is the cut-off the path named ("" when none).
func (p *Proxy) refuse(w http.ResponseWriter, r *http.Request, holder *Session, eco, why, asked string) {
	if asked == "" {
		asked = "no cut-off"
	} else {
		asked = "cut-off " + asked
	}
	msg := "envgap registry refused " + r.URL.EscapedPath() + " (" + asked + "): " + why + "; "
	switch {
	case holder != nil:
		msg += "this container's registry session serves cut-off " + holder.cutoff.String() + " only, under " + holder.Root("") + "/c/" + holder.cutoff.String() + "/"
	case !p.opts.Cutoff.IsZero():
		msg += "this registry serves the task's cut-off " + p.opts.Cutoff.String() + " only, under /c/" + p.opts.Cutoff.String() + "/"
	default:
		msg += "this proxy serves only within a registry session the harness opened for the asking container"
	}
	msg += ". The run's registry cut-off is fixed: use the registry settings the environment gives (PIP_INDEX_URL, npm_config_registry), not a URL of your own."
	if len(msg) > 2048 {
		msg = msg[:2048]
	}
	if holder != nil {
		if eco != EcosystemNPM && eco != EcosystemPyPI {
			eco = ""
		}
		holder.log.refused1(Event{Ecosystem: eco, Reason: msg})
	}
	p.log.Warn("registry request refused", "from", r.RemoteAddr, "path", r.URL.EscapedPath(), "reason", why)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if eco == EcosystemNPM {
		// npm prints the "error" member of the body with the status.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(RefusedStatus)
		b, _ := json.Marshal(map[string]string{"error": msg})
		w.Write(append(b, '\n'))
		return
	}
	httpErrorText(w, RefusedStatus, msg)
}

func (p *Proxy) publicRoot(r *http.Request) string {
	if p.opts.PublicURL != "" {
		return trimSlash(p.opts.PublicURL)
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host := r.Host
	if host == "" {
		host = "localhost"
	}
	return scheme + "://" + host
}

// fail answers with the error's status and logs upstream faults to the session.
func (p *Proxy) fail(rc *reqCtx, eco, pkg string, err error) {
	st := statusOf(err)
	if st >= 500 {
		p.log.Error("registry request failed", "path", rc.r.URL.Path, "status", st, "err", err)
		rc.log.error1(Event{Ecosystem: eco, Package: pkg, Reason: err.Error()})
	}
	if eco == EcosystemNPM {
		rc.w.Header().Set("Content-Type", "application/json")
		rc.w.WriteHeader(st)
		b, _ := json.Marshal(map[string]string{"error": err.Error()})
		rc.w.Write(append(b, '\n'))
		return
	}
	httpErrorText(rc.w, st, err.Error())
}

func httpErrorText(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	io.WriteString(w, msg+"\n")
}

func redirect(rc *reqCtx, path string) {
	if q := rc.r.URL.RawQuery; q != "" {
		path += "?" + q
	}
	rc.w.Header().Set("Location", path)
	rc.w.WriteHeader(http.StatusMovedPermanently)
}

// serveBlob copies a cached blob to the client.
func (p *Proxy) serveBlob(rc *reqCtx, sha, contentType, name string) error {
	b, err := p.f.blobs.OpenBlob(sha)
	if err != nil {
		return badGateway(err, "artifact cache")
	}
	defer b.Close()
	rc.w.Header().Set("Content-Type", contentType)
	rc.w.Header().Set("ETag", `"sha256:`+sha+`"`)
	rc.w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	if rs, ok := b.(io.ReadSeeker); ok {
		http.ServeContent(rc.w, rc.r, name, time.Time{}, rs)
		return nil
	}
	if rc.r.Method == http.MethodHead {
		return nil
	}
	_, _ = io.Copy(rc.w, b)
	return nil
}

// hostPort returns the host[:port] of an absolute URL, for PIP_TRUSTED_HOST.
func hostPort(u *url.URL) (host, hostOnly string) {
	h, _, err := net.SplitHostPort(u.Host)
	if err != nil {
		h = u.Host
	}
	return u.Host, h
}
