// Package publish is envgap's one way of putting a folder it writes whole in place: the
// folder is written beside its final place, in a working folder named .<OUT>.<tag>-<random>,
// and published by one rename. A new folder is renamed to OUT; an existing OUT is swapped
// with the new folder in one step (renameat2 RENAME_EXCHANGE), so a kill at any moment
// leaves OUT as the old folder or the new one, never a mix and never nothing. The swapped-out
// old folder is then removed; whatever a killed writer left (.<OUT>.<tag>-*) is removed by
// the next one (Recover). On file systems without RENAME_EXCHANGE, OUT is first renamed to
// .<OUT>.<tag>-old-<time> and the new folder to OUT; a kill between the two leaves no OUT,
// and the next writer's Recover puts the old folder back before anything else.
//
// The Hub folder (export), the website (site) and the study's project folders (study run)
// are published this way.
package publish

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Folder is a folder written whole: Out, its final path, and Tag, the word that names its
// working folders beside it (".<base of Out>.<Tag>-*").
type Folder struct {
	Out string
	Tag string
}

// prefix is the name prefix of the folder's working folders beside Out.
func (f Folder) prefix() string { return "." + filepath.Base(f.Out) + "." + f.Tag + "-" }

// oldPrefix names an old folder set aside by the fallback publish.
func (f Folder) oldPrefix() string { return f.prefix() + "old-" }

// Lock takes an exclusive lock on the folder holding Out, so that two writers beside each
// other never remove one another's working folders; hold it from Recover to the end of
// Publish. The lock goes with the process (a killed writer holds none).
func (f Folder) Lock() (unlock func(), err error) {
	dir, err := os.Open(filepath.Dir(f.Out))
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(dir.Fd()), unix.LOCK_EX); err != nil {
		dir.Close()
		return nil, fmt.Errorf("locking %s: %w", dir.Name(), err)
	}
	return func() {
		unix.Flock(int(dir.Fd()), unix.LOCK_UN)
		dir.Close()
	}, nil
}

// Recover finishes what a killed writer left beside Out (call it under Lock): an old folder
// set aside with no Out in place goes back to Out, and every working folder goes.
func (f Folder) Recover() error {
	parent := filepath.Dir(f.Out)
	entries, err := os.ReadDir(parent)
	if err != nil {
		return err
	}
	var left, old []string
	for _, e := range entries {
		switch name := e.Name(); {
		case strings.HasPrefix(name, f.oldPrefix()):
			old = append(old, name)
		case strings.HasPrefix(name, f.prefix()):
			left = append(left, name)
		}
	}
	if _, err := os.Lstat(f.Out); errors.Is(err, fs.ErrNotExist) && len(old) > 0 {
		sort.Strings(old) // by the time in the name: the last one set aside was in Out
		last := old[len(old)-1]
		if err := os.Rename(filepath.Join(parent, last), f.Out); err != nil {
			return fmt.Errorf("putting back the folder a killed writer set aside (%s): %w", last, err)
		}
		old = old[:len(old)-1]
	}
	for _, name := range append(left, old...) {
		if err := os.RemoveAll(filepath.Join(parent, name)); err != nil {
			return fmt.Errorf("removing what a killed writer left: %w", err)
		}
	}
	return SyncDir(parent)
}

// Temp makes a new working folder beside Out (the folder holding Out must exist).
func (f Folder) Temp() (string, error) {
	return os.MkdirTemp(filepath.Dir(f.Out), f.prefix()+"*")
}

// Publish makes the finished folder tmp (on Out's file system: a Temp folder, or any folder
// a rename can move to Out) the folder Out in one step. tmp is left holding the old folder
// (or nothing) for the caller to remove.
func (f Folder) Publish(tmp string) error {
	out := f.Out
	if _, err := os.Lstat(out); errors.Is(err, fs.ErrNotExist) {
		if err := os.Rename(tmp, out); err != nil {
			return err
		}
		return SyncDir(filepath.Dir(out))
	}
	if err := SyncDir(tmp); err != nil {
		return err
	}
	err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, out, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		// No atomic exchange here: set the old folder aside, then put the new one in
		// place; Recover puts the old one back after a kill in between.
		old := filepath.Join(filepath.Dir(out), fmt.Sprintf("%s%020d", f.oldPrefix(), time.Now().UnixNano()))
		if err := os.Rename(out, old); err != nil {
			return err
		}
		if err := os.Rename(tmp, out); err != nil {
			return errors.Join(err, os.Rename(old, out))
		}
		err = os.Rename(old, tmp)
	}
	if err != nil {
		return err
	}
	return SyncDir(filepath.Dir(out))
}

// SyncDir makes the renames inside dir durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, unix.EINVAL) {
		return err
	}
	return nil
}
