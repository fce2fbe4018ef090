package jobs

import (
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

// Owner names one worker: the store's owner of its process (host, pid and process start,
// so that a dead process is recognised on its own machine at once, and a reused pid is
// not mistaken for it) and a label. Each claim it takes has its own token (in the
// claim's record), so two workers of one process never hold one claim.
type Owner struct {
	data.Owner
	// Label says which array task it is (slurm-<job>_<task>), or anything else useful.
	Label string `json:"label,omitempty"`
}

// NewOwner returns the owner of this process.
func NewOwner(label string) Owner { return Owner{Owner: data.Self(), Label: label} }

func (o Owner) String() string {
	if o.Label != "" {
		return o.Label + " (" + o.Owner.String() + ")"
	}
	return o.Owner.String()
}

// Lease is the state of a claimed item (items/<n>.claim): the store's claim record
// (data.ClaimRecord: owner and label, token, expiry, attempt, released, last error).
type Lease = data.ClaimRecord

// holder is the worker a lease names.
func holder(l Lease) Owner { return Owner{Owner: l.Owner, Label: l.Label} }

// Claim is an item a worker holds.
type Claim struct {
	Index   int
	Item    string
	Attempt int
	Owner   Owner
	// Lease is the item's claim, renewed by itself while held (nil from a Claims without
	// leases).
	Lease *data.Claim
}

// Lost is closed when the claim went to another worker (its lease was not renewed in
// time) or the item got a result meanwhile.
func (c Claim) Lost() <-chan struct{} {
	if c.Lease == nil {
		return nil
	}
	return c.Lease.Lost()
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

// Claims is what a worker needs of a work queue: claim an item (which keeps itself while
// held: Claim.Lost), give a result or give it back. Queue implements it in a folder.
type Claims interface {
	Claim(owner Owner) (Claim, error)
	Finish(c Claim, result json.RawMessage, retry string) error
	Release(c Claim, why string) error
}

// Queue is a work queue in a folder of the shared store (see the package documentation).
type Queue struct {
	dir  string
	plan Plan
	// Now is the clock (default time.Now).
	Now func() time.Time
	// claims are the items' leases, items/<n>.claim, under the folder's lock.
	claims *data.ClaimDir
}

// open returns the queue of dir with plan p.
func open(dir string, p Plan) *Queue {
	q := &Queue{dir: dir, plan: p, Now: time.Now}
	q.claims = &data.ClaimDir{Dir: q.itemsDir(), Lock: q.lock, Now: func() time.Time { return q.Now() },
		Write: func(p string, b []byte) error { return data.WriteBytes(p, 0o600, b) },
		Over: func(name string) (bool, error) {
			_, err := os.Stat(filepath.Join(q.itemsDir(), strings.TrimSuffix(name, ".claim")+".done"))
			if errors.Is(err, fs.ErrNotExist) {
				return false, nil
			}
			return err == nil, err
		}}
	return q
}

func claimName(n int) string { return fmt.Sprintf("%d.claim", n) }

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
	return open(dir, p), nil
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
	return open(dir, p), nil
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

// readLease reads item n's lease, which scan found.
func (q *Queue) readLease(n int) (Lease, error) {
	l, ok := q.claims.Read(claimName(n))
	if !ok {
		return l, fmt.Errorf("work queue: item %d's lease cannot be read", n)
	}
	return l, nil
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
	var got *Claim
	held := false
	err := q.claims.Locked(func() error {
		claimed, done, err := q.scan()
		if err != nil {
			return err
		}
		now := q.Now()
		for n, item := range q.plan.Items {
			if done[n] {
				continue
			}
			attempt := 1
			if claimed[n] {
				l, err := q.readLease(n)
				if err != nil {
					return err
				}
				if l.Binds(now) {
					held = true
					continue
				}
				why := l.LastError
				if !l.Released {
					why = fmt.Sprintf("its worker %s stopped while holding it (killed, node lost or out of time)", holder(l))
				}
				if l.Attempt >= q.plan.MaxAttempts {
					d := Done{Index: n, Item: item, Owner: holder(l), Attempt: l.Attempt, Finished: now,
						Error: fmt.Sprintf("not done after %d attempts: %s", l.Attempt, why)}
					if err := q.writeDone(d); err != nil {
						return err
					}
					continue
				}
				attempt = l.Attempt + 1
			}
			lease, err := q.claims.TakeLocked(data.ClaimRecord{Name: claimName(n), Owner: owner.Owner, Label: owner.Label, Attempt: attempt}, q.plan.Lease())
			if err != nil {
				return fmt.Errorf("work queue: %w", err)
			}
			got = &Claim{Index: n, Item: item, Attempt: attempt, Owner: owner, Lease: lease}
			return nil
		}
		return nil
	})
	switch {
	case err != nil:
		return Claim{}, err
	case got != nil:
		return *got, nil
	case held:
		return Claim{}, ErrWait
	}
	return Claim{}, ErrNoWork
}

// lost turns the lease's ErrClaimLost into ErrLost.
func lost(err error) error {
	if errors.Is(err, data.ErrClaimLost) {
		return ErrLost
	}
	return err
}

// Renew extends c's lease by the plan's lease duration now (the lease renews itself every
// third of it meanwhile); ErrLost when it is no longer held.
func (q *Queue) Renew(c Claim) error { return lost(c.Lease.Renew()) }

// Finish records c's result. With retry set (an infrastructure fault here, in words)
// and attempts left, the item is given back for another worker instead, and the result
// is dropped. ErrLost when c is no longer held.
func (q *Queue) Finish(c Claim, result json.RawMessage, retry string) error {
	if retry != "" && c.Attempt < q.plan.MaxAttempts {
		return lost(c.Lease.GiveBack(retry))
	}
	return lost(c.Lease.Finish(func() error {
		return q.writeDone(Done{Index: c.Index, Item: c.Item, Owner: c.Owner, Attempt: c.Attempt, Finished: q.Now(), Result: result})
	}))
}

// Release gives c back (the worker is stopping); its attempt still counts.
func (q *Queue) Release(c Claim, why string) error { return lost(c.Lease.GiveBack(why)) }

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
		if l, ok := q.claims.Read(claimName(n)); ok {
			out[n] = l
		}
	}
	return out, nil
}
