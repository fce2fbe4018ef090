package core

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/envgap/envgap/core/egress"
	"github.com/envgap/envgap/core/registry"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/schemas"
)

// Version names the core's behaviour. It is part of every memo key: change it when a
// change to the core could change a run's result.
//
// envgap-core/2: runs go through the egress door (core/egress): the only way out of the
// sandbox is the registry proxy and the image's undated package sources.
// envgap-core/3: C++ D2 is what the CMake configure found and fetched (the build trees'
// CMakeCache.txt, core/deps.CMakeInstalled), no longer D1.
//
// envgap-core/4: containers run with the core's capabilities alone (sandbox.Capabilities),
// no-new-privileges and no IPv6, behind the sandbox network's wall (core/sandbox/wall.sh).
// envgap-core/5: the registry serves only within the session bound to the asking container,
// at its cut-off (a rewritten URL is refused and recorded); the door tunnels only to
// allowlisted :443 targets whose TLS ClientHello names the CONNECT host, with a per-session
// credential and bounds.
// envgap-core/6: containers run in a user namespace where the engine gives one (Podman's
// auto range of subordinate ids, a Docker daemon's userns-remap): their root is not the
// host's; the run records which (schemas.Run.UserNamespace).
const Version = "envgap-core/6"

// Side says which state of the project a run evaluates.
type Side string

// The sides of a run.
const (
	SideBefore     Side = "before"     // the project as it is (repro_command)
	SideAfter      Side = "after"      // with the reference fix, or unchanged for a control
	SidePrediction Side = "prediction" // with an agent's files
)

// File is one file of a project. Symlinks carry their target in Link (Content empty).
type File struct {
	Path    string
	Content []byte
	Mode    os.FileMode
	Link    string
}

// Spec is one run's input.
type Spec struct {
	InstanceID string
	Side       Side
	Project    []File
	Overlay    []schemas.File // content nil deletes the path
	Recipe     schemas.Recipe
	// Cutoff is the registry cut-off (a record's registry_date, schemas.Spec.Cutoff).
	Cutoff schemas.Cutoff
	Limits sandbox.Limits
	// ManifestPaths are the manifests D1 is read from; empty: found in the project.
	ManifestPaths []string
	// Gate, when set, is where the run waits, its container ready, before its steps
	// (see Gate). It is not part of the run's key: it decides when, never what.
	Gate *Gate
}

// InfraError is a fault of the infrastructure, not of the project: the run says nothing
// about the candidate and must be retried.
type InfraError struct{ Err error }

func (e *InfraError) Error() string { return "infrastructure fault: " + e.Err.Error() }
func (e *InfraError) Unwrap() error { return e.Err }

// ErrOverlay is returned (wrapped) for an overlay that would write outside the project.
var ErrOverlay = errors.New("overlay refused")

// Runner is the part of the sandbox the core uses.
type Runner interface {
	Run(ctx context.Context, spec sandbox.Spec) (*sandbox.Result, error)
	ImageID(ctx context.Context, ref string) (string, error)
}

// Core runs specs. All fields are required except Now and Images.
type Core struct {
	Runner Runner
	Proxy  *registry.Proxy
	// ProxyURL is the proxy's root as containers reach it (http://host:port).
	ProxyURL string
	Store    data.ObjectWriter
	// Images maps an image name of the card (envgap-python-eval) to the reference the
	// engine knows. Nil: schemas.ImageRef ("localhost/<name>:latest").
	Images func(name string) string
	Now    func() time.Time
	// Door is the sandbox's one door out (core/egress): each run gets a session that
	// lets through only the image's package sources (egress.ImageHosts). Nil: runs get
	// no proxy settings, so on the sandbox network they reach only the registry proxy.
	Door *egress.Door
	// SessionsByID: the proxy does not see the containers' own addresses (it is reached
	// through ProxyURL from another host, behind a NAT), so a run's registry session is
	// usable by whoever presents its id (128 random bits only that container is given)
	// instead of by the container's address alone (the default: the session is bound to
	// the address the sandbox reports once the container started).
	SessionsByID bool

	allowMu   sync.Mutex
	allow     map[string][]string      // image id -> allowlist
	allowRef  map[string]string        // image reference -> the id its allowlist was last read for
	allowBusy map[string]chan struct{} // image id -> closed when the probe reading it ends
}

// ImageRef returns the engine reference of a card image name.
func (c *Core) ImageRef(name string) string {
	if c.Images != nil {
		return c.Images(name)
	}
	return schemas.ImageRef(name)
}

