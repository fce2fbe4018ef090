package jobs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/envgap/envgap/core/shell"
)

// Run is one run of workers as a Slurm job array over a work queue.
type Run struct {
	Client *Client
	// Dir is the work folder to create; it must not exist.
	Dir  string
	Plan Plan
	// Workers is the number of array tasks (at most one per item).
	Workers   int
	Partition string
	Time      string
	// Extra are sbatch flags passed through as they are.
	Extra []string
	// Worker is the command line of one worker (absolute binary path and arguments).
	Worker []string
	// NodeSetup, when set, is a shell command each array task runs before its worker;
	// an `export DOCKER_HOST=...` line it prints is applied (images/setup-engine.sh
	// prints one).
	NodeSetup string
	// MaxRequeue bounds how often one array task whose worker failed is requeued
	// (default 2; negative: never).
	MaxRequeue int
	// Shared are the paths every node must see, by what they are ("store", ...).
	Shared map[string]string
	// Poll is how often the queue is read (default 1s); squeue is asked every third poll.
	Poll time.Duration
	// OnResult is called once per item as its result lands (done of total).
	OnResult func(d *Done, done, total int)
	// Logf reports what the run does (may be nil).
	Logf func(format string, args ...any)
}

// Outcome is what a run gave.
type Outcome struct {
	Job string
	// Results are indexed like the plan's items; nil for an item no worker finished.
	Results []*Done
	// Missing says why items have no result (the workers ended first); empty otherwise.
	Missing string
	// Kept is the work folder when it was kept (items without a result, an interrupted
	// run); empty when it was removed.
	Kept string
}

func (r *Run) array(script string) Array {
	return Array{
		Name: "envgap-" + r.Plan.Command, Partition: r.Partition, Time: r.Time,
		Tasks: r.tasks(), Output: filepath.Join(r.Dir, "slurm-%A_%a.out"), Script: script,
		Requeue: true, Extra: r.Extra,
	}
}

func (r *Run) tasks() int { return max(1, min(r.Workers, len(r.Plan.Items))) }

// Check asks everything that can be known before submitting: Slurm answers, the
// partition exists and is up, the shared paths are visible to its nodes, and sbatch
// would take the array (sbatch --test-only). Nothing is written.
func (r *Run) Check(ctx context.Context) error {
	if r.Workers < 1 {
		return errors.New("--workers must be at least 1")
	}
	if err := r.Client.Check(ctx); err != nil {
		return err
	}
	p, err := r.Client.Partition(ctx, r.Partition)
	if err != nil {
		return err
	}
	whats := make([]string, 0, len(r.Shared))
	for what := range r.Shared {
		whats = append(whats, what)
	}
	sort.Strings(whats)
	for _, what := range whats {
		if err := CheckShared(what, r.Shared[what], p.Nodes); err != nil {
			return err
		}
	}
	return r.Client.TestSubmit(ctx, r.array(r.script()))
}

