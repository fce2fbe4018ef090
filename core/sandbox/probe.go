package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Probe is one check of the wall, made from inside a sandbox container.
type Probe struct {
	Name     string `json:"probe"`
	Expected string `json:"expected"`
	Result   string `json:"result"` // the first line of what the probe printed
	// Leak is set when the result is not the expected one.
	Leak bool `json:"leak"`
	// Warning is set when the result is not the expected one but the engine cannot do
	// better (a user namespace on an engine without them: see docs/verify.md); it is not
	// a leak.
	Warning bool `json:"warning,omitempty"`
}

// probeLine bounds what a probe's result shows of its output.
const probeLine = 120

// CheckWall probes the wall from inside two containers of image on the sandbox network
// (one is "another run's", listening on a port of its own) and returns one Probe per check:
// envgap's marked listener is reached; a host port envgap did not open (bound to the
// gateway, or to all addresses), the other container, a raw IP outside, the cloud metadata
// address, a DNS name, IPv6 are not; the capabilities are Capabilities alone, no process
// gains privileges, no device node can be made. The probes run at once, each its own
// command in the probes' container (the slow ones wait out timeouts: DNS, no route), and
// the two containers are opened at once. image needs bash, coreutils, getent and
// perl (every evaluation image and the base image have them). An error is a fault of the
// engine, never a leak.
func (e *Engine) CheckWall(ctx context.Context, image string) ([]Probe, error) {
	if e.wall == nil {
		return nil, fmt.Errorf("%w: the engine at %s was opened without its sandbox network", ErrNoWall, e.host)
	}
	gw := e.wall.Gateway
	serve := func(ln net.Listener) string {
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Write([]byte("reached\n"))
				c.Close()
			}
		}()
		return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	}
	marked, err := ListenHost(net.JoinHostPort(gw, "0"))
	if err != nil {
		return nil, err
	}
	defer marked.Close()
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.SOL_IP, unix.IP_FREEBIND, 1) })
	}}
	unmarked, err := lc.Listen(ctx, "tcp4", net.JoinHostPort(gw, "0"))
	if err != nil {
		return nil, err
	}
	defer unmarked.Close()
	wide, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		return nil, err
	}
	defer wide.Close()
	markedPort, unmarkedPort, widePort := serve(marked), serve(unmarked), serve(wide)

	// Two containers, opened at once: "another run's", and the one the probes run in (all
	// at once: each probe is its own command, and the slow ones wait for timeouts).
	var boxes [2]*Box
	var boxErrs [2]error
	var dirs [2]string
	var wg sync.WaitGroup
	for i, role := range []string{"other-run", "probe"} {
		dir, err := os.MkdirTemp("", "envgap-probe-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		dirs[i] = dir
		wg.Add(1)
		go func() {
			defer wg.Done()
			boxes[i], boxErrs[i] = e.OpenBox(ctx, BoxSpec{Image: image, Dir: dir, Network: NetworkDefault,
				Labels: map[string]string{"org.envgap.probe": role}, Limits: Limits{StepTimeout: time.Minute}})
		}()
	}
	wg.Wait()
	for _, b := range boxes {
		if b != nil {
			defer b.Close()
		}
	}
	if boxErrs[0] != nil {
		return nil, fmt.Errorf("the other run's container: %w", boxErrs[0])
	}
	if boxErrs[1] != nil {
		return nil, fmt.Errorf("the probes' container: %w", boxErrs[1])
	}
	other, prober := boxes[0], boxes[1]
	const otherPort = "7001"
	listen := `perl -MIO::Socket::INET -e '$s=IO::Socket::INET->new(LocalPort=>` + otherPort + `,Listen=>5,ReuseAddr=>1) or die "$!\n"; print STDOUT "up\n"; close STDOUT; while($c=$s->accept){print $c "reached\n"; close $c}' >/tmp/up 2>&1 &
for i in $(seq 50); do [ -s /tmp/up ] && break; sleep 0.1; done; cat /tmp/up`
	if sr, err := other.Exec(ctx, listen, 30*time.Second); err != nil || !strings.Contains(string(sr.Output), "up") {
		return nil, fmt.Errorf("the other run's container does not listen: %v %q", err, sr.Output)
	}
	ins, err := e.cli.ContainerInspect(ctx, other.ID())
	if err != nil {
		return nil, err
	}
	otherIP := ""
	if n := ins.NetworkSettings.Networks[e.network]; n != nil {
		otherIP = n.IPAddress
	}
	if otherIP == "" {
		return nil, fmt.Errorf("the other run's container has no address on %s", e.network)
	}

	connect := func(host, port string) string {
		return fmt.Sprintf("timeout 5 bash -c 'exec 3<>/dev/tcp/%s/%s && cat <&3' 2>&1", host, port)
	}
	const refused, noRoute = "Connection refused", "No route to host"
	probes := []struct {
		name, expected, command string
		ok                      bool   // the command must succeed
		want                    string // and print this (or, for noRoute, time out unanswered)
	}{
		{"envgap's listener on the gateway (" + gw + ")", "reached", connect(gw, markedPort), true, "reached"},
		{"a host port envgap did not open, on the gateway", "refused", connect(gw, unmarkedPort), false, refused},
		{"a host service bound to all addresses", "refused", connect(gw, widePort), false, refused},
		{"another run's container (" + otherIP + ":" + otherPort + ")", "refused", connect(otherIP, otherPort), false, refused},
		{"a raw IP outside (192.0.2.1:80)", "no route (or no answer)", connect("192.0.2.1", "80"), false, noRoute},
		{"an internet address on 443 (203.0.113.1, TEST-NET-3)", "no route (or no answer)", connect("203.0.113.1", "443"), false, noRoute},
		{"the cloud metadata address (169.254.169.254:80)", "no route (or no answer)", connect("169.254.169.254", "80"), false, noRoute},
		{"DNS of an arbitrary name", "unresolved", "getent hosts example.com || echo unresolved", true, "unresolved"},
		{"IPv6", "disabled (all, eth0), no address: 1 1 0", "echo $(cat /proc/sys/net/ipv6/conf/all/disable_ipv6 /proc/sys/net/ipv6/conf/eth0/disable_ipv6) $(wc -c </proc/net/if_inet6)", true, "1 1 0\n"},
		{"capabilities", strings.Join(Capabilities, " "), "grep -E '^CapBnd:' /proc/self/status", true, "CapBnd:\t" + CapabilityMask(Capabilities)},
		{"no new privileges", "set", "grep NoNewPrivs /proc/self/status", true, "NoNewPrivs:\t1"},
		{"a device node (mknod)", "not permitted", "mknod /tmp/null c 1 3 2>&1", false, "Operation not permitted"},
	}
	results := make([]StepResult, len(probes))
	errs := make([]error, len(probes))
	for i, p := range probes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = prober.Exec(ctx, p.command, 30*time.Second)
		}()
	}
	userns, err := prober.usernsProbe(ctx, dirs[1])
	wg.Wait()
	if err := errors.Join(append(errs, err)...); err != nil {
		return nil, err
	}
	out := make([]Probe, len(probes), len(probes)+1)
	for i, p := range probes {
		sr := results[i]
		first, _, _ := strings.Cut(strings.TrimSpace(string(sr.Output)), "\n")
		got := strings.Join(strings.Fields(first), " ")
		if len(got) > probeLine {
			got = got[:probeLine] + "..."
		}
		if got == "" {
			got = fmt.Sprintf("exit %d", sr.ExitCode)
		}
		leak := (sr.ExitCode == 0) != p.ok || !strings.Contains(string(sr.Output), p.want)
		// The host answers "no route" with ICMP, which the kernel rate-limits: a probe that
		// gets no answer at all within its 5 s did not get through either.
		if p.want == noRoute && sr.ExitCode == 124 && len(strings.TrimSpace(string(sr.Output))) == 0 {
			leak, got = false, "no answer within 5 s (ICMP rate-limited)"
		}
		out[i] = Probe{Name: p.name, Expected: p.expected, Result: got, Leak: leak}
	}
	return append(out, userns), nil
}

