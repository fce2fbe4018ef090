package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/envgap/envgap/harness/site"
	"github.com/envgap/envgap/harness/submit"
	"github.com/envgap/envgap/lib/release"
	"github.com/spf13/cobra"
)

type siteOptions struct {
	Hub     string
	Results []string
	Out     string
}

func newSiteCommand(f *factory) *cobra.Command {
	opts := &siteOptions{}
	c := &cobra.Command{
		Use:   "site --hub DIR --out DIR [--results] [RESULTS...]",
		Short: "The EnvGap website (static HTML) from a release's Hub folder and result folders",
		Long: `Write the EnvGap website to --out: Leaderboard (one board per set, a row per result folder,
ranked by the first attempt with the best within attempts beside it; the numbers are envgap
report's), Tasks (every candidate of the candidates config, with filters and search, and a
page per task), How runs are scored (the card's text) and Evaluation code (the harness zip).
The folder is static: it opens from file:// and from any static host and loads nothing from
outside itself. A result folder scored on another corpus id than the release is shown apart,
labelled, and never ranked. Result folders are given with --results (repeated or
comma-separated) or as arguments, as envgap report takes them; a submission bundle of envgap
submit (a folder or a .tar.gz) gives its result folders. The same inputs give the same
bytes. See docs/site.md.`,
		Example: "  envgap site --hub out/hub --out site --results results/gold results/noop\n  envgap site --hub out/hub --results results/gold,results/noop --out site\n  envgap site --hub out/hub --out site results/*",
		RunE: func(c *cobra.Command, args []string) error {
			opts.Results = append(opts.Results, args...)
			return f.run(c, opts, func() error { return runSite(f, opts) })
		},
	}
	c.Flags().StringVar(&opts.Hub, "hub", "", "the release's Hub folder (envgap export's output)")
	c.Flags().StringSliceVar(&opts.Results, "results", nil, "result folders of envgap eval or envgap run, or submission bundles (repeat or comma-separate)")
	c.Flags().StringVar(&opts.Out, "out", "", "the site folder to write (new, empty, or an earlier site)")
	return c
}

func runSite(f *factory, opts *siteOptions) error {
	if opts.Hub == "" || opts.Out == "" {
		return usageError{errors.New("give --hub DIR and --out DIR (see envgap site --help)")}
	}
	rel, err := site.LoadHub(opts.Hub)
	if err != nil {
		return usageError{err}
	}
	// The harness zip: read and checked here (export's format), offered by the site.
	zipPath := filepath.Join(opts.Hub, filepath.FromSlash(release.HarnessPath))
	if zip, err := os.ReadFile(zipPath); err == nil {
		h, err := release.ReadHarness(zipPath)
		if err != nil {
			return usageError{fmt.Errorf("site: %w", err)}
		}
		if h.CorpusID != rel.CorpusID {
			return usageError{fmt.Errorf("site: the harness zip %s holds corpus %s, the folder's task rows are %s: the folder is not one release", zipPath, h.CorpusID, rel.CorpusID)}
		}
		rel.Harness = &site.Harness{Zip: zip, CorpusID: h.CorpusID, Dir: strings.TrimSuffix(release.HarnessRoot, "/"), Tasks: release.HarnessTasks}
	} else if !os.IsNotExist(err) {
		return err
	}
	// Submission bundles (envgap submit) give their result folders.
	given, closeBundles, err := submit.ResultFolders(opts.Results, submit.DefaultLimits)
	defer closeBundles()
	if err != nil {
		return usageError{err}
	}
	folders := make([]site.Folder, len(given))
	for i, g := range given {
		folders[i] = site.Folder{Name: g.Name, Dir: g.Dir}
	}
	res, err := site.LoadFolders(folders)
	if err != nil {
		return usageError{err}
	}
	rep, err := site.Build(site.Input{Release: rel, Results: res}, opts.Out)
	if err != nil {
		return err
	}
	if f.Global.JSON {
		return f.printJSON(rep)
	}
	fmt.Fprintf(f.Out, "site: %s (corpus %s): %d candidates, %d files", rep.Out, rep.CorpusID, rep.Candidates, rep.Files)
	for _, b := range rep.Boards {
		fmt.Fprintf(f.Out, "; %s board %d row(s)", b.Set, b.Rows)
	}
	fmt.Fprintln(f.Out)
	for _, o := range rep.OtherCorpus {
		fmt.Fprintf(f.Out, "site: %s was scored on another corpus: shown apart, not ranked\n", o)
	}
	fmt.Fprintf(f.Out, "open %s/index.html\n", rep.Out)
	return nil
}
