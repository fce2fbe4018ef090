package jobs

import (
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
	"time"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/schemas"
)

// Plan is what a run's workers do: one command over items, in order.
type Plan struct {
	Kind    schemas.RecordKind `json:"kind"`
	Command string             `json:"command"` // verify, recheck, ...
	Items   []string           `json:"items"`
	// Args are the command's arguments as the workers need them (the caller's format).
	Args json.RawMessage `json:"args,omitempty"`
	// MaxAttempts bounds how often one item is claimed (default 2: a run and one redo).
	MaxAttempts int `json:"max_attempts"`
	// LeaseSeconds is how long a claim holds without renewal (default 60).
	LeaseSeconds int    `json:"lease_seconds"`
	CreatedAt    string `json:"created_at"`
}

// Lease returns the plan's lease duration.
func (p Plan) Lease() time.Duration { return time.Duration(p.LeaseSeconds) * time.Second }

// Owner names one worker process: the store's owner of a process (host, pid and process
// start, so that a dead process is recognised on its own machine at once, and a reused
// pid is not mistaken for it) and a random token, so two claims never compare equal.
type Owner struct {
	data.Owner
	Token string `json:"token"`
	// Label says which array task it is (slurm-<job>_<task>), or anything else useful.
	Label string `json:"label,omitempty"`
}

// NewOwner returns the owner of this process.
func NewOwner(label string) Owner {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return Owner{Owner: data.Self(), Token: hex.EncodeToString(b[:]), Label: label}
}

func (o Owner) String() string {
	if o.Label != "" {
		return o.Label + " (" + o.Owner.String() + ")"
	}
	return o.Owner.String()
}

// gone reports whether the owner is known to have exited: it ran on this machine and its
// process is gone.
func (o Owner) gone() bool { return o.Owner.StateFrom(data.Self()) == data.OwnerGone }

// Lease is the state of a claimed item (items/<n>.claim).
type Lease struct {
	Owner     Owner     `json:"owner"`
	Expires   time.Time `json:"expires"`
	Attempt   int       `json:"attempt"`
	Released  bool      `json:"released,omitempty"`
	LastError string    `json:"last_error,omitempty"`
}

// Claim is an item a worker holds.
type Claim struct {
	Index   int
	Item    string
	Attempt int
	Owner   Owner
}

// Done is an item's result (items/<n>.done).
type Done struct {
	Index    int       `json:"index"`
	Item     string    `json:"item"`
	Owner    Owner     `json:"owner"`
	Attempt  int       `json:"attempt"`
	Finished time.Time `json:"finished"`
	// Result is what the handler returned (the caller's format); nil when the item could
	// not be done, and then Error says why.
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}

var (
	// ErrNoWork: every item has a result.
	ErrNoWork = errors.New("no work left")
	// ErrWait: every item without a result is held by a live worker.
	ErrWait = errors.New("every item left is held by another worker")
	// ErrLost: the lease went to another worker (it expired) or the item is done.
	ErrLost = errors.New("the claim was lost to another worker")
)

// Claims is what a worker needs of a work queue: claim an item, keep it, give a result
// or give it back. Queue implements it in a folder; the store's own claims can too.
type Claims interface {
	Claim(owner Owner) (Claim, error)
	Renew(c Claim) error
	Finish(c Claim, result json.RawMessage, retry string) error
	Release(c Claim, why string) error
}

