package registry

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sync"

	"github.com/envgap/envgap/schemas"
)

// Ecosystem names used in records.
const (
	EcosystemPyPI = "pypi"
	EcosystemNPM  = "npm"
)

// Event is one thing the proxy served or hid. Events are deduplicated within a session.
type Event struct {
	Ecosystem string `json:"ecosystem"`         // "pypi" or "npm"
	Package   string `json:"package"`           // normalised PyPI project or npm package name
	Version   string `json:"version,omitempty"` // empty for a whole document
	File      string `json:"file,omitempty"`    // artifact file name; empty for a version or document
	Reason    string `json:"reason,omitempty"`  // why hidden, or what was served / went wrong
}

// Record is the JSON-serialisable evidence of one session: what a run got from the
// registries and what the cut-off kept from it. Events are sorted.
type Record struct {
	Session string `json:"session"`
	Cutoff  string `json:"cutoff"` // RFC 3339, UTC
	// Served lists metadata documents answered (File empty, Reason "metadata: ...") and
	// artifacts downloaded (File set).
	Served []Event `json:"served"`
	// Hidden lists versions (npm) and files (PyPI) withheld because of the cut-off, a
	// missing time, or the yank policy.
	Hidden []Event `json:"hidden"`
	// Errors lists upstream faults answered with 502: a run that has any was not a clean
	// run of the project (an infrastructure error, not an outcome).
	Errors []Event `json:"errors"`
	// Refused lists requests the proxy refused to the container that holds this session:
	// a request outside its session, under another cut-off, or under another container's
	// session (Reason says what was asked and what the session allows).
	Refused []Event `json:"refused,omitempty"`
	// Dropped counts events not recorded because the session reached its event cap.
	Dropped int `json:"dropped,omitempty"`
}

// Log records events for one session. It is safe for concurrent use.
type Log struct {
	mu      sync.Mutex
	max     int
	n       int
	served  map[Event]struct{}
	hidden  map[Event]struct{}
	errs    map[Event]struct{}
	refused map[Event]struct{}
	dropped int
}

func newLog(max int) *Log {
	return &Log{max: max, served: map[Event]struct{}{}, hidden: map[Event]struct{}{}, errs: map[Event]struct{}{}, refused: map[Event]struct{}{}}
}

func (l *Log) add(m map[Event]struct{}, e Event) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := m[e]; ok {
		return
	}
	if l.max > 0 && l.n >= l.max {
		l.dropped++
		return
	}
	l.n++
	m[e] = struct{}{}
}

func (l *Log) served1(e Event) {
	if l != nil {
		l.add(l.served, e)
	}
}

func (l *Log) hidden1(e Event) {
	if l != nil {
		l.add(l.hidden, e)
	}
}

func (l *Log) error1(e Event) {
	if l != nil {
		l.add(l.errs, e)
	}
}

func (l *Log) refused1(e Event) {
	if l != nil {
		l.add(l.refused, e)
	}
}

func sortedEvents(m map[Event]struct{}) []Event {
	out := make([]Event, 0, len(m))
	for e := range m {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Event) int {
		return cmp.Or(cmp.Compare(a.Ecosystem, b.Ecosystem), cmp.Compare(a.Package, b.Package),
			cmp.Compare(a.Version, b.Version), cmp.Compare(a.File, b.File), cmp.Compare(a.Reason, b.Reason))
	})
	return out
}

// Session is one run's view of the proxy: a fixed cut-off and a Log. Clients reach it under
// <root>/s/<id>/c/<cutoff>/...; ClientEnv(s.Root(root), s.Cutoff()) gives their settings.
//
// A session serves nobody until it is bound: Bind binds it to the address of the one
// container it was opened for (the harness calls it once the container started, from the
// sandbox's Started hook), and only requests from that address are served under it.
// BindAnyAddress makes the session's id (128 random bits, given only to its container)
// the only credential, for a proxy that does not see containers' own addresses (one
// reached through --proxy-url from another host).
type Session struct {
	p      *Proxy
	id     string
	cutoff schemas.Cutoff
	log    *Log
	// addr and anyAddr are guarded by p.smu.
	addr    netip.Addr
	anyAddr bool
}

