package images_test

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/envgap/envgap/internal/testenv"
)

// TestSetupEngineFromNothingTwice runs images/setup-engine.sh for a sandbox network of its
// own (names and rule numbers of this test, beside the machine's real `envgap`), from
// nothing: the network, its firewall chain, the egress ip rules and table and the
// counting chain do not exist. A second run leaves exactly the same rules, none twice.
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
	count := fmt.Sprintf("ENVGAP-EGC-T%d", id)
	pref := 7800 + 2*id
	env := append(os.Environ(), "DOCKER_HOST=unix:///run/podman/podman.sock",
		"ENVGAP_SANDBOX_NETWORK="+net, "ENVGAP_SANDBOX_CHAIN="+chain, "ENVGAP_EGRESS_COUNT_CHAIN="+count,
		"ENVGAP_EGRESS_PREF="+strconv.Itoa(pref), "ENVGAP_EGRESS_TABLE="+strconv.Itoa(pref))
	sh := func(cmd string) string {
		out, _ := exec.Command("bash", "-c", cmd).CombinedOutput()
		return string(out)
	}
	cleanup := func() {
		sh(fmt.Sprintf(`podman network rm -f %[1]s
for p in %[2]d %[3]d; do while ip -4 rule del pref $p 2>/dev/null; do :; done; done
ip -4 route flush table %[2]d 2>/dev/null
iptables -S INPUT | grep -- '-j %[4]s$' | sed 's/^-A //' | while read -r r; do iptables -D $r; done
iptables -F %[4]s; iptables -X %[4]s
iptables -t mangle -S PREROUTING | grep -- '-j %[5]s$' | sed 's/^-A //' | while read -r r; do iptables -t mangle -D $r; done
iptables -t mangle -F %[5]s; iptables -t mangle -X %[5]s`, net, pref, pref+1, chain, count))
	}
	cleanup()
	t.Cleanup(cleanup)
	snapshot := func() string {
		return sh(fmt.Sprintf(`ip -4 rule show | grep -E '^(%[1]d|%[2]d):'
echo table; ip -4 route show table %[1]d
echo input; iptables -S INPUT | grep -- '-j %[3]s$'; iptables -S %[3]s
echo mangle; iptables -t mangle -S PREROUTING | grep -- '-j %[4]s$'; iptables -t mangle -S %[4]s`, pref, pref+1, chain, count))
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
	subnet := strings.TrimSpace(sh("podman network inspect " + net + ` --format '{{range .Subnets}}{{if .Gateway.To4}}{{.Subnet}}{{end}}{{end}}'`))
	if subnet == "" {
		t.Fatalf("no network %s", net)
	}
	for _, want := range []string{
		fmt.Sprintf("%d:\tfrom %s to %s lookup main", pref, subnet, subnet),
		fmt.Sprintf("%d:\tfrom %s lookup %d", pref+1, subnet, pref),
		"prohibit default",
		fmt.Sprintf("-A INPUT -s %s -j %s", subnet, chain),
		"-j REJECT --reject-with tcp-reset",
		fmt.Sprintf("-A PREROUTING -s %s ! -d %s -m addrtype ! --dst-type LOCAL -m conntrack --ctstate NEW -j %s", subnet, subnet, count),
	} {
		if strings.Count(first, want) != 1 {
			t.Errorf("after the first run, %q appears %d times, want once:\n%s", want, strings.Count(first, want), first)
		}
	}
	if second := run(); second != first {
		t.Errorf("a second run changed the rules:\nfirst:\n%s\nsecond:\n%s", first, second)
	}
}
