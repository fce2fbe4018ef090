package verify

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
)

// TestSetupThatStepsAroundTheCutoffFails: a gold-like fix whose setup.sh rewrites the
// registry URL its container was given, to a later cut-off or without the run's session,
// fails in scoring; the proxy refuses the request, the run records the refusal, and the
// run's log line (RefusedText) and, for npm, the step's own output name it. The same fix
// through the URL it was given resolves.
func TestSetupThatStepsAroundTheCutoffFails(t *testing.T) {
	st, _ := catalog.Open(t.TempDir())
	fix := pypiFixture(t, "demo-pkg", []fixtureFile{
		{"1.0", "2023-01-01T00:00:00.000000Z", wheel(t, "demo-pkg", "1.0", "VALUE = 1\n")},
		{"2.0", "2023-09-01T00:00:00.000000Z", wheel(t, "demo-pkg", "2.0", "VALUE = 2\n")},
	})
	sess := openEnv(t, st, fix.URL+"/simple/")
	cr := sess.Stage.Cores[0]
	const later = `sed -E 's#/c/[^/]+/#/c/2030-01-01/#'`
	const noSession = `sed -E 's#/s/[^/]+/#/#'`
	tests := []struct {
		name, eco, setup, run string
		refusal               string // "" for the control
		inStep                bool   // the step's output names the refusal (npm prints the body; pip does not)
	}{
		{"pip as given", "python", "pip install demo-pkg==1.0", "python3 -c 'import demo_pkg'", "", false},
		{"pip at a later cut-off", "python", `export PIP_INDEX_URL="$(echo "$PIP_INDEX_URL" | ` + later + `)"; pip install demo-pkg==2.0`, "python3 -c 'import demo_pkg'", "another cut-off than 2023-06-01T23:59:59.999999999Z", false},
		{"pip without the session", "python", `export PIP_INDEX_URL="$(echo "$PIP_INDEX_URL" | ` + noSession + `)"; pip install demo-pkg==1.0`, "python3 -c 'import demo_pkg'", "outside a registry session", false},
		{"npm at a later cut-off", "javascript", `npm install --no-save --registry "$(echo "$npm_config_registry" | ` + later + `)" is-number@7.0.0`, "node -e \"require('is-number')\"", "another cut-off than 2023-06-01T23:59:59.999999999Z", true},
		{"npm without the session", "javascript", `npm install --no-save --registry "$(echo "$npm_config_registry" | ` + noSession + `)" is-number@7.0.0`, "node -e \"require('is-number')\"", "outside a registry session", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			run, _, err := cr.Run(ctx, core.Spec{
				InstanceID: "envgap__o__session-1", Side: core.SideAfter,
				Project: []core.File{{Path: "setup.sh", Content: []byte("set -e\n" + tt.setup + "\n"), Mode: 0o755}},
				Recipe:  schemas.Recipe{Ecosystem: schemas.Ecosystem(tt.eco), ResolveCommand: "bash setup.sh", RunCommand: tt.run},
				Cutoff:  schemas.MustParseCutoff("2023-06-01"), Limits: sandbox.Limits{StepTimeout: 3 * time.Minute},
			})
			if err != nil {
				t.Fatal(err)
			}
			var resolve schemas.StepRecord
			for _, s := range run.Steps {
				if s.Name == core.StepResolve {
					resolve = s
				}
			}
			out, err := st.Get(resolve.Output)
			if err != nil {
				t.Fatal(err)
			}
			if tt.refusal == "" {
				if !run.Resolved || len(run.RegistryRefused) != 0 {
					t.Errorf("the fix as given: resolved %v, refused %q\n%s", run.Resolved, run.RegistryRefused, out)
				}
				return
			}
			if run.Resolved || resolve.ExitCode == 0 {
				t.Errorf("resolved %v, resolve exit %d: the registry served outside the run's session or cut-off\n%s", run.Resolved, resolve.ExitCode, out)
			}
			if len(run.RegistryRefused) == 0 || !strings.Contains(strings.Join(run.RegistryRefused, "\n"), tt.refusal) {
				t.Errorf("the run records %q, want a refusal naming %q", run.RegistryRefused, tt.refusal)
			}
			if txt := core.RefusedText(run); !strings.Contains(txt, "=== registry: request refused") || !strings.Contains(txt, tt.refusal) || !strings.Contains(txt, "cut-off is fixed") {
				t.Errorf("the run's log does not name the refusal: %q", txt)
			}
			// pip takes a refused index page for "no versions" (it shows the 403 with -v only).
			if tt.inStep && (!strings.Contains(string(out), "403") || !strings.Contains(string(out), tt.refusal)) {
				t.Errorf("the step's output does not show the refusal:\n%s", out)
			}
		})
	}
}
