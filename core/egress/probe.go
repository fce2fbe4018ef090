package egress

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/schemas"
)

// ProbeTarget is the allowed target of the door's probes: a name that never resolves,
// so that nothing the probes let through leaves the host.
const ProbeTarget = "door-probe.invalid"

// probeOtherSNI is the name the SNI probe's ClientHello carries instead of ProbeTarget.
const probeOtherSNI = "other-tenant.invalid"

// CheckDoor probes the egress door from inside a container of image on the engine's
// sandbox network, as a run's container reaches it: two sessions are opened, "this
// run's" (whose credential the container holds) and "another run's", both allowing
// ProbeTarget on ports 80 and 443. It returns one sandbox.Probe per check: this run's
// session serves its own container (a plain request to ProbeTarget is passed on: 502,
// the name does not resolve); a CONNECT to :80 is refused (403); a tunnel whose TLS
// ClientHello names another host than the CONNECT host is closed unforwarded; another
// run's session answers 407 to a request with no credential and to one with this run's,
// and counts neither. Each verdict reads both what the container saw and the sessions'
// records. d is the door to probe (nil: a door on the sandbox network's gateway, as
// envgap's stages open it). image needs bash and coreutils. An error is a fault of the
// engine or of this host, never a leak.
func CheckDoor(ctx context.Context, e *sandbox.Engine, image string, d *Door) ([]sandbox.Probe, error) {
	w := e.Wall()
	if w == nil {
		return nil, fmt.Errorf("%w: the engine at %s was opened without its sandbox network", sandbox.ErrNoWall, e.Host())
	}
	if d == nil {
		d = &Door{Host: w.Gateway, Listen: sandbox.ListenHost}
	}
	allow := []string{ProbeTarget + ":80", ProbeTarget + ":443"}
	mine, err := d.Open(allow)
	if err != nil {
		return nil, err
	}
	defer mine.Close()
	other, err := d.Open(allow)
	if err != nil {
		return nil, err
	}
	defer other.Close()
	hello, err := clientHello(probeOtherSNI)
	if err != nil {
		return nil, fmt.Errorf("a TLS ClientHello for the probe: %w", err)
	}
	var esc strings.Builder
	for _, b := range hello {
		fmt.Fprintf(&esc, `\x%02x`, b)
	}
	hostPort := func(s *Session) (string, string) {
		h, p, _ := net.SplitHostPort(s.Addr())
		return h, p
	}
	mh, mp := hostPort(mine)
	oh, op := hostPort(other)
	// send opens a connection to the door at host:port, sends request (with the
	// credential of $ENVGAP_PROBE_AUTH when auth), reads the status line and headers,
	// then runs after (reading the rest with fd 3), and prints the status line first.
	send := func(host, port, request string, auth bool, after string) string {
		hdr := ""
		if auth {
			hdr = `Proxy-Authorization: %s\r\n`
		}
		args := ""
		if auth {
			args = ` "$ENVGAP_PROBE_AUTH"`
		}
		return `timeout 20 bash -c 'exec 3<>/dev/tcp/` + host + `/` + port + ` || exit 2
printf "` + request + `\r\n` + hdr + `\r\n"` + args + ` >&3
IFS= read -r status <&3; echo "${status%$'"'"'\r'"'"'}"
while IFS= read -r l <&3 && [ -n "${l%$'"'"'\r'"'"'}" ]; do :; done
` + after + `' 2>&1`
	}
	const get = `GET http://` + ProbeTarget + `/ HTTP/1.1\r\nHost: ` + ProbeTarget + `\r\nConnection: close`
	connect := func(port int) string {
		t := ProbeTarget + ":" + strconv.Itoa(port)
		return `CONNECT ` + t + ` HTTP/1.1\r\nHost: ` + t
	}
	afterHello := `printf "%b" "$ENVGAP_PROBE_HELLO" >&3; n=$(timeout 15 cat <&3 | wc -c); echo "closed after $n bytes"`
	probes := []struct {
		name, expected, command string
		want                    string // in the container's output
	}{
		{"this run's door session, with its credential (control)", "passed on (502: " + ProbeTarget + " does not resolve)",
			send(mh, mp, get, true, ""), " 502 "},
		{"CONNECT to :80 of an allowed host", "refused (403, recorded)", send(mh, mp, connect(80), true, ""), " 403 "},
		{"an SNI that is not the CONNECT host", "closed unforwarded (recorded)",
			send(mh, mp, connect(443), true, afterHello), "closed after 0 bytes"},
		{"another run's door session, no credential", "refused (407, counted nowhere)", send(oh, op, get, false, ""), " 407 "},
		{"another run's door session, this run's credential", "refused (407, counted nowhere)", send(oh, op, get, true, ""), " 407 "},
	}
	steps := make([]sandbox.Step, len(probes))
	for i, p := range probes {
		steps[i] = sandbox.Step{Name: p.name, Command: p.command, Timeout: 40 * time.Second}
	}
	res, err := e.Run(ctx, sandbox.Spec{Image: image, Network: sandbox.NetworkDefault, Steps: steps,
		Env:    []string{"ENVGAP_PROBE_AUTH=" + mine.auth, "ENVGAP_PROBE_HELLO=" + esc.String()},
		Labels: map[string]string{"org.envgap.probe": "door"}})
	if err != nil {
		return nil, err
	}
	if len(res.Steps) != len(probes) {
		return nil, fmt.Errorf("the door probe ran %d of %d steps", len(res.Steps), len(probes))
	}
	mrec, orec := mine.Close(), other.Close()
	// What each probe must have left in the records.
	recorded := []bool{
		hasCount(mrec.Allowed, ProbeTarget, 80, ""),
		hasCount(mrec.Refused, ProbeTarget, 80, "CONNECT only to port 443"),
		hasCount(mrec.Refused, ProbeTarget, 443, "TLS SNI "+probeOtherSNI+" is not the CONNECT host") && !hasCount(mrec.Allowed, ProbeTarget, 443, ""),
		len(orec.Allowed)+len(orec.Refused) == 0,
		len(orec.Allowed)+len(orec.Refused) == 0 && len(mrec.Allowed) == 1 && len(mrec.Refused) == 2,
	}
	out := make([]sandbox.Probe, len(probes))
	for i, p := range probes {
		sr := res.Steps[i]
		o := strings.TrimSpace(string(sr.Output))
		got := strings.Join(strings.Fields(strings.ReplaceAll(o, "\n", "; ")), " ")
		if len(got) > 120 {
			got = got[:120] + "..."
		}
		if got == "" {
			got = fmt.Sprintf("exit %d", sr.ExitCode)
		}
		leak := !strings.Contains(o, p.want) || !recorded[i]
		if leak && strings.Contains(o, p.want) {
			got += " (not as recorded by the door)"
		}
		out[i] = sandbox.Probe{Name: p.name, Expected: p.expected, Result: got, Leak: leak}
	}
	return out, nil
}

func hasCount(rs []schemas.ConnectionCount, host string, port int, reason string) bool {
	for _, r := range rs {
		if r.Host == host && r.Port == port && strings.Contains(r.Reason, reason) && r.Count > 0 {
			return true
		}
	}
	return false
}

// clientHello returns the first flight of a TLS client (crypto/tls) for serverName: its
// ClientHello record.
func clientHello(serverName string) ([]byte, error) {
	c1, c2 := net.Pipe()
	type result struct {
		b   []byte
		err error
	}
	got := make(chan result, 1)
	go func() {
		hdr := make([]byte, 5)
		if _, err := io.ReadFull(c2, hdr); err != nil {
			got <- result{nil, err}
			return
		}
		body := make([]byte, int(hdr[3])<<8|int(hdr[4]))
		_, err := io.ReadFull(c2, body)
		c2.Close()
		got <- result{append(hdr, body...), err}
	}()
	c1.SetDeadline(time.Now().Add(10 * time.Second))
	tls.Client(c1, &tls.Config{ServerName: serverName, MinVersion: tls.VersionTLS12}).Handshake()
	c1.Close()
	r := <-got
	if r.err == nil && len(r.b) < 50 {
		r.err = errors.New("no ClientHello written")
	}
	return r.b, r.err
}
