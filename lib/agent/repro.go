package agent

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/core/untrusted"
	"github.com/envgap/envgap/data"
)

// The environment an agent command gets (the protocol, docs/agents.md).
const (
	EnvTaskFile       = "ENVGAP_TASK_FILE"       // the task file (JSON: TaskView)
	EnvWorkspace      = "ENVGAP_WORKSPACE"       // the project; also the working directory
	EnvAttempt        = "ENVGAP_ATTEMPT"         // 1, 2, ...
	EnvMaxAttempts    = "ENVGAP_MAX_ATTEMPTS"    // --max-attempts
	EnvFeedbackFile   = "ENVGAP_FEEDBACK_FILE"   // the last evaluation's output; empty on attempt 1
	EnvTrajectoryFile = "ENVGAP_TRAJECTORY_FILE" // where the agent may write its trajectory
	EnvCostFile       = "ENVGAP_COST_FILE"       // where the agent may write its cost in USD
	EnvRepro          = "ENVGAP_REPRO"           // a command that runs repro_command in the evaluation container
	EnvReproURL       = "ENVGAP_REPRO_URL"       // what ENVGAP_REPRO asks
	EnvReproToken     = "ENVGAP_REPRO_TOKEN"     // its capability for this run only
)

// ReproServer lets an agent run repro_command on its workspace in the evaluation
// container, through the evaluation core (memoised: an unchanged workspace runs no
// container again). It listens on 127.0.0.1 and answers one request at a time.
type ReproServer struct {
	ws     *Workspace
	runner core.SpecRunner
	store  data.ObjectReader
	limits sandbox.Limits
	token  string
	srv    *http.Server
	ln     net.Listener
	mu     sync.Mutex
	ctx    context.Context
	Runs   int // repro runs asked for
}

// ReproAnswer is the server's answer: the steps' output and the exit code the client
// exits with (0 when every step exited 0).
type ReproAnswer struct {
	Output   string `json:"output"`
	ExitCode int    `json:"exit_code"`
}

// ReproConfig is what a repro server runs with: the memoised runner of the evaluation
// core, the store its step outputs are read from, and the container limits.
type ReproConfig struct {
	Runner core.SpecRunner
	Store  data.ObjectReader
	Limits sandbox.Limits
}

// StartRepro starts a repro server for a workspace.
func StartRepro(ctx context.Context, ws *Workspace, cfg ReproConfig) (*ReproServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("repro server: %w", err)
	}
	tok := make([]byte, 16)
	if _, err := rand.Read(tok); err != nil {
		return nil, err
	}
	s := &ReproServer{ws: ws, runner: cfg.Runner, store: cfg.Store, limits: cfg.Limits, token: hex.EncodeToString(tok), ln: ln, ctx: ctx}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// Env writes the executable script ENVGAP_REPRO names into the run directory (it runs
// command, a shell command line such as "'/usr/bin/envgap' agent-repro") and returns the
// variables that point the agent at the server.
func (s *ReproServer) Env(command string) ([]string, error) {
	script := filepath.Join(s.ws.RunDir, ReproFileName)
	// Written over whatever an agent on this host left at its name, never through it.
	if err := untrusted.WriteFile(s.ws.RunDir, ReproFileName, []byte("#!/bin/sh\n# Runs repro_command on the workspace in the evaluation container (envgap run).\nexec "+command+"\n"), 0o755); err != nil {
		return nil, fmt.Errorf("repro script: %w", err)
	}
	return []string{EnvRepro + "=" + script, EnvReproURL + "=http://" + s.ln.Addr().String() + "/repro", EnvReproToken + "=" + s.token}, nil
}

// Close stops the server (a box's listener is closed by the function BoxEnv returns).
func (s *ReproServer) Close() error { return s.srv.Close() }

// boxClient is ENVGAP_REPRO in a box: the box has no envgap, so it is a client of the
// repro server in bash alone (its /dev/tcp), asking for the answer as text with the exit
// code in a header. It exits 2 when the server cannot be asked, as envgap agent-repro.
const boxClient = `#!/bin/bash
# Runs repro_command on the workspace in the evaluation container (envgap run; an agent
# in a box). A client of envgap's repro server in bash alone: the box has no envgap.
set -u
addr=${ENVGAP_REPRO_URL#http://}
addr=${addr%%/*}
if ! exec 3<>"/dev/tcp/${addr%:*}/${addr##*:}"; then
	echo "envgap repro: cannot reach the repro server at $addr" >&2
	exit 2
fi
printf 'POST /repro HTTP/1.0\r\nHost: %s\r\nAuthorization: Bearer %s\r\nAccept: text/plain\r\nContent-Length: 0\r\n\r\n' "$addr" "$ENVGAP_REPRO_TOKEN" >&3
IFS= read -r status <&3 || { echo "envgap repro: the repro server did not answer" >&2; exit 2; }
code=2
while IFS= read -r line <&3; do
	line=${line%$'\r'}
	[ -z "$line" ] && break
	case ${line,,} in
	x-envgap-exit-code:*) code=${line#*:}; code=${code//[!0-9]/} ;;
	esac
done
case $status in
*" 200 "*) cat <&3; exit "${code:-2}" ;;
*) echo "envgap repro: $status" >&2; cat <&3 >&2; exit 2 ;;
esac
`

