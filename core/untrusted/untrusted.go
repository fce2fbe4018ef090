// Package untrusted reads and writes files that an untrusted process (an agent, a box)
// could have made or replaced, in a folder the harness owns: the run directory of an
// agent, a study turn's folders, a project folder read into a container run.
//
// A file there is data, never a path to follow. Every component of a name is opened
// relative to the folder without following links (a check before the open would be a
// race), and a file is read only when it is a regular file with one link, no larger than
// the caller's bound, through a reader limited to that bound: a symbolic link (to a host
// file, to /dev/zero), a hard link, a FIFO, a device, a socket, a directory, or a file
// over the bound (a sparse 1 TiB file says so) is refused with an *Error that names the
// file and what it is, and nothing of it is read. Opening never blocks (O_NONBLOCK: a
// FIFO without a writer is refused, not waited on). A write replaces what is at the name
// (a link, a FIFO, a file) by a new regular file, through a temporary file renamed over
// it, so nothing is written through a link.
//
// It imports nothing of envgap, so the evaluation core may use it.
package untrusted

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrUnsafe marks every *Error (errors.Is).
var ErrUnsafe = errors.New("not a plain file")

// Error is a file that is not read or written: Path is its name as the caller gave it
// (relative to the folder), Why says what it is ("is a symbolic link to /etc/passwd").
type Error struct {
	Path string
	Why  string
}

func (e *Error) Error() string { return e.Path + " " + e.Why }

// Is makes errors.Is(err, ErrUnsafe) true.
func (e *Error) Is(target error) bool { return target == ErrUnsafe }

// Options loosen what ReadFile accepts.
type Options struct {
	// HardLinks accepts a regular file with more than one link (a project folder a
	// person gave, where a package manager may have linked files; never a file an agent
	// could have linked).
	HardLinks bool
}

// ReadFile reads the file name (slash-separated, relative) in dir: a regular file with
// one link and at most max bytes, opened without following any link. A missing file is
// an error that wraps fs.ErrNotExist; anything else that is not such a file is an *Error.
func ReadFile(dir, name string, max int64) ([]byte, error) {
	return ReadFileWith(dir, name, max, Options{})
}

// ReadFileWith is ReadFile with options.
func ReadFileWith(dir, name string, max int64, o Options) ([]byte, error) {
	f, err := open(dir, name, max, o)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if int64(len(b)) > max {
		return nil, &Error{name, fmt.Sprintf("grew past %d bytes while it was read", max)}
	}
	return b, nil
}

// open opens name in dir for reading and checks what it is.
func open(dir, name string, max int64, o Options) (*os.File, error) {
	parent, last, err := openParent(dir, name, false)
	if err != nil {
		return nil, err
	}
	defer unix.Close(parent)
	// A look before the open keeps a device or a FIFO from being opened at all; the
	// check after it (on what was opened) is the one that counts.
	var st unix.Stat_t
	if err := unix.Fstatat(parent, last, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil && uint32(st.Mode)&unix.S_IFMT != unix.S_IFLNK {
		if why := check(&st, max, o); why != "" {
			return nil, &Error{name, why}
		}
	}
	fd, err := openat(parent, last, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, describe(parent, name, last, err)
	}
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if why := check(&st, max, o); why != "" {
		unix.Close(fd)
		return nil, &Error{name, why}
	}
	return os.NewFile(uintptr(fd), path.Join(dir, name)), nil
}

// check says why st is not a file to read with bound max ("" when it is).
func check(st *unix.Stat_t, max int64, o Options) string {
	switch uint32(st.Mode) & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFIFO:
		return "is a FIFO (a named pipe), not a regular file"
	case unix.S_IFCHR, unix.S_IFBLK:
		return "is a device, not a regular file"
	case unix.S_IFSOCK:
		return "is a socket, not a regular file"
	case unix.S_IFDIR:
		return "is a directory, not a regular file"
	default:
		return "is not a regular file"
	}
	if n := uint64(st.Nlink); n > 1 && !o.HardLinks {
		return fmt.Sprintf("has %d hard links (a hard link to another file); write a file, not a link", n)
	}
	if st.Size > max {
		if disk := int64(st.Blocks) * 512; disk < st.Size {
			return fmt.Sprintf("is a sparse file of %d bytes (%d on disk), over the bound of %d bytes", st.Size, disk, max)
		}
		return fmt.Sprintf("is %d bytes, over the bound of %d bytes", st.Size, max)
	}
	return ""
}

