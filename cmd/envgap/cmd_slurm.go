package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/harness/eval"
	"github.com/envgap/envgap/lib/jobs"
	"github.com/envgap/envgap/schemas"
	"github.com/envgap/envgap/verify"
	"github.com/spf13/cobra"
)

// slurmOptions are the flags of the commands that can run as a Slurm job array.
type slurmOptions struct {
	Slurm      bool
	Partition  string
	Workers    int
	Time       string
	NodeSetup  string
	MaxRequeue int
	Lease      time.Duration
	// Extra are the sbatch flags given after --.
	Extra []string
}

func (o *slurmOptions) addFlags(c *cobra.Command) {
	c.Flags().BoolVar(&o.Slurm, "slurm", false, "run as a Slurm job array: workers on the cluster's nodes take the work from the store (which must be on a filesystem every node mounts); sbatch flags go after --")
	c.Flags().StringVar(&o.Partition, "partition", "", "with --slurm: the partition (default the cluster's default partition)")
	c.Flags().IntVar(&o.Workers, "workers", 1, "with --slurm: array tasks, one worker each (each does --jobs items at once)")
	c.Flags().StringVar(&o.Time, "time", "", "with --slurm: time limit of each worker (sbatch --time, e.g. 2:00:00)")
	c.Flags().StringVar(&o.NodeSetup, "node-setup", "", "with --slurm: a shell command each worker runs first on its node; a line `export DOCKER_HOST=...` it prints picks the node's engine (e.g. 'bash /shared/envgap/images/setup-engine.sh')")
	c.Flags().IntVar(&o.MaxRequeue, "max-requeue", 2, "with --slurm: how often one failed array task is requeued")
	c.Flags().DurationVar(&o.Lease, "lease", time.Minute, "with --slurm: a worker's claim on an item lapses this long after it stops renewing it (killed, node lost); the item is then done again, once")
}

// args is the commands' Args: nothing, except sbatch flags after -- with --slurm.
func (o *slurmOptions) args(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if o.Slurm && c.ArgsLenAtDash() == 0 {
		o.Extra = args
		return nil
	}
	if o.Slurm {
		return usageError{fmt.Errorf("unexpected arguments %q: give sbatch flags after -- (see %s --help)", args, c.CommandPath())}
	}
	return usageError{fmt.Errorf("unexpected arguments %q (sbatch flags after -- need --slurm; see %s --help)", args, c.CommandPath())}
}

// check refuses flags that do not fit together, before anything is opened.
func (o *slurmOptions) check(c *cobra.Command, f *factory, eo *engineOptions) error {
	if !o.Slurm {
		for _, name := range []string{"partition", "workers", "time", "node-setup", "max-requeue", "lease"} {
			if c.Flags().Changed(name) {
				return usageError{fmt.Errorf("--%s needs --slurm", name)}
			}
		}
		return nil
	}
	if dir := f.storeDir(); !filepath.IsAbs(dir) {
		return usageError{fmt.Errorf("store %q is a relative path: with --slurm the workers start on other nodes; give --store (or ENVGAP_STORE) as an absolute path on a filesystem every node mounts", dir)}
	}
	switch {
	case len(eo.Engines) > 0:
		return usageError{errors.New("--engine does not go with --slurm: each worker uses its node's engine ($DOCKER_HOST in the job, or --node-setup)")}
	case eo.ProxyListen != "" || eo.ProxyURL != "":
		return usageError{errors.New("--proxy-listen and --proxy-url do not go with --slurm: each worker starts its own registry proxy on its node")}
	case o.Workers < 1:
		return usageError{errors.New("--workers must be at least 1")}
	case o.MaxRequeue < 0:
		return usageError{errors.New("--max-requeue must be 0 or more")}
	case o.Lease < 10*time.Second:
		return usageError{errors.New("--lease must be at least 10s")}
	}
	return nil
}

// workerEngine is what every worker of a run needs to open its node's engine and
// registry proxy exactly as a local run would, and how many items it does at once.
type workerEngine struct {
	Jobs           int            `json:"jobs"`
	Limits         sandbox.Limits `json:"limits"`
	PyPIUpstream   string         `json:"pypi_upstream,omitempty"`
	NPMUpstream    string         `json:"npm_upstream,omitempty"`
	GitURLTemplate string         `json:"git_url_template,omitempty"`
}

// engine returns the engine options a worker opens its session with.
func (a workerEngine) engine() engineOptions {
	return engineOptions{PyPIUpstream: a.PyPIUpstream, NPMUpstream: a.NPMUpstream, GitURLTemplate: a.GitURLTemplate,
		StepTimeout: a.Limits.StepTimeout, Memory: a.Limits.MemoryBytes}
}

