package egress

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/internal/testenv"
)

const probeImage = "localhost/envgap-base:bookworm"

func needEngine(t *testing.T) *sandbox.Engine {
	t.Helper()
	e, err := sandbox.Connect(context.Background(), "")
	if err != nil {
		testenv.Missing(t, "no container engine: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	if _, err := e.ImageID(context.Background(), probeImage); err != nil {
		testenv.Missing(t, "image %s: %v (run images/setup-engine.sh)", probeImage, err)
	}
	return e
}

// The door's probes of `envgap sandbox check`, from inside a real sandbox container: each
// is refused as expected (and the control passes), with the door's record agreeing.
func TestCheckDoorFromASandboxContainer(t *testing.T) {
	e := needEngine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	probes, err := CheckDoor(ctx, e, probeImage, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"this run's door session", "CONNECT to :80", "an SNI that is not the CONNECT host",
		"another run's door session, no credential", "another run's door session, this run's credential"}
	if len(probes) != len(want) {
		t.Fatalf("%d probes: %+v", len(probes), probes)
	}
	for i, p := range probes {
		t.Logf("%s | %s | %s", p.Name, p.Expected, p.Result)
		if !strings.HasPrefix(p.Name, want[i]) || p.Leak {
			t.Errorf("probe %q: %+v", want[i], p)
		}
	}
	for i, r := range []string{" 502 ", " 403 ", "closed after 0 bytes", " 407 ", " 407 "} {
		if !strings.Contains(" "+probes[i].Result+" ", r) {
			t.Errorf("probe %q: result %q, want %q", probes[i].Name, probes[i].Result, r)
		}
	}
}

// The probes can fail: a door that tunnels to port 80 instead of 443 leaks on the :80
// probe (the tunnel is opened) and fails the SNI probe (its CONNECT to :443 is refused
// before any ClientHello is read).
func TestCheckDoorSeesALeakyDoor(t *testing.T) {
	e := needEngine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	d := &Door{Host: e.Wall().Gateway, Listen: sandbox.ListenHost, HelloTimeout: time.Second, tlsPort: 80}
	probes, err := CheckDoor(ctx, e, probeImage, d)
	if err != nil {
		t.Fatal(err)
	}
	if len(probes) != 5 || probes[0].Leak || !probes[1].Leak || !probes[2].Leak || probes[3].Leak || probes[4].Leak {
		t.Errorf("probes of a door tunnelling to :80: %+v", probes)
	}
}
