package images_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/envgap/envgap/internal/testenv"
)

// TestSetupEngineFromNothingTwice runs images/setup-engine.sh for a sandbox network of its
// own (names and rule numbers of this test, beside the machine's real `envgap`), from
// nothing: the network and its rules (core/sandbox/wall.sh: the INPUT, FORWARD and IPv6
// chains, the egress ip rule and table, the counting chain) do not exist. wall.sh check
// then finds them all, and a second run leaves exactly the same rules, none twice.
func TestSetupEngineFromNothingTwice(t *testing.T) {
	if testing.Short() {
		t.Skip("changes the host's firewall")
	}
	if os.Geteuid() != 0 {
		testenv.Missing(t, "setup-engine.sh needs root")
	}
	for _, tool := range []string{"podman", "ip", "iptables"} {
		testenv.Tool(t, tool)
	}
	id := os.Getpid() % 100
	net := fmt.Sprintf("envgap-setup-test-%d", id)
	chain := fmt.Sprintf("ENVGAP-SBX-T%d", id)
	isolate := fmt.Sprintf("ENVGAP-ISO-T%d", id)
	chain6 := fmt.Sprintf("ENVGAP-SBX6-T%d", id)
	count := fmt.Sprintf("ENVGAP-EGC-T%d", id)
	pref := 7800 + 2*id
	env := append(os.Environ(), "DOCKER_HOST=unix:///run/podman/podman.sock",
		"ENVGAP_SANDBOX_NETWORK="+net, "ENVGAP_SANDBOX_CHAIN="+chain, "ENVGAP_ISOLATE_CHAIN="+isolate,
		"ENVGAP_SANDBOX6_CHAIN="+chain6, "ENVGAP_EGRESS_COUNT_CHAIN="+count,
		"ENVGAP_EGRESS_PREF="+strconv.Itoa(pref), "ENVGAP_EGRESS_TABLE="+strconv.Itoa(pref))
	sh := func(cmd string) string {
		c := exec.Command("bash", "-c", cmd)
		c.Env = env
		out, _ := c.CombinedOutput()
		return string(out)
	}
	bridge := func() string {
		return strings.TrimSpace(sh("podman network inspect " + net + " --format '{{.NetworkInterface}}' 2>/dev/null"))
	}
	cleanup := func() {
		if b := bridge(); b != "" {
			sh("bash ../core/sandbox/wall.sh remove " + b)
		}
		sh("podman network rm -f " + net)
	}
	cleanup()
	t.Cleanup(cleanup)
	snapshot := func() string {
		return sh(fmt.Sprintf(`ip -4 rule show | grep -E '^(%[1]d|%[2]d):'
echo table; ip -4 route show table %[1]d
echo input; iptables -S INPUT | grep -- '-j %[3]s$'; iptables -S %[3]s
echo forward; iptables -S FORWARD | grep -- '-j %[5]s$'; iptables -S %[5]s
echo ipv6; ip6tables -S | grep -- '%[6]s'
echo mangle; iptables -t mangle -S PREROUTING | grep -- '-j %[4]s$'; iptables -t mangle -S %[4]s`, pref, pref+1, chain, count, isolate, chain6))
	}
	if s := snapshot(); strings.Contains(s, "lookup") || strings.Contains(s, "-A "+chain) {
		t.Fatalf("left from before:\n%s", s)
	}
	run := func() string {
		cmd := exec.Command("bash", "setup-engine.sh")
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("setup-engine.sh: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "export DOCKER_HOST=unix:///run/podman/podman.sock") {
			t.Fatalf("setup-engine.sh did not set up podman (another engine answers?):\n%s", out)
		}
		return snapshot()
	}
	first := run()
	iface := bridge()
	if iface == "" {
		t.Fatalf("no network %s", net)
	}
	for _, want := range []string{
		fmt.Sprintf("%d:\tfrom all iif %s", pref, iface),
		"prohibit default",
		fmt.Sprintf("-A INPUT -i %s -j %s", iface, chain),
		fmt.Sprintf("-A %s -m socket --restore-skmark -m mark --mark 0xe4a0000 -j RETURN", chain),
		fmt.Sprintf("-A %s -p tcp -j REJECT --reject-with tcp-reset", chain),
		fmt.Sprintf("-A FORWARD -i %s -j %s", iface, isolate),
		fmt.Sprintf("-A %s -o %s -p tcp -j REJECT --reject-with tcp-reset", isolate, iface),
		fmt.Sprintf("-A INPUT -i %s -j %s", iface, chain6),
		fmt.Sprintf("-A FORWARD -i %s -j %s", iface, chain6),
		fmt.Sprintf("-A PREROUTING -i %s -m addrtype ! --dst-type LOCAL -m conntrack --ctstate NEW -j %s", iface, count),
	} {
		if strings.Count(first, want) != 1 {
			t.Errorf("after the first run, %q appears %d times, want once:\n%s", want, strings.Count(first, want), first)
		}
	}
	if out := sh("bash ../core/sandbox/wall.sh check " + iface); out != "" {
		t.Errorf("wall.sh check after the set-up: %s", out)
	}
	if second := run(); second != first {
		t.Errorf("a second run changed the rules:\nfirst:\n%s\nsecond:\n%s", first, second)
	}
}