func (c *Core) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Key returns the digest of everything that decides a run's result except the image,
// which the caller adds (see verify): project, overlay, recipe, cut-off, side, limits,
// core version.
func Key(spec Spec) (schemas.Digest, error) {
	h := schemas.NewHasher()
	files := make([]string, 0, len(spec.Project))
	for _, f := range spec.Project {
		files = append(files, fmt.Sprintf("%s\x00%o\x00%s\x00%s", f.Path, f.Mode, f.Link, schemas.Hash(f.Content)))
	}
	sort.Strings(files)
	b, err := schemas.Canonical(struct {
		Version  string         `json:"version"`
		Side     Side           `json:"side"`
		Project  []string       `json:"project"`
		Overlay  []schemas.File `json:"overlay"`
		Recipe   schemas.Recipe `json:"recipe"`
		Cutoff   schemas.Cutoff `json:"registry_date"`
		Limits   sandbox.Limits `json:"limits"`
		Instance string         `json:"instance_id"`
		Manifest []string       `json:"manifest_paths,omitempty"`
	}{Version, spec.Side, files, spec.Overlay, spec.Recipe, spec.Cutoff, spec.Limits, spec.InstanceID, spec.ManifestPaths})
	if err != nil {
		return schemas.Digest{}, err
	}
	h.Write(b)
	return h.Digest(), nil
}

// ApplyOverlay returns the project with the overlay applied. It refuses, before anything
// runs, an overlay path that is absolute, contains "..", or goes through a symlink of the
// project, and a deletion of a path the project does not have is ignored.
func ApplyOverlay(project []File, overlay []schemas.File) ([]File, error) {
	byPath := make(map[string]int, len(project))
	for i, f := range project {
		byPath[f.Path] = i
	}
	out := append([]File(nil), project...)
	deleted := map[string]bool{}
	seen := map[string]bool{}
	for _, o := range overlay {
		if err := schemas.CheckRelPath(o.Path); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrOverlay, err)
		}
		if seen[o.Path] {
			return nil, fmt.Errorf("%w: path %q given twice", ErrOverlay, o.Path)
		}
		seen[o.Path] = true
		parts := strings.Split(o.Path, "/")
		for i := 1; i <= len(parts); i++ {
			prefix := strings.Join(parts[:i], "/")
			if j, ok := byPath[prefix]; ok && out[j].Link != "" && !deleted[prefix] {
				return nil, fmt.Errorf("%w: path %q goes through the project's symlink %q", ErrOverlay, o.Path, prefix)
			}
			if j, ok := byPath[prefix]; ok && i < len(parts) && out[j].Link == "" && !deleted[prefix] {
				return nil, fmt.Errorf("%w: path %q goes through the project's file %q", ErrOverlay, o.Path, prefix)
			}
		}
		if o.Content == nil {
			if _, ok := byPath[o.Path]; ok {
				deleted[o.Path] = true
			}
			continue
		}
		f := File{Path: o.Path, Content: []byte(*o.Content), Mode: 0o644}
		if j, ok := byPath[o.Path]; ok {
			if out[j].Mode&0o111 != 0 {
				f.Mode = out[j].Mode
			}
			out[j] = f
			delete(deleted, o.Path)
		} else {
			byPath[o.Path] = len(out)
			out = append(out, f)
		}
	}
	kept := out[:0]
	for _, f := range out {
		if !deleted[f.Path] {
			kept = append(kept, f)
		}
	}
	return kept, nil
}

// sandboxFiles turns project files into sandbox files. A symlink whose target stays inside
// the project is written as a copy of its target; one that leaves the project, dangles or
// loops is dropped and reported (sorted), and the run records it (schemas.Run.SkippedLinks).
func sandboxFiles(files []File) ([]sandbox.File, []string) {
	byPath := make(map[string]File, len(files))
	for _, f := range files {
		byPath[f.Path] = f
	}
	var out []sandbox.File
	var dropped []string
	for _, f := range files {
		if f.Link == "" {
			mode := f.Mode.Perm()
			if mode == 0 {
				mode = 0o644
			}
			out = append(out, sandbox.File{Path: f.Path, Content: f.Content, Mode: mode})
			continue
		}
		target, ok := resolveLink(byPath, f.Path, 0)
		if !ok {
			dropped = append(dropped, f.Path)
			continue
		}
		out = append(out, sandbox.File{Path: f.Path, Content: target.Content, Mode: target.Mode.Perm() | 0o400})
	}
	slices.Sort(dropped)
	return out, dropped
}

func resolveLink(byPath map[string]File, p string, depth int) (File, bool) {
	f, ok := byPath[p]
	if !ok || depth > 8 {
		return File{}, false
	}
	if f.Link == "" {
		return f, true
	}
	if path.IsAbs(f.Link) {
		return File{}, false
	}
	next := path.Join(path.Dir(p), f.Link)
	if next == ".." || strings.HasPrefix(next, "../") {
		return File{}, false
	}
	return resolveLink(byPath, next, depth+1)
}

// ImageID returns the id of the engine image a card image name refers to.
func (c *Core) ImageID(ctx context.Context, name string) (string, error) {
	return c.Runner.ImageID(ctx, c.ImageRef(name))
}

