package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/envgap/envgap"
	"github.com/envgap/envgap/harness/study"
	"github.com/envgap/envgap/lib/studylayout"
	"github.com/envgap/envgap/verify"
	"github.com/spf13/cobra"
)

func newStudyCommand(f *factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "study",
		Short: "The paper's Gen/Repair study: run it with an agent, report its metrics",
		Long: `The coding-agent study behind the Lite set (the paper in docs/study.md): study report
computes every metric of the paper's Table 8 from a study folder (the layout crawl lite
imports).`,
		Args: exactArgs(0),
	}
	c.AddCommand(newStudyReportCommand(f))
	return c
}

type studyReportOptions struct {
	engineOptions
	Study    string
	Problems string
	Out      string
	NoEngine bool
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
when a folder could not be read at all the exit code is 4. Definitions: docs/study.md.`,
		Example: "  envgap study report data/demo/study --out out/study-report\n  envgap study report /data/study --no-engine --json",
		Args:    exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Study = args[0]
			return runStudyReport(c, f, opts)
		},
	}
	c.Flags().StringVar(&opts.Problems, "problems", "", "the problem list (default: the study's problems.json, else "+defaultProblemsFile+")")
	c.Flags().StringVar(&opts.Out, "out", "", "write report.md, report.json and the figures into this folder")
	c.Flags().BoolVar(&opts.NoEngine, "no-engine", false, "do not run projects to measure D2 and D3; leave those without layers.json out of the metrics that need them")
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
	problems, err := loadProblemList(&crawlLiteOptions{Study: opts.Study, Problems: opts.Problems}, envgap.Source())
	if err != nil {
		return err
	}
	lo := study.LoadOptions{Problems: problems}
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
			return &study.CoreMeasurer{Exec: &study.Executor{Core: s.Stage.Cores[0], Store: st, Limits: vo.Limits},
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
	r := study.Compute(s)
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
		fmt.Fprintf(f.Out, "study report of %s: %d projects (%d main trial, %d made to work, %d with D2/D3); wrote %s\n",
			opts.Study, r.Projects, r.Main, r.Successful, r.Layered, filepath.Join(opts.Out, "report.md"))
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
