package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/internal/testenv"
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

// TestTheWallHolds runs each probe of CheckWall from a container on the sandbox network:
// it reaches a listener envgap opened (ListenHost) and nothing else of the host, no other
// container, no outside address, no name server, no IPv6; its capabilities are the core's
// alone and no process gains privileges. (Each probe fails when its rule is taken away:
// with the FORWARD chain emptied, "another run's container" is reached.)
func TestTheWallHolds(t *testing.T) {
	e, img := needEngine(t)
	probes, err := e.CheckWall(context.Background(), img)
	if err != nil {
		t.Fatal(err)
	}
	if len(probes) != 13 {
		t.Fatalf("%d probes, want 13: %+v", len(probes), probes)
	}
	for _, p := range probes {
		if p.Leak {
			t.Errorf("%s: %q, want %s", p.Name, p.Result, p.Expected)
		}
	}
	// The user namespace's line: yes where the engine gives one, a warning (not a leak)
	// where it cannot.
	if u, p := e.UserNS(), probes[12]; !strings.HasPrefix(p.Name, "user namespace") || (u.Mode != UserNSNone) != strings.HasPrefix(p.Result, "yes") || p.Warning != (u.Mode == UserNSNone) {
		t.Errorf("the engine's user namespace is %+v; its probe: %+v", u, p)
	}
	if !strings.Contains(probes[0].Result, "reached") {
		t.Errorf("envgap's own listener: %q, want reached", probes[0].Result)
	}
	if want := "00000000000800fb"; CapabilityMask(Capabilities) != want {
		t.Errorf("CapabilityMask(Capabilities) = %s, want %s", CapabilityMask(Capabilities), want)
	}
}

// TestTheImagesWorkWithTheCoresCapabilities runs, in each evaluation image, what its steps
// do as root with the capabilities left (and in the engine's user namespace): apt's drop
// to _apt (setuid, setgid, groups), chown and chmod of files of other users, a package
// installed by dpkg, strace, and the image's package tool offline (pip, npm, Maven, cc).
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
	// What each image's package tool does as root, offline (in a user namespace too: the
	// files it writes belong to the container's root): pip installs a wheel into the
	// system's site-packages, npm a local package into a project and globally, Maven starts.
	tools := map[string]string{
		"envgap-python-eval": `python3 -c '
import zipfile
z = zipfile.ZipFile("/tmp/envgap_probe-1.0-py3-none-any.whl", "w")
z.writestr("envgap_probe/__init__.py", "V = 1\n")
z.writestr("envgap_probe-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: envgap-probe\nVersion: 1.0\n")
z.writestr("envgap_probe-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
z.writestr("envgap_probe-1.0.dist-info/RECORD", "")
z.close()'
pip install --no-index --no-deps /tmp/envgap_probe-1.0-py3-none-any.whl >/tmp/pip.log 2>&1 || cat /tmp/pip.log
cd / && python3 -c 'import envgap_probe; print("tool-ok", envgap_probe.V)'`,
		"envgap-javascript-eval": `mkdir -p /tmp/np/dep /tmp/np/app && echo '{"name":"envgap-dep","version":"1.0.0"}' >/tmp/np/dep/package.json
cd /tmp/np/app && echo '{"name":"app","version":"1.0.0"}' >package.json
npm install --offline --no-audit --no-fund ../dep >/tmp/npm.log 2>&1 || cat /tmp/npm.log
npm install -g --offline --no-audit --no-fund /tmp/np/dep >>/tmp/npm.log 2>&1 || cat /tmp/npm.log
test -f node_modules/envgap-dep/package.json && test -e "$(npm root -g)/envgap-dep/package.json" && echo tool-ok 1`,
		"envgap-java-eval": `mvn -o -q -v >/tmp/mvn.log 2>&1 && echo tool-ok 1 || cat /tmp/mvn.log`,
		"envgap-cpp-eval":  `echo 'int main(){return 0;}' >/tmp/m.c && cc -o /tmp/m /tmp/m.c && /tmp/m && echo tool-ok 1`,
	}
	for _, img := range []string{"envgap-python-eval", "envgap-javascript-eval", "envgap-java-eval", "envgap-cpp-eval"} {
		t.Run(img, func(t *testing.T) {
			ref := "localhost/" + img + ":latest"
			if _, err := e.ImageID(context.Background(), ref); err != nil {
				testenv.Missing(t, "image %s: %v (make images)", ref, err)
			}
			res := run(t, e, Spec{Image: ref, Steps: []Step{{Name: "root work", Command: script + "\n" + tools[img], Timeout: 2 * time.Minute}}})
			sr := res.Steps[0]
			for _, want := range []string{"42\n", "hi\n", "user-ok\n", "strace-ok\n", "tool-ok 1\n"} {
				if sr.ExitCode != 0 || !strings.Contains(string(sr.Output), want) {
					t.Fatalf("exit %d, output %q: want %q", sr.ExitCode, sr.Output, want)
				}
			}
		})
	}
}

// TestWallStaysAboveTheNetworkPlugin: Podman's CNI firewall plugin inserts its jump (which
// accepts its containers' traffic) at the top of FORWARD when the first container of a boot
// joins a network. On a fresh host that came after the wall and let containers of different
// runs reach one another; the wall now puts the plugin's jump in place below its own, so a
// container joining afterwards leaves the rules whole.
func TestWallStaysAboveTheNetworkPlugin(t *testing.T) {
	_, img := needEngine(t)
	if os.Geteuid() != 0 {
		testenv.Missing(t, "the wall's rules need root")
	}
	testenv.Tool(t, "podman")
	testenv.Tool(t, "iptables")
	name := fmt.Sprintf("envgap-plugintest-%d", os.Getpid()%1000)
	iface := ownNetwork(t, name)
	if !strings.HasPrefix(iface, "cni-") {
		testenv.Missing(t, "the network %s is not a CNI bridge (%s)", name, iface)
	}
	// A fresh boot: the plugin's jump is not there yet (a container joining puts it back).
	jump := []string{"FORWARD", "-m", "comment", "--comment", "CNI firewall plugin rules", "-j", "CNI-FORWARD"}
	for exec.Command("iptables", append([]string{"-D"}, jump...)...).Run() == nil {
	}
	if err := runWall(context.Background(), "apply", iface, name); err != nil {
		t.Fatalf("wall.sh apply: %v", err)
	}
	if out, err := exec.Command("podman", "run", "--rm", "--network", name, img, "true").CombinedOutput(); err != nil {
		t.Fatalf("a container on %s: %v %s", name, err, out)
	}
	if err := runWall(context.Background(), "check", iface, name); err != nil {
		out, _ := exec.Command("iptables", "-S", "FORWARD").CombinedOutput()
		t.Fatalf("wall.sh check after the first container joined: %v\nFORWARD:\n%s", err, out)
	}
}
