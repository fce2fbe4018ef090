package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/network"
	"golang.org/x/sys/unix"
)

// wallScript is wall.sh: the one definition of the sandbox network's host rules, which
// images/setup-engine.sh runs from the source tree and Connect runs from here.
//
//go:embed wall.sh
var wallScript []byte

// ErrNoWall means the engine's sandbox network, or the host rules that wall it in, are not
// in place, so no container with network may start there.
var ErrNoWall = errors.New("the sandbox network is not walled in")

// WallMark is the socket mark (SO_MARK) of envgap's listeners for containers
// (ListenHost): the host's rules admit connections from the sandbox network to sockets
// with this mark alone. wall.sh's ENVGAP_WALL_MARK default is the same number.
const WallMark = 0x0e4a0000

// EnvNetwork names the environment variable that overrides the sandbox network's name
// (Options.Network), for a network of one's own beside a machine's real `envgap`.
const EnvNetwork = "ENVGAP_SANDBOX_NETWORK"

// wallTTL is how long a successful check of the rules holds (per engine network and boot).
const wallTTL = 10 * time.Minute

// WallDir holds the record of each successful check (one file per engine network, boot
// and rule set, named by their digest, holding the bridge's name; its time is the
// check's). /run is cleared at
// boot, and the boot id is part of the name.
var WallDir = "/run/envgap/wall"

// Wall is what Connect found of the sandbox network's wall.
type Wall struct {
	Network string `json:"network"` // the network's name
	ID      string `json:"id"`      // its id on the engine
	Subnet  string `json:"subnet"`  // its IPv4 subnet
	Gateway string `json:"gateway"` // the host's address on it
	// Iface is the network's bridge on the engine's host ("" for a remote engine).
	Iface string `json:"bridge,omitempty"`
	// Checked says how the host rules were checked: "checked" (wall.sh check just now),
	// "cached" (a check of this boot within the last wallTTL), "restored" (they were
	// missing and Connect put them back), or "remote" (the engine is on another host: its
	// rules are that host's set-up's; only the network was checked).
	Checked string `json:"rules"`
}

// wallCache remembers this process's successful checks (key -> wallCheck).
var wallCache sync.Map

// wallCheck is one successful check: when, and the bridge it found.
type wallCheck struct {
	at    time.Time
	iface string
}