// Queue is a work queue in a folder of the shared store (see the package documentation).
type Queue struct {
	dir  string
	plan Plan
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Create makes a new queue in dir, which must not exist yet.
func Create(dir string, p Plan) (*Queue, error) {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 2
	}
	if p.LeaseSeconds <= 0 {
		p.LeaseSeconds = 60
	}
	if p.Kind == "" {
		p.Kind = schemas.KindWorkPlan
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("work folder: %w", err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("work folder: %w", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "items"), 0o755); err != nil {
		return nil, fmt.Errorf("work folder: %w", err)
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeFile(dir, "plan.json", b); err != nil {
		return nil, fmt.Errorf("work folder: %w", err)
	}
	return &Queue{dir: dir, plan: p, Now: time.Now}, nil
}

// OpenQueue opens the queue in dir.
func OpenQueue(dir string) (*Queue, error) {
	b, err := os.ReadFile(filepath.Join(dir, "plan.json"))
	if err != nil {
		return nil, fmt.Errorf("work folder %s: %w", dir, err)
	}
	var p Plan
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("work folder %s: plan.json: %w", dir, err)
	}
	if p.Kind != schemas.KindWorkPlan || p.MaxAttempts <= 0 || p.LeaseSeconds <= 0 {
		return nil, fmt.Errorf("work folder %s: plan.json is not a work plan", dir)
	}
	return &Queue{dir: dir, plan: p, Now: time.Now}, nil
}

// Dir returns the queue's folder.
func (q *Queue) Dir() string { return q.dir }

// Plan returns the queue's plan.
func (q *Queue) Plan() Plan { return q.plan }

// writeFile writes name in dir whole (data.WriteFile: a temporary file, synced, renamed
// into place, the directory synced), readable by its owner only.
func writeFile(dir, name string, b []byte) error {
	return data.WriteBytes(filepath.Join(dir, name), 0o600, b)
}

// lock takes the queue's lock (data.LockFile on <dir>/lock) and returns its release.
func (q *Queue) lock() (func(), error) {
	unlock, err := data.LockFile(filepath.Join(q.dir, "lock"))
	if err != nil {
		return nil, fmt.Errorf("work queue lock: %w", err)
	}
	return unlock, nil
}

func (q *Queue) itemsDir() string { return filepath.Join(q.dir, "items") }

// scan lists which items have a lease file and which a result.
func (q *Queue) scan() (claimed, done map[int]bool, err error) {
	ents, err := os.ReadDir(q.itemsDir())
	if err != nil {
		return nil, nil, fmt.Errorf("work queue: %w", err)
	}
	claimed, done = map[int]bool{}, map[int]bool{}
	for _, e := range ents {
		name := e.Name()
		base, ext, ok := strings.Cut(name, ".")
		n, err := strconv.Atoi(base)
		if !ok || err != nil || n < 0 || n >= len(q.plan.Items) {
			continue
		}
		switch ext {
		case "claim":
			claimed[n] = true
		case "done":
			done[n] = true
		}
	}
	return claimed, done, nil
}

func (q *Queue) readLease(n int) (Lease, error) {
	var l Lease
	b, err := os.ReadFile(filepath.Join(q.itemsDir(), fmt.Sprintf("%d.claim", n)))
	if err != nil {
		return l, fmt.Errorf("work queue: %w", err)
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return l, fmt.Errorf("work queue: item %d's lease: %w", n, err)
	}
	return l, nil
}

func (q *Queue) writeLease(n int, l Lease) error {
	b, _ := json.Marshal(l)
	if err := writeFile(q.itemsDir(), fmt.Sprintf("%d.claim", n), b); err != nil {
		return fmt.Errorf("work queue: %w", err)
	}
	return nil
}

func (q *Queue) writeDone(d Done) error {
	b, _ := json.Marshal(d)
	if err := writeFile(q.itemsDir(), fmt.Sprintf("%d.done", d.Index), b); err != nil {
		return fmt.Errorf("work queue: %w", err)
	}
	return nil
}

// Claim gives owner the first item that has no result and no live lease: never claimed,
// released, or whose lease expired or whose owner is gone. An item claimed MaxAttempts
// times already is finished with an error instead. It returns ErrNoWork when every item
// has a result and ErrWait when the rest are held by live workers.
func (q *Queue) Claim(owner Owner) (Claim, error) {
	unlock, err := q.lock()
	if err != nil {
		return Claim{}, err
	}
	defer unlock()
	claimed, done, err := q.scan()
	if err != nil {
		return Claim{}, err
	}
	now := q.Now()
	held := false
	for n, item := range q.plan.Items {
		if done[n] {
			continue
		}
		attempt := 1
		if claimed[n] {
			l, err := q.readLease(n)
			if err != nil {
				return Claim{}, err
			}
			free := l.Released
			why := l.LastError
			if !free && (now.After(l.Expires) || l.Owner.gone()) {
				free = true
				why = fmt.Sprintf("its worker %s stopped while holding it (killed, node lost or out of time)", l.Owner)
			}
			if !free {
				held = true
				continue
			}
			if l.Attempt >= q.plan.MaxAttempts {
				d := Done{Index: n, Item: item, Owner: l.Owner, Attempt: l.Attempt, Finished: now,
					Error: fmt.Sprintf("not done after %d attempts: %s", l.Attempt, why)}
				if err := q.writeDone(d); err != nil {
					return Claim{}, err
				}
				continue
			}
			attempt = l.Attempt + 1
		}
		if err := q.writeLease(n, Lease{Owner: owner, Expires: now.Add(q.plan.Lease()), Attempt: attempt}); err != nil {
			return Claim{}, err
		}
		return Claim{Index: n, Item: item, Attempt: attempt, Owner: owner}, nil
	}
	if held {
		return Claim{}, ErrWait
	}
	return Claim{}, ErrNoWork
}

// held checks, under the lock, that c's owner still holds its item.
func (q *Queue) held(c Claim) (Lease, error) {
	if _, err := os.Stat(filepath.Join(q.itemsDir(), fmt.Sprintf("%d.done", c.Index))); err == nil {
		return Lease{}, ErrLost
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Lease{}, fmt.Errorf("work queue: %w", err)
	}
	l, err := q.readLease(c.Index)
	if err != nil {
		return l, err
	}
	if l.Owner.Token != c.Owner.Token || l.Attempt != c.Attempt || l.Released {
		return l, ErrLost
	}
	return l, nil
}

// update runs fn under the lock with c's lease, when c still holds its item (else
// ErrLost).
func (q *Queue) update(c Claim, fn func(l Lease) error) error {
	unlock, err := q.lock()
	if err != nil {
		return err
	}
	defer unlock()
	l, err := q.held(c)
	if err != nil {
		return err
	}
	return fn(l)
}

// Renew extends c's lease by the plan's lease duration; ErrLost when it is no longer held.
func (q *Queue) Renew(c Claim) error {
	return q.update(c, func(l Lease) error {
		l.Expires = q.Now().Add(q.plan.Lease())
		return q.writeLease(c.Index, l)
	})
}

// Finish records c's result. With retry set (an infrastructure fault here, in words)
// and attempts left, the item is given back for another worker instead, and the result
// is dropped. ErrLost when c is no longer held.
func (q *Queue) Finish(c Claim, result json.RawMessage, retry string) error {
	return q.update(c, func(l Lease) error {
		if retry != "" && c.Attempt < q.plan.MaxAttempts {
			l.Released, l.LastError = true, retry
			return q.writeLease(c.Index, l)
		}
		return q.writeDone(Done{Index: c.Index, Item: c.Item, Owner: c.Owner, Attempt: c.Attempt, Finished: q.Now(), Result: result})
	})
}

// Release gives c back (the worker is stopping); its attempt still counts.
func (q *Queue) Release(c Claim, why string) error {
	return q.update(c, func(l Lease) error {
		l.Released, l.LastError = true, why
		return q.writeLease(c.Index, l)
	})
}

// Results reads the results not yet in have (indexed like the plan's items; nil for none)
// and returns have with them filled in, and the indexes that are new.
func (q *Queue) Results(have []*Done) ([]*Done, []int, error) {
	if have == nil {
		have = make([]*Done, len(q.plan.Items))
	}
	_, done, err := q.scan()
	if err != nil {
		return have, nil, err
	}
	var fresh []int
	for n := range q.plan.Items {
		if !done[n] || have[n] != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(q.itemsDir(), fmt.Sprintf("%d.done", n)))
		if err != nil {
			return have, fresh, fmt.Errorf("work queue: %w", err)
		}
		var d Done
		if err := json.Unmarshal(b, &d); err != nil {
			return have, fresh, fmt.Errorf("work queue: item %d's result: %w", n, err)
		}
		have[n] = &d
		fresh = append(fresh, n)
	}
	return have, fresh, nil
}

// Leases returns every lease of items without a result, by item index (for progress and
// tests: who holds what).
func (q *Queue) Leases() (map[int]Lease, error) {
	claimed, done, err := q.scan()
	if err != nil {
		return nil, err
	}
	out := map[int]Lease{}
	for n := range claimed {
		if done[n] {
			continue
		}
		l, err := q.readLease(n)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, err
		}
		out[n] = l
	}
	return out, nil
}
