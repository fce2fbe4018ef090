package export

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

// An export is written into a sibling folder .<OUT>.export-<random> and published by one
// rename: a new folder is renamed to OUT; an existing OUT is swapped with the new folder
// in one step (renameat2 RENAME_EXCHANGE), so a kill at any moment leaves OUT as the old
// release or the new one, never a mix. The swapped-out old release is then removed;
// whatever a killed export left (.<OUT>.export-*) is removed by the next one. On file
// systems without RENAME_EXCHANGE, OUT is first renamed to .<OUT>.export-old-<time> and
// the new folder to OUT; a kill between the two leaves no OUT, and the next export puts
// the old release back before anything else.

// leftoverPrefix is the name prefix of an export's working folders beside out.
func leftoverPrefix(out string) string { return "." + filepath.Base(out) + ".export-" }

// oldPrefix names an old release set aside by the fallback publish.
func oldPrefix(out string) string { return leftoverPrefix(out) + "old-" }

// lockExports takes an exclusive lock on the folder holding out for the whole export, so
// that two exports beside each other never remove one another's working folders. The lock
// goes with the process (a killed export holds none).
func lockExports(out string) (unlock func(), err error) {
	dir, err := os.Open(filepath.Dir(out))
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

// recoverOut finishes what a killed export left beside out (under lockExports): an old
// release set aside with no OUT in place goes back to OUT, and every working folder goes.
func recoverOut(out string) error {
	parent := filepath.Dir(out)
	entries, err := os.ReadDir(parent)
	if err != nil {
		return err
	}
	var left, old []string
	for _, e := range entries {
		switch name := e.Name(); {
		case strings.HasPrefix(name, oldPrefix(out)):
			old = append(old, name)
		case strings.HasPrefix(name, leftoverPrefix(out)):
			left = append(left, name)
		}
	}
	if _, err := os.Lstat(out); errors.Is(err, fs.ErrNotExist) && len(old) > 0 {
		sort.Strings(old) // by the time in the name: the last one set aside was in OUT
		last := old[len(old)-1]
		if err := os.Rename(filepath.Join(parent, last), out); err != nil {
			return fmt.Errorf("putting back the release a killed export set aside (%s): %w", last, err)
		}
		old = old[:len(old)-1]
	}
	for _, name := range append(left, old...) {
		if err := os.RemoveAll(filepath.Join(parent, name)); err != nil {
			return fmt.Errorf("removing what a killed export left: %w", err)
		}
	}
	return syncDir(parent)
}

// publish makes the finished export in tmp the folder out in one step. Files of out that
// the export does not own (a maintainer's LICENSE.md, say) are carried over into tmp
// first. tmp is left holding the old release (or nothing) for the caller to remove.
func publish(tmp, out string) error {
	if _, err := os.Lstat(out); errors.Is(err, fs.ErrNotExist) {
		if err := os.Rename(tmp, out); err != nil {
			return err
		}
		return syncDir(filepath.Dir(out))
	}
	if err := carryOver(out, tmp, ownedPaths()); err != nil {
		return fmt.Errorf("keeping the files of %s that export does not own: %w", out, err)
	}
	if err := syncDir(tmp); err != nil {
		return err
	}
	err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, out, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		// No atomic exchange here: set the old release aside, then put the new one in
		// place; recoverOut puts the old one back after a kill in between.
		old := filepath.Join(filepath.Dir(out), fmt.Sprintf("%s%020d", oldPrefix(out), time.Now().UnixNano()))
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
	return syncDir(filepath.Dir(out))
}

// carryOver links (or copies) into tmp every entry of out that is not one of the owned
// paths (slash-separated, relative) and that tmp does not have.
func carryOver(out, tmp string, owned []string) error {
	isOwned := func(rel string) bool {
		for _, o := range owned {
			if rel == o || strings.HasPrefix(rel, o+"/") {
				return true
			}
		}
		return false
	}
	return filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(out, p)
		if err != nil || rel == "." {
			return err
		}
		if isOwned(filepath.ToSlash(rel)) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		dst := filepath.Join(tmp, rel)
		if _, err := os.Lstat(dst); err == nil {
			return nil // the new release has it (a folder such as data/): look inside
		}
		switch {
		case d.IsDir():
			return os.Mkdir(dst, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, dst)
		default:
			if os.Link(p, dst) == nil {
				return nil
			}
			return copyFile(p, dst)
		}
	})
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return writeSmallFile(dst, b)
}

// syncDir makes the renames inside dir durable.
func syncDir(dir string) error {
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