// validIface reports whether s can be a Linux interface name (wall.sh takes no other).
func validIface(s string) bool {
	if s == "" || len(s) > 15 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// checkWall checks the sandbox network and, for an engine on this host, its rules; rules
// that are missing are put back when this process can (root), else the engine is refused.
func (e *Engine) checkWall(ctx context.Context, name string) (*Wall, error) {
	fix := "create it and its rules with `make engine` (bash images/setup-engine.sh, as root, on the engine's host)"
	var nw network.Inspect
	err := e.call(ctx, maxCallTimeout, time.Time{}, "inspecting network "+name, func(ctx context.Context) (err error) {
		nw, err = e.cli.NetworkInspect(ctx, name, network.InspectOptions{})
		return err
	})
	if errdefs.IsNotFound(err) {
		return nil, fmt.Errorf("%w: the engine at %s has no sandbox network %q (containers would run on its default bridge with the whole internet): %s", ErrNoWall, e.host, name, fix)
	}
	if err != nil {
		return nil, err
	}
	w := &Wall{Network: name, ID: nw.ID}
	for _, c := range nw.IPAM.Config {
		if c.Gateway != "" && !strings.Contains(c.Gateway, ":") {
			w.Subnet, w.Gateway = c.Subnet, c.Gateway
		}
	}
	switch {
	case nw.Driver != "bridge":
		return nil, fmt.Errorf("%w: network %q on %s has driver %q, not bridge: %s", ErrNoWall, name, e.host, nw.Driver, fix)
	case nw.Labels[Label] != "1":
		return nil, fmt.Errorf("%w: network %q on %s was not made by envgap's set-up (no label %s=1): remove it, then %s", ErrNoWall, name, e.host, Label, fix)
	case w.Gateway == "":
		return nil, fmt.Errorf("%w: network %q on %s has no IPv4 gateway: %s", ErrNoWall, name, e.host, fix)
	}
	if !e.local() {
		w.Checked = "remote"
		return w, nil
	}
	key := wallKey(w, wallEnv(name))
	if c, ok := wallCache.Load(key); ok && time.Since(c.(wallCheck).at) < wallTTL {
		w.Iface, w.Checked = c.(wallCheck).iface, "cached"
		return w, nil
	}
	record := filepath.Join(WallDir, key)
	if fi, err := os.Stat(record); err == nil && time.Since(fi.ModTime()) < wallTTL {
		if b, err := os.ReadFile(record); err == nil && validIface(string(b)) {
			wallCache.Store(key, wallCheck{fi.ModTime(), string(b)})
			w.Iface, w.Checked = string(b), "cached"
			return w, nil
		}
	}
	w.Iface, err = e.bridgeOf(ctx, nw)
	if err != nil {
		return nil, fmt.Errorf("%w: network %q on %s: %v", ErrNoWall, name, e.host, err)
	}
	if !validIface(w.Iface) {
		return nil, fmt.Errorf("%w: network %q on %s: bridge name %q is not an interface name", ErrNoWall, name, e.host, w.Iface)
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: the rules of network %q are on this host and only root can read them: run envgap as root (it also needs root to mark its listeners), or %s", ErrNoWall, name, fix)
	}
	w.Checked = "checked"
	if missing := runWall(ctx, "check", w.Iface, name); missing != nil {
		if err := runWall(ctx, "apply", w.Iface, name); err != nil {
			return nil, fmt.Errorf("%w: the rules of network %q (bridge %s) are missing (%v) and could not be put back (%v): %s", ErrNoWall, name, w.Iface, missing, err, fix)
		}
		if err := runWall(ctx, "check", w.Iface, name); err != nil {
			return nil, fmt.Errorf("%w: the rules of network %q (bridge %s) were put back but are still not all there (%v): %s", ErrNoWall, name, w.Iface, err, fix)
		}
		w.Checked = "restored"
	}
	now := time.Now()
	wallCache.Store(key, wallCheck{now, w.Iface})
	if err := os.MkdirAll(WallDir, 0o700); err == nil {
		_ = os.WriteFile(record, []byte(w.Iface), 0o600)
		_ = os.Chtimes(record, now, now)
	}
	return w, nil
}

// local reports whether the engine runs on this host (a unix socket that exists here).
func (e *Engine) local() bool {
	u, err := url.Parse(e.cli.DaemonHost())
	if err != nil || u.Scheme != "unix" {
		return false
	}
	fi, err := os.Stat(u.Path)
	return err == nil && fi.Mode()&os.ModeSocket != 0
}

// engineGet sends a GET for path (an API path of the engine's own, such as "/_ping" or
// libpod's) through the engine's client; the caller closes the answer's body.
func (e *Engine) engineGet(ctx context.Context, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://engine"+path, nil)
	if err != nil {
		return nil, err
	}
	return e.cli.HTTPClient().Do(req)
}

// bridgeOf returns the host interface of a bridge network: Podman names it in its own API
// (libpod's network_interface), Docker in the network's options or as br-<id>.
func (e *Engine) bridgeOf(ctx context.Context, nw network.Inspect) (string, error) {
	if name := nw.Options["com.docker.network.bridge.name"]; name != "" {
		return name, nil
	}
	var iface string
	err := e.call(ctx, maxCallTimeout, time.Time{}, "inspecting network "+nw.Name+" (libpod)", func(ctx context.Context) error {
		resp, err := e.engineGet(ctx, "/v4.0.0/libpod/networks/"+url.PathEscape(nw.Name)+"/json")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			return nil // not Podman
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("libpod network inspect: HTTP %d", resp.StatusCode)
		}
		var v struct {
			Iface string `json:"network_interface"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 1<<20)).Decode(&v); err != nil {
			return err
		}
		iface = v.Iface
		return nil
	})
	if err != nil {
		return "", err
	}
	if iface == "" && len(nw.ID) >= 12 {
		iface = "br-" + nw.ID[:12] // Docker's default bridge name
	}
	if iface == "" {
		return "", errors.New("its bridge interface is unknown")
	}
	return iface, nil
}

// wallEnv names the rules of a network: the defaults of wall.sh for SandboxNetwork, and
// names and numbers of its own for any other network (tests, a second set-up).
func wallEnv(name string) []string {
	if name == SandboxNetwork {
		return nil
	}
	h := sha256.Sum256([]byte(name))
	s := strings.ToUpper(hex.EncodeToString(h[:3]))
	n := 7800 + 2*(int(h[3])%100) // pref and pref+1, clear of the default 7749-7750
	return []string{
		"ENVGAP_SANDBOX_CHAIN=EGS-" + s, "ENVGAP_ISOLATE_CHAIN=EGI-" + s, "ENVGAP_SANDBOX6_CHAIN=EGS6-" + s,
		"ENVGAP_EGRESS_COUNT_CHAIN=EGC-" + s, fmt.Sprintf("ENVGAP_EGRESS_TABLE=%d", n), fmt.Sprintf("ENVGAP_EGRESS_PREF=%d", n),
	}
}

// wallKey names one check: the network (its id is the engine's and changes when it is
// made again), the boot, the rules and their names.
func wallKey(w *Wall, env []string) string {
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	h := sha256.New()
	for _, s := range append([]string{w.ID, strings.TrimSpace(string(boot)), string(wallScript)}, env...) {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// runWall runs wall.sh op iface for the rules of network name; an error carries what the
// script said.
func runWall(ctx context.Context, op, iface, name string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-s", "--", op, iface)
	cmd.Stdin = bytes.NewReader(wallScript)
	cmd.Env = append(append(os.Environ(), "LC_ALL=C"), wallEnv(name)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := strings.Join(strings.Fields(strings.ReplaceAll(out.String(), "missing: ", "")), " ")
		if msg == "" {
			return fmt.Errorf("wall.sh %s: %w", op, err)
		}
		return errors.New(msg)
	}
	return nil
}

// ListenHost listens on addr, an address of HostAddress with a port, for servers that
// containers reach: bound to that address alone, with IP_FREEBIND (the network's bridge,
// and its address, appear only once a container joins the network), and marked WallMark,
// the one mark the host's rules admit from the sandbox network (setting it needs root:
// CAP_NET_ADMIN).
func ListenHost(addr string) (net.Listener, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = errors.Join(
				unix.SetsockoptInt(int(fd), unix.SOL_IP, unix.IP_FREEBIND, 1),
				unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_MARK, WallMark))
		})
		return errors.Join(err, serr)
	}}
	ln, err := lc.Listen(context.Background(), "tcp4", addr)
	if err != nil && errors.Is(err, unix.EPERM) {
		return nil, fmt.Errorf("%w (marking a listener for the sandbox network's containers needs root)", err)
	}
	return ln, err
}

// Capabilities are the capabilities of every sandbox container (all others are dropped).
var Capabilities = []string{"CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "SYS_PTRACE"}
