package agent

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envgap/envgap/lib/agent/model"
)

// TestBoxReproClient: the box's repro script (bash alone) asks the server and exits with
// the repro's exit code; a wrong token or no server is exit 2 with a message.
func TestBoxReproClient(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("bash is needed: the box's repro client is a bash script")
	}
	srv, ws, fr := startRepro(t)
	vars, stop, err := srv.BoxEnv("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, kv := range vars {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	if env[EnvRepro] != filepath.Join(ws.RunDir, BoxFileName) {
		t.Fatalf("ENVGAP_REPRO %q", env[EnvRepro])
	}
	run := func(token string) (string, string, int) {
		cmd := exec.Command(env[EnvRepro])
		cmd.Env = append(os.Environ(), EnvReproURL+"="+env[EnvReproURL], EnvReproToken+"="+token)
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errOut.String(), code
	}
	out, _, code := run(env[EnvReproToken])
	if code != 1 || !strings.Contains(out, "=== resolve: pip install") || fr.Runs.Load() != 1 {
		t.Fatalf("repro in the box: exit %d, %q", code, out)
	}
	out, errOut, code := run("wrong")
	if code != 2 || out != "" || !strings.Contains(errOut, "403") || fr.Runs.Load() != 1 {
		t.Errorf("a wrong token: exit %d, %q %q", code, out, errOut)
	}
	stop()
	_, errOut, code = run(env[EnvReproToken])
	if code != 2 || !strings.Contains(errOut, "cannot reach the repro server") {
		t.Errorf("no server: exit %d, %q", code, errOut)
	}
}

func TestParseAgentImagesAndHosts(t *testing.T) {
	cards := []string{"envgap-node-eval", "envgap-python-eval"}
	m, err := ParseAgentImages([]string{"agent:all", "envgap-python-eval=agent:py"}, cards)
	if err != nil || m[""] != "agent:all" || m["envgap-python-eval"] != "agent:py" {
		t.Fatalf("%v %v", m, err)
	}
	c := &Contained{Images: m}
	if c.ImageFor("envgap-python-eval") != "agent:py" || c.ImageFor("envgap-node-eval") != "agent:all" {
		t.Errorf("ImageFor: %v", m)
	}
	for _, bad := range [][]string{{"envgap-rust-eval=x"}, {"a", "b"}, {"envgap-python-eval="}, {""}} {
		if _, err := ParseAgentImages(bad, cards); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	hosts, err := ParseAllowHosts([]string{"API.example.com", "api.example.com:443", "10.0.0.5:8000", "[::1]:8443", "[fd00::1]"})
	if err != nil || strings.Join(hosts, " ") != "10.0.0.5:8000 [::1]:8443 [fd00::1]:443 api.example.com:443" {
		t.Fatalf("%v %v", hosts, err)
	}
	for _, bad := range []string{"https://api.example.com", "api.example.com/v1", "a:0", "a:70000", "bad_host", "-x.com", "user@host"} {
		if _, err := ParseAllowHosts([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestGiveUp: only a refused credential or an unknown model (wrapped as a ProviderError,
// as ActModel returns them) stops the runs not yet started; the first one noted stays.
func TestGiveUp(t *testing.T) {
	var g GiveUp
	throttled := &ProviderError{&model.Error{Kind: model.Retryable, Provider: "openai", Status: 429}}
	for _, err := range []error{nil, errors.New("engine fault"), throttled, fmt.Errorf("run 1: %w", throttled)} {
		g.Note(err)
		if g.Held() != nil {
			t.Fatalf("%v stopped the run", err)
		}
	}
	auth := &ProviderError{&model.Error{Kind: model.Auth, Provider: "bedrock", Status: 403}}
	g.Note(fmt.Errorf("candidate x: %w", auth))
	g.Note(&ProviderError{&model.Error{Kind: model.UnknownModel, Provider: "bedrock"}})
	if g.Held() != auth {
		t.Fatalf("held %v, want the first auth fault", g.Held())
	}
}
