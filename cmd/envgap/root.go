package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/spf13/cobra"
)

// globalOptions are the flags every command has.
type globalOptions struct {
	Store   string
	JSON    bool
	Verbose bool
}

// factory builds dependencies lazily, so a command only opens what it uses.
type factory struct {
	Global *globalOptions
	Out    io.Writer
	Err    io.Writer
	Getenv func(string) string
	// RunF, when set, replaces the run function of the commands that take it (f.run):
	// the command parses and checks its flags into its options struct and hands RunF that
	// struct instead of running. Tests check flag handling alone with it (cli/cli's runF).
	RunF func(c *cobra.Command, opts any) error
}

// run runs a command whose flags were parsed and checked into opts: run, or f.RunF.
func (f *factory) run(c *cobra.Command, opts any, run func() error) error {
	if f.RunF != nil {
		return f.RunF(c, opts)
	}
	return run()
}

func defaultFactory() *factory {
	return &factory{Global: &globalOptions{}, Out: os.Stdout, Err: os.Stderr, Getenv: os.Getenv}
}

// storeDir resolves --store, then ENVGAP_STORE, then the default.
func (f *factory) storeDir() string {
	if f.Global.Store != "" {
		return f.Global.Store
	}
	if v := f.Getenv(data.EnvStore); v != "" {
		return v
	}
	return data.DefaultDir
}

// OpenStore opens the store the flags and environment name.
func (f *factory) OpenStore() (*catalog.Catalog, error) { return catalog.Open(f.storeDir()) }

// printJSON writes v as indented JSON.
func (f *factory) printJSON(v any) error {
	enc := json.NewEncoder(f.Out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// output prints a command's result: v as JSON with --json, else the text form that text
// writes to w (lines, a table). Every command prints its result through it.
func (f *factory) output(v any, text func(w io.Writer)) error {
	if f.Global.JSON {
		return f.printJSON(v)
	}
	text(f.Out)
	return nil
}

// logf prints progress to stderr when -v is set.
func (f *factory) logf(format string, args ...any) {
	if f.Global.Verbose {
		fmt.Fprintf(f.Err, format+"\n", args...)
	}
}

func newRootCommand(f *factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "envgap",
		Short: "The curation pipeline of the EnvGap benchmark",
		Long: strings.TrimSpace(`
envgap finds real environment breakages, proves each one in a clean container with the
package registries cut back to the candidate's registry_date, and publishes the proven ones
as the EnvGap dataset. Every stage reads and writes one content-addressed store
(--store DIR, or ENVGAP_STORE; default ` + data.DefaultDir + `).`),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(f.Out)
	root.SetErr(f.Err)
	root.PersistentFlags().StringVar(&f.Global.Store, "store", "", "store directory (default $ENVGAP_STORE or "+data.DefaultDir+")")
	root.PersistentFlags().BoolVar(&f.Global.JSON, "json", false, "machine-readable JSON output")
	root.PersistentFlags().BoolVarP(&f.Global.Verbose, "verbose", "v", false, "print progress details")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%w (see %s --help)", err, c.CommandPath())}
	})
	crawl := newCrawlCommand(f)
	// Subcommands of crawl, one line per stage.
	crawl.AddCommand(
		newCrawlIssuesCommand(f), newCrawlPRsCommand(f),
		newCrawlLiteCommand(f),
	)
	root.AddCommand(
		crawl,
		newAddCommand(f),
		newVerifyCommand(f),
		newTryCommand(f),
		newRecheckCommand(f),
		newBuildImagesCommand(f), newSandboxCommand(f),
		newAdmitCommand(f), newExportCommand(f), newHubCommand(f), newExcludeCommand(f), newHarborCommand(f),
		newRegistryCommand(f),
		newScanCommand(f), newAuditCommand(f),
		newEvalCommand(f), newReportCommand(f), newSiteCommand(f), newTrajectoriesCommand(f), newRunCommand(f), newAgentReproCommand(f), newModelServeCommand(f), newGitHubServeCommand(f), newProposeCommand(f),
		newStatusCommand(f),
		newStudyCommand(f),
		newCorpusIDCommand(f), newSubmitCommand(f),
		newStoreCommand(f),
		newWorkerCommand(f),
		newCatCommand(f),
	)
	return root
}

// exactArgs is cobra.ExactArgs with a usage error.
func exactArgs(n int) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if err := cobra.ExactArgs(n)(c, args); err != nil {
			return usageError{fmt.Errorf("%w (see %s --help)", err, c.CommandPath())}
		}
		return nil
	}
}

// maxArgs is cobra.MaximumNArgs with a usage error.
func maxArgs(n int) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if err := cobra.MaximumNArgs(n)(c, args); err != nil {
			return usageError{fmt.Errorf("%w (see %s --help)", err, c.CommandPath())}
		}
		return nil
	}
}