// Allowlist returns the egress allowlist of a card image ("host:port": its apt sources
// and Maven repositories, see egress.ImageHosts), read once per image id.
func (c *Core) Allowlist(ctx context.Context, name string) ([]string, error) {
	ref := c.ImageRef(name)
	id, err := c.Runner.ImageID(ctx, ref)
	if err != nil {
		return nil, err
	}
	return c.allowlistFor(ctx, c.Runner, ref, id)
}

// allowlistFor returns the allowlist of image id (reference ref), running its probe with
// r when it was not read yet. Runs that ask at once (the first runs of a verify) wait for
// one probe instead of each running its own; when it fails, each tries in turn.
func (c *Core) allowlistFor(ctx context.Context, r egress.Runner, ref, id string) ([]string, error) {
	for {
		c.allowMu.Lock()
		if hosts, ok := c.allow[id]; ok {
			c.allowMu.Unlock()
			return hosts, nil
		}
		if busy := c.allowBusy[id]; busy != nil {
			c.allowMu.Unlock()
			select {
			case <-busy:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		busy := make(chan struct{})
		if c.allowBusy == nil {
			c.allowBusy = map[string]chan struct{}{}
		}
		c.allowBusy[id] = busy
		c.allowMu.Unlock()
		hosts, err := egress.ImageHosts(ctx, r, ref)
		c.allowMu.Lock()
		delete(c.allowBusy, id)
		close(busy)
		if err == nil {
			if c.allow == nil {
				c.allow = map[string][]string{}
			}
			c.allow[id] = hosts
		}
		c.allowMu.Unlock()
		return hosts, err
	}
}

// laterRunner runs a probe for a run that goes through a gate that removes in the
// background (Gate.RemoveInBackground): the probe's container is removed beside the run
// that waited for it, and the gate's Wait waits for that removal too.
type laterRunner struct {
	Runner
	gate *Gate
}

func (l laterRunner) Run(ctx context.Context, spec sandbox.Spec) (*sandbox.Result, error) {
	spec.RemoveLater = true
	res, err := l.Runner.Run(ctx, spec)
	if err == nil && res.Removed != nil {
		l.gate.removing("removing the container that read "+spec.Image+"'s package sources", res.Removed)
	}
	return res, err
}

// allowlistOf is Allowlist for a run, which reports the id of the image it ran on: the
// allowlist of the id the reference had when last asked, without asking the engine again
// (the run checks the id afterwards, see Run). It returns that id. A probe it runs for a
// run through gate is removed as the gate's runs are (Gate.RemoveInBackground).
func (c *Core) allowlistOf(ctx context.Context, name string, gate *Gate) ([]string, string, error) {
	ref := c.ImageRef(name)
	c.allowMu.Lock()
	id, ok := c.allowRef[ref]
	hosts, cached := c.allow[id]
	c.allowMu.Unlock()
	if ok && cached {
		return hosts, id, nil
	}
	id, err := c.Runner.ImageID(ctx, ref)
	if err != nil {
		return nil, "", err
	}
	var r egress.Runner = c.Runner
	if gate != nil && gate.later {
		r = laterRunner{c.Runner, gate}
	}
	hosts, err = c.allowlistFor(ctx, r, ref, id)
	if err != nil {
		return nil, "", err
	}
	c.allowMu.Lock()
	if c.allowRef == nil {
		c.allowRef = map[string]string{}
	}
	c.allowRef[ref] = id
	c.allowMu.Unlock()
	return hosts, id, nil
}

// forgetImage drops what allowlistOf remembers of a card image's reference (its image
// was rebuilt).
func (c *Core) forgetImage(name string) {
	c.allowMu.Lock()
	delete(c.allowRef, c.ImageRef(name))
	c.allowMu.Unlock()
}

// OpenDoor opens an egress session for one container of a card image and returns it
// with the environment and files that send the container's clients through it (the
// registry proxy stays direct). With no Door it returns a nil session and nothing to
// add. The caller closes the session when the container is gone; its record lists the
// refused connections. Agent boxes use it as runs do, with extra further "host:port"
// targets (an agent CLI's model API hosts).
func (c *Core) OpenDoor(ctx context.Context, image string, extra ...string) (*egress.Session, []string, []sandbox.File, error) {
	if c.Door == nil {
		return nil, nil, nil, nil
	}
	allow, err := c.Allowlist(ctx, image)
	if err != nil {
		return nil, nil, nil, err
	}
	return c.openDoor(allow, extra)
}

func (c *Core) openDoor(allow, extra []string) (*egress.Session, []string, []sandbox.File, error) {
	s, err := c.Door.Open(append(slices.Clip(allow), extra...))
	if err != nil {
		return nil, nil, nil, err
	}
	direct := egress.HostOf(c.ProxyURL)
	var files []sandbox.File
	for _, f := range s.Files(direct) {
		files = append(files, sandbox.File{Path: f.Path, Content: f.Content, Mode: 0o644})
	}
	return s, s.Env(direct), files, nil
}
