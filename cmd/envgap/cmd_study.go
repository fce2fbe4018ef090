package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/envgap/envgap"
	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/harness/study"
	"github.com/envgap/envgap/lib/agent"
	"github.com/envgap/envgap/lib/agent/loop"
	"github.com/envgap/envgap/lib/agent/model"
	"github.com/envgap/envgap/lib/agent/model/openai"
	"github.com/envgap/envgap/lib/jobs"
	"github.com/envgap/envgap/lib/studylayout"
	"github.com/envgap/envgap/schemas"
	"github.com/envgap/envgap/verify"
	"github.com/spf13/cobra"
)

func newStudyCommand(f *factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "study",
		Short: "The paper's Gen/Repair study: run it with an agent, report its metrics",
		Long: `The coding-agent study behind the Lite set (the paper in docs/study.md): study report
computes every metric of the paper's Table 8 from a study folder (the layout crawl lite
imports); study run runs the paper's Gen/Repair protocol with an agent and writes such a
folder.`,
		Args: exactArgs(0),
	}
	c.AddCommand(newStudyReportCommand(f), newStudyRunCommand(f))
	return c
}

type studyReportOptions struct {
	engineOptions
	Study    string
	Problems string
	Out      string
	NoEngine bool
	K        int
	Paper    bool
	Ties     string
	Jobs     int
}

func newStudyReportCommand(f *factory) *cobra.Command {
	opts := &studyReportOptions{}
	c := &cobra.Command{
		Use:   "report STUDY",
		Short: "Every metric of the paper's Table 8 from a study folder, as tables and figures",
		Long: `Compute the paper's metrics from a study folder (<agent>/<language>-t<trial>/p<N>/ with
meta.json, written/, repaired/, and what envgap study run adds: rounds.json, layers.json):
SR(0), SR(<=k), the self-correction gain and repair-cycle buckets; phantom, hidden and bloat
rates; the inflation ratio rho; manifest precision, recall and F1; cross- and intra-agent
Jaccard, CDR and UCR; SLAR and EGAR; Spearman's rho of |D1| against first-attempt success;
UDR; the most frequent phantom and hidden packages; convergence by domain.

D1 is read from written/ (the initial manifest). D2 and D3 come from layers.json when the
project has one; otherwise the successful project's final state (repaired/, or written/
when it worked first time) runs through the evaluation core in its clean image, memoised in
the store, so a second report runs nothing. --no-engine leaves such projects out of the
metrics that need D2 and D3, and the report says so.

Markdown goes to stdout (--json: every number as JSON); --out DIR writes report.md,
report.json and the figures (SVG). Projects left out are listed with their path and why;
when a folder could not be read at all the exit code is 4. Definitions: docs/study.md.

--k is the repair budget (default 10, the paper's): a project made to work only after more
than k repair rounds is a failure within the budget, in its own column (">k") everywhere,
and out of SR(<=k), EGAR and every metric over successful projects. --paper takes the
paper's way where envgap departs from it by choice (one manifest file per language, Java
test scope counted, raw C++ names, ties in Tables 10-11 first seen, Table 5 over the tasks
every trial made to work); the report's header says which was used.`,
		Example: "  envgap study report data/demo/study --out out/study-report\n  envgap study report /data/study --no-engine --json",
		Args:    exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Study = args[0]
			return f.run(c, opts, func() error { return runStudyReport(c, f, opts) })
		},
	}
	c.Flags().StringVar(&opts.Problems, "problems", "", "the problem list (default: the study's problems.json, else "+defaultProblemsFile+")")
	c.Flags().StringVar(&opts.Out, "out", "", "write report.md, report.json and the figures into this folder")
	c.Flags().BoolVar(&opts.NoEngine, "no-engine", false, "do not run projects to measure D2 and D3; leave those without layers.json out of the metrics that need them")
	c.Flags().IntVar(&opts.K, "k", study.DefaultK, "the repair budget: a project made to work after more than k repair rounds is a failure")
	c.Flags().BoolVar(&opts.Paper, "paper", false, "the paper's way where envgap departs from it by choice (docs/study.md): one manifest file, Java test scope, raw C++ names, ties first seen, Table 5 over tasks every trial made to work")
	c.Flags().StringVar(&opts.Ties, "ties", "", "order of equal counts in Tables 10 and 11: name or first-seen (default name; first-seen with --paper)")
	c.Flags().IntVar(&opts.Jobs, "jobs", 1, "projects measured at once (their steps; as many more have their containers made ready meanwhile)")
	opts.addFlags(c)
	return c
}

