package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/system"
	"golang.org/x/sys/unix"
)

// User namespaces. Every sandbox container runs in one where the engine can do it, so that
// its root is not the host's root (a process that escapes the container, or reaches a host
// file through a mount, is an unprivileged user of the host):
//
//   - Podman: UsernsMode "auto:size=65536", each container its own range of the host's
//     subordinate ids of the user "containers" (/etc/subuid, /etc/subgid; written by
//     images/setup-engine.sh). 65536 ids, not Podman's default 65534, so that nogroup
//     (65534, apt's privilege drop) is mapped too.
//   - A Docker daemon started with userns-remap (its Info's security options hold
//     name=userns): every container is in the daemon's namespace already; nothing to ask.
//   - Otherwise (a Docker daemon without it, a Podman without subordinate ids) the
//     containers run without one: container root is host root. The engine's mode is found
//     when Connect opens it (Podman by its ping's headers, a Docker daemon's remap by its
//     Info; kept for the process), Podman's lack of subordinate ids by the first create
//     that asks for them; runs record the mode (Result.UserNS).
//
// A box's read-write mounts are host directories owned by host root, which the container's
// root does not own (and, in a user namespace, cannot override): once the box started,
// what is mounted writable is given to the container's root (the host ids its 0 maps to,
// read from /proc/<pid>/uid_map and gid_map), without following links or leaving the
// mount's filesystem; Box.Own does the same for files the harness writes there while the
// box is open. Read-only mounts must be readable by others (their root is checked).

// The user namespace modes of Result.UserNS and UserNS.Mode.
const (
	UserNSAuto  = "auto"  // Podman: the container's own range of subordinate ids
	UserNSRemap = "remap" // a Docker daemon's userns-remap: the daemon's one range
	UserNSNone  = "none"  // no user namespace: container root is host root
)

// usernsAuto is what a Podman container is created with.
const usernsAuto = "auto:size=65536"

// UserNS is what an engine does for its containers' users.
type UserNS struct {
	Mode string `json:"mode"` // UserNSAuto, UserNSRemap or UserNSNone
	// Why says why there is none ("" when there is one).
	Why string `json:"why,omitempty"`
}

// usernsCache keeps each engine's mode (by host) for this process: Connect asks once, and
// a Podman found without subordinate ids is not asked for them again.
var usernsCache sync.Map

// UserNS returns the user namespace mode of the engine's containers (what Connect found,
// or what the first create found of Podman's subordinate ids).
func (e *Engine) UserNS() UserNS {
	e.usernsMu.Lock()
	defer e.usernsMu.Unlock()
	return e.userns
}

// detectUserNS finds the engine's mode (Podman, or a Docker daemon's userns-remap in its
// security options) and what it means for a box's mounts (Podman's nosuid,nodev).
func (e *Engine) detectUserNS(ctx context.Context) error {
	podman, err := e.askPodman(ctx)
	if err != nil {
		return err
	}
	e.bindMu.Lock()
	e.bindKnown, e.bindOpts = true, ""
	if podman {
		e.bindOpts = ",nosuid,nodev"
	}
	e.bindMu.Unlock()
	e.usernsMu.Lock()
	e.podman = podman
	e.usernsMu.Unlock()
	if c, ok := usernsCache.Load(e.host); ok {
		e.userns = c.(UserNS)
		return nil
	}
	if podman {
		e.userns = UserNS{Mode: UserNSAuto}
		usernsCache.Store(e.host, e.userns)
		return nil
	}
	var info system.Info
	if err := e.call(ctx, maxCallTimeout, time.Time{}, "asking the engine's security options", func(ctx context.Context) (err error) {
		info, err = e.cli.Info(ctx)
		return err
	}); err != nil {
		return err
	}
	remap := false
	for _, o := range info.SecurityOptions {
		for _, kv := range strings.Split(o, ",") {
			if kv == "name=userns" {
				remap = true
			}
		}
	}
	switch {
	case remap:
		e.userns = UserNS{Mode: UserNSRemap}
	default:
		e.userns = UserNS{Mode: UserNSNone, Why: fmt.Sprintf("the Docker daemon at %s runs without userns-remap (start it with --userns-remap=default for one)", e.host)}
	}
	usernsCache.Store(e.host, e.userns)
	return nil
}

