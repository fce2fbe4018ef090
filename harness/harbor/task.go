package harbor

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"github.com/envgap/envgap/core/shell"
	"io/fs"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/envgap/envgap/core/registry"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/lib/agent"
	"github.com/envgap/envgap/schemas"
)

// SchemaVersion is the version of Harbor's task configuration (task.toml's
// schema_version) the task directories follow: Harbor's TaskConfig model 1.1, with
// [task] name, [metadata], [verifier]/[agent] timeout_sec and network_mode,
// [environment] resources, network_mode and healthcheck.
const SchemaVersion = "1.1"

// Org is the organisation part of every task name (envgap/<instance_id>).
const Org = "envgap"

// AttemptTimeoutSec is the card's time per attempt (20 minutes): the agent's and the
// verifier's timeout.
const AttemptTimeoutSec = 1200.0

// GoImage is the image the environment builds envgap-task in (Harbor pulls it).
const GoImage = "golang:1.26-bookworm"

// RegistryPort is the port of the registry service inside the task's network.
const RegistryPort = 8080

// File is one entry of a task directory: a regular file (Content, Mode) or a symbolic link
// (Link). Path is slash-separated, relative to the task directory.
type File struct {
	Path    string
	Mode    fs.FileMode
	Content []byte
	Link    string
}

// Meta is what ties a task directory to its release.
type Meta struct {
	CorpusID string
	// Repo is the Hub dataset of the release (links in task.toml).
	Repo string
}

// Files of a task directory.
const (
	InstructionPath = "instruction.md"
	ConfigPath      = "task.toml"
	DockerfilePath  = "environment/Dockerfile"
	ComposePath     = "environment/docker-compose.yaml"
	ProjectDir      = "environment/project"
	TestPath        = "tests/test.sh"
	BaselinePath    = "tests/baseline.json"
	SolvePath       = "solution/solve.sh"
)

// TaskName is a task's Harbor name.
func TaskName(instanceID string) string { return Org + "/" + instanceID }

// TaskDir returns the files of a task's Harbor directory, sorted by path. project is the
// task's project at base_commit (Project); tool is envgap-task's source (ToolSource).
func TaskDir(t *schemas.Task, project *Project, tool map[string][]byte, m Meta) ([]File, error) {
	if t.ExcludedFromScoring {
		return nil, fmt.Errorf("%s: excluded from scoring: not a Harbor task", t.InstanceID)
	}
	cutoff, err := t.Cutoff()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.InstanceID, err)
	}
	image := t.Image
	if image == "" {
		image = t.Ecosystem.Image()
	}
	var files []File
	add := func(p string, mode fs.FileMode, b []byte) {
		files = append(files, File{Path: p, Mode: mode, Content: b})
	}
	add(InstructionPath, 0o644, Instruction(t))
	cfg, err := taskConfig(t, m)
	if err != nil {
		return nil, err
	}
	add(ConfigPath, 0o644, cfg)
	add(DockerfilePath, 0o644, dockerfile(t, image, cutoff))
	add(ComposePath, 0o644, []byte(compose))
	for p, b := range tool {
		add(ToolDir+"/"+p, 0o644, b)
	}
	for _, f := range project.Files {
		f.Path = ProjectDir + "/" + f.Path
		files = append(files, f)
	}
	base := map[string]string{}
	for _, f := range project.Worktree() {
		if f.Link != "" {
			base[f.Path] = schemas.Hash([]byte(f.Link)).Hex()
		} else {
			base[f.Path] = schemas.Hash(f.Content).Hex()
		}
	}
	bl, err := json.MarshalIndent(map[string]any{"instance_id": t.InstanceID, "base_commit": t.BaseCommit, "files": base}, "", " ")
	if err != nil {
		return nil, err
	}
	add(BaselinePath, 0o644, append(bl, '\n'))
	add(TestPath, 0o755, testScript(t))
	add("tests/steps/bootstrap.sh", 0o644, []byte(t.BootstrapCommand+"\n"))
	add("tests/steps/resolve.sh", 0o644, []byte(t.ResolveCommand+"\n"))
	add("tests/steps/run.sh", 0o644, []byte(t.RunCommand+"\n"))
	solve, err := solveScript(t)
	if err != nil {
		return nil, err
	}
	add(SolvePath, 0o755, solve)
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, nil
}

