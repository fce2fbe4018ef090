package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docker/docker/client"
)

// Label marks every container this package creates.
const Label = "org.envgap.sandbox"

// ErrEngineUnavailable means no Docker Engine API answered.
var ErrEngineUnavailable = errors.New("no container engine answers")

// ErrImageMissing means the spec's image does not exist on the engine.
var ErrImageMissing = errors.New("image missing")

// ErrBadSpec means the spec was refused before anything was created.
var ErrBadSpec = errors.New("bad sandbox spec")

// Engine runs sandboxed commands through one Docker Engine API endpoint. It
// is safe for concurrent use.
type Engine struct {
	cli  *client.Client
	host string
	// network is the network of NetworkDefault runs (the sandbox network, walled in);
	// "" when the engine was opened with Options.NoWall: such runs are then refused.
	network string
	// bindOpts are the options a box's mounts get on this engine (mountOptions).
	bindMu    sync.Mutex
	bindKnown bool
	bindOpts  string
	wall      *Wall
	// userns is what the engine does for its containers' users (userns.go).
	usernsMu sync.Mutex
	userns   UserNS
	podman   bool
	// unanswered is set when a call got no answer within its deadline, and cleared by
	// the next call answered: a run that waited at its gate does not start its steps
	// while it is set (Spec.Gate).
	unanswered atomic.Bool
	// prepareFault, set by tests only, fails a run's container after its files were
	// copied in, as an engine's passing fault would (see prepareAgain).
	prepareFault func(id string) error
}

// SandboxNetwork is the network of sandboxes with network (images/setup-engine.sh
// creates it, and wall.sh its host rules: containers on it reach envgap's listeners on the
// gateway and nothing else).
const SandboxNetwork = "envgap"

// Options change how Connect opens an engine.
type Options struct {
	// Network is the sandbox network. Empty: $ENVGAP_SANDBOX_NETWORK, else SandboxNetwork.
	Network string
	// NoWall skips the wall's check, for an engine that runs no container with network
	// (building images): a run or box with network is then refused.
	NoWall bool
}

// Connect opens the engine at host with the default Options (see ConnectWith).
func Connect(ctx context.Context, host string) (*Engine, error) {
	return ConnectWith(ctx, host, Options{})
}

// ConnectWith opens the engine at host (a DOCKER_HOST value such as
// unix:///run/podman/podman.sock; "" uses DOCKER_HOST and the client's other environment
// variables), checks that it answers and that its sandbox network is walled in (the
// network exists, is a bridge envgap's set-up made, and, for an engine on this host, its
// host rules are in place: checked once per network and boot within wallTTL, and put back
// when missing; see Wall), and removes the sandbox containers of envgap processes of this
// host that died (see Sweep). An engine without its wall is refused with ErrNoWall, before
// any container starts.
func ConnectWith(ctx context.Context, host string, o Options) (*Engine, error) {
	opts := []client.Opt{client.FromEnv, client.WithAPIVersionNegotiation()}
	if host != "" {
		opts = append(opts, client.WithHost(host))
	}
	cli, err := client.NewClientWithOpts(opts...)
	if err != nil {
		return nil, fmt.Errorf("container engine client: %w", err)
	}
	shown := host
	if shown == "" {
		shown = cli.DaemonHost()
	}
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if _, err := cli.Ping(pctx); err != nil {
		cli.Close()
		return nil, fmt.Errorf("%w at %s (%v): start one with `make engine` (images/setup-engine.sh, as root) and export the DOCKER_HOST it prints", ErrEngineUnavailable, shown, err)
	}
	nctx, ncancel := context.WithTimeout(ctx, maxCallTimeout)
	cli.NegotiateAPIVersion(nctx)
	ncancel()
	e := &Engine{cli: cli, host: shown}
	if err := e.detectUserNS(ctx); err != nil {
		cli.Close()
		return nil, err
	}
	if !o.NoWall {
		name := o.Network
		if name == "" {
			name = os.Getenv(EnvNetwork)
		}
		if name == "" {
			name = SandboxNetwork
		}
		w, err := e.checkWall(ctx, name)
		if err != nil {
			cli.Close()
			return nil, err
		}
		e.network, e.wall = name, w
	}
	// What killed processes of this host left behind goes now, before anything new runs.
	if _, err := e.Sweep(ctx, SweepOptions{OlderThan: -1}); err != nil {
		cli.Close()
		return nil, fmt.Errorf("sweeping the containers of dead envgap processes on %s: %w", shown, err)
	}
	return e, nil
}

// Wall returns what Connect found of the sandbox network's wall (nil with Options.NoWall).
func (e *Engine) Wall() *Wall { return e.wall }

// Host returns the endpoint the engine was reached at.
func (e *Engine) Host() string { return e.host }

// Client returns the underlying Docker API client (for building images; run
// containers through Run only).
func (e *Engine) Client() *client.Client { return e.cli }

// Close releases the client's connections.
func (e *Engine) Close() error { return e.cli.Close() }

