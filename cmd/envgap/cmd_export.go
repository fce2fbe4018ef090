package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/envgap/envgap"
	"github.com/envgap/envgap/crawl/gitfetch"
	"github.com/envgap/envgap/export"
	"github.com/envgap/envgap/export/scan"
	"github.com/spf13/cobra"
)

type exportOptions struct {
	Out            string
	Repo           string
	Release        string
	ReleaseConfig  string
	Meta           export.ReleaseConfig
	CitationFile   string
	NoAudit        bool
	Harbor         bool
	GitURLTemplate string
}

func newExportCommand(f *factory) *cobra.Command {
	opts := &exportOptions{}
	c := &cobra.Command{
		Use:   "export --out DIR",
		Short: "Write the Hub folder: six parquet configs and the dataset card",
		Long: `Write the Hugging Face Hub folder of the store's task set: data/<config>/*.parquet for
full, reported, repaired, lite, secure and candidates (the card's columns, order and types),
README.md with the YAML configs and the generated dataset card (counts, the candidates
funnel as a table and a chart, the excluded tasks, the credential-scan notes, the corpus
id, how to load each config), LICENSE.md (which licence covers what, per repository),
images/candidates-funnel.png, and harness/envgap-source.zip: this binary's own source with
the release's task rows (release/tasks.jsonl), which builds with go build ./cmd/envgap and
which envgap hf check --release ZIP checks against the folder.

Nothing is written when the store has no tasks, when the latest credential scan does not
cover the store or has unreviewed findings (envgap scan), when a task row disagrees with
its audit (run envgap admit again), when no task has a registry audit at all (run envgap
audit, or give --no-audit, and the card then says the release was not audited), or when a
row has invalid UTF-8 or a repeated path (the error names the task and field). Reviewed secrets are redacted in the published text.
Exporting the same store twice gives byte-identical files. DIR must be new, empty or an
earlier export; only the files an export writes are replaced.

The card's YAML is what the Hub reads: license other (LICENSE.md), language, task
categories, size category, the configs (candidates first and default; a config with no rows
has no file and is left out) and dataset_info read from the written files. eval.yaml
registers the boards with the Hub's benchmark leaderboards. The links at the top of the
card, the citation and eval.yaml's evaluation framework come from --release-config FILE
(YAML: leaderboard, code, paper, discussion, citation, evaluation_framework) and the flags,
which win; code and discussion default to the dataset repository's harness zip and
discussion page, the citation to a BibTeX entry of the dataset and its corpus id.

With --harbor the folder also gets harbor/tasks.parquet (one row per task not excluded
from scoring: path and task_binary, a gzipped tar of the task's directory in Harbor's
format) and harbor/dataset.toml, and the card a section on running EnvGap in Harbor
(docs/harbor.md; check them with envgap harbor check).`,
		Example: "  envgap export --out release/\n  envgap export --out release/ --release 2026-09-29 --repo me/EnvGap --release-config release.yaml",
		Args:    exactArgs(0),
		RunE: func(c *cobra.Command, args []string) error {
			if opts.Out == "" {
				return usageError{fmt.Errorf("--out is required")}
			}
			return f.run(c, opts, func() error { return runExport(c.Context(), f, opts) })
		},
	}
	c.Flags().StringVar(&opts.Out, "out", "", "the export folder")
	c.Flags().StringVar(&opts.Repo, "repo", export.DefaultRepo, "the Hub dataset the card's load_dataset snippets name")
	c.Flags().StringVar(&opts.Release, "release", "", "record the exported task set as ref releases/NAME (e.g. 2026-09-29)")
	c.Flags().BoolVar(&opts.NoAudit, "no-audit", false, "publish although no task has a registry audit (the card says so)")
	c.Flags().BoolVar(&opts.Harbor, "harbor", false, "also write the tasks in Harbor's format: harbor/tasks.parquet and harbor/dataset.toml (see envgap harbor check)")
	c.Flags().StringVar(&opts.GitURLTemplate, "git-url-template", gitfetch.DefaultURLTemplate, "with --harbor: where GitHub tasks' base commits are fetched from: {repo}, {owner}, {name}")
	c.Flags().StringVar(&opts.ReleaseConfig, "release-config", "", "YAML file with the card's links, citation and evaluation framework")
	c.Flags().StringVar(&opts.Meta.Site, "site", "", "the EnvGap website's root URL (envgap site's output as published): the card's first line links its four pages")
	c.Flags().StringVar(&opts.Meta.Leaderboard, "leaderboard", "", "the leaderboard's URL (card link; default: the site's Leaderboard page)")
	c.Flags().StringVar(&opts.Meta.Code, "code", "", "the evaluation code's URL (default: the harness zip in the dataset repository)")
	c.Flags().StringVar(&opts.Meta.Paper, "paper", "", "the paper's URL (an arXiv link becomes the Hub's arxiv tag)")
	c.Flags().StringVar(&opts.Meta.Discussion, "discussion", "", "the discussion page's URL (default: the dataset repository's)")
	c.Flags().StringVar(&opts.CitationFile, "citation", "", "a file with the BibTeX entry the card's Citation section shows")
	c.Flags().StringVar(&opts.Meta.EvaluationFramework, "eval-framework", "", "eval.yaml's evaluation_framework, an id of the Hub's list (default "+export.DefaultEvaluationFramework+")")
	return c
}

