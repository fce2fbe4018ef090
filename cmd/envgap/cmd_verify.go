package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/envgap/envgap/core/registry"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/lib/jobs"
	"github.com/envgap/envgap/verify"
	"github.com/spf13/cobra"
)

// engineOptions are the flags of every command that runs containers.
type engineOptions struct {
	Engines      []string
	PyPIUpstream string
	NPMUpstream  string
	ProxyListen  string
	ProxyURL     string
	StepTimeout  time.Duration
	Memory       int64
	// GitURLTemplate says where GitHub candidates are fetched from.
	GitURLTemplate string
	// RegistryCacheSize bounds the registry proxy's artifact cache.
	RegistryCacheSize string
}

// EnvRegistryCacheSize is the default of --registry-cache-size.
const EnvRegistryCacheSize = "ENVGAP_REGISTRY_CACHE_SIZE"

func (o *engineOptions) addFlags(c *cobra.Command) {
	c.Flags().StringArrayVar(&o.Engines, "engine", nil, "Docker Engine API endpoint (repeat to spread work over several engines; default $DOCKER_HOST)")
	c.Flags().StringVar(&o.PyPIUpstream, "pypi-upstream", "", "PEP 691 index the registry proxy filters (default "+registry.DefaultPyPIUpstream+")")
	c.Flags().StringVar(&o.NPMUpstream, "npm-upstream", "", "npm registry the proxy filters (default: the npm client's configured registry)")
	c.Flags().StringVar(&o.ProxyListen, "proxy-listen", "", "listen address of the registry proxy (default: the address containers reach this host at, the gateway of each engine's sandbox network, alone, on a free port)")
	c.Flags().StringVar(&o.ProxyURL, "proxy-url", "", "the proxy's root as containers reach it (default http://<each engine's bridge gateway>:<port>; set it for engines on other machines, with --proxy-listen)")
	c.Flags().DurationVar(&o.StepTimeout, "step-timeout", 20*time.Minute, "time limit of each step")
	c.Flags().Int64Var(&o.Memory, "memory", 4<<30, "memory limit of each container, in bytes")
	c.Flags().StringVar(&o.RegistryCacheSize, "registry-cache-size", os.Getenv(EnvRegistryCacheSize), "size bound of the registry proxy's artifact cache (<store>/registry-cache; least recently used go first), e.g. 20G, 512MiB; -1 for none (default $"+EnvRegistryCacheSize+", else 20G)")
	c.Flags().StringVar(&o.GitURLTemplate, "git-url-template", "", "where GitHub candidates are fetched from, with {repo}, {owner}, {name} (default GitHub's)")
}

// open connects the engines, starts the registry proxy and returns the session with the
// options every verify-like run shares (limits, where GitHub projects come from).
func (o *engineOptions) open(c *cobra.Command, f *factory) (*verify.Session, verify.Options, error) {
	st, err := f.OpenStore()
	if err != nil {
		return nil, verify.Options{}, err
	}
	var cacheBytes int64
	if o.RegistryCacheSize != "" {
		if cacheBytes, err = registry.ParseSize(o.RegistryCacheSize); err != nil {
			return nil, verify.Options{}, usageError{fmt.Errorf("--registry-cache-size (or $%s): %w", EnvRegistryCacheSize, err)}
		}
	}
	sess, err := verify.Open(c.Context(), verify.Env{
		Store:              st,
		RegistryCacheBytes: cacheBytes,
		Engines:            o.Engines,
		Registry:           registry.Options{PyPIUpstream: o.PyPIUpstream, NPMUpstream: npmRegistryOrWarn(c.Context(), f, o.NPMUpstream, "--npm-upstream")},
		ProxyListen:        o.ProxyListen,
		ProxyURL:           o.ProxyURL,
	})
	if err != nil {
		return nil, verify.Options{}, err
	}
	return sess, verify.Options{
		Limits:   o.limits(),
		Checkout: checkoutSource(o.GitURLTemplate),
		Progress: f.progress(),
	}, nil
}

// progress returns the progress display of verify-like commands (verify, recheck).
func (f *factory) progress() func(verify.Event) {
	p := f.newProgress()
	return func(e verify.Event) {
		state, errText := string(e.Outcome), ""
		switch {
		case e.Err != nil:
			state, errText = "error", e.Err.Error()
		case e.Cached:
			state += " (unchanged, not run)"
		}
		p.step(e.Done, e.Total, e.InstanceID, state, errText)
	}
}

func (o *engineOptions) limits() sandbox.Limits {
	return sandbox.Limits{StepTimeout: o.StepTimeout, MemoryBytes: o.Memory}
}

type verifyOptions struct {
	engineOptions
	Slurm  slurmOptions
	IDs    []string
	Jobs   int
	Repeat int
}