// Limits bound one run. Zero fields take the defaults of DefaultLimits.
type Limits struct {
	StepTimeout  time.Duration // per step, unless Step.Timeout is set
	MemoryBytes  int64         // memory (and memory+swap) of the container
	PIDs         int64         // processes and threads in the container
	CPUs         float64       // CPU share, in cores
	OutputBytes  int64         // captured output kept per step (see package doc)
	CollectBytes int64         // total bytes of collected files
	// DiskBytes bounds what the container writes to disk: its writable layer, and a
	// box's mounted directory (see disk.go: measured and killed, not a quota).
	DiskBytes int64
}

// DefaultLimits are the limits a zero Limits field takes.
func DefaultLimits() Limits {
	return Limits{
		StepTimeout:  20 * time.Minute,
		MemoryBytes:  4 << 30,
		PIDs:         1024,
		CPUs:         2,
		OutputBytes:  1 << 20,
		CollectBytes: 16 << 20,
		DiskBytes:    10 << 30,
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.StepTimeout <= 0 {
		l.StepTimeout = d.StepTimeout
	}
	if l.MemoryBytes <= 0 {
		l.MemoryBytes = d.MemoryBytes
	}
	if l.PIDs <= 0 {
		l.PIDs = d.PIDs
	}
	if l.CPUs <= 0 {
		l.CPUs = d.CPUs
	}
	if l.OutputBytes <= 0 {
		l.OutputBytes = d.OutputBytes
	}
	if l.CollectBytes <= 0 {
		l.CollectBytes = d.CollectBytes
	}
	if l.DiskBytes <= 0 {
		l.DiskBytes = d.DiskBytes
	}
	return l
}

// File is a regular file written into WorkDir before the first step. Path is
// relative to WorkDir, slash-separated and clean; Mode's permission bits are
// used (0644 when zero). Symbolic links are not supported: callers resolve
// them (and refuse ones that leave the project) before building a Spec.
type File struct {
	Path    string
	Content []byte
	Mode    os.FileMode
}

// Step is one shell command. Timeout zero means Limits.StepTimeout.
type Step struct {
	Name    string
	Command string
	Timeout time.Duration
	// Env is added to this step's environment (KEY=VALUE, after the Spec's).
	Env []string
}

// Network modes of a Spec.
const (
	NetworkNone    = "none"    // no network at all (the default)
	NetworkDefault = "default" // the sandbox network (never the engine's default bridge)
)

// Spec is one sandboxed run.
type Spec struct {
	Image   string   // image reference, e.g. localhost/envgap-python-eval:latest
	Files   []File   // written into WorkDir before the first step
	WorkDir string   // absolute; default /work
	Env     []string // KEY=VALUE for the container and every step
	Network string   // NetworkNone (default) or NetworkDefault
	Steps   []Step   // run in order in the one container
	// SystemFiles are written at their absolute paths (clean, not /) before the first
	// step, with the files; missing parent directories are created by the engine and
	// existing ones keep their owner and mode. For settings such as a proxy's.
	SystemFiles []File
	// Collect lists paths (absolute, or relative to WorkDir) copied out after
	// the steps; directories are collected recursively. Missing paths are
	// listed in Result.Missing.
	Collect []string
	Limits  Limits
	Labels  map[string]string // extra container labels
	// Shell runs each step as append(Shell, Command); default bash -c.
	Shell []string
	// Started, when set, is called once the container started and before the first step
	// with the container's address on the sandbox network (the zero Addr for a run
	// without network): a server of the host binds what it serves the run to that
	// address (the registry proxy's session). An error stops the run before any step as
	// an infrastructure fault (Run returns it, wrapped in ErrStartedHook).
	Started func(netip.Addr) error
	// Gate, when set, is entered once the container is started with its files, before the
	// first step, and left when the last step ended (before the outputs are collected): a
	// caller bounds with it how many runs execute steps at once while others are created,
	// started, collected and removed around them. It decides when the steps run, never
	// what they do. Its error ends the run (the container is removed). A run that enters
	// after a call of the engine went unanswered (the engine's last answer was none) does
	// not start its steps: its error wraps ErrEngineUnresponsive.
	Gate func(ctx context.Context) (leave func(), err error)
	// Prepare, when set, is entered before the container is created and left once it is
	// started (or the run failed before): a caller lets the engine prepare one container
	// at a time with it, in turn. Podman starts containers one at a time anyway (four
	// started at once are all ready after about 600 ms, one after about 150 ms here), so
	// the first of several runs is ready sooner and the others no later. Its error ends
	// the run.
	Prepare func(ctx context.Context) (done func(), err error)
	// RemoveLater lets Run return as soon as the outputs are collected: the container is
	// removed in the background, and Result.Removed reports the removal's end (its error,
	// nil when removed). A run that ends in an error removes its container before Run
	// returns, as without it. The caller must wait for Result.Removed (the command waits
	// for its containers' removals before it exits).
	RemoveLater bool
}

// ErrStartedHook wraps the error of a Spec's or BoxSpec's Started hook.
var ErrStartedHook = errors.New("the started container's hook failed")

// StepResult is what one step did.
type StepResult struct {
	Name            string
	Command         string
	ExitCode        int // -1 when the step was skipped
	Duration        time.Duration
	TimedOut        bool
	OOMKilled       bool // inferred: exit 137 under a memory limit, not timed out
	CommandNotFound bool // exit 127
	Skipped         bool // an earlier step timed out or went over the disk bound
	// DiskExceeded: the container wrote more than Limits.DiskBytes and was killed (the
	// step's exit code is what it was then, 137 when the kill ended it).
	DiskExceeded bool
	Output       []byte
	OutputSize   int64  // bytes of the full output
	Truncated    bool   // Output is head + omission line + tail
	OutputSHA256 string // lowercase hex SHA-256 of the full output
}

// Result is what a run did.
type Result struct {
	ImageID     string
	ContainerID string
	Steps       []StepResult
	// Collected maps the absolute container path of each collected regular
	// file to its bytes.
	Collected        map[string][]byte
	Missing          []string // Collect entries that did not exist
	CollectTruncated bool     // files left out because CollectBytes was reached
	// UserNS is the user namespace the container ran in: UserNSAuto, UserNSRemap, or
	// UserNSNone (its root was the host's root; the engine's UserNS says why).
	UserNS string
	// Removed, for a spec with RemoveLater, receives the container's removal's error (nil
	// when it was removed) once, when the removal ends. Nil: the container was removed
	// before Run returned.
	Removed <-chan error
}

// validate checks a spec without the engine and fills defaults.
func validate(spec Spec) (Spec, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrBadSpec, fmt.Sprintf(format, a...))
	}
	if spec.Image == "" {
		return spec, bad("no image")
	}
	if spec.WorkDir == "" {
		spec.WorkDir = "/work"
	}
	if !path.IsAbs(spec.WorkDir) || path.Clean(spec.WorkDir) != spec.WorkDir || spec.WorkDir == "/" {
		return spec, bad("work dir %q must be an absolute clean path other than /", spec.WorkDir)
	}
	switch spec.Network {
	case "":
		spec.Network = NetworkNone
	case NetworkNone, NetworkDefault:
	default:
		return spec, bad("network %q: want %q or %q", spec.Network, NetworkNone, NetworkDefault)
	}
	if len(spec.Steps) == 0 {
		return spec, bad("no steps")
	}
	for i, st := range spec.Steps {
		if strings.TrimSpace(st.Command) == "" {
			return spec, bad("step %d (%q) has no command", i, st.Name)
		}
		if st.Timeout < 0 {
			return spec, bad("step %d (%q) has a negative timeout", i, st.Name)
		}
	}
	seen := map[string]bool{}
	for _, f := range spec.Files {
		if err := checkRelPath(f.Path); err != nil {
			return spec, bad("file %q: %v", f.Path, err)
		}
		if seen[f.Path] {
			return spec, bad("file %q given twice", f.Path)
		}
		seen[f.Path] = true
	}
	for p := range seen {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if seen[d] {
				return spec, bad("file %q is also the directory of %q", d, p)
			}
		}
	}
	sysSeen := map[string]bool{}
	for _, f := range spec.SystemFiles {
		if !path.IsAbs(f.Path) || path.Clean(f.Path) != f.Path || f.Path == "/" || strings.Contains(f.Path, "\x00") {
			return spec, bad("system file %q: want an absolute clean path", f.Path)
		}
		if sysSeen[f.Path] {
			return spec, bad("system file %q given twice", f.Path)
		}
		sysSeen[f.Path] = true
	}
	for _, c := range spec.Collect {
		if c == "" || strings.Contains(c, "\x00") {
			return spec, bad("collect path %q is empty or has a NUL byte", c)
		}
	}
	if len(spec.Shell) == 0 {
		spec.Shell = []string{"bash", "-c"}
	}
	spec.Limits = spec.Limits.withDefaults()
	return spec, nil
}

// checkRelPath accepts only clean relative paths that stay below their root.
func checkRelPath(p string) error {
	switch {
	case p == "" || p == ".":
		return errors.New("empty path")
	case strings.Contains(p, "\x00"):
		return errors.New("NUL byte in path")
	case strings.HasPrefix(p, "/"):
		return errors.New("absolute path: paths are relative to the work dir")
	case strings.Contains(p, "\\"):
		return errors.New("backslash in path")
	}
	for _, el := range strings.Split(p, "/") {
		if el == ".." {
			return errors.New("`..` would leave the work dir")
		}
	}
	if path.Clean(p) != p {
		return fmt.Errorf("not a clean path (want %q)", path.Clean(p))
	}
	return nil
}

// WithDefaults returns l with every zero field set to its default (DefaultLimits): the
// limits a run with l really has.
func (l Limits) WithDefaults() Limits { return l.withDefaults() }

// Network returns the network of runs with network: the sandbox network, or "" when the
// engine was opened without its wall (Options.NoWall), where such runs are refused.
func (e *Engine) Network() string { return e.network }
