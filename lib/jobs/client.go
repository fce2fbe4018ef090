package jobs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrNoSlurm: Slurm's commands are missing or its controller does not answer.
var ErrNoSlurm = errors.New("no Slurm cluster answers here")

// ErrRefused: Slurm refused the request (a partition that does not exist, a bad
// --time, an sbatch flag it does not accept).
var ErrRefused = errors.New("Slurm refused the job")

// Client runs Slurm's commands (sbatch, squeue, scancel, sinfo, scontrol).
type Client struct {
	// Command runs one Slurm command with stdin and returns its stdout and stderr;
	// nil runs it from PATH.
	Command func(ctx context.Context, name string, args []string, stdin []byte) (stdout, stderr []byte, err error)
}

func (c *Client) run(ctx context.Context, name string, stdin []byte, args ...string) ([]byte, []byte, error) {
	if c != nil && c.Command != nil {
		return c.Command(ctx, name, args, stdin)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	err := cmd.Run()
	return out.Bytes(), errOut.Bytes(), err
}

// Check makes sure Slurm's commands are installed and its controller answers.
func (c *Client) Check(ctx context.Context) error {
	if c == nil || c.Command == nil {
		for _, name := range []string{"sbatch", "squeue", "scancel", "sinfo", "scontrol"} {
			if _, err := exec.LookPath(name); err != nil {
				return fmt.Errorf("%w: %s is not installed (Slurm's client commands must be on PATH; `make slurm` sets up a single-node Slurm on this machine)", ErrNoSlurm, name)
			}
		}
	}
	out, errOut, err := c.run(ctx, "scontrol", nil, "ping")
	if err != nil || !bytes.Contains(out, []byte("is UP")) {
		return fmt.Errorf("%w: the Slurm controller does not answer (scontrol ping: %s)", ErrNoSlurm, oneLine(out, errOut, err))
	}
	return nil
}

// Partition is a Slurm partition and its nodes.
type Partition struct {
	Name    string
	Default bool
	Up      bool
	Nodes   []string
}

// Partition returns the partition called name, or the cluster's default one when name
// is empty. A partition that does not exist is ErrRefused, naming the ones that do.
func (c *Client) Partition(ctx context.Context, name string) (Partition, error) {
	out, errOut, err := c.run(ctx, "sinfo", nil, "-h", "-o", "%P|%a|%N")
	if err != nil {
		return Partition{}, fmt.Errorf("%w: sinfo: %s", ErrNoSlurm, oneLine(out, errOut, err))
	}
	var all []Partition
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 3 {
			continue
		}
		p := Partition{Name: strings.TrimSuffix(f[0], "*"), Default: strings.HasSuffix(f[0], "*"), Up: f[1] == "up"}
		if f[2] != "" {
			hosts, herr, err := c.run(ctx, "scontrol", nil, "show", "hostnames", f[2])
			if err != nil {
				return Partition{}, fmt.Errorf("%w: scontrol show hostnames %s: %s", ErrNoSlurm, f[2], oneLine(hosts, herr, err))
			}
			p.Nodes = strings.Fields(string(hosts))
		}
		// sinfo prints a partition once per node state: merge.
		merged := false
		for i := range all {
			if all[i].Name == p.Name {
				all[i].Nodes = append(all[i].Nodes, p.Nodes...)
				all[i].Up = all[i].Up || p.Up
				merged = true
			}
		}
		if !merged {
			all = append(all, p)
			names = append(names, p.Name)
		}
	}
	for _, p := range all {
		if (name == "" && p.Default) || (name != "" && p.Name == name) {
			if !p.Up {
				return p, fmt.Errorf("%w: partition %s is not up (sinfo shows its state)", ErrRefused, p.Name)
			}
			return p, nil
		}
	}
	if name == "" {
		return Partition{}, fmt.Errorf("%w: the cluster has no default partition; give --partition (partitions: %s)", ErrRefused, strings.Join(names, ", "))
	}
	return Partition{}, fmt.Errorf("%w: partition %q does not exist (partitions: %s)", ErrRefused, name, strings.Join(names, ", "))
}

// Array is one job array of workers.
type Array struct {
	Name      string
	Partition string // empty: the cluster's default
	Time      string // sbatch --time; empty: the partition's default
	Tasks     int    // array tasks 0..Tasks-1
	Output    string // sbatch --output pattern
	Script    string // the batch script, given on stdin
	Requeue   bool   // sbatch --requeue: Slurm may requeue a task whose node failed
	Extra     []string
}

func (a Array) args(testOnly bool) []string {
	args := []string{"--parsable", fmt.Sprintf("--array=0-%d", a.Tasks-1), "--job-name=" + a.Name}
	if a.Output != "" {
		args = append(args, "--output="+a.Output)
	}
	if a.Partition != "" {
		args = append(args, "--partition="+a.Partition)
	}
	if a.Time != "" {
		args = append(args, "--time="+a.Time)
	}
	if a.Requeue {
		args = append(args, "--requeue")
	}
	args = append(args, a.Extra...)
	if testOnly {
		args = append(args, "--test-only")
	}
	return args
}

