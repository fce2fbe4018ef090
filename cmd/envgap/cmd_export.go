package main

import (
	"fmt"
	"github.com/envgap/envgap"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/export"
	"github.com/envgap/envgap/export/scan"
	"github.com/envgap/envgap/schemas"
	"github.com/spf13/cobra"
)

type exportOptions struct {
	Out     string
	Repo    string
	Release string
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
its audit (run envgap admit again), or when a row has invalid UTF-8 or a repeated path (the
error names the task and field). Reviewed secrets are redacted in the published text.
Exporting the same store twice gives byte-identical files. DIR must be new, empty or an
earlier export; only the files an export writes are replaced.`,
		Example: "  envgap export --out release/\n  envgap export --out release/ --release 2026-09-29 --repo me/EnvGap",
		Args:    exactArgs(0),
		RunE: func(c *cobra.Command, args []string) error {
			if opts.Out == "" {
				return usageError{fmt.Errorf("--out is required")}
			}
			return runExport(f, opts)
		},
	}
	c.Flags().StringVar(&opts.Out, "out", "", "the export folder")
	c.Flags().StringVar(&opts.Repo, "repo", export.DefaultRepo, "the Hub dataset the card's load_dataset snippets name")
	c.Flags().StringVar(&opts.Release, "release", "", "record the exported task set as ref releases/NAME (e.g. 2026-09-29)")
	return c
}

// exportHooks wires the credential scan into the export: the review check, the card's
// notes and the redaction of reviewed secrets (read when the first row needs them, after
// the review check has passed).
func exportHooks(st *data.Store, o *export.Options) {
	o.CheckReviewed = scan.CheckReviewed
	o.CredentialNotes = func(st *data.Store, ids []string) (string, error) {
		rec, _, err := scan.Latest(st)
		if err != nil {
			return "", err
		}
		return scan.CardSection(rec, ids), nil
	}
	var (
		reds    []scan.Redaction
		loadErr error
		loaded  bool
	)
	load := func() error {
		if !loaded {
			reds, loadErr = scan.Redactions(st)
			loaded = true
		}
		return loadErr
	}
	o.RedactTask = func(t *schemas.Task) (int, error) {
		if err := load(); err != nil {
			return 0, err
		}
		return scan.ApplyRedactions(t, reds)
	}
	o.RedactCandidate = func(c *schemas.Candidate) (int, error) {
		if err := load(); err != nil {
			return 0, err
		}
		return scan.ApplyCandidateRedactions(c, reds)
	}
}

func runExport(f *factory, opts *exportOptions) error {
	st, err := f.OpenStore()
	if err != nil {
		return err
	}
	eo := export.Options{Out: opts.Out, Repo: opts.Repo, Release: opts.Release, Audits: auditSource(st), Source: envgap.Source()}
	exportHooks(st, &eo)
	rep, err := export.Export(st, eo)
	if err != nil {
		return err
	}
	if f.Global.JSON {
		return f.printJSON(rep)
	}
	fmt.Fprintf(f.Out, "exported %d tasks (%d excluded from scoring) and %d candidates to %s\n", rep.Tasks, rep.Excluded, rep.Candidates, rep.Out)
	for _, c := range rep.Configs {
		for _, fi := range c.Files {
			fmt.Fprintf(f.Out, "  %-12s %6d rows  %3d row groups  %10d bytes  %s\n", c.Name, fi.Rows, fi.RowGroups, fi.Bytes, fi.Path)
		}
	}
	for _, fi := range rep.Other {
		fmt.Fprintf(f.Out, "  %-12s %10d bytes  %s\n", "", fi.Bytes, fi.Path)
	}
	fmt.Fprintf(f.Out, "corpus id %s\n", rep.CorpusID)
	switch {
	case rep.Redacted > 0 && rep.CorpusID != rep.StoreCorpusID:
		fmt.Fprintf(f.Out, "%d reviewed secret(s) were redacted in the published text, so its corpus id differs from the store's (%s)\n", rep.Redacted, rep.StoreCorpusID)
	case rep.Redacted > 0:
		fmt.Fprintf(f.Out, "%d reviewed secret(s) were redacted in the published text, none in a task row: the corpus id is the store's\n", rep.Redacted)
	}
	if rep.Release != "" {
		fmt.Fprintf(f.Out, "recorded as %s\n", rep.Release)
	}
	return nil
}