// Instruction is instruction.md: what the dataset card lets an agent see of the task (the
// task view of envgap run), and the rule.
func Instruction(t *schemas.Task) []byte {
	v := agent.View(t)
	var b strings.Builder
	fmt.Fprintf(&b, "# Make %s build and run again\n\n", v.Repo)
	fmt.Fprintf(&b, "EnvGap task `%s` (%s, %s). The project is in `/work`: a git repository at base commit `%s`, and nothing later.\n\n", v.InstanceID, t.Source, v.Ecosystem, v.BaseCommit)
	b.WriteString("## The problem\n\n")
	b.WriteString(strings.TrimRight(v.ProblemStatement, "\n") + "\n\n")
	if v.ProblemStatementTruncated {
		b.WriteString("(The problem statement was truncated.)\n\n")
	}
	if v.FailureSignature != "" {
		fmt.Fprintf(&b, "The failure looks like this:\n\n```\n%s\n```\n\n", strings.TrimRight(v.FailureSignature, "\n"))
	}
	b.WriteString("## Reproduce it\n\nIn `/work`:\n\n```sh\n" + strings.TrimRight(v.ReproCommand, "\n") + "\n```\n\n")
	b.WriteString("## The rule\n\n")
	b.WriteString("Change environment files only: manifests, lockfiles, build and setup files, Dockerfiles, READMEs")
	if len(v.ManifestPaths) > 0 {
		fmt.Fprintf(&b, " (this project's manifests: %s)", "`"+strings.Join(v.ManifestPaths, "`, `")+"`")
	}
	b.WriteString(". Never change, add or delete a source file: a change to a source file scores 0.\n\n")
	fmt.Fprintf(&b, "Python and npm packages are served as they were published up to %s (the task's cut-off): a version published later does not exist here. Your fix is scored by installing and running the project in a fresh copy of this environment with your environment files.\n", v.RegistryDate)
	return []byte(b.String())
}

type tomlConfig struct {
	SchemaVersion string         `toml:"schema_version"`
	Source        string         `toml:"source"`
	Task          tomlTask       `toml:"task"`
	Metadata      map[string]any `toml:"metadata"`
	Verifier      tomlPhase      `toml:"verifier"`
	Agent         tomlPhase      `toml:"agent"`
	Environment   tomlEnv        `toml:"environment"`
}

type tomlTask struct {
	Name        string   `toml:"name"`
	Description string   `toml:"description"`
	Keywords    []string `toml:"keywords"`
}

type tomlPhase struct {
	TimeoutSec  float64 `toml:"timeout_sec"`
	NetworkMode string  `toml:"network_mode"`
}

type tomlEnv struct {
	BuildTimeoutSec float64         `toml:"build_timeout_sec"`
	CPUs            int             `toml:"cpus"`
	MemoryMB        int             `toml:"memory_mb"`
	StorageMB       int             `toml:"storage_mb"`
	NetworkMode     string          `toml:"network_mode"`
	Healthcheck     tomlHealthcheck `toml:"healthcheck"`
}

type tomlHealthcheck struct {
	Command        string  `toml:"command"`
	IntervalSec    float64 `toml:"interval_sec"`
	TimeoutSec     float64 `toml:"timeout_sec"`
	StartPeriodSec float64 `toml:"start_period_sec"`
	Retries        int     `toml:"retries"`
}

// RegistryURL is the registry service's root as the main container reaches it.
var RegistryURL = fmt.Sprintf("http://registry:%d", RegistryPort)