// askPodman reports whether the engine is Podman: for one on this host, from the headers
// of its answer to a ping (Libpod-Api-Version; under a millisecond, where Podman's version
// takes 0.4 to 0.8 s on a busy host), else from its version's components.
func (e *Engine) askPodman(ctx context.Context) (bool, error) {
	if u, err := url.Parse(e.cli.DaemonHost()); err == nil && u.Scheme == "unix" {
		var podman bool
		err := e.call(ctx, maxCallTimeout, time.Time{}, "pinging the engine", func(ctx context.Context) error {
			resp, err := e.engineGet(ctx, "/_ping")
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("ping: HTTP %d", resp.StatusCode)
			}
			podman = resp.Header.Get("Libpod-Api-Version") != ""
			return nil
		})
		return podman, err
	}
	var v types.Version
	if err := e.call(ctx, maxCallTimeout, time.Time{}, "asking the engine's version", func(ctx context.Context) (err error) {
		v, err = e.cli.ServerVersion(ctx)
		return err
	}); err != nil {
		return false, err
	}
	for _, c := range v.Components {
		if strings.Contains(c.Name, "Podman") {
			return true, nil
		}
	}
	return false, nil
}

// usernsMode is the mode a container is created with now.
func (e *Engine) usernsMode() string {
	e.usernsMu.Lock()
	defer e.usernsMu.Unlock()
	if e.userns.Mode == "" {
		return UserNSNone
	}
	return e.userns.Mode
}

// noSubordinateIDs reports whether err is Podman's refusal of UsernsMode auto for want of
// subordinate ids, and if so keeps that for this engine: its containers go without.
func (e *Engine) noSubordinateIDs(err error) bool {
	if err == nil || !strings.Contains(err.Error(), "cannot find mappings for user") {
		return false
	}
	u := UserNS{Mode: UserNSNone, Why: fmt.Sprintf("Podman at %s has no subordinate ids for its containers (/etc/subuid and /etc/subgid: run images/setup-engine.sh, which adds them): %v", e.host, err)}
	e.usernsMu.Lock()
	e.userns = u
	e.usernsMu.Unlock()
	usernsCache.Store(e.host, u)
	return true
}

// isPodman reports whether the engine is Podman (its version's components say so).
func (e *Engine) isPodman() bool {
	e.usernsMu.Lock()
	defer e.usernsMu.Unlock()
	return e.podman
}

// podmanIDMaps asks Podman (its own API: the Docker API does not say) for the id maps of
// a created container.
func (e *Engine) podmanIDMaps(ctx context.Context, id string) (idMap, idMap, error) {
	var v struct {
		HostConfig struct {
			IDMappings struct {
				UIDMap []string `json:"UidMap"`
				GIDMap []string `json:"GidMap"`
			} `json:"IDMappings"`
		} `json:"HostConfig"`
	}
	err := e.call(ctx, maxCallTimeout, time.Time{}, "inspecting container "+shortID(id)+" (libpod)", func(ctx context.Context) error {
		resp, err := e.engineGet(ctx, "/v4.0.0/libpod/containers/"+url.PathEscape(id)+"/json")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("libpod container inspect: HTTP %d", resp.StatusCode)
		}
		return json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 4<<20)).Decode(&v)
	})
	if err != nil {
		return nil, nil, err
	}
	parse := func(what string, lines []string) (idMap, error) {
		var m idMap
		for _, l := range lines {
			f := strings.Split(l, ":")
			if len(f) != 3 {
				return nil, fmt.Errorf("%s %q", what, l)
			}
			var e [3]uint32
			for i, s := range f {
				n, err := strconv.ParseUint(s, 10, 32)
				if err != nil {
					return nil, fmt.Errorf("%s %q", what, l)
				}
				e[i] = uint32(n)
			}
			m = append(m, e)
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("Podman gives container %s no %s", shortID(id), what)
		}
		return m, nil
	}
	uid, err := parse("uid map", v.HostConfig.IDMappings.UIDMap)
	if err != nil {
		return nil, nil, err
	}
	gid, err := parse("gid map", v.HostConfig.IDMappings.GIDMap)
	return uid, gid, err
}

