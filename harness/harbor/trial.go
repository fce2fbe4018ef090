package harbor

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/envgap/envgap/core/shell"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/jsonmessage"
	"github.com/docker/docker/pkg/stdcopy"
)

// Scenario is one smoke-test trial of a task.
type Scenario string

// The scenarios of harbor check: seed 001's five smoke-test rows (unchanged, an empty
// workspace, a change that breaks the build, a change that still fails, the reference
// fix) and envgap's own (a source edit on top of the fix, a change given by the user).
const (
	ScenarioUnchanged    Scenario = "unchanged"        // the nop agent: nothing changes
	ScenarioEmpty        Scenario = "empty workspace"  // every file of /work deleted
	ScenarioBreaksBuild  Scenario = "breaks the build" // the oracle, then the manifest overwritten with junk
	ScenarioStillFailing Scenario = "still failing"    // the manifest changed (a newline added), no fix
	ScenarioOracle       Scenario = "oracle"           // solution/solve.sh
	ScenarioSourceEdit   Scenario = "source edit"      // the oracle, plus one source file changed
	ScenarioChange       Scenario = "given change"     // files given by the user
)

// Scenarios are the scenarios with an expectation, in the order they run and print.
var Scenarios = []Scenario{ScenarioUnchanged, ScenarioEmpty, ScenarioBreaksBuild, ScenarioStillFailing, ScenarioOracle, ScenarioSourceEdit}

// Result is one trial's outcome.
type Result struct {
	Task     string   `json:"task"`
	Scenario Scenario `json:"scenario"`
	// Control is set for a control task (its project runs unchanged).
	Control bool `json:"control,omitempty"`
	// Want is the expected reward; -1 when the scenario has no expectation (a given change).
	Want float64 `json:"want"`
	// Got is the reward the verifier wrote; Errored when it wrote none that parses
	// (Harbor counts that trial as errored).
	Got     float64 `json:"got"`
	Errored bool    `json:"errored"`
	// Reason is the verifier's reason.txt: for a failed step, its name, exit code and
	// error line ("resolve failed (exit 1): ERROR: No matching distribution ...").
	Reason string `json:"reason"`
	// Step is the step that decided a reward of 0 (bootstrap, resolve, run), read from
	// the reason; TimedOut when it ran out of time; empty when a guard decided (or 1).
	Step     string `json:"step,omitempty"`
	TimedOut bool   `json:"timed_out,omitempty"`
	// Skipped says why the scenario could not be set up (no source file to edit).
	Skipped string `json:"skipped,omitempty"`
}

// OK reports whether the trial met its expectation.
func (r Result) OK() bool {
	return r.Skipped != "" || r.Want < 0 || (!r.Errored && r.Got == r.Want)
}

// stepReason reads the failing step from a verifier's reason ("resolve failed (exit 1):
// ...", "run timed out (1200 s)").
var stepReason = regexp.MustCompile(`^(bootstrap|resolve|run) (failed|timed out)\b`)

// TrialOptions configure Trials.
type TrialOptions struct {
	// PyPIUpstream and NPMUpstream are given to the registry service (as Harbor passes
	// the host's ENVGAP_PYPI_UPSTREAM and ENVGAP_NPM_UPSTREAM through docker compose).
	PyPIUpstream, NPMUpstream string
	// IsEnvFile is the environment-file classifier (the source-edit scenario edits a
	// file it calls source).
	IsEnvFile func(string) bool
	// Change, when set, adds the given-change scenario: these files are written into
	// /work (paths relative to it).
	Change []File
	// Log receives build and trial progress; nil discards it.
	Log io.Writer
}

// Engine runs trials on a Docker-API engine (DOCKER_HOST).
type Engine struct{ cli *client.Client }

// Connect opens the engine named by DOCKER_HOST.
func Connect(ctx context.Context) (*Engine, error) {
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("container engine: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if _, err := cli.Ping(pctx); err != nil {
		cli.Close()
		return nil, fmt.Errorf("container engine at %s: %w (start one with make engine and export its DOCKER_HOST)", cli.DaemonHost(), err)
	}
	return &Engine{cli: cli}, nil
}

// Close closes the engine's client.
func (e *Engine) Close() error { return e.cli.Close() }

// taskInfo is what a trial reads of task.toml.
type taskInfo struct {
	Metadata struct {
		Kind         string `toml:"task_kind"`
		ManifestPath string `toml:"manifest_path"`
	} `toml:"metadata"`
	Verifier struct {
		TimeoutSec float64 `toml:"timeout_sec"`
	} `toml:"verifier"`
}