// lazyMeasurer opens the engine on the first project that needs measuring.
type lazyMeasurer struct {
	open    func() (study.Measurer, error)
	once    sync.Once
	m       study.Measurer
	err     error
	closers []func()
}

func (l *lazyMeasurer) Measure(ctx context.Context, fin study.Final) (*studylayout.Layers, error) {
	l.once.Do(func() { l.m, l.err = l.open() })
	if l.err != nil {
		return nil, fmt.Errorf("measuring D2 and D3 needs the container engine: %w (or pass --no-engine)", l.err)
	}
	return l.m.Measure(ctx, fin)
}

func runStudyReport(c *cobra.Command, f *factory, opts *studyReportOptions) error {
	switch {
	case opts.Jobs < 1:
		return usageError{fmt.Errorf("--jobs %d: at least 1", opts.Jobs)}
	case opts.K < 1:
		return usageError{fmt.Errorf("--k %d: the repair budget is at least 1 (the paper's is %d)", opts.K, study.DefaultK)}
	case opts.Ties != "" && opts.Ties != study.TiesName && opts.Ties != study.TiesFirstSeen:
		return usageError{fmt.Errorf("--ties %q: want %s or %s", opts.Ties, study.TiesName, study.TiesFirstSeen)}
	}
	problems, err := loadProblemList(&crawlLiteOptions{Study: opts.Study, Problems: opts.Problems}, envgap.Source())
	if err != nil {
		return err
	}
	lo := study.LoadOptions{Problems: problems, Paper: opts.Paper, Jobs: core.Ahead(opts.Jobs)}
	lazy := &lazyMeasurer{}
	var sess *verify.Session
	defer func() {
		if sess != nil {
			sess.Close()
		}
	}()
	if !opts.NoEngine {
		lazy.open = func() (study.Measurer, error) {
			s, vo, err := opts.open(c, f)
			if err != nil {
				return nil, err
			}
			sess = s
			st, err := f.OpenStore()
			if err != nil {
				return nil, err
			}
			return &study.CoreMeasurer{Exec: &study.Executor{Core: s.Stage.Cores[0], Store: st, Limits: vo.Limits, Gate: core.NewGate(opts.Jobs)},
				Progress: func(rel string, cached bool) {
					if cached {
						f.logf("measured %s (memoised)", rel)
					} else {
						f.logf("measured %s", rel)
					}
				}}, nil
		}
		lo.Measure = lazy
	}
	s, err := study.Load(c.Context(), opts.Study, lo)
	if err != nil {
		return err
	}
	r := study.Compute(s, study.Options{K: opts.K, Paper: opts.Paper, Ties: opts.Ties})
	if opts.Out != "" {
		if err := study.WriteDir(opts.Out, r); err != nil {
			return err
		}
	}
	switch {
	case f.Global.JSON:
		if err := f.printJSON(r); err != nil {
			return err
		}
	case opts.Out != "":
		fmt.Fprintf(f.Out, "study report of %s: %d projects (%d main trial, %d successful within k = %d, %d over the budget, %d with D2/D3); wrote %s\n",
			opts.Study, r.Projects, r.Main, r.Successful, r.Options.K, r.OverBudget, r.Layered, filepath.Join(opts.Out, "report.md"))
	default:
		study.WriteMarkdown(f.Out, r, nil)
	}
	unread := 0
	for _, sk := range s.Skipped {
		if sk.Metrics == "all" {
			unread++
		}
	}
	if unread > 0 {
		return partialError{fmt.Errorf("study report: %d folder(s) or project(s) of %s could not be read (listed under \"Left out\")", unread, opts.Study)}
	}
	return nil
}

type studyRunOptions struct {
	engineOptions
	Agent     agent.Spec
	AgentName string
	modelFlags
	Languages    []string
	Problems     string
	Only         []int64
	Trials       int
	MaxRepairs   int
	Variant      string
	Out          string
	Jobs         int
	AgentTimeout time.Duration
	Slurm        slurmOptions
}