// describe turns a failed open of last (name in the caller's words) into an error.
func describe(parent int, name, last string, err error) error {
	switch {
	case errors.Is(err, unix.ENOENT):
		return &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EMLINK):
		why := "is a symbolic link"
		if target, rerr := readlinkat(parent, last); rerr == nil {
			why += " to " + target
		}
		return &Error{name, why + "; write a file, not a link"}
	case errors.Is(err, unix.ENXIO):
		return &Error{name, "is a FIFO or a socket, not a regular file"}
	case errors.Is(err, unix.EISDIR):
		return &Error{name, "is a directory, not a regular file"}
	}
	return fmt.Errorf("opening %s: %w", name, err)
}

// openParent opens the folder that holds name in dir, each component without following
// a link; with mkdir, missing folders are made (0o755). It returns the folder's
// descriptor and name's last component.
func openParent(dir, name string, mkdir bool) (int, string, error) {
	if !fs.ValidPath(name) || name == "." {
		return -1, "", fmt.Errorf("%q is not a relative slash-separated path inside its folder", name)
	}
	fd, err := openat(unix.AT_FDCWD, dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, "", fmt.Errorf("opening %s: %w", dir, err)
	}
	parts := strings.Split(name, "/")
	for i, p := range parts[:len(parts)-1] {
		next, err := openat(fd, p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) && mkdir {
			if err = unix.Mkdirat(fd, p, 0o755); err == nil || errors.Is(err, unix.EEXIST) {
				next, err = openat(fd, p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			}
		}
		if err != nil {
			at := strings.Join(parts[:i+1], "/")
			unix.Close(fd)
			switch {
			case errors.Is(err, unix.ENOENT):
				return -1, "", &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
			case errors.Is(err, unix.ELOOP), errors.Is(err, unix.ENOTDIR), errors.Is(err, unix.EMLINK):
				return -1, "", &Error{name, "goes through " + at + ", which is a symbolic link or not a directory"}
			}
			return -1, "", fmt.Errorf("opening %s: %w", at, err)
		}
		unix.Close(fd)
		fd = next
	}
	return fd, parts[len(parts)-1], nil
}

// WriteFile writes b as the file name (slash-separated, relative) in dir with perm, making
// missing folders on its way (never through a link). Whatever is at name (a file, a link,
// a FIFO) is replaced, not written through: b goes to a temporary file in the same
// folder, which is renamed over name. A directory at name, or a link on the way, is an
// *Error.
func WriteFile(dir, name string, b []byte, perm fs.FileMode) error {
	return write(dir, name, b, perm, false)
}

// UpdateFile is WriteFile for a file whose mode is its owner's: an existing regular file
// at name keeps its permission bits (perm is for a new one).
func UpdateFile(dir, name string, b []byte, perm fs.FileMode) error {
	return write(dir, name, b, perm, true)
}

func write(dir, name string, b []byte, perm fs.FileMode, keepMode bool) error {
	parent, last, err := openParent(dir, name, true)
	if err != nil {
		return err
	}
	defer unix.Close(parent)
	var st unix.Stat_t
	if err := unix.Fstatat(parent, last, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil {
		switch uint32(st.Mode) & unix.S_IFMT {
		case unix.S_IFDIR:
			return &Error{name, "is a directory, not a regular file"}
		case unix.S_IFREG:
			if keepMode {
				perm = fs.FileMode(st.Mode) & fs.ModePerm
			}
		}
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := "." + last + ".tmp-" + hex.EncodeToString(rnd[:])
	fd, err := openat(parent, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), path.Join(dir, tmp))
	_, werr := f.Write(b)
	if werr == nil {
		werr = f.Chmod(perm.Perm()) // the umask took bits of a kept mode
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = unix.Renameat(parent, tmp, parent, last)
	}
	if werr != nil {
		unix.Unlinkat(parent, tmp, 0)
		if errors.Is(werr, unix.EISDIR) || errors.Is(werr, unix.ENOTEMPTY) || errors.Is(werr, unix.EEXIST) {
			return &Error{name, "is a directory, not a regular file"}
		}
		return fmt.Errorf("writing %s: %w", name, werr)
	}
	return nil
}

// RemoveAll removes name in dir and everything under it, following no link (a link is
// removed, not what it points at). A missing name is not an error.
func RemoveAll(dir, name string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	return root.RemoveAll(name)
}

func openat(dirfd int, name string, flags int, perm uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, perm)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func readlinkat(dirfd int, name string) (string, error) {
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(dirfd, name, buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}