func taskConfig(t *schemas.Task, m Meta) ([]byte, error) {
	lim := sandbox.DefaultLimits()
	kind := "repair"
	if t.IsControl {
		kind = "control"
	}
	md := map[string]any{
		"instance_id": t.InstanceID, "set": string(t.Source), "ecosystem": string(t.Ecosystem), "task_kind": kind,
		"registry_date": t.RegistryDate, "corpus_id": m.CorpusID, "repo": t.Repo, "base_commit": t.BaseCommit,
		"image": t.Image, "manifest_path": t.ManifestPath, "harbor_schema_version": SchemaVersion,
	}
	links := map[string]any{}
	if m.Repo != "" {
		links["dataset"] = "https://huggingface.co/datasets/" + m.Repo
	}
	if t.IssueURL != nil {
		links["issue"] = *t.IssueURL
	}
	if t.PullRequest != nil {
		links["pull_request"] = *t.PullRequest
	}
	if t.Repo != "" && !strings.HasPrefix(t.Repo, "lite/") {
		links["repository"] = "https://github.com/" + t.Repo
	}
	md["links"] = links
	if t.RepoLicense != nil {
		md["license"] = *t.RepoLicense
	} else {
		md["license"] = "unknown (see the dataset's LICENSE.md)"
	}
	c := tomlConfig{
		SchemaVersion: SchemaVersion,
		Source:        "envgap",
		Task: tomlTask{Name: TaskName(t.InstanceID),
			Description: fmt.Sprintf("EnvGap %s task: make %s build and run by changing its environment files only", t.Source, t.Repo),
			Keywords:    []string{"envgap", string(t.Source), string(t.Ecosystem), "environment-repair"}},
		Metadata: md,
		Verifier: tomlPhase{TimeoutSec: AttemptTimeoutSec, NetworkMode: "public"},
		Agent:    tomlPhase{TimeoutSec: AttemptTimeoutSec, NetworkMode: "public"},
		Environment: tomlEnv{BuildTimeoutSec: 1800, CPUs: int(lim.CPUs), MemoryMB: int(lim.MemoryBytes >> 20), StorageMB: 10240, NetworkMode: "public",
			Healthcheck: tomlHealthcheck{Command: "envgap-task ping " + RegistryURL + "/", IntervalSec: 2, TimeoutSec: 10, StartPeriodSec: 5, Retries: 5}},
	}
	var buf bytes.Buffer
	buf.WriteString("# An EnvGap task in Harbor's format (task.toml schema " + SchemaVersion + "), written by envgap export --harbor.\n")
	if err := toml.NewEncoder(&buf).Encode(c); err != nil {
		return nil, fmt.Errorf("%s: task.toml: %w", t.InstanceID, err)
	}
	return buf.Bytes(), nil
}

// dockerfile builds envgap-task, then the registry service's image and the main image
// (last, so a plain build gives it): the evaluation image, the project in /work, and the
// package clients pointed at the registry service at the task's cut-off.
func dockerfile(t *schemas.Task, image string, cutoff schemas.Cutoff) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# EnvGap task %s: the %s evaluation image, the project at base_commit in /work, and\n", t.InstanceID, t.Ecosystem)
	b.WriteString("# envgap-task (the date-limited registry proxy and the verifier's guard) built from envgap's source.\n")
	fmt.Fprintf(&b, "FROM %s AS tool\nWORKDIR /src\nCOPY envgap-task/ ./\n", GoImage)
	b.WriteString("RUN CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=mod go build -trimpath -o /envgap-task ./cmd/envgap-task\n\n")
	fmt.Fprintf(&b, "FROM %s AS registry\nCOPY --from=tool /envgap-task /usr/local/bin/envgap-task\n", image)
	// The task's cut-off is the registry's: a URL naming another date is refused.
	fmt.Fprintf(&b, "EXPOSE %d\nCMD [\"envgap-task\", \"serve\", \"--addr\", \"0.0.0.0:%d\", \"--cutoff\", %q]\n\n", RegistryPort, RegistryPort, cutoff.String())
	fmt.Fprintf(&b, "FROM %s AS main\nCOPY --from=tool /envgap-task /usr/local/bin/envgap-task\nCOPY project/ /work/\nWORKDIR /work\n", image)
	for _, kv := range registry.ClientEnv(RegistryURL, cutoff) {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&b, "ENV %s=%q\n", k, v)
	}
	return []byte(b.String())
}

// compose adds the registry service to Harbor's main service.
const compose = `# The registry service serves PyPI and npm at the task's cut-off alone (envgap-task serve
# --cutoff: a request naming another date is refused with 403 and logged);
# main's package clients point at it (the Dockerfile's ENV). Upstreams: the public
# registries, or ENVGAP_PYPI_UPSTREAM / ENVGAP_NPM_UPSTREAM from the host.
services:
  main:
    build:
      context: .
      target: main
    command: ["sleep", "infinity"]
    depends_on:
      - registry
  registry:
    build:
      context: .
      target: registry
    environment:
      ENVGAP_PYPI_UPSTREAM: ${ENVGAP_PYPI_UPSTREAM:-}
      ENVGAP_NPM_UPSTREAM: ${ENVGAP_NPM_UPSTREAM:-}
`