// Trials builds a task's environment once and runs the smoke-test scenarios on it, each
// in fresh containers, the way Harbor runs a trial: start the environment (main and the
// registry service), wait for the healthcheck, run the agent's part (nothing, the
// oracle's solve.sh, or a change), copy tests/ to /tests, run /tests/test.sh as the
// verifier, read /logs/verifier/reward.txt. An error is a fault of the engine or the
// build, never a task's result.
func (e *Engine) Trials(ctx context.Context, path string, files []File, o TrialOptions) ([]Result, error) {
	log := o.Log
	if log == nil {
		log = io.Discard
	}
	by := map[string]File{}
	for _, f := range files {
		by[f.Path] = f
	}
	var info taskInfo
	if _, err := toml.Decode(string(by[ConfigPath].Content), &info); err != nil {
		return nil, fmt.Errorf("%s: task.toml: %w", path, err)
	}
	control := info.Metadata.Kind == "control"
	ref := "localhost/envgap-harbor-" + imageName(path)
	for _, target := range []string{"registry", "main"} {
		fmt.Fprintf(log, "%s: building the environment (%s)\n", path, target)
		if err := e.build(ctx, files, ref+":"+target, target, log); err != nil {
			return nil, fmt.Errorf("%s: building the environment (%s): %w", path, target, err)
		}
	}
	defer func() {
		for _, t := range []string{"main", "registry"} {
			e.cli.ImageRemove(context.WithoutCancel(ctx), ref+":"+t, image.RemoveOptions{PruneChildren: true})
		}
	}()
	unchanged := 0.0
	if control {
		unchanged = 1
	}
	type plan struct {
		s    Scenario
		want float64
	}
	// A control's project runs unchanged: it keeps its reward under a harmless change.
	plans := []plan{{ScenarioUnchanged, unchanged}, {ScenarioEmpty, 0}, {ScenarioBreaksBuild, 0},
		{ScenarioStillFailing, unchanged}, {ScenarioOracle, 1}, {ScenarioSourceEdit, 0}}
	if o.Change != nil {
		plans = append(plans, plan{ScenarioChange, -1})
	}
	var out []Result
	for _, p := range plans {
		r := Result{Task: path, Scenario: p.s, Want: p.want, Control: control}
		var agentCmd string
		var extra []File
		m := info.Metadata.ManifestPath
		switch p.s {
		case ScenarioOracle:
			agentCmd = "bash /solution/solve.sh"
		case ScenarioEmpty:
			agentCmd = "find /work -mindepth 1 -delete"
		case ScenarioSourceEdit:
			src := sourceFile(files, o.IsEnvFile)
			if src == "" {
				r.Skipped = "the project has no source file"
				out = append(out, r)
				continue
			}
			agentCmd = "bash /solution/solve.sh && printf '\\n' >> " + shell.Quote(src)
		case ScenarioBreaksBuild, ScenarioStillFailing:
			if m == "" {
				r.Skipped = "the task names no manifest"
				out = append(out, r)
				continue
			}
			agentCmd = "bash /solution/solve.sh && printf 'envgap harbor check: this is not a manifest\\n' > " + shell.Quote(m)
			if p.s == ScenarioStillFailing {
				// An environment file changed without changing what it says: the
				// guard lets it through and the steps fail as at base_commit.
				agentCmd = "printf '\\n' >> " + shell.Quote(m)
			}
		case ScenarioChange:
			extra = o.Change
		}
		fmt.Fprintf(log, "%s: trial %q\n", path, p.s)
		if err := e.trial(ctx, ref, by, o, agentCmd, extra, info.Verifier.TimeoutSec, &r, log); err != nil {
			return nil, fmt.Errorf("%s: trial %q: %w", path, p.s, err)
		}
		if sm := stepReason.FindStringSubmatch(r.Reason); sm != nil && !r.Errored && r.Got == 0 {
			r.Step, r.TimedOut = sm[1], sm[2] == "timed out"
		}
		out = append(out, r)
	}
	return out, nil
}

// sourceFile returns the first project file the classifier does not call an environment
// file (from tests/baseline.json).
func sourceFile(files []File, isEnv func(string) bool) string {
	if isEnv == nil {
		return ""
	}
	for _, f := range files {
		if f.Path != BaselinePath {
			continue
		}
		var bl struct {
			Files map[string]string `json:"files"`
		}
		if json.Unmarshal(f.Content, &bl) != nil {
			return ""
		}
		var best string
		for p := range bl.Files {
			if !isEnv(p) && (best == "" || p < best) {
				best = p
			}
		}
		return best
	}
	return ""
}

