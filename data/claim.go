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
// taken, renewed and released under the store's lock. This is the project's one lease:
// a ClaimDir is any folder of such files under a lock of its caller's (the store's
// claims/ under the store's lock, a --slurm work queue's items/ under the work folder's;
// lib/jobs). It ends when
//   - its owner releases it (or gives it back: GiveBack keeps the record, marked
//     released, for a taker that counts attempts);
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

// ClaimRecord is what a claim's file holds. Attempt, Released and LastError serve claims
// that are taken again after they end and count how often (a work queue's items); the
// store's claims leave them empty.
type ClaimRecord struct {
	Name  string `json:"name"`
	Owner Owner  `json:"owner"`
	// Label says more of the owner, e.g. the Slurm array task (slurm-<job>_<task>).
	Label   string    `json:"label,omitempty"`
	Token   string    `json:"token"`
	Since   time.Time `json:"since"`
	Expires time.Time `json:"expires"`
	// Attempt is how often the name has been claimed, counting this claim (0: not counted).
	Attempt int `json:"attempt,omitempty"`
	// Released: the owner gave the claim back (GiveBack); LastError says why.
	Released  bool   `json:"released,omitempty"`
	LastError string `json:"last_error,omitempty"`
}

// Binds reports whether rec still holds others off at now, as seen from this process:
// not given back, its owner not known to be gone, its lease not run out.
func (rec ClaimRecord) Binds(now time.Time) bool {
	if rec.Released || rec.Owner.StateFrom(Self()) == OwnerGone {
		return false
	}
	return now.Before(rec.Expires)
}

// ClaimedError says who holds a claim.
type ClaimedError struct{ Held ClaimRecord }

func (e *ClaimedError) Error() string {
	return fmt.Sprintf("%s is claimed by %s until %s", e.Held.Name, e.Held.Owner, e.Held.Expires.UTC().Format(time.RFC3339))
}

func (e *ClaimedError) Unwrap() error { return ErrClaimed }

// ClaimDir is a folder of claims, one file each (Dir/<name>, name slash-separated like a
// ref name), taken, renewed and ended under one lock.
type ClaimDir struct {
	Dir string
	// Lock takes the lock every change of a claim is made under, and returns its release.
	Lock func() (unlock func(), err error)
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Write replaces a claim's file whole (nil: WriteBytes, mode 0644).
	Write func(path string, b []byte) error
	// Over, when set, reports (under the lock) that the work of claim name is over
	// though its file still names its holder (a work queue's item has its result):
	// renewing or ending the claim then finds it lost.
	Over func(name string) (bool, error)
}

func (d *ClaimDir) now() time.Time {
	if d.Now == nil {
		return time.Now()
	}
	return d.Now()
}

func (d *ClaimDir) path(name string) (string, error) {
	if err := CheckRefName(name); err != nil {
		return "", fmt.Errorf("claim: %w", err)
	}
	return filepath.Join(d.Dir, filepath.FromSlash(name)), nil
}

// Locked runs fn holding the folder's lock (for a caller that decides over several
// claims at once; see TakeLocked).
func (d *ClaimDir) Locked(fn func() error) error {
	unlock, err := d.Lock()
	if err != nil {
		return err
	}
	defer unlock()
	return fn()
}

// Read returns claim name's record; a missing or unreadable record is no claim.
func (d *ClaimDir) Read(name string) (ClaimRecord, bool) {
	p, err := d.path(name)
	if err != nil {
		return ClaimRecord{}, false
	}
	return readClaim(p)
}

func readClaim(p string) (ClaimRecord, bool) {
	var rec ClaimRecord
	b, err := os.ReadFile(p)
	if err != nil || json.Unmarshal(b, &rec) != nil {
		return rec, false
	}
	return rec, true
}

func (d *ClaimDir) write(p string, rec ClaimRecord) error {
	b, _ := json.Marshal(rec)
	b = append(b, '\n')
	var err error
	if d.Write != nil {
		err = d.Write(p, b)
	} else {
		err = WriteBytes(p, 0o644, b)
	}
	if err != nil {
		return fmt.Errorf("claim %s: %w", rec.Name, err)
	}
	return nil
}

// TryClaim claims rec.Name for rec.Owner (and the record's Label and Attempt) for lease,
// renewed every lease/3 until it ends. When a live owner holds it, it returns a
// *ClaimedError (errors.Is ErrClaimed).
func (d *ClaimDir) TryClaim(rec ClaimRecord, lease time.Duration) (c *Claim, err error) {
	err = d.Locked(func() error {
		c, err = d.TakeLocked(rec, lease)
		return err
	})
	return c, err
}