// solveScript writes the gold files into /work (Harbor's oracle agent runs it).
func solveScript(t *schemas.Task) ([]byte, error) {
	var b strings.Builder
	b.WriteString("#!/bin/bash\n# The reference fix of " + t.InstanceID + ": the gold files, written into /work.\nset -euo pipefail\ncd /work\n")
	for _, f := range t.GoldFiles {
		if err := schemas.CheckRelPath(f.Path); err != nil {
			return nil, fmt.Errorf("%s: gold_files: %w", t.InstanceID, err)
		}
		q := shell.Quote(f.Path)
		if f.Content == nil {
			fmt.Fprintf(&b, "rm -f -- %s\n", q)
			continue
		}
		if i := strings.LastIndex(f.Path, "/"); i > 0 {
			fmt.Fprintf(&b, "mkdir -p -- %s\n", shell.Quote(f.Path[:i]))
		}
		fmt.Fprintf(&b, "base64 -d > %s <<'ENVGAP_EOF'\n", q)
		enc := base64.StdEncoding.EncodeToString([]byte(*f.Content))
		for len(enc) > 76 {
			b.WriteString(enc[:76] + "\n")
			enc = enc[76:]
		}
		b.WriteString(enc + "\nENVGAP_EOF\n")
	}
	return []byte(b.String()), nil
}

// testScript is the default-fail verifier.
func testScript(t *schemas.Task) []byte {
	lim := sandbox.DefaultLimits()
	control := "0"
	if t.IsControl {
		control = "1"
	}
	s := strings.NewReplacer("@ID@", t.InstanceID, "@CONTROL@", control,
		"@STEP_TIMEOUT@", fmt.Sprint(int(lim.StepTimeout.Seconds())), "@MAXOUT@", fmt.Sprint(lim.OutputBytes)).Replace(testTemplate)
	return []byte(s)
}

// testTemplate: reward 0 first; the guards in envgap's order (a changed source file, an
// unchanged environment of a repair task); then bootstrap, resolve and run as envgap's
// core runs them (each step bounded by the core's step timeout, the first failure ends
// the run); reward 1 only when resolve and run exit 0. A failed step's reason quotes its
// error line.
const testTemplate = `#!/bin/bash
# The verifier of EnvGap task @ID@ (default-fail: reward 0 unless the project runs).
set -uo pipefail
V=/logs/verifier
mkdir -p "$V"
echo 0 > "$V/reward.txt"
printf '{"reward": 0, "resolved": 0}\n' > "$V/reward.json"
finish() { # reward resolved reason
  printf '%s\n' "$3" > "$V/reason.txt"
  printf '{"reward": %s, "resolved": %s}\n' "$1" "$2" > "$V/reward.json"
  echo "$1" > "$V/reward.txt"
  echo "envgap: reward $1: $3"
  exit 0
}
CONTROL=@CONTROL@
cd /work 2>/dev/null || finish 0 0 "/work is missing"
command -v envgap-task >/dev/null || finish 0 0 "envgap-task is missing from the environment"
changes=$(envgap-task changes --baseline /tests/baseline.json /work)
case $? in
  0) echo "environment files changed:"; printf '%s\n' "$changes" ;;
  2) finish 0 0 "$changes" ;;
  3) [ "$CONTROL" = 1 ] || finish 0 0 "the environment is unchanged (a repair task needs a fix)" ;;
  *) finish 0 0 "the changes cannot be checked: $changes" ;;
esac
step() { # name
  [ -s "/tests/steps/$1.sh" ] || return 0
  echo "== $1: $(cat "/tests/steps/$1.sh")"
  timeout -k 10 @STEP_TIMEOUT@ bash "/tests/steps/$1.sh" > "$V/$1.log" 2>&1
  rc=$?
  head -c @MAXOUT@ "$V/$1.log"
  echo "== $1 exit $rc"
  return $rc
}
errline() { # log: the step's error line (the last line that reads as one, else the last line)
  local l
  l=$(grep -aiE 'error|not found|no such|cannot|could not|unable to|fatal|exception|traceback|failed|missing' "$1" | tail -n 1)
  [ -n "$l" ] || l=$(grep -av '^[[:space:]]*$' "$1" | tail -n 1)
  l=$(printf '%s' "$l" | tr -d '\r' | sed 's/^[[:space:]]*//')
  printf '%s' "${l:0:300}"
}
failed() { # name
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then echo "$1 timed out (@STEP_TIMEOUT@ s)"; return; fi
  local e
  e=$(errline "$V/$1.log")
  if [ -n "$e" ]; then echo "$1 failed (exit $rc): $e"; else echo "$1 failed (exit $rc)"; fi
}
step bootstrap || finish 0 0 "$(failed bootstrap)"
step resolve || finish 0 0 "$(failed resolve)"
step run || finish 0 0 "$(failed run)"
finish 1 1 "resolved: the project installs and runs"
`