// usernsProbe checks, from inside the box b (dir is its workspace on this host), that the
// container's root is not the host's root: its uid_map is not the identity, and a file
// its root creates in the workspace is owned on the host by another uid than 0. On an
// engine that cannot give containers a user namespace (Engine.UserNS says why), a root
// that is the host's is a warning, not a leak (docs/verify.md).
func (b *Box) usernsProbe(ctx context.Context, dir string) (Probe, error) {
	p := Probe{Name: "user namespace: container root is not host root", Expected: "yes"}
	sr, err := b.Exec(ctx, "set -e; id -u; head -n 1 /proc/self/uid_map; rm -f .userns-probe; : > .userns-probe", 30*time.Second)
	if err != nil {
		return p, err
	}
	lines := strings.Split(strings.TrimSpace(string(sr.Output)), "\n")
	if sr.ExitCode != 0 || len(lines) != 2 || lines[0] != "0" {
		p.Result, p.Leak = fmt.Sprintf("the probe exited %d: %q", sr.ExitCode, strings.Join(lines, "; ")), true
		return p, nil
	}
	m := strings.Fields(lines[1])
	identity := len(m) == 3 && m[0] == "0" && m[1] == "0" && m[2] == "4294967295"
	owner := "(engine on another host: not checked)"
	hostRoot := identity
	if b.e.local() {
		fi, err := os.Lstat(filepath.Join(dir, ".userns-probe"))
		if err != nil {
			return p, fmt.Errorf("the user namespace probe's file: %w", err)
		}
		uid := fi.Sys().(*syscall.Stat_t).Uid
		owner = fmt.Sprintf("its file is host uid %d", uid)
		hostRoot = hostRoot || uid == 0
	}
	switch {
	case !hostRoot:
		p.Result = fmt.Sprintf("yes (%s): uid_map %s, %s", b.userns, strings.Join(m, " "), owner)
	case b.userns == UserNSNone:
		p.Result, p.Warning = "no: "+b.e.UserNS().Why, true
	default:
		p.Result, p.Leak = fmt.Sprintf("no, though the engine's mode is %s: uid_map %s, %s", b.userns, strings.Join(m, " "), owner), true
	}
	if len(p.Result) > 4*probeLine {
		p.Result = p.Result[:4*probeLine] + "..."
	}
	return p, nil
}

// CapabilityMask is the hexadecimal mask of /proc/self/status (CapEff, CapBnd) for a set
// of capability names (those the sandbox keeps or the engines grant by default).
func CapabilityMask(names []string) string {
	bits := map[string]uint{"CHOWN": 0, "DAC_OVERRIDE": 1, "DAC_READ_SEARCH": 2, "FOWNER": 3, "FSETID": 4, "KILL": 5,
		"SETGID": 6, "SETUID": 7, "SETPCAP": 8, "NET_BIND_SERVICE": 10, "NET_RAW": 13, "SYS_CHROOT": 18,
		"SYS_PTRACE": 19, "MKNOD": 27, "AUDIT_WRITE": 29, "SETFCAP": 31}
	var m uint64
	for _, n := range names {
		if b, ok := bits[n]; ok {
			m |= 1 << b
		}
	}
	return fmt.Sprintf("%016x", m)
}