// giveMounts gives what bs mounts writable to the container's root (giveTree each).
func (x *ids) giveMounts(bs BoxSpec) error {
	if x.uid.identity() {
		return nil // nothing to give: its root is the host's (the probe reports it)
	}
	for _, m := range append([]Mount{{Source: bs.Dir, Writable: true}}, bs.Mounts...) {
		if m.Writable {
			if err := x.giveTree(m.Source); err != nil {
				return err
			}
		}
	}
	return nil
}

// idMap is a process's uid_map or gid_map: lines of inside, outside (host) and count.
type idMap [][3]uint32

// readIDMap reads /proc/<pid>/<name> (uid_map or gid_map).
func readIDMap(pid int, name string) (idMap, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/%s", pid, name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var m idMap
	sc := bufio.NewScanner(io.LimitReader(f, 64<<10))
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 3 {
			return nil, fmt.Errorf("/proc/%d/%s: line %q", pid, name, sc.Text())
		}
		var l [3]uint32
		for i, s := range fs {
			n, err := strconv.ParseUint(s, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("/proc/%d/%s: line %q", pid, name, sc.Text())
			}
			l[i] = uint32(n)
		}
		m = append(m, l)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("/proc/%d/%s is empty", pid, name)
	}
	return m, nil
}

// identity reports whether m maps every id to itself (no user namespace).
func (m idMap) identity() bool {
	return len(m) == 1 && m[0][0] == 0 && m[0][1] == 0 && m[0][2] == 4294967295
}

// host returns the host id of the container's id, ok false when it is not mapped.
func (m idMap) host(id uint32) (uint32, bool) {
	for _, l := range m {
		if id >= l[0] && id-l[0] < l[2] {
			return l[1] + (id - l[0]), true
		}
	}
	return 0, false
}

// mapped reports whether the host id h is one of the container's.
func (m idMap) mapped(h uint32) bool {
	for _, l := range m {
		if h >= l[1] && h-l[1] < l[2] {
			return true
		}
	}
	return false
}

// ids is a container's user and group maps, as the host sees them.
type ids struct {
	uid, gid idMap
}

// owner is the host ids of the container's root.
func (x *ids) owner() (int, int, error) {
	u, uok := x.uid.host(0)
	g, gok := x.gid.host(0)
	if !uok || !gok {
		return 0, 0, errors.New("the container's root is not mapped to a host id")
	}
	return int(u), int(g), nil
}

// giveTree gives root (a directory or a regular file) and everything under it on the same
// mount to the container's root: each entry whose owner (user, or group) is not one of the
// container's gets its root's (so what the container made, as whichever of its users,
// stays as it is). Links are never followed (a link itself is given, not what it points
// at), and nothing on another mount is touched.
func (x *ids) giveTree(root string) error {
	uid, gid, err := x.owner()
	if err != nil {
		return err
	}
	fd, err := unix.Open(root, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("giving %s to the box's root: %w", root, err)
	}
	defer unix.Close(fd)
	var st unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW, unix.STATX_BASIC_STATS|unix.STATX_MNT_ID, &st); err != nil {
		return fmt.Errorf("giving %s to the box's root: %w", root, err)
	}
	if err := x.give(fd, "", &st, uid, gid); err != nil {
		return fmt.Errorf("giving %s to the box's root: %w", root, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil
	}
	dfd, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("giving %s to the box's root: %w", root, err)
	}
	if err := x.giveDir(dfd, root, st.Mnt_id, [2]uint32{st.Dev_major, st.Dev_minor}, uid, gid, 0); err != nil {
		return fmt.Errorf("giving %s to the box's root: %w", root, err)
	}
	return nil
}

