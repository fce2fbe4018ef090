package images

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	dockerspec "github.com/moby/docker-image-spec/specs-go/v1"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// fakeRegistry serves the npm packuments and tarballs under testdata/npm,
// with {{REGISTRY}} in packuments replaced by its own URL.
type fakeRegistry struct {
	srv      *httptest.Server
	tarballs atomic.Int64 // tarball downloads
	tamper   atomic.Bool  // serve altered tarball bytes
}

func newFakeRegistry(t *testing.T) *fakeRegistry {
	t.Helper()
	r := &fakeRegistry{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		p := strings.TrimPrefix(req.URL.Path, "/")
		if name, file, ok := strings.Cut(p, "/-/"); ok && name != "" {
			b, err := os.ReadFile(filepath.Join("testdata", "npm", filepath.Base(file)))
			if err != nil {
				http.NotFound(w, req)
				return
			}
			r.tarballs.Add(1)
			if r.tamper.Load() {
				b = append(b, 0)
			}
			w.Write(b)
			return
		}
		b, err := os.ReadFile(filepath.Join("testdata", "npm", filepath.Base(p)+".json"))
		if err != nil || strings.Contains(p, "/") {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":"Not found"}`)
			return
		}
		w.Header().Set("Content-Type", "application/vnd.npm.install-v1+json")
		w.Write(bytes.ReplaceAll(b, []byte("{{REGISTRY}}"), []byte(r.srv.URL)))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// fakeEngine is an in-memory image store that "builds" by recording the
// request and storing an image labelled as asked.
type fakeEngine struct {
	mu       sync.Mutex
	images   map[string]image.InspectResponse // by reference
	pullErr  error
	builds   []fakeBuild
	failWith string // fixture file streamed for every build, when set
	failTag  string // with failWith: only the build of this tag fails
	tags     []string
}

type fakeBuild struct {
	opts  build.ImageBuildOptions
	files map[string][]byte
}

func newFakeEngine(refs ...string) *fakeEngine {
	f := &fakeEngine{images: map[string]image.InspectResponse{}, pullErr: fmt.Errorf("pinging container registry: no such host")}
	for _, r := range refs {
		f.images[r] = image.InspectResponse{ID: "sha256:" + hex.EncodeToString([]byte(r))[:16], Config: &dockerspec.DockerOCIImageConfig{}}
	}
	return f
}

func (f *fakeEngine) ImageInspect(_ context.Context, ref string, _ ...client.ImageInspectOption) (image.InspectResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if img, ok := f.images[ref]; ok {
		return img, nil
	}
	return image.InspectResponse{}, errdefs.ErrNotFound.WithMessage("no such image " + ref)
}

func (f *fakeEngine) ImagePull(context.Context, string, image.PullOptions) (io.ReadCloser, error) {
	return nil, f.pullErr
}

func (f *fakeEngine) ImageTag(_ context.Context, source, target string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tags = append(f.tags, source+" "+target)
	for _, img := range f.images {
		if img.ID == source {
			f.images[target] = img
			f.images[strings.TrimSuffix(target, ":latest")] = img
		}
	}
	return nil
}

func (f *fakeEngine) ImageBuild(_ context.Context, ctxTar io.Reader, opts build.ImageBuildOptions) (build.ImageBuildResponse, error) {
	files := map[string][]byte{}
	tr := tar.NewReader(ctxTar)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return build.ImageBuildResponse{}, err
		}
		b, _ := io.ReadAll(tr)
		if h.Typeflag == tar.TypeReg {
			files[h.Name] = b
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.builds = append(f.builds, fakeBuild{opts: opts, files: files})
	if f.failWith != "" && (f.failTag == "" || f.failTag == opts.Tags[0]) {
		b, err := os.ReadFile(filepath.Join("testdata", f.failWith))
		if err != nil {
			return build.ImageBuildResponse{}, err
		}
		return build.ImageBuildResponse{Body: io.NopCloser(bytes.NewReader(b))}, nil
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%v%d", opts.Tags, len(f.builds)))
	id := "sha256:" + hex.EncodeToString(sum[:])
	f.images[opts.Tags[0]] = image.InspectResponse{ID: id, Config: &dockerspec.DockerOCIImageConfig{ImageConfig: ocispec.ImageConfig{Labels: opts.Labels}}}
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.Encode(map[string]string{"stream": "STEP 1/2: FROM " + *opts.BuildArgs["BASE"] + "\n"})
	enc.Encode(map[string]any{"aux": map[string]string{"ID": id}})
	enc.Encode(map[string]string{"stream": "Successfully tagged " + opts.Tags[0] + "\n"})
	return build.ImageBuildResponse{Body: io.NopCloser(&body)}, nil
}
