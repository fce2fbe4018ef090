package registry

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
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
	dropped int
}

func newLog(max int) *Log {
	return &Log{max: max, served: map[Event]struct{}{}, hidden: map[Event]struct{}{}, errs: map[Event]struct{}{}}
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
type Session struct {
	p      *Proxy
	id     string
	cutoff schemas.Cutoff
	log    *Log
}

// NewSession registers a session with the given cut-off. Close it when the run ends.
func (p *Proxy) NewSession(cutoff schemas.Cutoff) *Session {
	var b [16]byte
	_, _ = rand.Read(b[:])
	s := &Session{p: p, id: hex.EncodeToString(b[:]), cutoff: cutoff, log: newLog(p.opts.MaxLogEvents)}
	p.smu.Lock()
	p.sessions[s.id] = s
	p.smu.Unlock()
	return s
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
		Dropped: l.dropped,
	}
}

// Close unregisters the session (later requests under its path get 503) and returns its record.
func (s *Session) Close() Record {
	s.p.smu.Lock()
	delete(s.p.sessions, s.id)
	s.p.smu.Unlock()
	return s.Record()
}

func trimSlash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}
