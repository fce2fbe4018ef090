package verify

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/data/catalog"
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