func imageName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// build builds one target of the environment's Dockerfile.
func (e *Engine) build(ctx context.Context, files []File, tag, target string, log io.Writer) error {
	var env []File
	for _, f := range files {
		if rest, ok := strings.CutPrefix(f.Path, "environment/"); ok {
			f.Path = rest
			env = append(env, f)
		}
	}
	tarball, err := Archive(env)
	if err != nil {
		return err
	}
	resp, err := e.cli.ImageBuild(ctx, bytes.NewReader(tarball), build.ImageBuildOptions{
		Tags: []string{tag}, Dockerfile: "Dockerfile", Target: target, Remove: true, ForceRemove: true,
	})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	var tail []string
	for {
		var m jsonmessage.JSONMessage
		if err := dec.Decode(&m); err == io.EOF {
			break
		} else if err != nil {
			return fmt.Errorf("reading build progress: %w", err)
		}
		if m.Stream != "" {
			io.WriteString(log, m.Stream)
			tail = append(tail, m.Stream)
			if len(tail) > 15 {
				tail = tail[1:]
			}
		}
		if m.Error != nil || m.ErrorMessage != "" {
			msg := m.ErrorMessage
			if m.Error != nil && m.Error.Message != "" {
				msg = m.Error.Message
			}
			return fmt.Errorf("%s\nlast output:\n%s", strings.TrimSpace(msg), strings.Join(tail, ""))
		}
	}
	if _, err := e.cli.ImageInspect(ctx, tag); err != nil {
		return fmt.Errorf("the build gave no image %s: %w", tag, err)
	}
	return nil
}

// trial runs one scenario in fresh containers: the registry service, then main (with
// the name registry resolving to it), the healthcheck, the agent's part, the verifier.
func (e *Engine) trial(ctx context.Context, ref string, by map[string]File, o TrialOptions, agentCmd string, change []File, verifierSec float64, r *Result, log io.Writer) error {
	bg := context.WithoutCancel(ctx)
	var regEnv []string
	if o.PyPIUpstream != "" {
		regEnv = append(regEnv, "ENVGAP_PYPI_UPSTREAM="+o.PyPIUpstream)
	}
	if o.NPMUpstream != "" {
		regEnv = append(regEnv, "ENVGAP_NPM_UPSTREAM="+o.NPMUpstream)
	}
	labels := map[string]string{"org.envgap.harbor": "trial"}
	reg, err := e.cli.ContainerCreate(ctx, &container.Config{Image: ref + ":registry", Env: regEnv, Labels: labels},
		&container.HostConfig{Init: boolPtr(true)}, nil, nil, "")
	if err != nil {
		return fmt.Errorf("creating the registry service: %w", err)
	}
	defer e.cli.ContainerRemove(bg, reg.ID, container.RemoveOptions{Force: true})
	if err := e.cli.ContainerStart(ctx, reg.ID, container.StartOptions{}); err != nil {
		return fmt.Errorf("starting the registry service: %w", err)
	}
	ins, err := e.cli.ContainerInspect(ctx, reg.ID)
	if err != nil {
		return err
	}
	ip := ""
	if ins.NetworkSettings != nil {
		ip = ins.NetworkSettings.IPAddress
		for _, n := range ins.NetworkSettings.Networks {
			if ip == "" && n != nil {
				ip = n.IPAddress
			}
		}
	}
	if ip == "" {
		return errors.New("the registry service has no IP address")
	}
	main, err := e.cli.ContainerCreate(ctx, &container.Config{Image: ref + ":main", Cmd: []string{"sleep", "infinity"}, Labels: labels},
		&container.HostConfig{Init: boolPtr(true), ExtraHosts: []string{"registry:" + ip}}, nil, nil, "")
	if err != nil {
		return fmt.Errorf("creating main: %w", err)
	}
	defer e.cli.ContainerRemove(bg, main.ID, container.RemoveOptions{Force: true})
	if err := e.cli.ContainerStart(ctx, main.ID, container.StartOptions{}); err != nil {
		return fmt.Errorf("starting main: %w", err)
	}
	if _, _, err := e.exec(ctx, main.ID, "mkdir -p /logs/verifier /logs/agent /logs/artifacts", time.Minute); err != nil {
		return err
	}
	healthy := false
	for i := 0; i < 60 && !healthy; i++ {
		code, _, err := e.exec(ctx, main.ID, "envgap-task ping "+RegistryURL+"/", 15*time.Second)
		if err != nil {
			return err
		}
		if healthy = code == 0; !healthy {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Second):
			}
		}
	}
	if !healthy {
		return errors.New("the environment's healthcheck did not pass (the registry service does not answer)")
	}
	if agentCmd != "" {
		if err := e.copyDir(ctx, main.ID, by, "solution/", "/solution"); err != nil {
			return err
		}
		code, out, err := e.exec(ctx, main.ID, "cd /work && "+agentCmd, 20*time.Minute)
		if err != nil {
			return err
		}
		fmt.Fprintf(log, "agent exit %d\n%s", code, out)
	}
	if change != nil {
		if err := e.copyFiles(ctx, main.ID, change, "/work"); err != nil {
			return err
		}
	}
	if err := e.copyDir(ctx, main.ID, by, "tests/", "/tests"); err != nil {
		return err
	}
	if verifierSec <= 0 {
		verifierSec = 600
	}
	code, out, err := e.exec(ctx, main.ID, "chmod +x /tests/test.sh && /tests/test.sh > /logs/verifier/test-stdout.txt 2>&1", time.Duration(verifierSec*float64(time.Second)))
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "verifier exit %d %s\n", code, out)
	_, stdout, err := e.exec(ctx, main.ID, "cat /logs/verifier/test-stdout.txt", time.Minute)
	if err == nil {
		io.WriteString(log, stdout)
	}
	code, reward, err := e.exec(ctx, main.ID, "cat /logs/verifier/reward.txt", time.Minute)
	if err != nil {
		return err
	}
	v, perr := strconv.ParseFloat(strings.TrimSpace(reward), 64)
	if code != 0 || perr != nil {
		r.Errored = true
		r.Reason = "no reward: " + strings.TrimSpace(reward)
		return nil
	}
	r.Got = v
	if _, reason, err := e.exec(ctx, main.ID, "cat /logs/verifier/reason.txt", time.Minute); err == nil {
		r.Reason = strings.TrimSpace(reason)
	}
	return nil
}