// TakeLocked is TryClaim for a caller that holds the folder's lock (Locked).
func (d *ClaimDir) TakeLocked(rec ClaimRecord, lease time.Duration) (*Claim, error) {
	p, err := d.path(rec.Name)
	if err != nil {
		return nil, err
	}
	if lease <= 0 {
		return nil, fmt.Errorf("claim %s: the lease must be positive", rec.Name)
	}
	now := d.now()
	if cur, ok := readClaim(p); ok && cur.Binds(now) {
		return nil, &ClaimedError{Held: cur}
	}
	tok := make([]byte, 12)
	rand.Read(tok)
	rec.Token, rec.Since, rec.Expires = hex.EncodeToString(tok), now.UTC(), now.Add(lease).UTC()
	rec.Released, rec.LastError = false, ""
	if err := d.write(p, rec); err != nil {
		return nil, err
	}
	c := &Claim{d: d, lease: lease, rec: rec, done: make(chan struct{}), lost: make(chan struct{})}
	go c.keep()
	return c, nil
}

// Held lists the claims whose names start with prefix and that still bind others.
func (d *ClaimDir) Held(prefix string) ([]ClaimRecord, error) {
	var out []ClaimRecord
	now := d.now()
	err := walkFiles(d.Dir, func(p string) error {
		rel, _ := filepath.Rel(d.Dir, p)
		if !strings.HasPrefix(filepath.ToSlash(rel), prefix) {
			return nil
		}
		if rec, ok := readClaim(p); ok && rec.Binds(now) {
			out = append(out, rec)
		}
		return nil
	})
	return out, err
}

// Claim is a held claim.
type Claim struct {
	d     *ClaimDir
	lease time.Duration

	mu       sync.Mutex
	rec      ClaimRecord
	done     chan struct{} // closed when the claim ends
	lost     chan struct{} // closed when a renewal finds the claim taken over
	lostOnce sync.Once
	released bool
}

// claims is the store's folder of claims, under the store's lock.
func (s *Store) claims() *ClaimDir {
	return &ClaimDir{Dir: filepath.Join(s.root, "claims"), Lock: s.lock, Now: func() time.Time { return s.now() }, Write: s.writeSmall}
}

// TryClaim claims name (slash-separated like a ref name, e.g. verify/<instance id>) for
// lease, renewed every lease/3 until Release. When a live owner holds it, it returns a
// *ClaimedError (errors.Is ErrClaimed).
func (s *Store) TryClaim(name string, lease time.Duration) (*Claim, error) {
	return s.claims().TryClaim(ClaimRecord{Name: name, Owner: Self()}, lease)
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

// Claims lists the claims whose names start with prefix and that still bind others.
func (s *Store) Claims(prefix string) ([]ClaimRecord, error) { return s.claims().Held(prefix) }

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
	select {
	case <-c.lost:
		return fmt.Errorf("%s: %w", c.rec.Name, ErrClaimLost)
	default:
	}
	if c.released {
		return fmt.Errorf("claim %s: already released", c.rec.Name)
	}
	return c.ifStillMine(func(p string) error {
		rec := c.rec
		rec.Expires = c.d.now().Add(c.lease).UTC()
		if err := c.d.write(p, rec); err != nil {
			return err
		}
		c.rec = rec
		return nil
	})
}

// Release ends the claim and removes its file. It returns ErrClaimLost when the claim
// had been taken over (the taker's claim is left alone). Ending a claim twice does
// nothing.
func (c *Claim) Release() error {
	return c.end(func(p string) error {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("release claim %s: %w", c.rec.Name, err)
		}
		return nil
	})
}

// GiveBack ends the claim and keeps its record, marked released with why, so that the
// next taker sees its attempt and why it ended. Otherwise as Release.
func (c *Claim) GiveBack(why string) error {
	return c.end(func(p string) error {
		rec := c.rec
		rec.Released, rec.LastError = true, why
		if err := c.d.write(p, rec); err != nil {
			return err
		}
		c.rec = rec
		return nil
	})
}

// Finish ends the claim by running fn under the folder's lock while the claim still
// holds (a work queue records the item's result); the record is left as it is, for fn's
// result to supersede. Otherwise as Release.
func (c *Claim) Finish(fn func() error) error {
	return c.end(func(string) error { return fn() })
}

// end stops the renewals and runs fn on the claim's file when the claim still holds.
func (c *Claim) end(fn func(p string) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.released {
		return nil
	}
	c.released = true
	close(c.done)
	return c.ifStillMine(fn)
}

// ifStillMine runs fn on the claim's file under the folder's lock when the file still
// holds this claim (and its work is not over); otherwise the claim is lost (Lost is
// closed, ErrClaimLost returned).
func (c *Claim) ifStillMine(fn func(p string) error) error {
	p, err := c.d.path(c.rec.Name)
	if err != nil {
		return err
	}
	return c.d.Locked(func() error {
		cur, ok := readClaim(p)
		mine := ok && cur.Token == c.rec.Token && !cur.Released
		if mine && c.d.Over != nil {
			over, err := c.d.Over(c.rec.Name)
			if err != nil {
				return err
			}
			mine = !over
		}
		if !mine {
			c.lostOnce.Do(func() { close(c.lost) })
			return fmt.Errorf("%s: %w", c.rec.Name, ErrClaimLost)
		}
		return fn(p)
	})
}