func newStudyRunCommand(f *factory) *cobra.Command {
	opts := &studyRunOptions{}
	c := &cobra.Command{
		Use:   "run --agent CMD --agent-name NAME --out STUDY",
		Short: "Run the paper's Gen/Repair protocol with an agent and write the study folder",
		Long: `For each language, trial and problem: Gen gives the agent the paper's Figure 3 prompt
(--variant explicit or implicit) in an empty workspace; the project it writes runs in the
language's clean image through the evaluation core (resolve, then the run under trace); on
failure the failing step's output goes back verbatim and the agent repairs, up to
--max-repairs rounds. Each project is written as <agent-name>/<language>-t<trial>/p<NN>/ with
written/ (M(0)), repaired/, prompt.txt, meta.json (with repair_rounds), rounds.json (each
round's error and system packages) and layers.json (D2 and D3 of the run that succeeded):
the layout crawl lite imports and study report reads. A finished project is never run
again, so an interrupted run resumes; runs are memoised in the store.

--agent bedrock|openai --model M: envgap's own model agent (lib/agent/loop) acting in
the box (a container of the language's clean image on the workspace, with the registry proxy
and the egress door), one loop attempt per round in one conversation: Gen starts it with the
prompt, each Repair round continues it with the round's error, verbatim; tools bash,
write_file, finish (its summary's "RUN:" line is the run command). --base-url points openai
at any OpenAI-compatible server.

--agent CMD runs a command per turn in the workspace with ENVGAP_STUDY_PROMPT (file),
ENVGAP_STUDY_ROUND, ENVGAP_STUDY_FEEDBACK (file: the last error), ENVGAP_STUDY_ERRORS
(folder of every error so far), ENVGAP_STUDY_LANGUAGE, ENVGAP_STUDY_PROBLEM and
ENVGAP_RUN_COMMAND_FILE (where it may write the command that runs its program; else the
default recipe's entry point is used). It runs on this host unless --agent-image IMAGE is
given (or LANGUAGE-IMAGE=IMAGE per evaluation image, e.g. envgap-python-eval=my-agent:py):
then each turn runs in a fresh box from that image, built FROM the language's evaluation
image (checked before anything starts), with the turn's folder mounted at its own path, the
registries at the turn's date and the egress door, plus each --allow-host HOST[:PORT] (the
agent CLI's model API).

--slurm runs the projects not done yet as a Slurm job array (as verify --slurm): each worker
runs a project exactly as a local run does and writes its folder into STUDY, which, like
the store, must be on a filesystem every node mounts; an agent command runs on the nodes.
See docs/study.md.`,
		Example: "  envgap study run --agent 'bash data/demo/agents/study-agent.sh' --agent-name scripted \\\n    --languages python,javascript --only 13,48 --out out/study",
		Args:    func(c *cobra.Command, args []string) error { return opts.Slurm.args(c, args) },
		RunE: func(c *cobra.Command, args []string) error {
			if err := opts.Slurm.check(c, f, &opts.engineOptions); err != nil {
				return err
			}
			switch {
			case opts.Agent.Raw == "":
				return usageError{errors.New("--agent is required: a command (see envgap study run --help)")}
			case opts.Out == "":
				return usageError{errors.New("--out STUDY is required")}
			case opts.Agent.IsModel() && opts.Model == "":
				return usageError{fmt.Errorf("--agent %s needs --model", opts.Agent.Raw)}
			case opts.AgentName == "" && !opts.Agent.IsModel():
				return usageError{errors.New("--agent-name is required with an agent command: it names the study's agent folder")}
			case opts.AgentName == "":
				opts.AgentName = folderName(opts.Model)
			}
			if err := checkContainedFlags(opts.Agent, opts.AgentImages, opts.AllowHosts); err != nil {
				return err
			}
			n, err := studyContextTokens(opts.Agent, opts.Model, opts.ContextTokens, f.Err)
			if err != nil {
				return err
			}
			opts.ContextTokens = n
			if opts.Agent.IsModel() {
				if opts.MaxTurns == 0 {
					opts.MaxTurns = loop.DefaultLimits().MaxTurns
				}
				if err := opts.modelFlags.checkModel(opts.Agent); err != nil {
					return err
				}
			}
			return f.run(c, opts, func() error { return runStudyRun(c, f, opts) })
		},
	}
	c.Flags().Var(&opts.Agent, "agent", "the agent: bedrock or openai (envgap's own model agents acting in the box), or a command run in the workspace each turn")
	c.Flags().StringVar(&opts.AgentName, "agent-name", "", "the agent's folder in the study (e.g. claude-code; default for a model agent: the model)")
	c.Flags().StringVar(&opts.Model, "model", "", "the model (required for bedrock and openai; recorded in rounds.json)")
	c.Flags().StringVar(&opts.BaseURL, "base-url", "", "openai: an OpenAI-compatible server's URL (default the OpenAI API, key in $"+openai.EnvKey+")")
	c.Flags().StringVar(&opts.Region, "region", "", "bedrock: the AWS region (default the AWS configuration's)")
	c.Flags().IntVar(&opts.MaxTurns, "max-turns", 0, "bedrock, openai: model turns per protocol round (default the loop's)")
	c.Flags().Int64Var(&opts.ContextTokens, "context-tokens", 0, fmt.Sprintf("bedrock, openai: the model's context in tokens; older tool outputs are elided as the conversation nears it (default: the model's published context, %d for a model envgap does not know)", model.DefaultContextTokens))
	c.Flags().StringSliceVar(&opts.Languages, "languages", []string{"python", "javascript", "java", "cpp"}, "languages, comma-separated")
	c.Flags().StringVar(&opts.Problems, "problems", "", "the problem list (default "+defaultProblemsFile+", embedded)")
	c.Flags().Int64SliceVar(&opts.Only, "only", nil, "run these problem numbers only (default: every problem of the list)")
	c.Flags().IntVar(&opts.Trials, "trials", 1, "independent trials per language and problem")
	c.Flags().IntVar(&opts.MaxRepairs, "max-repairs", 10, "repair rounds after Gen (the paper's k)")
	c.Flags().StringVar(&opts.Variant, "variant", study.VariantExplicit, "the prompt: explicit or implicit (Section 3.1)")
	c.Flags().StringVar(&opts.Out, "out", "", "the study folder to write (resumed when it exists)")
	c.Flags().IntVar(&opts.Jobs, "jobs", 1, "projects run at once")
	c.Flags().DurationVar(&opts.AgentTimeout, "agent-timeout", 30*time.Minute, "time limit of one agent turn")
	opts.modelFlags.addBudgetFlags(c, "protocol round")
	addContainedFlags(c, &opts.AgentImages, &opts.AllowHosts)
	opts.engineOptions.addFlags(c)
	opts.Slurm.addFlags(c)
	return c
}

