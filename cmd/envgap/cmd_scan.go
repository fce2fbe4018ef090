package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/envgap/envgap"
	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/export"
	"github.com/envgap/envgap/export/scan"
	"github.com/envgap/envgap/lib/release"
	"github.com/spf13/cobra"
)

type scanOptions struct {
	Review   string
	Workers  int
	MaxBytes int64
}

func newScanCommand(f *factory) *cobra.Command {
	o := &scanOptions{}
	c := &cobra.Command{
		Use:   "scan",
		Short: "Credential scan of every stored and exported text",
		Long: `Scan the text of every task, candidate and run log in the store, and the source files
the export's harness zip carries (envgap's own, tests left out; field harness, the path in
the zip), for credentials
(gitleaks rules, with envgap's additions), apply the review decisions of the review file,
store the result (ref scans/latest) and list the findings nobody has decided yet. The
decisions about envgap's own source come with the binary (its data/scan-review.json,
embedded), so the scan works outside the checkout too.

Each finding has a tier: likely_real, to_review or public_example. Public examples are
decided automatically; every other finding needs a decision in the review file
(false_positive with a reason, or redact), made with "envgap scan decide". export refuses
while a finding is undecided. Secrets are never printed: matches are shown redacted.`,
		Example: "  envgap scan\n  envgap scan --json\n  envgap scan decide 3f2a... --false-positive 'the ghp-import package name' --card ghp_import --by alice",
		Args:    exactArgs(0),
		RunE: func(c *cobra.Command, args []string) error {
			return f.run(c, o, func() error { return runScan(c.Context(), f, o) })
		},
	}
	c.Flags().StringVar(&o.Review, "review", scan.DefaultReviewFile, "review decisions file (JSON)")
	c.Flags().IntVar(&o.Workers, "workers", 0, "scanning goroutines (default: number of CPUs)")
	c.Flags().Int64Var(&o.MaxBytes, "max-bytes", scan.DefaultMaxTextBytes, "texts larger than this are skipped (and recorded)")
	c.AddCommand(newScanDecideCommand(f))
	return c
}

// sourceReview returns the review decisions that come with the source tree src (its
// scan.DefaultReviewFile): those about envgap's own source, which the harness zip carries,
// so that they hold wherever the binary runs. A tree without the file has none.
func sourceReview(src fs.FS) (*scan.Review, error) {
	b, err := fs.ReadFile(src, scan.DefaultReviewFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("the review file embedded with envgap's source: %w", err)
	}
	return scan.ParseReview(scan.DefaultReviewFile+" (embedded with envgap's source)", b)
}

// harnessTexts returns the files of the source tree src that the harness zip carries
// (export.HarnessSource: the same filter, the same bytes), as the scan's texts.
func harnessTexts(src fs.FS) ([]scan.Text, error) {
	files, err := export.HarnessSource(src)
	if err != nil {
		return nil, err
	}
	out := make([]scan.Text, len(files))
	for i, f := range files {
		out[i] = scan.Text{Field: scan.FieldHarness, Path: release.HarnessRoot + f.Path, Content: string(f.Body)}
	}
	return out, nil
}

