package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/envgap/envgap/internal/testenv"
	"golang.org/x/sys/unix"
)

// TestConnectRefusesAnEngineWithoutItsSandboxNetwork: with no sandbox network (a name the
// engine does not have, given as the core gives it), Connect fails closed, says how to fix
// it, and no container has started.
func TestConnectRefusesAnEngineWithoutItsSandboxNetwork(t *testing.T) {
	real, _ := needEngine(t)
	self := map[string]string{LabelOwnerPID: strconv.Itoa(os.Getpid())}
	before := len(containersWith(t, real, self))
	name := "envgap-missing-" + hex.EncodeToString(randomBytes(4))
	e, err := ConnectWith(context.Background(), "", Options{Network: name})
	if err == nil {
		e.Close()
		t.Fatalf("Connect with no network %s: no error", name)
	}
	if !errors.Is(err, ErrNoWall) || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "make engine") {
		t.Fatalf("error = %v, want ErrNoWall naming %s and `make engine`", err, name)
	}
	if after := len(containersWith(t, real, self)); after != before {
		t.Fatalf("containers of this process: %d before, %d after a refused Connect", before, after)
	}
	// The same engine without the check starts no container with network either.
	b, err := ConnectWith(context.Background(), "", Options{NoWall: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_, err = b.Run(context.Background(), Spec{Image: defaultTestImage, Network: NetworkDefault, Steps: []Step{{Name: "x", Command: "true"}}})
	if !errors.Is(err, ErrNoWall) {
		t.Fatalf("a run with network on an engine opened without its wall: %v, want ErrNoWall", err)
	}
}

// TestWallIsPutBackWhenMissing: on a sandbox network of this test's own, Connect finds the
// rules missing and puts them back, a second Connect uses the check it recorded, and a rule
// deleted later (a firewall reload) is noticed at the next uncached check and put back.
func TestWallIsPutBackWhenMissing(t *testing.T) {
	needEngine(t)
	if os.Geteuid() != 0 {
		testenv.Missing(t, "the wall's rules need root")
	}
	testenv.Tool(t, "podman")
	name := fmt.Sprintf("envgap-walltest-%d", os.Getpid()%1000)
	iface := ownNetwork(t, name)
	WallDir = t.TempDir()
	wallCache.Clear()
	connect := func() *Wall {
		t.Helper()
		e, err := ConnectWith(context.Background(), "", Options{Network: name})
		if err != nil {
			t.Fatalf("Connect: %v", err)
		}
		e.Close()
		return e.Wall()
	}
	if w := connect(); w.Checked != "restored" || w.Iface != iface {
		t.Fatalf("first Connect: %+v, want the rules restored on %s", w, iface)
	}
	if w := connect(); w.Checked != "cached" {
		t.Fatalf("second Connect: %+v, want the cached check", w)
	}
	if err := runWall(context.Background(), "check", iface, name); err != nil {
		t.Fatalf("wall.sh check after Connect: %v", err)
	}
	env := wallEnv(name)
	chain := strings.TrimPrefix(env[0], "ENVGAP_SANDBOX_CHAIN=")
	if out, err := exec.Command("iptables", "-D", "INPUT", "-i", iface, "-j", chain).CombinedOutput(); err != nil {
		t.Fatalf("deleting the INPUT jump: %v %s", err, out)
	}
	if err := runWall(context.Background(), "check", iface, name); err == nil || !strings.Contains(err.Error(), "INPUT") {
		t.Fatalf("wall.sh check without the INPUT jump: %v, want it named", err)
	}
	WallDir = t.TempDir()
	wallCache.Clear()
	if w := connect(); w.Checked != "restored" {
		t.Fatalf("Connect after a rule was deleted: %+v, want restored", w)
	}
}

// ownNetwork creates a sandbox network for one test (removed with its rules at the end)
// and returns its bridge interface.
func ownNetwork(t *testing.T, name string) string {
	t.Helper()
	exec.Command("podman", "network", "rm", "-f", name).Run()
	if out, err := exec.Command("podman", "network", "create", "--disable-dns", "--label", Label+"=1", name).CombinedOutput(); err != nil {
		t.Fatalf("creating network %s: %v %s", name, err, out)
	}
	out, err := exec.Command("podman", "network", "inspect", name, "--format", "{{.NetworkInterface}}").Output()
	if err != nil {
		t.Fatal(err)
	}
	iface := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		runWall(context.Background(), "remove", iface, name)
		exec.Command("podman", "network", "rm", "-f", name).Run()
	})
	return iface
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// TestTheWallHolds runs each probe from a container on the sandbox network: it reaches a
// listener envgap opened (ListenHost) and nothing else of the host, no other container, no
// outside address, no name server, no IPv6; its capabilities are the core's alone and no
// process gains privileges.
func TestTheWallHolds(t *testing.T) {
	e, img := needEngine(t)
	gw, err := e.HostAddress(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	serve := func(ln net.Listener) string {
		t.Cleanup(func() { ln.Close() })
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
		t.Fatal(err)
	}
	// The same kind of listener (bound to the gateway alone) without envgap's mark.
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.SOL_IP, unix.IP_FREEBIND, 1) })
	}}
	unmarked, err := lc.Listen(context.Background(), "tcp4", net.JoinHostPort(gw, "0"))
	if err != nil {
		t.Fatal(err)
	}
	wide, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	ports := map[string]string{"marked": serve(marked), "unmarked": serve(unmarked), "wide": serve(wide)}

	// Another run's container, listening on a port of its own.
	dir := t.TempDir()
	other, err := e.OpenBox(context.Background(), BoxSpec{Image: img, Dir: dir, Network: NetworkDefault, Labels: testLabels(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	listen := `perl -MIO::Socket::INET -e '$s=IO::Socket::INET->new(LocalPort=>7001,Listen=>5,ReuseAddr=>1) or die; print STDOUT "up\n"; close STDOUT; while($c=$s->accept){print $c "reached\n"; close $c}' >/tmp/up 2>&1 &
for i in $(seq 50); do [ -s /tmp/up ] && break; sleep 0.1; done; cat /tmp/up`
	if sr, err := other.Exec(context.Background(), listen, 30*time.Second); err != nil || !strings.Contains(string(sr.Output), "up") {
		t.Fatalf("the other container's listener: %v %q", err, sr.Output)
	}
	ins, err := e.cli.ContainerInspect(context.Background(), other.ID())
	if err != nil {
		t.Fatal(err)
	}
	otherIP := ins.NetworkSettings.Networks[e.Network()].IPAddress
	if otherIP == "" {
		t.Fatalf("the other container has no address on %s", e.Network())
	}
	// It reaches itself (the listener is up).
	self := fmt.Sprintf("timeout 5 bash -c 'exec 3<>/dev/tcp/%s/7001; cat <&3'", otherIP)
	if sr, err := other.Exec(context.Background(), self, 30*time.Second); err != nil || !strings.Contains(string(sr.Output), "reached") {
		t.Fatalf("the other container does not reach its own listener: %v %q", err, sr.Output)
	}

	connect := func(host, port string) string {
		return fmt.Sprintf("timeout 5 bash -c 'exec 3<>/dev/tcp/%s/%s && cat <&3' 2>&1", host, port)
	}
	probes := []struct {
		name, command string
		ok            bool   // the command must succeed
		want          string // and its output must contain this
	}{
		{"envgap's listener on the gateway", connect(gw, ports["marked"]), true, "reached"},
		{"a host port envgap did not open, bound to the gateway", connect(gw, ports["unmarked"]), false, "Connection refused"},
		{"a host service bound to all addresses", connect(gw, ports["wide"]), false, "Connection refused"},
		{"another run's container", connect(otherIP, "7001"), false, "Connection refused"},
		{"a raw IP outside", connect("192.0.2.1", "80"), false, "No route to host"},
		{"DNS of an arbitrary name", "getent hosts example.com || echo unresolved", true, "unresolved"},
		{"IPv6", "cat /proc/sys/net/ipv6/conf/all/disable_ipv6 /proc/sys/net/ipv6/conf/eth0/disable_ipv6; wc -c </proc/net/if_inet6", true, "1\n1\n0\n"},
		{"capabilities", "grep -E '^Cap(Eff|Bnd):' /proc/self/status", true, "CapEff:\t" + capMask(Capabilities)},
		{"bounding set", "grep -E '^CapBnd:' /proc/self/status", true, "CapBnd:\t" + capMask(Capabilities)},
		{"no new privileges", "grep NoNewPrivs /proc/self/status", true, "NoNewPrivs:\t1"},
		{"no device nodes", "mknod /tmp/null c 1 3 2>&1", false, "Operation not permitted"},
	}
	var steps []Step
	for _, p := range probes {
		steps = append(steps, Step{Name: p.name, Command: p.command, Timeout: 30 * time.Second})
	}
	res := run(t, e, Spec{Image: img, Network: NetworkDefault, Steps: steps})
	for i, p := range probes {
		sr := res.Steps[i]
		if (sr.ExitCode == 0) != p.ok || !strings.Contains(string(sr.Output), p.want) {
			t.Errorf("%s: exit %d, output %q; want success %v and %q", p.name, sr.ExitCode, sr.Output, p.ok, p.want)
		}
	}
}

// capMask is the /proc/self/status form of a capability set.
func capMask(names []string) string {
	bits := map[string]uint{"CHOWN": 0, "DAC_OVERRIDE": 1, "DAC_READ_SEARCH": 2, "FOWNER": 3, "FSETID": 4, "KILL": 5,
		"SETGID": 6, "SETUID": 7, "SETPCAP": 8, "NET_BIND_SERVICE": 10, "NET_RAW": 13, "SYS_CHROOT": 18,
		"SYS_PTRACE": 19, "MKNOD": 27, "AUDIT_WRITE": 29, "SETFCAP": 31}
	var m uint64
	for _, n := range names {
		b, ok := bits[n]
		if !ok {
			panic("capMask: unknown capability " + n)
		}
		m |= 1 << b
	}
	return fmt.Sprintf("%016x", m)
}

// TestTheImagesWorkWithTheCoresCapabilities runs, in each evaluation image, what its steps
// do as root with the capabilities left: apt's drop to _apt (setuid, setgid, groups),
// chown and chmod of files of other users, a package installed by dpkg, and strace.
func TestTheImagesWorkWithTheCoresCapabilities(t *testing.T) {
	e, _ := needEngine(t)
	script := `set -e
setpriv --reuid=_apt --regid=nogroup --clear-groups id -u
useradd -m builder
mkdir -p /tmp/pkg/DEBIAN /tmp/pkg/usr/share/envgap-probe
printf 'Package: envgap-probe\nVersion: 1\nArchitecture: all\nMaintainer: x <x@example.org>\nDescription: probe\n' >/tmp/pkg/DEBIAN/control
echo hi >/tmp/pkg/usr/share/envgap-probe/hi
chown -R builder:builder /tmp/pkg/usr && chmod g+s /tmp/pkg/usr/share/envgap-probe
dpkg-deb --root-owner-group --build /tmp/pkg /tmp/probe.deb >/dev/null
dpkg -i /tmp/probe.deb >/dev/null
cat /usr/share/envgap-probe/hi
su builder -s /bin/sh -c 'touch /home/builder/own && echo user-ok'
if command -v strace >/dev/null; then strace -f -e trace=execve -o /tmp/tr true && grep -c execve /tmp/tr >/dev/null && echo strace-ok; else echo strace-ok; fi`
	for _, img := range []string{"envgap-python-eval", "envgap-javascript-eval", "envgap-java-eval", "envgap-cpp-eval"} {
		t.Run(img, func(t *testing.T) {
			ref := "localhost/" + img + ":latest"
			if _, err := e.ImageID(context.Background(), ref); err != nil {
				testenv.Missing(t, "image %s: %v (make images)", ref, err)
			}
			res := run(t, e, Spec{Image: ref, Steps: []Step{{Name: "root work", Command: script, Timeout: 2 * time.Minute}}})
			sr := res.Steps[0]
			for _, want := range []string{"42\n", "hi\n", "user-ok\n", "strace-ok\n"} {
				if sr.ExitCode != 0 || !strings.Contains(string(sr.Output), want) {
					t.Fatalf("exit %d, output %q: want %q", sr.ExitCode, sr.Output, want)
				}
			}
		})
	}
}
