package core

import (
	"context"
	"strings"
	"testing"

	"github.com/envgap/envgap/core/registry"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/internal/testenv"
	"github.com/envgap/envgap/schemas"
)

func probeEngine(t *testing.T) (*sandbox.Engine, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the container engine")
	}
	ctx := context.Background()
	eng, err := sandbox.Connect(ctx, "")
	if err != nil {
		testenv.Missing(t, "no container engine: %v", err)
	}
	t.Cleanup(func() { eng.Close() })
	img := schemas.ImageRef("envgap-python-eval")
	if _, err := eng.ImageID(ctx, img); err != nil {
		testenv.Missing(t, "image %s: %v (make images)", img, err)
	}
	return eng, img
}

// TestRegistrySessionProbes runs sandbox check's registry probes from real sandbox
// containers: the control is served, and a request outside the session, a later cut-off
// and another run's session are refused and recorded in the asker's session. A proxy that
// serves requests outside sessions (the stand-alone one) leaks, and the probes say so.
func TestRegistrySessionProbes(t *testing.T) {
	eng, img := probeEngine(t)
	probes, err := CheckRegistrySessions(context.Background(), eng, img)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"200 ", "403 a request outside a registry session, recorded", "403 another cut-off than 2019-01-01T23:59:59.999999999Z, recorded", "403 registry session "}
	if len(probes) != len(want) {
		t.Fatalf("%d probes, want %d: %+v", len(probes), len(want), probes)
	}
	for i, p := range probes {
		t.Logf("%-45s %-25s %s", p.Name, p.Expected, p.Result)
		if p.Leak || !strings.HasPrefix(p.Result, want[i]) {
			t.Errorf("%s: leak %v, result %q, want %q...", p.Name, p.Leak, p.Result, want[i])
		}
	}
	if !strings.HasSuffix(probes[3].Result, "belongs to another container, recorded") {
		t.Errorf("another run's session: %q", probes[3].Result)
	}

	leaky, err := checkRegistrySessions(context.Background(), eng, img, registry.Options{AnyCutoff: true})
	if err != nil {
		t.Fatal(err)
	}
	if !leaky[1].Leak || leaky[0].Leak || leaky[2].Leak || leaky[3].Leak {
		t.Errorf("a proxy serving outside sessions: the probes say %+v, want the request outside the session (and only it) leaking", leaky)
	}
}