// workerEngine returns what the workers of a run started with these options need.
func (eo *engineOptions) workerEngine(jobs int) workerEngine {
	return workerEngine{Jobs: jobs, Limits: eo.limits(), PyPIUpstream: eo.PyPIUpstream,
		NPMUpstream: eo.NPMUpstream, GitURLTemplate: eo.GitURLTemplate}
}

// ItemsAtOnce is how many items a worker does at once (jobs.Kind).
func (a workerEngine) ItemsAtOnce() int { return a.Jobs }

// slurmWork is one command that runs as a Slurm job array: its value is the plan's
// arguments (as JSON); on a worker, Open opens what the command needs and returns the
// stage's handler, which does one item exactly as a local run does.
type slurmWork = jobs.Kind[*workerEnv]

// slurmKinds makes the empty arguments of each command a plan may name: adding a
// --slurm command is one type implementing slurmWork and one line here.
var slurmKinds = jobs.Kinds[*workerEnv]{
	"verify":  func() slurmWork { return &verifyWork{} },
	"recheck": func() slurmWork { return &recheckWork{} },
	"eval":    func() slurmWork { return &evalWork{} },
	"run":     func() slurmWork { return &runWork{} },
	"study":   func() slurmWork { return &studyWork{} },
}

// run submits the items of work's command as one job array and waits for their results
// (see jobs.Run). The store must be named by an absolute path; shared names more paths
// the workers read (checked like the store).
func (o *slurmOptions) run(c *cobra.Command, f *factory, work slurmWork, items []string, shared map[string]string, onResult func(d *jobs.Done, done, total int)) (*jobs.Outcome, error) {
	command := work.Command()
	dir := f.storeDir()
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding the envgap binary for the workers: %w", err)
	}
	b, err := json.Marshal(work)
	if err != nil {
		return nil, err
	}
	var rnd [3]byte
	_, _ = rand.Read(rnd[:])
	workDir := filepath.Join(dir, "work", fmt.Sprintf("%s-%s-%s", command, time.Now().UTC().Format("20060102T150405"), hex.EncodeToString(rnd[:])))
	worker := []string{exe, "--store", dir, "worker", "--work", workDir}
	if f.Global.Verbose {
		worker = append(worker, "-v")
	}
	r := &jobs.Run{
		Dir:        workDir,
		Plan:       jobs.Plan{Command: command, Items: items, Args: b, LeaseSeconds: int(o.Lease / time.Second), CreatedAt: time.Now().UTC().Format(time.RFC3339)},
		Workers:    o.Workers,
		Partition:  o.Partition,
		Time:       o.Time,
		Extra:      o.Extra,
		Worker:     worker,
		NodeSetup:  o.NodeSetup,
		MaxRequeue: o.MaxRequeue,
		Shared:     map[string]string{"store": dir, "envgap binary": exe},
		OnResult:   onResult,
		Logf:       func(format string, a ...any) { fmt.Fprintf(f.Err, "slurm: "+format+"\n", a...) },
	}
	if o.MaxRequeue == 0 {
		r.MaxRequeue = -1
	}
	for what, p := range shared {
		r.Shared[what] = p
	}
	out, err := r.Do(c.Context())
	if errors.Is(err, jobs.ErrRefused) {
		return out, usageError{err}
	}
	if out != nil && out.Kept != "" {
		fmt.Fprintf(f.Err, "slurm: the work folder %s is kept (workers' output: slurm-*.out)\n", out.Kept)
	}
	return out, err
}

// scoringWork is what the workers of eval and run --slurm share: where the tasks come
// from and the evaluator's options.
type scoringWork struct {
	workerEngine
	Split         string          `json:"split,omitempty"`
	TaskFolder    string          `json:"tasks,omitempty"`
	NoSafeInstall bool            `json:"no_safe_install,omitempty"`
	Audit         *auditUpstreams `json:"audit,omitempty"`
}

// scoringWorkOf returns the scoring work of a command's options; the paths its workers
// read are made absolute and named in shared (to be checked like the store).
func scoringWorkOf(so *scoringOptions) (w scoringWork, shared map[string]string, err error) {
	audit := so.auditUpstreams
	w = scoringWork{workerEngine: so.workerEngine(so.Jobs), Split: so.Split, TaskFolder: so.Tasks, NoSafeInstall: so.NoSafeInstall, Audit: &audit}
	shared = map[string]string{}
	if err := sharedPath(shared, "tasks folder", &w.TaskFolder); err != nil {
		return w, nil, err
	}
	return w, shared, sharedPath(shared, "OSV file", &w.Audit.OSVFile)
}

