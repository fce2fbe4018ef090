package data

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/envgap/envgap/schemas"
)

// ErrRefMoved is returned by CompareAndSetRef when the ref no longer points where the
// caller read it.
var ErrRefMoved = errors.New("ref was changed by another writer")

// lockFile is the store's write lock, at the top of the store directory.
const lockFile = "lock"

// lock takes the store's write lock: LockFile on DIR/lock. Each call opens the file anew,
// so two goroutines of one process exclude each other as two processes do.
func (s *Store) lock() (func(), error) {
	unlock, err := LockFile(filepath.Join(s.root, lockFile))
	if err != nil {
		return nil, fmt.Errorf("store lock: %w", err)
	}
	return unlock, nil
}

// LockFile takes an exclusive lock on the file at path (created when missing):
// flock(LOCK_EX), waiting for it, released by the returned function and by the kernel
// when the process dies. Each call opens the file anew, so two goroutines of one process
// exclude each other as two processes, or two machines sharing the filesystem, do. This
// is the one file lock of the project: the store's write lock and the work queue's lock.
func LockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w (the filesystem must support flock)", f.Name(), err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// Locked runs fn holding the store's write lock, which serialises every ref change, the
// ref log and claims across goroutines, processes and machines sharing the directory. fn
// reads and sets refs through tx (the Store's own SetRef would wait for the lock fn holds).
// Keep fn short: write objects before, and only decide and set refs inside.
func (s *Store) Locked(fn func(tx *Tx) error) error {
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	return fn(&Tx{s: s})
}

// Tx sets refs while the store's write lock is held (see Locked).
type Tx struct{ s *Store }

// Ref returns the digest ref name points at, or ErrNotFound.
func (tx *Tx) Ref(name string) (schemas.Digest, error) { return tx.s.Ref(name) }

// SetRef points ref name at d (which must be stored) and logs the change.
func (tx *Tx) SetRef(name string, d schemas.Digest) error { return tx.s.setRef(name, d) }

// SetRef points ref name at d, which must be stored. The change is logged. Concurrent
// writers are serialised by the store's lock; the last one wins.
func (s *Store) SetRef(name string, d schemas.Digest) error {
	if err := CheckRefName(name); err != nil {
		return err
	}
	if cur, err := s.Ref(name); err == nil && cur == d && s.Has(d) {
		return nil // already there: nothing to write or log, no lock to take
	}
	return s.Locked(func(tx *Tx) error { return tx.SetRef(name, d) })
}

// CompareAndSetRef points ref name at d only when it still points at old (the zero digest:
// only when it does not exist yet); otherwise it returns an error wrapping ErrRefMoved and
// changes nothing.
func (s *Store) CompareAndSetRef(name string, old, d schemas.Digest) error {
	if err := CheckRefName(name); err != nil {
		return err
	}
	return s.Locked(func(tx *Tx) error {
		cur, err := tx.Ref(name)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		if cur != old {
			return fmt.Errorf("set ref %s: it points at %s, not %s: %w", name, cur, old, ErrRefMoved)
		}
		return tx.SetRef(name, d)
	})
}