// studyWork is study run --slurm, and what a local run needs besides its session: each
// item is a project of the study (its folder), run as a local run does.
type studyWork struct {
	workerEngine
	Agent        agent.Spec            `json:"agent"`
	AgentName    string                `json:"agent_name"`
	ModelFlags   modelFlags            `json:"model_flags"`
	AgentTimeout time.Duration         `json:"agent_timeout"`
	Languages    []schemas.Ecosystem   `json:"languages"`
	Problems     []studylayout.Problem `json:"problems"`
	Trials       int                   `json:"trials"`
	MaxRepairs   int                   `json:"max_repairs"`
	Variant      string                `json:"variant"`
	Out          string                `json:"out"`
}

func (w *studyWork) Command() string { return "study" }

// Open opens what runs one project of the study as a local study run does
// (study.ItemHandler).
func (w *studyWork) Open(_ context.Context, env *workerEnv, items []string, logf func(string, ...any)) (jobs.Handler, func(), error) {
	c, f := env.c, env.f
	eo := w.engine()
	sess, vo, err := eo.open(c, f)
	if err != nil {
		return nil, nil, err
	}
	o, err := w.options(c, f, sess, vo)
	if err != nil {
		sess.Close()
		return nil, nil, err
	}
	do, err := study.ItemHandler(o)
	if err != nil {
		sess.Close()
		return nil, nil, err
	}
	logf("engine %s, registry proxy %s; study of %d project(s)", strings.Join(sess.Hosts(), ","), sess.ProxyURL(), len(items))
	return do, func() { sess.Close() }, nil
}

