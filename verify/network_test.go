package verify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/internal/testenv"
)

// TestSandboxReachesTheProxyAndNoOtherHostService: a sandbox reaches the registry proxy
// (bound to the sandbox network's gateway alone) and no host service bound to all
// addresses, at the gateway or at any other address of the host.
func TestSandboxReachesTheProxyAndNoOtherHostService(t *testing.T) {
	st, err := catalog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sess := openEnv(t, st, "http://127.0.0.1:1/")
	eng := sess.engines[0]
	if eng.Network() == "" {
		t.Fatal("the engine was opened without its sandbox network")
	}
	cr := sess.Stage.Cores[0]
	pu, err := url.Parse(cr.ProxyURL)
	if err != nil {
		t.Fatal(err)
	}
	gw, proxyPort := pu.Hostname(), pu.Port()
	if got := sess.server.Addr().(*net.TCPAddr).IP.String(); got != gw {
		t.Fatalf("the proxy listens on %s, want the gateway %s alone", sess.server.Addr(), gw)
	}
	host, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	go func() {
		for {
			c, err := host.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("host service\n"))
			c.Close()
		}
	}()
	_, otherPort, _ := net.SplitHostPort(host.Addr().String())
	targets := []string{gw}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && !ipn.IP.IsLoopback() && ipn.IP.String() != gw {
			targets = append(targets, ipn.IP.String())
		}
	}
	steps := []sandbox.Step{{Name: "proxy", Command: fmt.Sprintf(
		`exec 3<>/dev/tcp/%s/%s && printf 'GET /nothing HTTP/1.0\r\n\r\n' >&3 && head -c 8 <&3`, gw, proxyPort)}}
	for _, ip := range targets {
		steps = append(steps, sandbox.Step{Name: "host " + ip, Command: fmt.Sprintf(
			`timeout 5 bash -c 'exec 3<>/dev/tcp/%s/%s && cat <&3'`, ip, otherPort)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := eng.Run(ctx, sandbox.Spec{Image: cr.ImageRef("envgap-python-eval"), Network: sandbox.NetworkDefault,
		Steps: steps, Limits: sandbox.Limits{StepTimeout: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Steps[0]; p.ExitCode != 0 || !strings.HasPrefix(string(p.Output), "HTTP/1.") {
		t.Errorf("the sandbox does not reach the proxy at %s:%s: exit %d, %q", gw, proxyPort, p.ExitCode, p.Output)
	}
	for _, s := range res.Steps[1:] {
		if s.ExitCode == 0 || strings.Contains(string(s.Output), "host service") {
			t.Errorf("%s: the sandbox reached a host service on port %s: exit %d, %q", s.Name, otherPort, s.ExitCode, s.Output)
		}
	}
}

// TestOpenRefusesAnEngineWithoutItsSandboxNetwork: a verify (try, recheck, eval) session on
// an engine without its sandbox network (a name the engine does not have, as Env.Network
// gives it) fails before any container starts, with ErrNoWall and the fix.
func TestOpenRefusesAnEngineWithoutItsSandboxNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the container engine")
	}
	st, err := catalog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	eng, err := sandbox.Connect(ctx, "")
	if err != nil {
		testenv.Missing(t, "no container engine: %v", err)
	}
	defer eng.Close()
	mine := filters.NewArgs(filters.Arg("label", sandbox.LabelOwnerPID+"="+strconv.Itoa(os.Getpid())))
	count := func() int {
		list, err := eng.Client().ContainerList(ctx, container.ListOptions{All: true, Filters: mine})
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}
	before := count()
	sess, err := Open(ctx, Env{Store: st, Network: "envgap-missing-" + strconv.Itoa(os.Getpid()), SweepOlderThan: -1})
	if err == nil {
		sess.Close()
		t.Fatal("Open on an engine without its sandbox network: no error")
	}
	if !errors.Is(err, sandbox.ErrNoWall) || !strings.Contains(err.Error(), "make engine") {
		t.Fatalf("Open: %v, want ErrNoWall with the fix", err)
	}
	if after := count(); after != before {
		t.Fatalf("containers of this process: %d before, %d after the refused Open", before, after)
	}
}
