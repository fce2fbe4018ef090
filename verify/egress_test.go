package verify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/core/registry"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/internal/testenv"
	"github.com/envgap/envgap/schemas"
)

// npmLive returns the live npm registry (the npm client's) and its host and port.
func npmLive(t *testing.T) (string, string, int) {
	t.Helper()
	reg, err := registry.NPMConfigRegistry(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(reg)
	if err != nil {
		t.Fatal(err)
	}
	port := 443
	if u.Scheme == "http" {
		port = 80
	}
	if p := u.Port(); p != "" {
		port, _ = strconv.Atoi(p)
	}
	return reg, u.Hostname(), port
}

func refusedCount(rs []schemas.ConnectionCount, host string, port int) int {
	for _, r := range rs {
		if r.Host == host && r.Port == port {
			return r.Count
		}
	}
	return 0
}

// TestEgressDoorIsTheOnlyWayOut: in a sandbox with the door's settings, pip installs from
// the date-limited index through the registry proxy, an apt source of the image is
// reached through the door, the live npm registry is refused at the door (HTTPS_PROXY)
// and by the kernel (a direct connection to its address), and the door records the
// refusal.
func TestEgressDoorIsTheOnlyWayOut(t *testing.T) {
	st, _ := catalog.Open(t.TempDir())
	fix := pypiFixture(t, "demo-pkg", []fixtureFile{
		{"1.0", "2023-01-01T00:00:00.000000Z", wheel(t, "demo-pkg", "1.0", "VALUE = 1\n")},
		{"2.0", "2023-09-01T00:00:00.000000Z", wheel(t, "demo-pkg", "2.0", "VALUE = 2\n")},
	})
	sess := openEnv(t, st, fix.URL+"/simple/")
	cr := sess.Stage.Cores[0]
	if cr.Door == nil {
		t.Fatal("the session's core has no egress door")
	}
	live, npmHost, npmPort := npmLive(t)
	ips, err := net.LookupHost(npmHost)
	if err != nil || len(ips) == 0 {
		t.Fatalf("resolving the npm registry's host on this host: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	allow, err := cr.Allowlist(ctx, "envgap-python-eval")
	if err != nil {
		t.Fatal(err)
	}
	if len(allow) == 0 {
		t.Fatal("the python image has no apt source on its allowlist")
	}
	for _, a := range allow {
		if strings.HasPrefix(a, npmHost+":") {
			t.Fatalf("the allowlist %v holds the npm registry", allow)
		}
	}
	door, doorEnv, doorFiles, err := cr.OpenDoor(ctx, "envgap-python-eval")
	if err != nil {
		t.Fatal(err)
	}
	defer door.Close()
	cutoff, err := schemas.ParseCutoff("2023-06-01T00:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	regSess := cr.Proxy.NewSession(cutoff)
	defer regSess.Close()
	// The first apt source of the image, fetched as apt would: through http(s)_proxy.
	aptFetch := `python3 - <<'PY'
import glob, re, urllib.request
text = ""
for f in ["/etc/apt/sources.list"] + glob.glob("/etc/apt/sources.list.d/*"):
    try: text += open(f).read() + "\n"
    except OSError: pass
m = re.search(r"^deb\s+(?:\[[^\]]*\]\s+)?(https?://\S+)\s+(\S+)", text, re.M) or re.search(r"^URIs:\s*(https?://\S+)[\s\S]*?^Suites:\s*(\S+)", text, re.M)
url = m.group(1).rstrip("/") + "/dists/" + m.group(2) + "/Release"
body = urllib.request.urlopen(url, timeout=60).read()
print("apt source ok", url, len(body), b"Suite:" in body)
PY`
	directPy := fmt.Sprintf(`python3 -c 'import socket; socket.create_connection((%q, %d), timeout=20)'`, ips[0], npmPort)
	steps := []sandbox.Step{
		{Name: "pip", Command: "pip install demo-pkg && python3 -c 'import demo_pkg; print(\"value\", demo_pkg.VALUE)'"},
		{Name: "apt", Command: aptFetch},
		// apt itself, with the door's Acquire::http::Proxy (the session's credential in it).
		{Name: "apt-get", Command: "apt-get update 2>&1 | tail -5; exit ${PIPESTATUS[0]}"},
		{Name: "npm-live-via-proxy", Command: fmt.Sprintf(`python3 -c 'import urllib.request; urllib.request.urlopen(%q, timeout=20)'`, live+"left-pad")},
		{Name: "npm-live-direct", Command: directPy},
		{Name: "npm-live-noproxy", Command: fmt.Sprintf(`env -u HTTPS_PROXY -u https_proxy -u HTTP_PROXY -u http_proxy python3 -c 'import socket; socket.create_connection((%q, %d), timeout=20)'`, ips[0], npmPort)},
	}
	res, err := sess.engines[0].Run(ctx, sandbox.Spec{Image: cr.ImageRef("envgap-python-eval"), Network: sandbox.NetworkDefault,
		Env: append(regSess.Env(cr.ProxyURL), doorEnv...), SystemFiles: doorFiles, Steps: steps,
		Limits: sandbox.Limits{StepTimeout: 2 * time.Minute}, Started: regSess.Bind})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]sandbox.StepResult{}
	for _, s := range res.Steps {
		out[s.Name] = s
	}
	if s := out["pip"]; s.ExitCode != 0 || !strings.Contains(string(s.Output), "value 1") {
		t.Errorf("pip through the registry proxy: exit %d\n%s", s.ExitCode, s.Output)
	}
	if s := out["apt"]; s.ExitCode != 0 || !strings.Contains(string(s.Output), "apt source ok") || !strings.Contains(string(s.Output), "True") {
		t.Errorf("the image's apt source through the door: exit %d\n%s", s.ExitCode, s.Output)
	}
	if s := out["apt-get"]; s.ExitCode != 0 || strings.Contains(string(s.Output), "407") || strings.Contains(string(s.Output), "Err:") {
		t.Errorf("apt-get update through the door: exit %d\n%s", s.ExitCode, s.Output)
	}
	if s := out["npm-live-via-proxy"]; s.ExitCode == 0 || !strings.Contains(string(s.Output), "403") {
		t.Errorf("the live npm registry through the door was not refused: exit %d\n%s", s.ExitCode, s.Output)
	}
	for _, name := range []string{"npm-live-direct", "npm-live-noproxy"} {
		if s := out[name]; s.ExitCode == 0 || !(strings.Contains(string(s.Output), "No route to host") || strings.Contains(string(s.Output), "refused") || strings.Contains(string(s.Output), "prohibited")) {
			t.Errorf("%s: a direct connection to the npm registry's address was not refused by the kernel: exit %d\n%s", name, s.ExitCode, s.Output)
		}
	}
	rec := door.Close()
	if n := refusedCount(rec.Refused, npmHost, npmPort); n != 1 {
		t.Errorf("the door recorded %d refusals of %s:%d, want 1: %+v", n, npmHost, npmPort, rec.Refused)
	}
	if len(rec.Allowed) == 0 {
		t.Errorf("the door let nothing through: %+v", rec)
	}
}

// TestEgressSetupThatReachesAroundTheProxyFails: a fix whose setup step installs from the
// live registry with its own --registry / --index-url fails in scoring, and the run
// records the refusal; the same install through the date-limited registry works.
func TestEgressSetupThatReachesAroundTheProxyFails(t *testing.T) {
	st, _ := catalog.Open(t.TempDir())
	fix := pypiFixture(t, "demo-pkg", []fixtureFile{
		{"1.0", "2023-01-01T00:00:00.000000Z", wheel(t, "demo-pkg", "1.0", "VALUE = 1\n")},
	})
	sess := openEnv(t, st, fix.URL+"/simple/")
	cr := sess.Stage.Cores[0]
	live, npmHost, npmPort := npmLive(t)
	pypiURL, _ := url.Parse(registry.DefaultPyPIUpstream)
	today := time.Now().UTC().Format("2006-01-02")
	tests := []struct {
		name, eco, setup, run string
		date                  string
		resolved              bool
		host                  string
		port                  int
	}{
		{"npm own registry", "javascript", "npm install --no-save --registry " + live + " is-number@7.0.0", "node -e \"require('is-number')\"", today, false, npmHost, npmPort},
		{"npm through the proxy", "javascript", "npm install --no-save is-number@7.0.0", "node -e \"require('is-number')\"", today, true, "", 0},
		{"pip own index", "python", "pip install --index-url " + registry.DefaultPyPIUpstream + " demo-pkg", "python3 -c 'import demo_pkg'", "2023-06-01", false, pypiURL.Hostname(), 443},
		{"pip through the proxy", "python", "pip install demo-pkg", "python3 -c 'import demo_pkg'", "2023-06-01", true, "", 0},
		// Maven with the door's settings.xml proxies and MAVEN_OPTS (its repository is the
		// image's own on this machine's local images).
		{"maven with the door's settings", "java", "mvn -B -q package", "java -cp target/demo-1.0.jar demo.App", today, true, "", 0},
	}
	pom := []core.File{
		{Path: "pom.xml", Content: []byte(`<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>demo</groupId><artifactId>demo</artifactId><version>1.0</version><packaging>jar</packaging>
<properties><maven.compiler.source>17</maven.compiler.source><maven.compiler.target>17</maven.compiler.target></properties></project>`)},
		{Path: "src/main/java/demo/App.java", Content: []byte("package demo; public class App { public static void main(String[] a) { System.out.println(\"java ok\"); } }\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			eco := schemas.Ecosystem(tt.eco)
			project := []core.File{{Path: "setup.sh", Content: []byte("set -e\n" + tt.setup + "\n"), Mode: 0o755}}
			if eco == schemas.EcosystemJava {
				project = append(project, pom...)
			}
			run, _, err := cr.Run(ctx, core.Spec{
				InstanceID: "envgap__o__egress-1", Side: core.SideAfter,
				Project: project,
				Recipe:  schemas.Recipe{Ecosystem: eco, ResolveCommand: "bash setup.sh", RunCommand: tt.run},
				Cutoff:  schemas.MustParseCutoff(tt.date), Limits: sandbox.Limits{StepTimeout: 3 * time.Minute},
			})
			if err != nil {
				t.Fatal(err)
			}
			if run.CoreVersion != core.Version || run.Resolved != tt.resolved {
				t.Errorf("resolved %v, want %v (core %s); steps %+v", run.Resolved, tt.resolved, run.CoreVersion, run.Steps)
			}
			if tt.host == "" {
				if len(run.RefusedConnections) != 0 {
					t.Errorf("refused connections %+v, want none", run.RefusedConnections)
				}
				return
			}
			if refusedCount(run.RefusedConnections, tt.host, tt.port) == 0 {
				t.Errorf("the run does not record the refusal of %s:%d: %+v", tt.host, tt.port, run.RefusedConnections)
			}
			// Refused for its target, so the client sent the session's credential (a request
			// without it is answered 407 and recorded nowhere).
			for _, r := range run.RefusedConnections {
				if r.Host == tt.host && r.Reason != "not on the allowlist" {
					t.Errorf("refusal of %s:%d: reason %q, want \"not on the allowlist\"", r.Host, r.Port, r.Reason)
				}
			}
			if txt := core.RefusedText(run); !strings.Contains(txt, fmt.Sprintf("%s:%d (", tt.host, tt.port)) {
				t.Errorf("the run's log line does not name the refused host: %q", txt)
			}
		})
	}
}

// A run reuses the door's allowlist of the image id it last saw for an image, without
// asking the engine again; when the image was rebuilt meanwhile, the run (on the new id)
// is an infrastructure fault that names it, and the next run reads the new image's
// sources.
func TestEgressDoorNoticesARebuiltImage(t *testing.T) {
	st, _ := catalog.Open(t.TempDir())
	sess := openEnv(t, st, "http://127.0.0.1:1/simple/")
	cr := sess.Stage.Cores[0]
	docker := testenv.Tool(t, "docker")
	ref := "localhost/envgap-door-rebuild-test:latest"
	var built []string
	build := func(label string) {
		t.Helper()
		cmd := exec.Command(docker, "build", "-q", "-t", ref, "-")
		cmd.Stdin = strings.NewReader("FROM " + schemas.ImageRef("envgap-python-eval") + "\nLABEL org.envgap.test=" + label + "\n")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("docker build: %v\n%s", err, out)
		}
		built = append(built, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { exec.Command(docker, append([]string{"rmi", "-f"}, built...)...).Run() })
	build("one")
	cr.Images = func(name string) string {
		if name == "envgap-python-eval" {
			return ref
		}
		return schemas.ImageRef(name)
	}
	run := func(i int) error {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		_, _, err := cr.Run(ctx, core.Spec{InstanceID: "envgap__o__rebuild-1", Side: core.SideAfter,
			Project: []core.File{{Path: "app.py", Content: []byte(fmt.Sprintf("print('ok')\n# %d\n", i))}},
			Recipe:  schemas.Recipe{Ecosystem: schemas.EcosystemPython, ResolveCommand: "true", RunCommand: "python3 app.py"},
			Cutoff:  schemas.MustParseCutoff("2024-01-01"), Limits: sandbox.Limits{StepTimeout: time.Minute}})
		return err
	}
	if err := run(1); err != nil {
		t.Fatalf("first run: %v", err)
	}
	build("two")
	var infra *core.InfraError
	if err := run(2); !errors.As(err, &infra) || !strings.Contains(err.Error(), "rebuilt since its package sources were read") {
		t.Fatalf("run on the rebuilt image: %v, want an infrastructure fault naming the rebuild", err)
	}
	if err := run(3); err != nil {
		t.Fatalf("the run after: %v", err)
	}
}
