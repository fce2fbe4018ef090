package data

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Claims share work between processes, and machines, on one store: before doing a piece
// of work (verifying one candidate, rechecking one task, one evaluation run) a worker
// claims it by name; a second worker finds it claimed and does something else, then
// comes back. A claim is a small file claims/<name> holding its owner and a lease; it is
// taken, renewed and released under the store's lock. It ends when
//   - its owner releases it;
//   - its owner is a process on this host that is gone (or another process now has its
//     pid): it is free at once;
//   - its lease runs out without a renewal (an owner on another host is judged this way
//     only, so the lease must outlast a renewal interval by far).
// A claim renews itself every third of its lease until released; when a renewal finds
// the claim taken over (its owner was frozen past the lease), Lost is closed and the work
// must not be recorded.

// ErrClaimed is returned (wrapped in a *ClaimedError) when a live owner holds a claim.
var ErrClaimed = errors.New("claimed by another worker")

// ErrClaimLost is returned by Renew and Release when the claim was taken over.
var ErrClaimLost = errors.New("claim lost: its lease ran out and another worker took it")

// Owner names a process: its host, pid and start (the boot id and the process's start
// time since boot, so a reused pid or a reboot is a different owner). Claims record their
// owner; the sandbox labels its containers with theirs.
type Owner struct {
	Host  string `json:"host"`
	PID   int    `json:"pid"`
	Start string `json:"start"` // "<boot id>/<start time in clock ticks>"; "" where /proc cannot tell
}

func (o Owner) String() string { return fmt.Sprintf("pid %d on %s", o.PID, o.Host) }

var (
	selfOnce sync.Once
	self     Owner
)

// Self is the owner of the claims (and containers) this process takes.
func Self() Owner {
	selfOnce.Do(func() {
		host, _ := os.Hostname()
		self = Owner{Host: host, PID: os.Getpid(), Start: ProcessStart(os.Getpid())}
	})
	return self
}

// ProcessStart returns "<boot id>/<start ticks>" of a local process from /proc, or ""
// when it is not running or /proc cannot tell.
func ProcessStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// Field 2 (comm) may hold spaces and parentheses: the fields after it start after the
	// last ')'. starttime is field 22, the 20th after comm.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(boot)) + "/" + f[19]
}

// processExists reports whether a process with pid exists (signal 0).
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// OwnerState says what this host knows of an owner.
type OwnerState int

// The owner states.
const (
	OwnerUnknown OwnerState = iota // another host (or none): only a lease or an age decides
	OwnerAlive                     // the owner still runs
	OwnerGone                      // the owner process is dead, or its pid was reused
)

// StateFrom decides whether o still runs, as seen from the process self.
func (o Owner) StateFrom(self Owner) OwnerState {
	if o.Host != self.Host || o.Host == "" {
		return OwnerUnknown
	}
	if o.PID == self.PID && o.Start == self.Start {
		return OwnerAlive
	}
	start := ProcessStart(o.PID)
	if start == "" {
		if processExists(o.PID) {
			return OwnerAlive // no /proc to tell pid reuse: keep it
		}
		return OwnerGone
	}
	if o.Start != "" && start != o.Start {
		return OwnerGone // the pid now names another process (or the host rebooted)
	}
	return OwnerAlive
}

// ClaimRecord is what claims/<name> holds.
type ClaimRecord struct {
	Name    string    `json:"name"`
	Owner   Owner     `json:"owner"`
	Token   string    `json:"token"`
	Since   time.Time `json:"since"`
	Expires time.Time `json:"expires"`
}

// ClaimedError says who holds a claim.
type ClaimedError struct{ Held ClaimRecord }

func (e *ClaimedError) Error() string {
	return fmt.Sprintf("%s is claimed by %s until %s", e.Held.Name, e.Held.Owner, e.Held.Expires.UTC().Format(time.RFC3339))
}

func (e *ClaimedError) Unwrap() error { return ErrClaimed }

// Claim is a held claim.
type Claim struct {
	s     *Store
	lease time.Duration

	mu       sync.Mutex
	rec      ClaimRecord
	done     chan struct{} // closed by Release
	lost     chan struct{} // closed when a renewal finds the claim taken over
	lostOnce sync.Once
	released bool
}

func (s *Store) claimPath(name string) (string, error) {
	if err := CheckRefName(name); err != nil {
		return "", fmt.Errorf("claim: %w", err)
	}
	return filepath.Join(s.root, "claims", filepath.FromSlash(name)), nil
}

// readClaim reads claims/<name>; a missing or unreadable record is no claim.
func (s *Store) readClaim(p string) (ClaimRecord, bool) {
	var rec ClaimRecord
	b, err := os.ReadFile(p)
	if err != nil || json.Unmarshal(b, &rec) != nil {
		return rec, false
	}
	return rec, true
}