// BoxFileName is the repro script of an agent in a box, in the run directory.
const BoxFileName = "repro-box"

// BoxEnv opens a listener of the server on host (the address a box reaches this host at:
// core.Box.HostAddr), writes the box's repro script into the run directory and returns
// the variables that point an agent in the box at it (the run directory is mounted at
// the same path in the box), with a function that closes the listener.
func (s *ReproServer) BoxEnv(host string) ([]string, func(), error) {
	script := filepath.Join(s.ws.RunDir, BoxFileName)
	if err := untrusted.WriteFile(s.ws.RunDir, BoxFileName, []byte(boxClient), 0o755); err != nil {
		return nil, nil, fmt.Errorf("repro script: %w", err)
	}
	// Marked as envgap's: the host admits nothing else from the sandbox network.
	ln, err := sandbox.ListenHost(net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, nil, fmt.Errorf("repro server for the box: %w", err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	env := []string{EnvRepro + "=" + script, EnvReproURL + "=http://" + ln.Addr().String() + "/repro", EnvReproToken + "=" + s.token}
	return env, func() { srv.Close() }, nil
}

func (s *ReproServer) serve(w http.ResponseWriter, r *http.Request) {
	auth := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if r.Method != http.MethodPost || subtle.ConstantTimeCompare([]byte(auth), []byte(s.token)) != 1 {
		http.Error(w, "not allowed", http.StatusForbidden)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Runs++
	ans, err := s.repro(s.ctx)
	if err != nil {
		http.Error(w, "repro could not run (an infrastructure fault, not your project): "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	if r.Header.Get("Accept") == "text/plain" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Envgap-Exit-Code", strconv.Itoa(ans.ExitCode))
		io.WriteString(w, ans.Output)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(ans)
}

// repro runs the task's repro side on the workspace as it is now.
func (s *ReproServer) repro(ctx context.Context) (*ReproAnswer, error) {
	t := s.ws.Task
	files, err := s.ws.Project()
	if err != nil {
		return &ReproAnswer{Output: err.Error() + "\n", ExitCode: 2}, nil
	}
	cutoff, err := t.Cutoff()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.InstanceID, err)
	}
	run, _, _, err := s.runner.RunSpec(ctx, core.Spec{InstanceID: t.InstanceID, Side: core.SideBefore, Project: files,
		Recipe: core.TaskRecipe(t), Cutoff: cutoff, Limits: s.limits}, "agent-repro")
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	ans := &ReproAnswer{}
	for _, st := range run.Steps {
		fmt.Fprintf(&b, "=== %s: %s\n", st.Name, st.Command)
		out, err := s.store.Get(st.Output)
		if err != nil {
			return nil, err
		}
		b.Write(out)
		if len(out) > 0 && out[len(out)-1] != '\n' {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "=== %s exited %d\n", st.Name, st.ExitCode)
		if st.Failed() && ans.ExitCode == 0 {
			ans.ExitCode = st.ExitCode
			if ans.ExitCode == 0 {
				ans.ExitCode = 1
			}
		}
	}
	b.WriteString(core.RefusedText(run))
	ans.Output = b.String()
	return ans, nil
}

// Project returns the workspace's files as they are now, with the same rules as Files
// (no .git, no ignored or build output, no links made by the agent).
func (w *Workspace) Project() ([]core.File, error) {
	var out []core.File
	err := w.walk(func(rel string, b []byte, mode fs.FileMode, _ bool) error {
		out = append(out, core.File{Path: rel, Content: b, Mode: mode})
		return nil
	})
	return out, err
}

// ReproClient asks a repro server to run and copies its output to w; it returns the exit
// code the agent's command should exit with.
func ReproClient(ctx context.Context, url, token string, w io.Writer) (int, error) {
	if url == "" || token == "" {
		return 2, fmt.Errorf("%s and %s are not set: run this from an agent started by envgap run", EnvReproURL, EnvReproToken)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return 2, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 2, fmt.Errorf("repro: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return 2, fmt.Errorf("repro: %s", strings.TrimSpace(string(b)))
	}
	var ans ReproAnswer
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil {
		return 2, fmt.Errorf("repro: %w", err)
	}
	io.WriteString(w, ans.Output)
	return ans.ExitCode, nil
}