// Do checks (Check), creates the work folder, submits the array and waits until every
// item has a result or every array task has ended, calling OnResult as results land.
// When ctx ends the array is cancelled (scancel) and ctx.Err() is returned with what
// was done. A refusal by sbatch leaves nothing behind.
func (r *Run) Do(ctx context.Context) (*Outcome, error) {
	logf := r.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if err := r.Check(ctx); err != nil {
		return nil, err
	}
	q, err := Create(r.Dir, r.Plan)
	if err != nil {
		return nil, err
	}
	r.Plan = q.Plan()
	if err := writeFile(r.Dir, "worker.sh", []byte(r.script())); err != nil {
		os.RemoveAll(r.Dir)
		return nil, fmt.Errorf("work folder: %w", err)
	}
	job, err := r.Client.Submit(ctx, r.array(r.script()))
	if err != nil {
		os.RemoveAll(r.Dir)
		return nil, err
	}
	_ = writeFile(r.Dir, "job", []byte(job+"\n"))
	logf("submitted job array %s: %d worker(s) for %d item(s); work folder %s", job, r.tasks(), len(r.Plan.Items), r.Dir)
	out := &Outcome{Job: job}
	poll := r.Poll
	if poll <= 0 {
		poll = time.Second
	}
	total := len(r.Plan.Items)
	done := 0
	read := func() error {
		var fresh []int
		var err error
		out.Results, fresh, err = q.Results(out.Results)
		for _, n := range fresh {
			done++
			if r.OnResult != nil {
				r.OnResult(out.Results[n], done, total)
			}
		}
		return err
	}
	for tick := 0; ; tick++ {
		if ctx.Err() != nil {
			cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err := r.Client.Cancel(cctx, job)
			cancel()
			if err != nil {
				logf("cancelling job %s: %v", job, err)
			} else {
				logf("cancelled job array %s", job)
			}
			_ = read()
			out.Kept = r.Dir
			return out, ctx.Err()
		}
		if err := read(); err != nil {
			logf("reading the work queue: %v (trying again)", err)
		}
		if done == total {
			r.finish(ctx, job, logf)
			out.Kept = ""
			if err := os.RemoveAll(r.Dir); err != nil {
				out.Kept = r.Dir
			}
			return out, nil
		}
		if tick%3 == 2 {
			tasks, err := r.Client.Tasks(ctx, job)
			if err != nil && ctx.Err() == nil {
				logf("asking Slurm about job %s: %v (trying again)", job, err)
			} else if err == nil && len(tasks) == 0 {
				// Every task ended: take what they recorded last, then stop.
				_ = read()
				if done < total {
					out.Missing = fmt.Sprintf("every worker of job array %s ended before it was done%s", job, r.lastOutput())
					out.Kept = r.Dir
					return out, nil
				}
				continue
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(poll):
		}
	}
}

// finish cancels array tasks that never started and waits a little for the running
// ones to see that no work is left, so their output is complete.
func (r *Run) finish(ctx context.Context, job string, logf func(string, ...any)) {
	if err := r.Client.CancelPending(ctx, job); err != nil {
		logf("%v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		tasks, err := r.Client.Tasks(ctx, job)
		if err != nil || len(tasks) == 0 {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	// A worker still running holds an item another worker finished after its lease
	// lapsed (it was frozen, or cut off from the store): its result would be dropped.
	if err := r.Client.Cancel(ctx, job); err != nil {
		logf("%v", err)
	}
}

// lastOutput returns the end of the most recent array task's output, for an error.
func (r *Run) lastOutput() string {
	files, _ := filepath.Glob(filepath.Join(r.Dir, "slurm-*.out"))
	var newest string
	var when time.Time
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && st.ModTime().After(when) {
			newest, when = f, st.ModTime()
		}
	}
	if newest == "" {
		return " (no worker wrote any output: did the array tasks start? see squeue and the partition's nodes)"
	}
	b, _ := os.ReadFile(newest)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return fmt.Sprintf("; the end of %s:\n    %s", newest, strings.Join(lines, "\n    "))
}

// script is the batch script every array task runs.
func (r *Run) script() string {
	maxRequeue := r.MaxRequeue
	if maxRequeue == 0 {
		maxRequeue = 2
	}
	var b strings.Builder
	b.WriteString("#!/bin/bash\n")
	b.WriteString("# One envgap worker: a task of the job array of one envgap run (written by envgap --slurm).\n")
	b.WriteString("set -u\ncd /\n")
	if r.NodeSetup != "" {
		fmt.Fprintf(&b, "setup_out=$(bash -c %s) || { echo \"envgap worker: the node set-up failed: $setup_out\" >&2; exit 1; }\n", shell.Quote(r.NodeSetup))
		b.WriteString("line=$(printf '%s\\n' \"$setup_out\" | grep '^export DOCKER_HOST=' | tail -n 1)\n")
		b.WriteString("if [ -n \"$line\" ]; then eval \"$line\"; fi\n")
	}
	quoted := make([]string, len(r.Worker))
	for i, a := range r.Worker {
		quoted[i] = shell.Quote(a)
	}
	b.WriteString(strings.Join(quoted, " ") + "\n")
	b.WriteString("rc=$?\n")
	// 130: interrupted (scancel); anything else but 0 is a failed worker: requeue it a
	// bounded number of times. Its claims are given back or expire.
	fmt.Fprintf(&b, "if [ \"$rc\" -ne 0 ] && [ \"$rc\" -ne 130 ] && [ \"${SLURM_RESTART_COUNT:-0}\" -lt %d ]; then\n", maxRequeue)
	b.WriteString("\techo \"envgap worker: exited $rc; requeueing array task ${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID} (restart $((${SLURM_RESTART_COUNT:-0} + 1)) of " + strconv.Itoa(maxRequeue) + ")\" >&2\n")
	b.WriteString("\tscontrol requeue \"${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}\"\n")
	b.WriteString("fi\nexit \"$rc\"\n")
	return b.String()
}

// OwnerLabel names this process's array task from Slurm's environment ("" outside a job).
func OwnerLabel(getenv func(string) string) string {
	job, task := getenv("SLURM_ARRAY_JOB_ID"), getenv("SLURM_ARRAY_TASK_ID")
	if job == "" || task == "" {
		if id := getenv("SLURM_JOB_ID"); id != "" {
			return "slurm-" + id
		}
		return ""
	}
	return "slurm-" + job + "_" + task
}