func newVerifyCommand(f *factory) *cobra.Command {
	opts := &verifyOptions{}
	c := &cobra.Command{
		Use:   "verify",
		Short: "Run the evaluation core before and after each fix; record verdicts",
		Long: `Verify every candidate without a verdict (or the ones given with --ids): run it in a
fresh container before and after its fix, with PyPI and npm cut back to its registry_date,
and record a verdict: verified, already_works or not_reproduced, with the reason. A candidate
whose inputs, image and core are unchanged is never run again. An infrastructure fault leaves
the candidate without a verdict (exit code 4) and the next verify retries it. Interrupted at
any point and started again, verify resumes without losing finished runs.`,
		Example: "  envgap verify\n  envgap verify --jobs 2 --repeat 3\n  envgap verify --ids envgap__o__r-12 --engine unix:///run/podman/podman.sock --engine tcp://10.0.0.2:2375\n  envgap --store /shared/envgap/store verify --slurm --partition batch --workers 16 --time 4:00:00 -- --account=lab",
		Args:    func(c *cobra.Command, args []string) error { return opts.Slurm.args(c, args) },
		RunE: func(c *cobra.Command, args []string) error {
			if err := opts.Slurm.check(c, f, &opts.engineOptions); err != nil {
				return err
			}
			if opts.Jobs < 1 || opts.Repeat < 1 {
				return usageError{fmt.Errorf("--jobs and --repeat must be at least 1")}
			}
			return f.run(c, opts, func() error {
				if opts.Slurm.Slurm {
					return runVerifySlurm(c, f, opts)
				}
				return runVerify(c, f, opts)
			})
		},
	}
	c.Flags().StringSliceVar(&opts.IDs, "ids", nil, "candidates to verify (comma-separated or repeated)")
	c.Flags().IntVar(&opts.Jobs, "jobs", 1, "candidates whose steps run at once, as many more made ready meanwhile (with --slurm: by each worker)")
	c.Flags().IntVar(&opts.Repeat, "repeat", 1, "runs of each side; a result that changes between repeats is not_reproduced (flaky k/n)")
	opts.addFlags(c)
	opts.Slurm.addFlags(c)
	return c
}

func runVerify(c *cobra.Command, f *factory, opts *verifyOptions) error {
	sess, vo, err := opts.open(c, f)
	if err != nil {
		return err
	}
	defer sess.Close()
	vo.IDs, vo.Jobs, vo.Repeat = opts.IDs, opts.Jobs, opts.Repeat
	rep, err := sess.Stage.Run(c.Context(), vo)
	return f.verifyReport(rep, err)
}

// verifyReport prints a verify run's report and returns its error (exit code).
func (f *factory) verifyReport(rep *verify.Report, err error) error {
	if rep != nil {
		if err := f.output(rep, func(w io.Writer) {
			fmt.Fprintf(w, "verified %d candidates: %d run, %d unchanged (not run), %d failed\n", len(rep.Results), rep.Ran, rep.Cached, rep.Failed)
			for _, r := range rep.Results {
				if r.Error != "" {
					fmt.Fprintf(w, "  %s: no verdict: %s\n", r.InstanceID, r.Error)
				} else if f.Global.Verbose {
					fmt.Fprintf(w, "  %s: %s (%s): %s\n", r.InstanceID, r.Outcome, r.Stability, r.Reason)
				}
			}
		}); err != nil {
			return err
		}
	}
	if err != nil {
		return err
	}
	if rep.Failed > 0 {
		return partialError{fmt.Errorf("%d candidate(s) have no verdict because of faults; run envgap verify again", rep.Failed)}
	}
	return nil
}

// runVerifySlurm verifies the same candidates as runVerify, as a Slurm job array, and
// reports as runVerify does.
func runVerifySlurm(c *cobra.Command, f *factory, opts *verifyOptions) error {
	st, err := f.OpenStore()
	if err != nil {
		return err
	}
	todo, err := (&verify.Stage{Store: st}).Select(opts.IDs)
	if err != nil {
		return err
	}
	rep := &verify.Report{Results: make([]verify.Result, len(todo))}
	if len(todo) == 0 {
		return f.verifyReport(rep, nil)
	}
	items := make([]string, len(todo))
	for i, cand := range todo {
		items[i] = cand.InstanceID
	}
	progress := f.progress()
	start := time.Now()
	out, err := opts.Slurm.run(c, f, &verifyWork{workerEngine: opts.workerEngine(opts.Jobs), Repeat: opts.Repeat}, items, nil, func(d *jobs.Done, done, total int) {
		progress(verify.ResultEvent(verifyResultOf(d), done, total, time.Since(start)))
	})
	if out == nil {
		return err
	}
	for i, d := range out.Results {
		if d == nil {
			rep.Results[i] = verify.Result{InstanceID: items[i], Error: out.NotDone(i, items[i]).Error}
			continue
		}
		rep.Results[i] = verifyResultOf(d)
	}
	rep.Count()
	return f.verifyReport(rep, err)
}

// verifyResultOf reads a worker's result of one candidate.
func verifyResultOf(d *jobs.Done) verify.Result {
	var r verify.Result
	if msg := d.Decode(&r, &r.InstanceID); msg != "" {
		return verify.Result{InstanceID: d.Item, Error: msg, Infra: true}
	}
	return r
}