func boolPtr(b bool) *bool { return &b }

// exec runs a bash command in a container and returns its exit code and output (stdout
// and stderr together). A command that outlives timeout is an error.
func (e *Engine) exec(ctx context.Context, id, cmd string, timeout time.Duration) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	x, err := e.cli.ContainerExecCreate(ctx, id, container.ExecOptions{Cmd: []string{"bash", "-c", cmd}, AttachStdout: true, AttachStderr: true})
	if err != nil {
		return 0, "", fmt.Errorf("exec %q: %w", cmd, err)
	}
	att, err := e.cli.ContainerExecAttach(ctx, x.ID, container.ExecAttachOptions{})
	if err != nil {
		return 0, "", fmt.Errorf("exec %q: %w", cmd, err)
	}
	defer att.Close()
	var buf bytes.Buffer
	if _, err := stdcopy.StdCopy(&buf, &buf, att.Reader); err != nil {
		return 0, "", fmt.Errorf("exec %q: %w", cmd, err)
	}
	st, err := e.cli.ContainerExecInspect(ctx, x.ID)
	if err != nil {
		return 0, "", fmt.Errorf("exec %q: %w", cmd, err)
	}
	return st.ExitCode, buf.String(), nil
}

// copyDir copies the task's files under prefix (e.g. "tests/") into dest in a container.
func (e *Engine) copyDir(ctx context.Context, id string, by map[string]File, prefix, dest string) error {
	var sub []File
	for p, f := range by {
		if rest, ok := strings.CutPrefix(p, prefix); ok {
			f.Path = rest
			sub = append(sub, f)
		}
	}
	return e.copyFiles(ctx, id, sub, dest)
}

// copyFiles writes files into dir in a container (made when missing).
func (e *Engine) copyFiles(ctx context.Context, id string, files []File, dir string) error {
	if _, _, err := e.exec(ctx, id, "mkdir -p "+shell.Quote(dir), time.Minute); err != nil {
		return err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		if err := checkPath(f.Path); err != nil {
			return err
		}
		mode := int64(f.Mode)
		if mode == 0 {
			mode = 0o644
		}
		h := &tar.Header{Name: f.Path, Mode: mode, Size: int64(len(f.Content)), Typeflag: tar.TypeReg, ModTime: archiveTime}
		if f.Link != "" {
			h = &tar.Header{Name: f.Path, Typeflag: tar.TypeSymlink, Linkname: f.Link, Mode: 0o777, ModTime: archiveTime}
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if f.Link == "" {
			tw.Write(f.Content)
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := e.cli.CopyToContainer(ctx, id, dir, &buf, container.CopyToContainerOptions{}); err != nil {
		return fmt.Errorf("copying into %s: %w", dir, err)
	}
	return nil
}

// HostAddress returns the address at which containers on the engine's default network
// reach this host (the network's gateway).
func (e *Engine) HostAddress(ctx context.Context) (string, error) {
	for _, name := range []string{"podman", "bridge"} {
		nw, err := e.cli.NetworkInspect(ctx, name, network.InspectOptions{})
		if err != nil {
			continue
		}
		for _, c := range nw.IPAM.Config {
			if c.Gateway != "" && !strings.Contains(c.Gateway, ":") {
				return c.Gateway, nil
			}
		}
	}
	return "", errors.New("the engine's default network has no IPv4 gateway")
}