// NewSession registers a session with the given cut-off. It serves nobody until bound
// (Bind, BindAnyAddress). Close it when the run ends.
func (p *Proxy) NewSession(cutoff schemas.Cutoff) *Session {
	var b [16]byte
	_, _ = rand.Read(b[:])
	s := &Session{p: p, id: hex.EncodeToString(b[:]), cutoff: cutoff, log: newLog(p.opts.MaxLogEvents)}
	p.smu.Lock()
	p.sessions[s.id] = s
	p.smu.Unlock()
	return s
}

// Bind binds the session to the address its container's requests come from: from now on
// the session serves that address alone, and requests that address makes outside the
// session are refused and recorded in it. An address bound to an earlier session that is
// still open moves to this one (the engine reuses a removed container's address; the
// earlier session then serves nobody). Binding twice to different addresses, or binding a
// closed session, is an error.
func (s *Session) Bind(addr netip.Addr) error {
	addr = addr.Unmap()
	if !addr.IsValid() || addr.IsUnspecified() {
		return fmt.Errorf("registry session %s: cannot bind to address %v", s.id, addr)
	}
	p := s.p
	p.smu.Lock()
	defer p.smu.Unlock()
	if p.sessions[s.id] != s {
		return fmt.Errorf("registry session %s is closed", s.id)
	}
	if s.addr.IsValid() && s.addr != addr {
		return fmt.Errorf("registry session %s is already bound to %s, not %s", s.id, s.addr, addr)
	}
	if old := p.byAddr[addr]; old != nil && old != s {
		old.addr = netip.Addr{}
	}
	s.addr = addr
	p.byAddr[addr] = s
	return nil
}

// BindAnyAddress lets the session serve whoever presents its id: for a proxy that sees
// the containers through a NAT (a remote engine reaching it by --proxy-url), where
// addresses are not the containers' own. The id is the credential then.
func (s *Session) BindAnyAddress() error {
	p := s.p
	p.smu.Lock()
	defer p.smu.Unlock()
	if p.sessions[s.id] != s {
		return fmt.Errorf("registry session %s is closed", s.id)
	}
	s.anyAddr = true
	return nil
}

// ErrUnbound is returned by Session.Addr for a session not bound to an address.
var ErrUnbound = errors.New("registry session not bound to an address")

// Addr returns the address the session is bound to.
func (s *Session) Addr() (netip.Addr, error) {
	s.p.smu.Lock()
	defer s.p.smu.Unlock()
	if !s.addr.IsValid() {
		return netip.Addr{}, ErrUnbound
	}
	return s.addr, nil
}

// ID returns the session's identifier (the path segment after /s/).
func (s *Session) ID() string { return s.id }

// Cutoff returns the session's cut-off (UTC).
func (s *Session) Cutoff() schemas.Cutoff { return s.cutoff }

// Root returns the session's root URL given the proxy's root URL as the client reaches it
// (for example "http://host.containers.internal:8080"): root + "/s/<id>".
func (s *Session) Root(proxyRoot string) string { return trimSlash(proxyRoot) + "/s/" + s.id }

// BaseURL returns root + "/s/<id>/c/<cutoff>", the prefix under which the session's
// "pypi/simple/" and "npm/" live.
func (s *Session) BaseURL(proxyRoot string) string {
	return s.Root(proxyRoot) + "/c/" + s.cutoff.String()
}

// Env returns ClientEnv for this session.
func (s *Session) Env(proxyRoot string) []string { return ClientEnv(s.Root(proxyRoot), s.cutoff) }

// Record returns a snapshot of what the session has served and hidden so far.
func (s *Session) Record() Record {
	l := s.log
	l.mu.Lock()
	defer l.mu.Unlock()
	return Record{
		Session: s.id, Cutoff: s.cutoff.String(),
		Served: sortedEvents(l.served), Hidden: sortedEvents(l.hidden), Errors: sortedEvents(l.errs),
		Refused: sortedEvents(l.refused), Dropped: l.dropped,
	}
}

// Close unregisters the session (later requests under its path are refused) and returns
// its record.
func (s *Session) Close() Record {
	s.p.smu.Lock()
	delete(s.p.sessions, s.id)
	if s.addr.IsValid() && s.p.byAddr[s.addr] == s {
		delete(s.p.byAddr, s.addr)
	}
	s.p.smu.Unlock()
	return s.Record()
}

func trimSlash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}
