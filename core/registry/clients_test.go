package registry

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/internal/testenv"
	"github.com/envgap/envgap/schemas"
)

// clientEnv builds a clean environment for a real client: only PATH from the host, HOME in
// a temporary directory, no inherited pip or npm settings, and ClientEnv for the proxy.
func clientEnv(t *testing.T, root string, cutoff schemas.Cutoff, drop ...string) []string {
	home := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "PIP_CONFIG_FILE=/dev/null", "PIP_NO_CACHE_DIR=1",
		"npm_config_userconfig=" + filepath.Join(home, ".npmrc"), "npm_config_cache=" + filepath.Join(home, "npm-cache"),
		"npm_config_globalconfig=" + filepath.Join(home, "global-npmrc"), "npm_config_loglevel=error", "NO_UPDATE_NOTIFIER=1"}
	if pr := os.Getenv("PYENV_ROOT"); pr != "" {
		env = append(env, "PYENV_ROOT="+pr)
	}
	for _, kv := range ClientEnv(root, cutoff) {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(drop, k) {
			env = append(env, kv)
		}
	}
	return env
}

func run(t *testing.T, dir string, env []string, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestRealPip(t *testing.T) {
	if testing.Short() {
		t.Skip("real clients skipped in -short")
	}
	testenv.Command(t, "python3", "-m", "pip", "--version")
	up := newUpstream(t)
	p, srv := newTestProxy(t, up, nil)
	cut, _ := schemas.ParseCutoff(testCutoff)
	s := localSession(t, p, cut)
	env := clientEnv(t, s.Root(srv.URL), cut)
	dir := t.TempDir()

	// Versions pip can see: 1.1 only as an sdist, 0.8/0.9 yanked, 1.2 untimed, 2.0 too new.
	out, err := run(t, dir, env, "python3", "-m", "pip", "index", "versions", "demo")
	if err != nil {
		t.Fatalf("pip index versions: %v\n%s", err, out)
	}
	if !strings.Contains(out, "Available versions: 1.1, 1.0\n") {
		t.Errorf("pip index versions:\n%s", out)
	}
	// Newest wheel at the cut-off is 1.0 (1.1's wheel came 1 µs too late).
	dl := filepath.Join(dir, "dl")
	out, err = run(t, dir, env, "python3", "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-d", dl, "demo")
	if err != nil {
		t.Fatalf("pip download: %v\n%s", err, out)
	}
	ents, _ := os.ReadDir(dl)
	if len(ents) != 1 || ents[0].Name() != "demo-1.0-py3-none-any.whl" {
		t.Errorf("downloaded %v\n%s", ents, out)
	}
	// A version newer than the cut-off does not exist for pip.
	out, err = run(t, dir, env, "python3", "-m", "pip", "download", "--no-deps", "-d", dl, "demo==2.0")
	if err == nil || !strings.Contains(out, "No matching distribution found for demo==2.0") {
		t.Errorf("demo==2.0 should not resolve: %v\n%s", err, out)
	}
	// Install through PEP 658 metadata, with a redirect for the unnormalised name.
	target := filepath.Join(dir, "target")
	out, err = run(t, dir, env, "python3", "-m", "pip", "install", "--no-deps", "--only-binary=:all:", "--target", target, "Foo.Bar_baz", "demo==1.0")
	if err != nil {
		t.Fatalf("pip install: %v\n%s", err, out)
	}
	for _, d := range []string{"demo-1.0.dist-info", "foo_bar_baz-1.0.dist-info"} {
		if _, err := os.Stat(filepath.Join(target, d)); err != nil {
			t.Errorf("%s not installed: %v\n%s", d, err, out)
		}
	}
	rec := s.Close()
	if len(rec.Errors) != 0 {
		t.Errorf("proxy errors: %+v", rec.Errors)
	}
	if !slices.Contains(rec.Served, Event{Ecosystem: "pypi", Package: "demo", Version: "1.0", File: "demo-1.0-py3-none-any.whl"}) {
		t.Errorf("record lacks the wheel: %+v", rec.Served)
	}
}

func TestRealNPM(t *testing.T) {
	if testing.Short() {
		t.Skip("real clients skipped in -short")
	}
	testenv.Tool(t, "npm")
	up := newUpstream(t)
	p, srv := newTestProxy(t, up, nil)
	cut, _ := schemas.ParseCutoff(testCutoff)
	tests := []struct {
		name string
		drop []string
	}{
		{"proxy alone", []string{"npm_config_before"}},
		{"with npm_config_before", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := localSession(t, p, cut)
			env := clientEnv(t, s.Root(srv.URL), cut, tt.drop...)
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"envgap-fixture-app","version":"1.0.0","private":true}`), 0o644)
			out, err := run(t, dir, env, "npm", "install", "--no-package-lock", "demo-pkg", "@scope/pkg", "untimed-pkg", "pre-pkg@next")
			if err != nil {
				t.Fatalf("npm install: %v\n%s", err, out)
			}
			want := map[string]string{"demo-pkg": "1.2.0", "@scope/pkg": "1.0.0", "untimed-pkg": "1.0.0", "pre-pkg": "1.0.0-alpha.1"}
			for name, v := range want {
				b, err := os.ReadFile(filepath.Join(dir, "node_modules", name, "package.json"))
				var pj struct{ Version string }
				if err != nil || json.Unmarshal(b, &pj) != nil || pj.Version != v {
					t.Errorf("%s installed %q (%v), want %s", name, pj.Version, err, v)
				}
			}
			out, err = run(t, dir, env, "npm", "view", "demo-pkg", "versions", "--json")
			var versions []string
			if err != nil || json.Unmarshal([]byte(out), &versions) != nil ||
				!slices.Equal(versions, []string{"1.0.0", "1.1.0", "1.2.0", "2.0.0-beta.1"}) {
				t.Errorf("npm view versions: %v\n%s", err, out)
			}
			out, err = run(t, dir, env, "npm", "install", "--no-package-lock", "demo-pkg@^1.3.0")
			if err == nil || !strings.Contains(out, "ETARGET") {
				t.Errorf("demo-pkg@^1.3.0 should fail with ETARGET: %v\n%s", err, out)
			}
			out, err = run(t, dir, env, "npm", "pack", "demo-pkg@next")
			if err != nil || !strings.Contains(out, "demo-pkg-2.0.0-beta.1.tgz") {
				t.Errorf("npm pack demo-pkg@next: %v\n%s", err, out)
			}
			out, err = run(t, dir, env, "npm", "install", "--no-package-lock", "late-pkg")
			if err == nil || !strings.Contains(out, "E404") {
				t.Errorf("late-pkg should be E404: %v\n%s", err, out)
			}
			rec := s.Close()
			if len(rec.Errors) != 0 {
				t.Errorf("proxy errors: %+v", rec.Errors)
			}
		})
	}
}