// TestSetUpDaemonsLeaveMakeAlone starts a daemon the way the set-ups do (own_fds_only,
// lib-apt.sh), as a background job and in the foreground, from a recipe of a sub-make with
// a -j of its own under `make -j3`, the shape of make test's set-up. Make reads its
// jobserver pipe to the end when it finishes: a daemon that inherited the pipe kept it
// waiting until CI's time ran out. Here make must finish, and the daemons hold nothing of
// make's.
func TestSetUpDaemonsLeaveMakeAlone(t *testing.T) {
	testenv.Tool(t, "make")
	dir := t.TempDir()
	lib, err := filepath.Abs("lib-apt.sh")
	if err != nil {
		t.Fatal(err)
	}
	// The daemons are sleeps of a duration no other process has.
	tag := fmt.Sprintf("600.%d", os.Getpid())
	script := `log() { :; }; die() { exit 1; }
. "$LIB"
own_fds_only sleep "$TAG" </dev/null >/dev/null 2>&1 &
own_fds_only sh -c 'sleep "$0" </dev/null >/dev/null 2>&1 &' "$TAG"
echo started
`
	makefile := "top:\n\t$(MAKE) --no-print-directory -j3 a b\n" +
		"a:\n\t$(MAKE) --no-print-directory -j2 x y\n" +
		"b:\n\ttrue\nx:\n\ttrue\n" +
		"y:\n\tLIB=" + lib + " TAG=" + tag + " bash daemon.sh\n"
	for name, body := range map[string]string{"daemon.sh": script, "Makefile": makefile} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	daemons := func() []string {
		out, _ := exec.Command("pgrep", "-x", "-f", "sleep "+tag).Output()
		return strings.Fields(string(out))
	}
	t.Cleanup(func() {
		for _, pid := range daemons() {
			if n, err := strconv.Atoi(pid); err == nil {
				syscall.Kill(n, syscall.SIGKILL)
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "--no-print-directory")
	cmd.Dir = dir
	// At the timeout the whole process group goes, and the output is not waited for: the
	// sub-makes and a daemon that kept make's descriptors would hold it open.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("make did not finish: a daemon holds its jobserver pipe\n%s", out)
	}
	if err != nil {
		t.Fatalf("make: %v\n%s", err, out)
	}
	pids := daemons()
	if len(pids) < 2 {
		t.Fatalf("the daemons did not start (%v):\n%s", pids, out)
	}
	for _, pid := range pids {
		fds, err := os.ReadDir("/proc/" + pid + "/fd")
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if n, _ := strconv.Atoi(fd.Name()); n > 2 {
				target, _ := os.Readlink("/proc/" + pid + "/fd/" + fd.Name())
				t.Errorf("daemon %s holds descriptor %s (%s) of its starter", pid, fd.Name(), target)
			}
		}
	}
}

// TestSubordinateRange runs setup-engine.sh's subid_range (images/lib-subid.sh) on files of
// its own: a missing file gets the user's range; one past every other entry's end is added
// to a file with entries (one without its last newline among them), never a second one for
// the user, and a file with no room left is refused.
func TestSubordinateRange(t *testing.T) {
	testenv.Tool(t, "bash")
	dir := t.TempDir()
	run := func(file string) (string, error) {
		c := exec.Command("bash", "-c", `set -euo pipefail
log() { echo "log: $*"; }
die() { echo "die: $*"; exit 1; }
. ./lib-subid.sh
subid_range "$1" containers`, "test", file)
		out, err := c.CombinedOutput()
		return string(out), err
	}
	read := func(file string) string {
		b, _ := os.ReadFile(file)
		return string(b)
	}
	cases := []struct {
		name, before, after string
	}{
		{"missing", "", "containers:2147483647:2147483648\n"},
		{"below the upper half", "alice:100000:65536\n", "alice:100000:65536\ncontainers:2147483647:2147483648\n"},
		{"past the upper half, no last newline", "# comment\nalice:100000:65536\nbob:2147483647:100000",
			"# comment\nalice:100000:65536\nbob:2147483647:100000\ncontainers:2147583647:2147383648\n"},
		{"has one", "containers:100000:65536\n", "containers:100000:65536\n"},
	}
	for _, c := range cases {
		file := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
		if c.name != "missing" {
			os.WriteFile(file, []byte(c.before), 0o644)
		}
		for i := range 2 {
			out, err := run(file)
			if err != nil {
				t.Fatalf("%s, run %d: %v\n%s", c.name, i+1, err, out)
			}
			if got := read(file); got != c.after {
				t.Errorf("%s, run %d: the file holds %q, want %q (said %q)", c.name, i+1, got, c.after, out)
			}
			if want := map[bool]string{true: "log: added containers:", false: "already gives containers"}[i == 0 && c.name != "has one"]; !strings.Contains(out, want) {
				t.Errorf("%s, run %d: said %q, want %q in it", c.name, i+1, out, want)
			}
		}
	}
	full := filepath.Join(dir, "full")
	os.WriteFile(full, []byte("big:100000:4294867295\n"), 0o644)
	if out, err := run(full); err == nil || !strings.Contains(out, "die: ") || read(full) != "big:100000:4294867295\n" {
		t.Errorf("a file without room: %v %q, holds %q", err, out, read(full))
	}
}