// withReviewer wires the credential scan into the export: the review check of the rows
// and of the harness zip's source (o.Source), the card's notes and the redaction of
// reviewed secrets.
func withReviewer(o *export.Options) error {
	harness, err := harnessTexts(o.Source)
	if err != nil {
		return err
	}
	o.Reviewer = &scan.Reviewer{Harness: harness}
	return nil
}

// releaseMeta reads --release-config and puts the flags over it.
func releaseMeta(opts *exportOptions) (export.ReleaseConfig, error) {
	var meta export.ReleaseConfig
	if opts.ReleaseConfig != "" {
		c, err := export.ReadReleaseConfig(opts.ReleaseConfig)
		if err != nil {
			return meta, usageError{err}
		}
		meta = c
	}
	flags := opts.Meta
	if opts.CitationFile != "" {
		b, err := os.ReadFile(opts.CitationFile)
		if err != nil {
			return meta, usageError{fmt.Errorf("--citation: %w", err)}
		}
		flags.Citation = string(b)
	}
	return meta.Merge(flags), nil
}

func runExport(ctx context.Context, f *factory, opts *exportOptions) error {
	st, err := f.OpenStore()
	if err != nil {
		return err
	}
	meta, err := releaseMeta(opts)
	if err != nil {
		return err
	}
	eo := export.Options{Out: opts.Out, Repo: opts.Repo, Release: opts.Release, Audits: auditSource(st), NoAudit: opts.NoAudit, Source: envgap.Source(), Meta: meta}
	if err := withReviewer(&eo); err != nil {
		return err
	}
	if opts.Harbor {
		eo.Harbor = harborExport(ctx, opts.Repo, opts.GitURLTemplate, f.Err)
	}
	rep, err := export.Export(st, eo)
	if err != nil {
		return err
	}
	return f.output(rep, func(w io.Writer) {
		fmt.Fprintf(w, "exported %d tasks (%d excluded from scoring) and %d candidates to %s\n", rep.Tasks, rep.Excluded, rep.Candidates, rep.Out)
		for _, c := range rep.Configs {
			if c.Rows == 0 {
				fmt.Fprintf(w, "  %-12s %6d rows  no file: left out of the card's configs\n", c.Name, 0)
			}
			for _, fi := range c.Files {
				fmt.Fprintf(w, "  %-12s %6d rows  %3d row groups  %10d bytes  %s\n", c.Name, fi.Rows, fi.RowGroups, fi.Bytes, fi.Path)
			}
		}
		for _, fi := range rep.Other {
			fmt.Fprintf(w, "  %-12s %10d bytes  %s\n", "", fi.Bytes, fi.Path)
		}
		fmt.Fprintf(w, "corpus id %s\n", rep.CorpusID)
		switch {
		case rep.Redacted > 0 && rep.CorpusID != rep.StoreCorpusID:
			fmt.Fprintf(w, "%d reviewed secret(s) were redacted in the published text, so its corpus id differs from the store's (%s)\n", rep.Redacted, rep.StoreCorpusID)
		case rep.Redacted > 0:
			fmt.Fprintf(w, "%d reviewed secret(s) were redacted in the published text, none in a task row: the corpus id is the store's\n", rep.Redacted)
		}
		if rep.Release != "" {
			fmt.Fprintf(w, "recorded as %s\n", rep.Release)
		}
	})
}
