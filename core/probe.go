package core

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/envgap/envgap/core/registry"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/schemas"
)

// probeCutoff is the cut-off of the registry probes' sessions.
const probeCutoff = "2019-01-01"

// CheckRegistrySessions probes the registry proxy's sessions from inside real sandbox
// containers of image, as sandbox check's registry lines: a proxy like the core's (every
// request outside a session the harness opened is refused) listens on the host address
// containers reach; one container ("another run's") holds a session of its own, and the
// probe container holds another, bound to it by the Started hook. From the probe
// container: a request inside its session is answered (the control); a request outside
// the session, at a later cut-off under its session, and under the other run's session
// are refused (403), and each refusal is recorded in the probe container's session and
// not in the other's. The proxy's upstreams are unreachable addresses: nothing leaves the
// host. An error is a fault of the engine, never a leak.
func CheckRegistrySessions(ctx context.Context, eng *sandbox.Engine, image string) ([]sandbox.Probe, error) {
	return checkRegistrySessions(ctx, eng, image, registry.Options{})
}

// checkRegistrySessions is CheckRegistrySessions with the proxy's options (a test turns
// sessions off to see the probes catch it).
func checkRegistrySessions(ctx context.Context, eng *sandbox.Engine, image string, opts registry.Options) ([]sandbox.Probe, error) {
	gw, err := eng.HostAddress(ctx)
	if err != nil {
		return nil, err
	}
	ln, err := sandbox.ListenHost(net.JoinHostPort(gw, "0"))
	if err != nil {
		return nil, err
	}
	opts.PyPIUpstream, opts.NPMUpstream, opts.UpstreamTimeout = "http://127.0.0.1:1/simple/", "http://127.0.0.1:1/", 5*time.Second
	srv, err := registry.ServeOn(opts, ln)
	if err != nil {
		ln.Close()
		return nil, err
	}
	defer srv.Close()
	hostPort := ln.Addr().String()
	cut := schemas.MustParseCutoff(probeCutoff)
	later := time.Now().UTC().Format("2006-01-02")

	other := srv.Proxy.NewSession(cut)
	defer other.Close()
	dir, err := os.MkdirTemp("", "envgap-probe-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	box, err := eng.OpenBox(ctx, sandbox.BoxSpec{Image: image, Dir: dir, Network: sandbox.NetworkDefault, Started: other.Bind,
		Labels: map[string]string{"org.envgap.probe": "other-run"}, Limits: sandbox.Limits{StepTimeout: time.Minute}})
	if err != nil {
		return nil, fmt.Errorf("the other run's container: %w", err)
	}
	defer box.Close()

	mine := srv.Proxy.NewSession(cut)
	defer mine.Close()
	// GET path from inside, printing "<status> <why>": the reason of a refusal (between
	// "): " and the first ";") or the first line of an answer.
	get := func(path string) string {
		return fmt.Sprintf(`exec 3<>/dev/tcp/%s/%d || exit 3
printf 'GET %%s HTTP/1.0\r\nHost: %s\r\n\r\n' '%s' >&3
r=$(cat <&3 | tr -d '\r')
st=$(printf '%%s\n' "$r" | head -1 | cut -d' ' -f2)
body=$(printf '%%s\n' "$r" | sed '1,/^$/d' | head -1)
why=$(printf '%%s' "$body" | sed -n -E 's/^envgap registry refused [^ ]+ \([^)]*\): ([^;]*);.*/\1/p')
echo "$st ${why:-$body}"`, gw, ln.Addr().(*net.TCPAddr).AddrPort().Port(), hostPort, path)
	}
	base := "/s/" + mine.ID() + "/c/" + probeCutoff
	probes := []struct {
		name, expected, path, want string
	}{
		{"a request inside its session (control)", "served (200)", base + "/", "200 "},
		{"a request outside the session", "refused (403), recorded", "/c/" + probeCutoff + "/pypi/simple/demo/", "403 "},
		{"a later cut-off (" + later + ") under its session", "refused (403), recorded", "/s/" + mine.ID() + "/c/" + later + "/pypi/simple/demo/", "403 "},
		{"another run's session", "refused (403), recorded", "/s/" + other.ID() + "/c/" + probeCutoff + "/pypi/simple/demo/", "403 "},
	}
	var steps []sandbox.Step
	for _, p := range probes {
		steps = append(steps, sandbox.Step{Name: p.name, Command: get(p.path), Timeout: 30 * time.Second})
	}
	var bound netip.Addr
	res, err := eng.Run(ctx, sandbox.Spec{Image: image, Network: sandbox.NetworkDefault, Steps: steps,
		Labels: map[string]string{"org.envgap.probe": "registry"},
		Started: func(a netip.Addr) error {
			bound = a
			return mine.Bind(a)
		}})
	if err != nil {
		return nil, err
	}
	rec := mine.Record()
	if n := len(other.Record().Refused); n > 0 {
		// Recorded in a session the asker does not hold: every refusal line says so.
		rec.Refused = nil
	}
	out := make([]sandbox.Probe, len(probes))
	for i, p := range probes {
		sr := res.Steps[i]
		first, _, _ := strings.Cut(strings.TrimSpace(string(sr.Output)), "\n")
		got := strings.Join(strings.Fields(first), " ")
		leak := sr.ExitCode != 0 || !strings.HasPrefix(got+" ", p.want)
		if i == 0 {
			got, _, _ = strings.Cut(got, ": use ")
		} else {
			// Each refusal is recorded in the asker's session, under the path it asked.
			recorded := false
			for _, e := range rec.Refused {
				recorded = recorded || strings.Contains(e.Reason, "refused "+p.path+" ")
			}
			if recorded {
				got += ", recorded"
			} else {
				got += ", not recorded in " + bound.String() + "'s session"
				leak = true
			}
		}
		if len(got) > 120 {
			got = got[:120] + "..."
		}
		if got == "" {
			got = fmt.Sprintf("exit %d", sr.ExitCode)
		}
		out[i] = sandbox.Probe{Name: p.name, Expected: p.expected, Result: got, Leak: leak}
	}
	return out, nil
}