func runScan(ctx context.Context, f *factory, o *scanOptions) error {
	st, err := f.OpenStore()
	if err != nil {
		return err
	}
	rv, raw, err := scan.LoadReview(o.Review)
	if err != nil {
		return usageError{err}
	}
	source, err := sourceReview(envgap.Source())
	if err != nil {
		return err
	}
	sc, err := scan.NewScanner(scan.Options{})
	if err != nil {
		return err
	}
	harness, err := harnessTexts(envgap.Source())
	if err != nil {
		return err
	}
	start := time.Now()
	rec, d, err := scan.Run(ctx, st, sc, scan.RunOptions{Review: rv, ReviewBytes: raw, ReviewPath: o.Review, SourceReview: source,
		Workers: o.Workers, MaxTextBytes: o.MaxBytes, Harness: harness})
	if err != nil {
		return err
	}
	f.logf("scanned %d texts, %d bytes in %s", rec.Texts, rec.Bytes, time.Since(start).Round(time.Millisecond))
	un := rec.Unreviewed()
	if f.Global.JSON {
		if err := f.printJSON(struct {
			Record     string           `json:"record"`
			Unreviewed int              `json:"unreviewed"`
			Scan       *scan.Record     `json:"scan"`
			Redactions []scan.Redaction `json:"redactions"`
		}{d.String(), len(un), rec, rec.Redactions()}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(f.Out, "scanned %d texts (%d bytes) of %d objects with %d rules; %d findings, %d skipped; record %s (%s)\n",
			rec.Texts, rec.Bytes, len(rec.Objects), rec.Rules, len(rec.Findings), len(rec.Skipped), d.Short(), data.RefScanLatest)
		for _, s := range rec.Skipped {
			fmt.Fprintf(f.Out, "skipped %s %s %s: %s\n", s.InstanceID, s.Field, s.Path, s.Reason)
		}
		for _, s := range rec.Notes {
			f.logf("note %s %s %s: %s", s.InstanceID, s.Field, s.Path, s.Reason)
		}
		for _, fp := range rec.StaleDecisions {
			fmt.Fprintf(f.Out, "stale decision %s in %s: no such finding any more (remove it)\n", fp, o.Review)
		}
		for _, x := range rec.Findings {
			state := "UNREVIEWED"
			if x.Decision != nil {
				state = x.Decision.Decision + " (" + x.Decision.By + ")"
			}
			where := x.Field
			if x.Path != "" {
				where += " " + x.Path
			}
			fmt.Fprintf(f.Out, "%-12s %-14s %s %s:%d %s %q %s\n", state, x.Tier, x.InstanceID, where, x.Line, x.Rule, x.Match, x.Fingerprint)
		}
	}
	if len(un) > 0 {
		fps := map[string]bool{}
		for _, x := range un {
			fps[x.Fingerprint] = true
		}
		return damageError{fmt.Errorf("%d credential finding(s) in %d place(s) are not reviewed: decide each with envgap scan decide FINGERPRINT (--false-positive REASON | --redact) --by NAME, then run envgap scan again", len(fps), len(un))}
	}
	return nil
}

type scanDecideOptions struct {
	Review        string
	FalsePositive string
	Redact        bool
	Reason        string
	Card          string
	By            string
}

func newScanDecideCommand(f *factory) *cobra.Command {
	o := &scanDecideOptions{}
	c := &cobra.Command{
		Use:   "decide FINGERPRINT",
		Short: "Record a review decision for a credential finding",
		Long: `Write a decision for one finding (named by the fingerprint envgap scan prints) into the
review file: --false-positive REASON leaves the text as written, --redact replaces the
secret by [REDACTED:<rule>] in every export. --card sets the short phrase the dataset
card uses for the hit. Run envgap scan again afterwards so the store records it.`,
		Example: "  envgap scan decide 3f2a... --false-positive 'package name, not a token' --card ghp_import --by alice\n  envgap scan decide 9c0d... --redact --reason 'live token in a CI script' --by alice",
		Args:    exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return f.run(c, o, func() error { return runScanDecide(f, o, args[0]) })
		},
	}
	c.Flags().StringVar(&o.Review, "review", scan.DefaultReviewFile, "review decisions file (JSON)")
	c.Flags().StringVar(&o.FalsePositive, "false-positive", "", "decide false_positive, with this reason")
	c.Flags().BoolVar(&o.Redact, "redact", false, "decide redact")
	c.Flags().StringVar(&o.Reason, "reason", "", "reason (for --redact)")
	c.Flags().StringVar(&o.Card, "card", "", "short phrase for the dataset card (never the secret)")
	c.Flags().StringVar(&o.By, "by", "", "who decides (required)")
	return c
}

func runScanDecide(f *factory, o *scanDecideOptions, fp string) error {
	if (o.FalsePositive == "") == !o.Redact {
		return usageError{errors.New("give exactly one of --false-positive REASON and --redact")}
	}
	if o.By == "" {
		return usageError{errors.New("--by NAME is required: decisions record who made them")}
	}
	st, err := f.OpenStore()
	if err != nil {
		return err
	}
	rec, _, err := scan.Latest(st)
	if err != nil {
		return err
	}
	rv, _, err := scan.LoadReview(o.Review)
	if err != nil {
		return usageError{err}
	}
	d := scan.Decision{Fingerprint: fp, Decision: scan.DecisionRedact, Reason: o.Reason, Card: o.Card, By: o.By}
	if o.FalsePositive != "" {
		d.Decision, d.Reason = scan.DecisionFalsePositive, o.FalsePositive
	}
	if err := rv.Decide(d, rec, time.Now()); err != nil {
		return usageError{err}
	}
	if err := rv.Save(o.Review); err != nil {
		return err
	}
	fmt.Fprintf(f.Out, "%s: %s recorded in %s; run envgap scan to apply it\n", fp, d.Decision, o.Review)
	return nil
}