// options are the run's options on a session: the agent, the executor.
func (w *studyWork) options(c *cobra.Command, f *factory, sess *verify.Session, vo verify.Options) (study.RunOptions, error) {
	st, err := f.OpenStore()
	if err != nil {
		return study.RunOptions{}, err
	}
	runner := func(ctx context.Context, command, dir string, env []string, timeout time.Duration) (int, bool, error) {
		r, err := agent.RunCommand(ctx, command, dir, env, timeout)
		return r.ExitCode, r.TimedOut, err
	}
	var ag study.Agent
	if !w.Agent.IsModel() {
		var cards []string
		for _, l := range w.Languages {
			cards = append(cards, l.Image())
		}
		contained, err := containedOn(c.Context(), f, w.ModelFlags.AgentImages, w.ModelFlags.AllowHosts, cards, sess.Stage)
		if err != nil {
			return study.RunOptions{}, err
		}
		ca := &study.CommandAgent{Command: w.Agent.Raw, Run: runner, Timeout: w.AgentTimeout}
		if contained != nil {
			ca.Box = &study.CommandBox{Core: sess.Stage.Cores[0], Contained: contained, Limits: vo.Limits}
		}
		ag = ca
	} else {
		ma, err := newModelAgent(c.Context(), f, w.Agent, &w.ModelFlags)
		if err != nil {
			return study.RunOptions{}, err
		}
		ag = &study.ModelAgent{Core: sess.Stage.Cores[0], Limits: vo.Limits, Timeout: w.AgentTimeout,
			Loop: &loop.Agent{Model: ma.Model, Limits: ma.Limits, Price: ma.Price, System: study.StudySystem, Tools: study.StudyTools()}}
	}
	return study.RunOptions{
		Agent:     ag,
		AgentName: w.AgentName, Model: w.ModelFlags.Model, Languages: w.Languages, Problems: w.Problems,
		Trials: w.Trials, MaxRepairs: w.MaxRepairs, Variant: w.Variant, Out: w.Out, Jobs: w.Jobs,
		Exec: &study.Executor{Core: sess.Stage.Cores[0], Store: st, Limits: vo.Limits},
	}, nil
}

func runStudyRun(c *cobra.Command, f *factory, opts *studyRunOptions) error {
	all, err := loadProblemList(&crawlLiteOptions{Study: opts.Out, Problems: opts.Problems}, envgap.Source())
	if err != nil {
		return err
	}
	if all == nil { // the study folder's own problems.json
		if all, err = studylayout.ReadProblemsFile(filepath.Join(opts.Out, studylayout.ProblemsFile)); err != nil {
			return err
		}
	}
	var problems []studylayout.Problem
	byNum := map[int64]studylayout.Problem{}
	for _, p := range all {
		byNum[p.Number] = p
	}
	if len(opts.Only) == 0 {
		problems = all
	}
	for _, n := range opts.Only {
		p, ok := byNum[n]
		if !ok {
			return usageError{fmt.Errorf("--only %d: no such problem in the problem list", n)}
		}
		problems = append(problems, p)
	}
	var langs []schemas.Ecosystem
	for _, l := range opts.Languages {
		eco, ok := studylayout.LanguageAliases[l]
		if !ok {
			return usageError{fmt.Errorf("--languages: %q is not one of python, javascript, java, cpp", l)}
		}
		langs = append(langs, eco)
	}
	w := &studyWork{workerEngine: opts.workerEngine(opts.Jobs), Agent: opts.Agent, AgentName: opts.AgentName, ModelFlags: opts.modelFlags,
		AgentTimeout: opts.AgentTimeout, Languages: langs, Problems: problems, Trials: opts.Trials, MaxRepairs: opts.MaxRepairs, Variant: opts.Variant, Out: opts.Out}
	progress := func(rel string, p *study.Protocol, skipped bool) {
		switch {
		case skipped:
			f.logf("%s: done earlier", rel)
		case p.WorkedFirst:
			fmt.Fprintf(f.Err, "%s: ran at Gen (round 0)\n", rel)
		case p.MadeToWork:
			fmt.Fprintf(f.Err, "%s: ran after %d repair round(s)\n", rel, p.Rounds)
		default:
			fmt.Fprintf(f.Err, "%s: did not run within %d repair rounds\n", rel, opts.MaxRepairs)
		}
	}
	var res *study.RunResult
	if opts.Slurm.Slurm {
		res, err = runStudySlurm(c, f, opts, w, progress)
	} else {
		sess, vo, oerr := opts.open(c, f)
		if oerr != nil {
			return oerr
		}
		defer sess.Close()
		o, oerr := w.options(c, f, sess, vo)
		if oerr != nil {
			return oerr
		}
		o.Progress = progress
		res, err = study.Run(c.Context(), o)
	}
	if res != nil {
		if err := f.output(res, func(w io.Writer) {
			fmt.Fprintf(w, "study run: %d project(s) written to %s, %d done earlier, %d not recorded\n", res.Done, opts.Out, res.Skipped, len(res.Failed))
			for _, fl := range res.Failed {
				fmt.Fprintf(w, "  %s\n", fl)
			}
		}); err != nil {
			return err
		}
	}
	if err != nil {
		return err
	}
	if len(res.Failed) > 0 {
		return partialError{fmt.Errorf("study run: %d project(s) not recorded (an infrastructure fault; run again to resume)", len(res.Failed))}
	}
	return nil
}