// held reports whether a claim record still binds others.
func (s *Store) held(rec ClaimRecord, now time.Time) bool {
	if rec.Owner.StateFrom(Self()) == OwnerGone {
		return false
	}
	return now.Before(rec.Expires)
}

// TryClaim claims name (slash-separated like a ref name, e.g. verify/<instance id>) for
// lease, renewed every lease/3 until Release. When a live owner holds it, it returns a
// *ClaimedError (errors.Is ErrClaimed).
func (s *Store) TryClaim(name string, lease time.Duration) (*Claim, error) {
	p, err := s.claimPath(name)
	if err != nil {
		return nil, err
	}
	if lease <= 0 {
		return nil, fmt.Errorf("claim %s: the lease must be positive", name)
	}
	tok := make([]byte, 12)
	rand.Read(tok)
	now := s.now()
	rec := ClaimRecord{Name: name, Owner: Self(), Token: hex.EncodeToString(tok), Since: now.UTC(), Expires: now.Add(lease).UTC()}
	err = s.Locked(func(*Tx) error {
		if cur, ok := s.readClaim(p); ok && s.held(cur, s.now()) {
			return &ClaimedError{Held: cur}
		}
		return s.writeClaim(p, rec)
	})
	if err != nil {
		return nil, err
	}
	c := &Claim{s: s, lease: lease, rec: rec, done: make(chan struct{}), lost: make(chan struct{})}
	go c.keep()
	return c, nil
}

// WaitClaim claims name, waiting (polling every poll) while a live owner holds it, until
// ctx ends.
func (s *Store) WaitClaim(ctx context.Context, name string, lease, poll time.Duration) (*Claim, error) {
	for {
		c, err := s.TryClaim(name, lease)
		if !errors.Is(err, ErrClaimed) {
			return c, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %w", err)
		case <-time.After(poll):
		}
	}
}

func (s *Store) writeClaim(p string, rec ClaimRecord) error {
	b, _ := json.Marshal(rec)
	if err := s.writeSmall(p, append(b, '\n')); err != nil {
		return fmt.Errorf("claim %s: %w", rec.Name, err)
	}
	return nil
}

// Record returns the claim as last written.
func (c *Claim) Record() ClaimRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rec
}

// Lost is closed when a renewal finds that the claim was taken over.
func (c *Claim) Lost() <-chan struct{} { return c.lost }

func (c *Claim) keep() {
	t := time.NewTicker(c.lease / 3)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
			if err := c.Renew(); errors.Is(err, ErrClaimLost) {
				return
			}
		}
	}
}

// Renew extends the lease from now. It returns ErrClaimLost (and closes Lost) when the
// claim is no longer this one.
func (c *Claim) Renew() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.released {
		return fmt.Errorf("claim %s: already released", c.rec.Name)
	}
	return c.ifStillMine(func(p string) error {
		rec := c.rec
		rec.Expires = c.s.now().Add(c.lease).UTC()
		if err := c.s.writeClaim(p, rec); err != nil {
			return err
		}
		c.rec = rec
		return nil
	})
}

// Release ends the claim. It returns ErrClaimLost when the claim had been taken over
// (the taker's claim is left alone). Releasing twice does nothing.
func (c *Claim) Release() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.released {
		return nil
	}
	c.released = true
	close(c.done)
	return c.ifStillMine(func(p string) error {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("release claim %s: %w", c.rec.Name, err)
		}
		return nil
	})
}

// ifStillMine runs fn on the claim's file under the store's lock when the file still
// holds this claim; otherwise the claim is lost (Lost is closed, ErrClaimLost returned).
func (c *Claim) ifStillMine(fn func(p string) error) error {
	p, err := c.s.claimPath(c.rec.Name)
	if err != nil {
		return err
	}
	return c.s.Locked(func(*Tx) error {
		if cur, ok := c.s.readClaim(p); !ok || cur.Token != c.rec.Token {
			c.lostOnce.Do(func() { close(c.lost) })
			return fmt.Errorf("%s: %w", c.rec.Name, ErrClaimLost)
		}
		return fn(p)
	})
}

// Claims lists the claims whose names start with prefix and that still bind others.
func (s *Store) Claims(prefix string) ([]ClaimRecord, error) {
	base := filepath.Join(s.root, "claims")
	var out []ClaimRecord
	now := s.now()
	err := walkFiles(base, func(p string) error {
		rel, _ := filepath.Rel(base, p)
		if !strings.HasPrefix(filepath.ToSlash(rel), prefix) {
			return nil
		}
		if rec, ok := s.readClaim(p); ok && s.held(rec, now) {
			out = append(out, rec)
		}
		return nil
	})
	return out, err
}