// TestSubmit asks sbatch whether it would take the array (sbatch --test-only), without
// submitting anything.
func (c *Client) TestSubmit(ctx context.Context, a Array) error {
	if a.Tasks < 1 {
		return fmt.Errorf("%w: an array needs at least one task", ErrRefused)
	}
	out, errOut, err := c.run(ctx, "sbatch", []byte(a.Script), a.args(true)...)
	if err != nil {
		return fmt.Errorf("%w: %s: %s", ErrRefused, strings.Join(append([]string{"sbatch"}, a.Extra...), " "), oneLine(out, errOut, err))
	}
	return nil
}

// Submit submits the array and returns its job id.
func (c *Client) Submit(ctx context.Context, a Array) (string, error) {
	out, errOut, err := c.run(ctx, "sbatch", []byte(a.Script), a.args(false)...)
	if err != nil {
		return "", fmt.Errorf("%w: sbatch: %s", ErrRefused, oneLine(out, errOut, err))
	}
	id, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";")
	if _, err := strconv.Atoi(id); err != nil {
		return "", fmt.Errorf("sbatch answered %q, not a job id", strings.TrimSpace(string(out)))
	}
	return id, nil
}

// Cancel cancels a job (every task of an array), or one array task ("<job>_<task>").
func (c *Client) Cancel(ctx context.Context, job string) error {
	out, errOut, err := c.run(ctx, "scancel", nil, job)
	if err != nil {
		return fmt.Errorf("scancel %s: %s", job, oneLine(out, errOut, err))
	}
	return nil
}

// CancelPending cancels the tasks of a job that have not started.
func (c *Client) CancelPending(ctx context.Context, job string) error {
	out, errOut, err := c.run(ctx, "scancel", nil, "--state=PENDING", job)
	if err != nil {
		return fmt.Errorf("scancel --state=PENDING %s: %s", job, oneLine(out, errOut, err))
	}
	return nil
}

// TaskState is one array task as squeue shows it.
type TaskState struct {
	Task   string // the array task id
	State  string // PENDING, RUNNING, ...
	Reason string
}

// Tasks returns the tasks of a job that Slurm still lists (pending, running, completing,
// requeued); none once every task has ended.
func (c *Client) Tasks(ctx context.Context, job string) ([]TaskState, error) {
	out, errOut, err := c.run(ctx, "squeue", nil, "-h", "-r", "-j", job, "-o", "%K|%T|%r")
	if err != nil {
		if bytes.Contains(errOut, []byte("Invalid job id")) {
			return nil, nil // the controller has forgotten the job: it ended
		}
		return nil, fmt.Errorf("squeue -j %s: %s", job, oneLine(out, errOut, err))
	}
	var tasks []TaskState
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 3 {
			continue
		}
		switch f[1] {
		case "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "BOOT_FAIL", "DEADLINE", "PREEMPTED":
			continue // ended
		}
		tasks = append(tasks, TaskState{Task: f[0], State: f[1], Reason: f[2]})
	}
	return tasks, nil
}

func oneLine(out, errOut []byte, err error) string {
	msg := strings.TrimSpace(string(errOut))
	if msg == "" {
		msg = strings.TrimSpace(string(out))
	}
	if msg == "" && err != nil {
		msg = err.Error()
	}
	msg = strings.ReplaceAll(msg, "\n", "; ")
	if len(msg) > 400 {
		msg = msg[:400] + "..."
	}
	return msg
}

// Filesystem types that live in one machine's memory: a store there is seen by no
// other node.
var localOnlyFS = map[int64]string{
	0x01021994: "tmpfs",
	0x858458f6: "ramfs",
}

// CheckShared checks that path (the store, or the envgap binary) can be seen by the
// nodes: an absolute path, and, when a node other than this machine may run a worker,
// not on a filesystem that lives in this machine's memory.
func CheckShared(what, path string, nodes []string) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("%s %q is a relative path: the workers start elsewhere; give an absolute path on a filesystem every node mounts at the same place", what, path)
	}
	host, _ := os.Hostname()
	short, _, _ := strings.Cut(host, ".")
	others := false
	for _, n := range nodes {
		if n != host && n != short {
			others = true
		}
	}
	if !others {
		return nil
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return fmt.Errorf("%s %s: %w", what, path, err)
	}
	if name, ok := localOnlyFS[int64(st.Type)]; ok {
		return fmt.Errorf("%s %s is on %s, in this machine's memory: nodes %s cannot see it; put it on a filesystem every node mounts (NFS, Lustre, ...)", what, path, name, strings.Join(nodes, ","))
	}
	return nil
}