// runStudySlurm runs the projects not done yet as a Slurm job array: each worker runs a
// project exactly as a local run does and writes its folder into the study folder (which,
// like the store, must be on a filesystem every node mounts).
func runStudySlurm(c *cobra.Command, f *factory, opts *studyRunOptions, w *studyWork, progress func(string, *study.Protocol, bool)) (*study.RunResult, error) {
	o := study.RunOptions{AgentName: w.AgentName, Languages: w.Languages, Problems: w.Problems, Trials: w.Trials,
		MaxRepairs: w.MaxRepairs, Variant: w.Variant, Out: w.Out}
	planned, err := study.Plan(&o)
	if err != nil {
		return nil, usageError{err}
	}
	w.Out = o.Out
	if err := os.MkdirAll(w.Out, 0o755); err != nil {
		return nil, err
	}
	if err := study.ClearWork(o); err != nil {
		return nil, err
	}
	res := &study.RunResult{}
	var items []string
	for _, j := range planned {
		if study.Done(o, j) {
			res.Skipped++
			progress(j.Rel, nil, true)
			continue
		}
		items = append(items, j.Rel)
	}
	if len(items) == 0 {
		return res, nil
	}
	shared := map[string]string{"study folder": w.Out}
	if err := sharedPath(shared, "prices file", &w.ModelFlags.Prices); err != nil {
		return nil, err
	}
	if !w.Agent.IsModel() {
		fmt.Fprintf(f.Err, "slurm: the agent command runs on the workers' nodes: %s\n", w.Agent.Raw)
	}
	out, err := opts.Slurm.run(c, f, w, items, shared, func(d *jobs.Done, done, total int) {
		if it := jobs.ItemOf[study.Item](d); it.Protocol != nil {
			progress(it.Rel, it.Protocol, false)
		}
	})
	if out == nil || err != nil {
		return nil, err
	}
	for i, d := range out.Results {
		if d == nil { // no worker finished it
			d = out.NotDone(i, items[i])
		}
		it := jobs.ItemOf[study.Item](d)
		switch {
		case it.Error != "":
			res.Failed = append(res.Failed, it.Rel+": "+it.Error)
		case it.Skipped:
			res.Skipped++
		default:
			res.Done++
		}
	}
	study.ClearWork(o)
	return res, nil
}

// folderName turns a model id into a study agent folder name (letters, digits, '.', '_', '-').
func folderName(m string) string {
	b := []byte(m)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '-'
		}
	}
	return strings.Trim(string(b), "-.")
}

// studyContextTokens is study run's --context-tokens: the flag when given, else the
// model's published context (model.ContextTokens; an unknown model's default is said on
// warn). An agent command keeps its own context: the flag is refused for it.
func studyContextTokens(spec agent.Spec, modelID string, flag int64, warn io.Writer) (int64, error) {
	switch {
	case flag < 0:
		return 0, usageError{errors.New("--context-tokens cannot be negative")}
	case flag > 0 && !spec.IsModel():
		return 0, usageError{errors.New("--context-tokens is for --agent bedrock or openai (an agent command keeps its own context)")}
	case flag > 0 || !spec.IsModel():
		return flag, nil
	}
	n, known := model.ContextTokens(modelID)
	if !known {
		fmt.Fprintf(warn, "study run: envgap does not know the context of model %s: older tool outputs are elided as the conversation nears %d tokens (set --context-tokens)\n", modelID, n)
	}
	return n, nil
}