// sharedPath makes the path *p, when set, absolute and names it in shared as what.
func sharedPath(shared map[string]string, what string, p *string) error {
	if *p == "" {
		return nil
	}
	abs, err := filepath.Abs(*p)
	if err != nil {
		return err
	}
	*p, shared[what] = abs, abs
	return nil
}

// options are the scoring options of a local run of the command.
func (w *scoringWork) options() *scoringOptions {
	so := &scoringOptions{engineOptions: w.engine(), Split: w.Split, Tasks: w.TaskFolder, NoSafeInstall: w.NoSafeInstall}
	if w.Audit != nil {
		so.auditUpstreams = *w.Audit
	}
	return so
}

// tasks reads the tasks as a local run does, and indexes them by instance id.
func (w *scoringWork) tasks(f *factory) ([]schemas.Task, map[string]*schemas.Task, error) {
	tasks, _, err := w.options().splitTasks(f)
	if err != nil {
		return nil, nil, err
	}
	byID := make(map[string]*schemas.Task, len(tasks))
	for i := range tasks {
		byID[tasks[i].InstanceID] = &tasks[i]
	}
	return tasks, byID, nil
}

// evaluator opens this node's engine and registry proxy as a local run does, and logs
// them and what the worker does (format and a).
func (w *scoringWork) evaluator(c *cobra.Command, f *factory, logf func(string, ...any), format string, a ...any) (*eval.Evaluator, *verify.Session, error) {
	ev, sess, err := w.options().evaluator(c, f)
	if err != nil {
		return nil, nil, err
	}
	logf("engine %s, registry proxy %s; %s", strings.Join(sess.Hosts(), ","), sess.ProxyURL(), fmt.Sprintf(format, a...))
	return ev, sess, nil
}

// scoredItem is a worker's result of one task of eval or run --slurm (eval.Item,
// run.Item).
type scoredItem interface {
	// AddTo adds the task's results, faults and log to the run's.
	AddTo(out *eval.Outcome, logs map[string][]byte)
}

// scoreSlurm scores tasks as work's job array, one item a task, and returns the outcome
// and logs a local run of the command gives: read turns a worker's result into the
// task's item, which progress shows as it lands.
func scoreSlurm[T scoredItem](c *cobra.Command, f *factory, o *slurmOptions, work slurmWork, tasks []schemas.Task, shared map[string]string,
	read func(d *jobs.Done) T, progress func(it T, done, total int)) (*eval.Outcome, map[string][]byte, error) {
	items := make([]string, len(tasks))
	for i, t := range tasks {
		items[i] = t.InstanceID
	}
	res, err := o.run(c, f, work, items, shared, func(d *jobs.Done, done, total int) { progress(read(d), done, total) })
	if res == nil || err != nil {
		return nil, nil, err
	}
	out := &eval.Outcome{Results: []schemas.EvalResult{}, Faults: []schemas.EvalFault{}}
	logs := map[string][]byte{}
	for i, d := range res.Results {
		if d == nil { // no worker finished it: read says why
			d = res.NotDone(i, items[i])
		}
		read(d).AddTo(out, logs)
	}
	return out, logs, nil
}

// runEvalSlurm scores the same tasks as a local eval, as a Slurm job array, for the
// same result folder (eval.RunOptions.Remote). The tasks and predictions were read and
// matched already (bad input is refused before anything is submitted); the workers read
// them again from the same absolute paths.
func runEvalSlurm(c *cobra.Command, f *factory, opts *evalOptions, tasks []schemas.Task, builtin bool) (*eval.Outcome, eval.Store, error) {
	st, err := f.OpenStore()
	if err != nil {
		return nil, nil, err
	}
	sw, shared, err := scoringWorkOf(&opts.scoringOptions)
	if err != nil {
		return nil, nil, err
	}
	args := &evalWork{scoringWork: sw, Pred: opts.Pred}
	if !builtin {
		if err := sharedPath(shared, "predictions file", &args.Pred); err != nil {
			return nil, nil, err
		}
	}
	progress := evalProgress(f)
	out, _, err := scoreSlurm(c, f, &opts.Slurm, args, tasks, shared, jobs.ItemOf[eval.Item], func(it eval.Item, done, total int) {
		ev := eval.Event{InstanceID: it.InstanceID, Done: done, Total: total, Result: it.Result, Cached: it.Cached}
		if it.Error != "" {
			ev.Err = errors.New(it.Error)
		}
		progress(ev)
	})
	if out == nil || err != nil {
		return nil, nil, err
	}
	return out, st, nil
}