// maxGiveDepth bounds how deep giveTree goes (a hostile tree is bounded by the disk
// watch's size bound in breadth; this bounds its depth and the descriptors held).
const maxGiveDepth = 256

// giveDir gives the entries of the open directory dfd (closed here), recursively.
func (x *ids) giveDir(dfd int, where string, mnt uint64, dev [2]uint32, uid, gid, depth int) error {
	f := os.NewFile(uintptr(dfd), where)
	defer f.Close()
	if depth > maxGiveDepth {
		return fmt.Errorf("%s: deeper than %d directories", where, maxGiveDepth)
	}
	for {
		names, err := f.Readdirnames(1024)
		for _, n := range names {
			var st unix.Statx_t
			if err := unix.Statx(dfd, n, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_BASIC_STATS|unix.STATX_MNT_ID, &st); err != nil {
				if errors.Is(err, unix.ENOENT) {
					continue
				}
				return fmt.Errorf("%s: %w", filepath.Join(where, n), err)
			}
			if st.Dev_major != dev[0] || st.Dev_minor != dev[1] || (st.Mask&unix.STATX_MNT_ID != 0 && st.Mnt_id != mnt) {
				continue // another mount: not the box's
			}
			if err := x.give(dfd, n, &st, uid, gid); err != nil {
				return fmt.Errorf("%s: %w", filepath.Join(where, n), err)
			}
			if st.Mode&unix.S_IFMT == unix.S_IFDIR {
				cfd, err := unix.Openat(dfd, n, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
				if err != nil {
					if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
						continue // swapped since: not followed
					}
					return fmt.Errorf("%s: %w", filepath.Join(where, n), err)
				}
				if err := x.giveDir(cfd, filepath.Join(where, n), mnt, dev, uid, gid, depth+1); err != nil {
					return err
				}
			}
		}
		if err == io.EOF || (err == nil && len(names) == 0) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	}
}

// give changes the owner of name in dirfd (dirfd itself when name is ""), never through a
// link, to uid and gid where its owner is not one of the container's.
func (x *ids) give(dirfd int, name string, st *unix.Statx_t, uid, gid int) error {
	u, g := -1, -1
	if !x.uid.mapped(st.Uid) {
		u = uid
	}
	if !x.gid.mapped(st.Gid) {
		g = gid
	}
	if u == -1 && g == -1 {
		return nil
	}
	flags := unix.AT_SYMLINK_NOFOLLOW
	if name == "" {
		flags |= unix.AT_EMPTY_PATH
	}
	err := unix.Fchownat(dirfd, name, u, g, flags)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	return err
}

// givePath gives rel (slash-separated, relative to dir) and each directory on the way to it
// to the container's root, as giveTree gives one entry: opened one component at a time,
// none a link.
func (x *ids) givePath(dir, rel string) error {
	uid, gid, err := x.owner()
	if err != nil {
		return err
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	parts := strings.Split(rel, "/")
	for i, n := range parts {
		if n == "" || n == "." || n == ".." {
			unix.Close(fd)
			return fmt.Errorf("%q: not a clean relative path", rel)
		}
		var st unix.Statx_t
		if err := unix.Statx(fd, n, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_BASIC_STATS, &st); err != nil {
			unix.Close(fd)
			return err
		}
		if err := x.give(fd, n, &st, uid, gid); err != nil {
			unix.Close(fd)
			return err
		}
		if i == len(parts)-1 {
			break
		}
		next, err := unix.Openat(fd, n, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, filepath.Join(parts[:i+1]...)), err)
		}
		fd = next
	}
	unix.Close(fd)
	return nil
}
