package main

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/envgap/envgap/lib/studylayout"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/envgap/envgap"
	"github.com/envgap/envgap/crawl/lite"
	"github.com/envgap/envgap/schemas"
	"github.com/spf13/cobra"
)

// defaultProblemsFile is the study's problem list as committed in the repository; the
// binary embeds it with its source (envgap.Source), so it is found wherever envgap runs.
const defaultProblemsFile = "data/problems.json"

type crawlLiteOptions struct {
	Study    string
	Problems string
}

func newCrawlLiteCommand(f *factory) *cobra.Command {
	opts := &crawlLiteOptions{}
	c := &cobra.Command{
		Use:   "lite --study DIR",
		Short: "Lite candidates from the coding-agent study's projects",
		Long: `Import a coding-agent study: one candidate per project folder
<agent>/<language>-t<trial>/p<N>/ (meta.json, written/, repaired/; see docs/lite.md).

Projects that worked first time are already_works, never made to work not_fixed, whose
repair cannot be rebuilt from the saved files fix_not_recorded, whose repair changed only
source code_fix. For the others the environment part of the repair (changed manifests and
build files, a setup.sh installing the system packages the repair installed, Java sources
copied under src/main/java) is the fix, and verify decides.

Folders and files that cannot be imported (missing or malformed meta.json, symbolic links,
binary or non-UTF-8 files) are listed by path and the rest is stored; the exit code is then 4.
The problem list is --problems, else the study's own problems.json, else the list built into
envgap (` + defaultProblemsFile + ` of its source).`,
		Example: "  envgap crawl lite --study data/demo/study\n  envgap crawl lite --study /data/study --problems /data/study-problems.json --json",
		Args:    exactArgs(0),
		RunE: func(c *cobra.Command, args []string) error {
			if opts.Study == "" {
				return usageError{errors.New("--study DIR is required (see envgap crawl lite --help)")}
			}
			return f.run(c, opts, func() error { return runCrawlLite(f, opts) })
		},
	}
	c.Flags().StringVar(&opts.Study, "study", "", "the study folder")
	c.Flags().StringVar(&opts.Problems, "problems", "", "the problem list (JSON; default: the study's problems.json, else envgap's own "+defaultProblemsFile+")")
	return c
}

// crawlLiteReport is the --json output.
type crawlLiteReport struct {
	Study    string                  `json:"study"`
	Ref      string                  `json:"ref"`
	Set      schemas.Digest          `json:"set"`
	Stored   int                     `json:"candidates"`
	New      int                     `json:"new_candidates"`
	Same     bool                    `json:"unchanged"`
	Outcomes map[schemas.Outcome]int `json:"outcomes"`
	Rejects  []schemas.CrawlReject   `json:"rejects"`
	// NotListed are extra-run projects whose repair had no environment part.
	NotListed []schemas.CrawlReject `json:"not_listed"`
}

func runCrawlLite(f *factory, opts *crawlLiteOptions) error {
	problems, err := loadProblemList(opts, envgap.Source())
	if err != nil {
		return err
	}
	res, err := lite.Import(opts.Study, lite.Options{Problems: problems})
	if err != nil {
		return err
	}
	st, err := f.OpenStore()
	if err != nil {
		return err
	}
	rep := crawlLiteReport{Study: opts.Study, Outcomes: map[schemas.Outcome]int{}, Rejects: res.Rejects}
	if rep.Rejects == nil {
		rep.Rejects = []schemas.CrawlReject{}
	}
	rep.NotListed = res.NotListed
	if rep.NotListed == nil {
		rep.NotListed = []schemas.CrawlReject{}
	}
	for _, c := range res.Candidates {
		rep.Outcomes[c.Outcome]++
	}
	if len(res.Candidates) > 0 {
		abs, _ := filepath.Abs(opts.Study)
		added, err := st.AddCandidateSet("lite", "crawl lite "+filepath.Base(abs), res.Candidates, res.Rejects)
		if err != nil {
			return err
		}
		rep.Ref, rep.Set, rep.Stored, rep.New, rep.Same = added.Ref, added.Set, added.Count, added.New, added.Unchanged
	}
	if err := f.output(rep, func(w io.Writer) {
		switch {
		case rep.Stored == 0:
			fmt.Fprintf(w, "no project of %s could be imported; nothing was stored\n", opts.Study)
		case rep.Same:
			fmt.Fprintf(w, "unchanged: the %d candidates of %s are already in the store (%s)\n", rep.Stored, opts.Study, rep.Ref)
		default:
			fmt.Fprintf(w, "imported %d candidates (%d new) from %s as %s\n", rep.Stored, rep.New, opts.Study, rep.Ref)
		}
		for _, o := range schemas.Outcomes {
			if n := rep.Outcomes[o]; n > 0 {
				fmt.Fprintf(w, "  %-17s %d\n", o, n)
			}
		}
		if f.Global.Verbose {
			for _, c := range res.Candidates {
				fmt.Fprintf(f.Err, "%s: %s: %s\n", c.InstanceID, c.Outcome, c.Reason)
			}
		}
		if n := len(res.NotListed); n > 0 {
			fmt.Fprintf(w, "  not listed: %d project(s) of extra runs (trial 2 and later) whose repair had no environment part\n", n)
			if f.Global.Verbose {
				for _, r := range res.NotListed {
					fmt.Fprintf(f.Err, "%s: %s\n", r.Ref, r.Reason)
				}
			}
		}
		if len(res.Rejects) > 0 {
			fmt.Fprintf(w, "not imported (%d):\n", len(res.Rejects))
			for _, r := range res.Rejects {
				fmt.Fprintf(w, "  %s: %s\n", r.Ref, r.Reason)
			}
		}
	}); err != nil {
		return err
	}
	if len(res.Candidates) == 0 {
		return errors.New("crawl lite: no candidates")
	}
	if len(res.Rejects) > 0 {
		return partialError{fmt.Errorf("crawl lite: %d folder(s) or file(s) of %s not imported (listed above)", len(res.Rejects), opts.Study)}
	}
	return nil
}

// loadProblemList reads --problems, or, when the study has no list of its own (Import
// reads the study's problems.json itself), the list embedded with envgap's source (src):
// never a file of the working directory.
func loadProblemList(opts *crawlLiteOptions, src fs.FS) ([]studylayout.Problem, error) {
	if opts.Problems == "" {
		if _, err := os.Stat(filepath.Join(opts.Study, studylayout.ProblemsFile)); err == nil {
			return nil, nil
		}
		b, err := fs.ReadFile(src, defaultProblemsFile)
		if err != nil {
			return nil, fmt.Errorf("the problem list embedded with envgap's source: %w", err)
		}
		return studylayout.ReadProblems(defaultProblemsFile+" (embedded with envgap's source)", bytes.NewReader(b))
	}
	ps, err := studylayout.ReadProblemsFile(opts.Problems)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return nil, fmt.Errorf("problem list: %w", err)
	}
	return ps, err
}
