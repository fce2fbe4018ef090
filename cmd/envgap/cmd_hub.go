package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/envgap/envgap/export"
	"github.com/envgap/envgap/export/hub"
	"github.com/envgap/envgap/harness/harbor"
	"github.com/envgap/envgap/lib/release"
	"github.com/envgap/envgap/schemas"
	"github.com/spf13/cobra"
)

func newHubCommand(f *factory) *cobra.Command {
	c := &cobra.Command{
		Use:     "hub",
		Aliases: []string{"hf"},
		Short:   "Check and compare exported releases and publish one to the Hugging Face Hub",
	}
	c.AddCommand(newHubCheckCommand(f), newHubPublishCommand(f))
	return c
}

type hubCheckOptions struct {
	Release  string
	Against  string
	CorpusID string
}

func newHubCheckCommand(f *factory) *cobra.Command {
	opts := &hubCheckOptions{}
	c := &cobra.Command{
		Use:   "check --release DIR --against DIR | --release ZIP [--against DIR] [--corpus-id ID]",
		Short: "Check that two exported folders, or a harness zip and its folder, hold the same task set",
		Long: `Compare the task sets of two exported folders by corpus id. When they differ, list the
tasks added and removed, and for tasks in both, the columns that differ. It also checks
that each board config of both folders holds exactly the rows of full it should.

Given a harness zip (harness/envgap-source.zip of an exported folder; the card spells it
envgap hf check), check that the zip's copy of the tasks (release/tasks.jsonl) is the
release's: its rows give the corpus id its manifest records, and that id is the one of the
exported folder the zip sits in (or --against DIR), or --corpus-id ID. When they differ,
the tasks that differ are listed as above.

Given Harbor's tasks.parquet (harbor/tasks.parquet of a folder exported with --harbor),
check that its rows are the release's: one row per task not excluded from scoring, each
task's task.toml naming the release's corpus id (of the folder holding harbor/, or
--against DIR, or --corpus-id ID).

Exit code 5 when anything differs.`,
		Example: "  envgap hub check --release release/ --against downloaded/\n" +
			"  envgap hf check --release harness/envgap-source.zip\n" +
			"  envgap hf check --release envgap-source.zip --corpus-id 5debed7bf026\n" +
			"  envgap hf check --release release/harbor/tasks.parquet",
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, args []string) error {
			if opts.Release == "" {
				return usageError{fmt.Errorf("--release is required")}
			}
			if isParquet(opts.Release) {
				return runHarborTie(f, opts)
			}
			if isZip(opts.Release) {
				return runHarnessCheck(f, opts)
			}
			if opts.Against == "" {
				return usageError{fmt.Errorf("--against is required when --release is a folder")}
			}
			if opts.CorpusID != "" {
				return usageError{fmt.Errorf("--corpus-id goes with a harness zip (--release ZIP)")}
			}
			return runHubCheck(f, opts)
		},
	}
	c.Flags().StringVar(&opts.Release, "release", "", "the exported folder, or the harness zip, to check")
	c.Flags().StringVar(&opts.Against, "against", "", "the exported folder to compare with (for a zip: default the folder holding harness/)")
	c.Flags().StringVar(&opts.CorpusID, "corpus-id", "", "for a zip: the corpus id it must have (e.g. the one the card gives)")
	return c
}

func isZip(p string) bool {
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		return false
	}
	return strings.HasSuffix(strings.ToLower(p), ".zip")
}

func runHarnessCheck(f *factory, opts *hubCheckOptions) error {
	against := opts.Against
	if against == "" {
		against = export.DefaultHarnessRelease(opts.Release)
	}
	if against == "" && opts.CorpusID == "" {
		return usageError{fmt.Errorf("%s is not inside an exported folder (DIR/%s): give the folder with --against DIR, or the release's corpus id with --corpus-id ID", opts.Release, release.HarnessPath)}
	}
	res, err := export.CheckHarness(opts.Release, against, opts.CorpusID)
	if err != nil {
		return err
	}
	if err := f.output(res, func(w io.Writer) {
		fmt.Fprintf(w, "%s: corpus id %s, %d tasks, %d source files\n", res.Zip, res.CorpusID, res.Tasks, res.SourceFiles)
		if res.ManifestCorpusID != res.CorpusID {
			fmt.Fprintf(w, "its manifest (%s) says corpus id %s: the task rows were changed after the zip was made\n", release.HarnessManifestPath, res.ManifestCorpusID)
		}
		if res.Against != "" {
			fmt.Fprintf(w, "%s: corpus id %s\n", res.Against, res.AgainstCorpusID)
		}
		if res.Expected != res.AgainstCorpusID {
			fmt.Fprintf(w, "expected corpus id %s\n", res.Expected)
		}
		if res.Diff != nil {
			printTaskDiff(f, res.Diff, "only in the zip", "only in the folder")
		}
		if res.Same {
			fmt.Fprintf(w, "the harness's copy of the tasks has the release's corpus id %s\n", res.CorpusID)
		}
	}); err != nil {
		return err
	}
	if !res.Same {
		return damageError{fmt.Errorf("hf check: the harness's tasks (corpus id %s) are not the release's (%s)", res.CorpusID, strings.Join(uniqueIDs(res.Expected, res.AgainstCorpusID), ", "))}
	}
	return nil
}

func runHubCheck(f *factory, opts *hubCheckOptions) error {
	d, err := export.CompareReleases(opts.Release, opts.Against)
	if err != nil {
		return err
	}
	if err := f.output(d, func(w io.Writer) {
		fmt.Fprintf(w, "%s: corpus id %s, %d tasks\n%s: corpus id %s, %d tasks\n", d.Release, d.ReleaseID, d.ReleaseTasks, d.Against, d.AgainstID, d.AgainstTasks)
		printTaskDiff(f, d, "added", "removed")
		for _, p := range d.ConfigProblems {
			fmt.Fprintf(w, "config   %s\n", p)
		}
		if d.Same {
			fmt.Fprintln(w, "same task set")
		}
	}); err != nil {
		return err
	}
	if !d.Same {
		return damageError{fmt.Errorf("hub check: the releases differ (%d added, %d removed, %d changed, %d config problems)", len(d.Added), len(d.Removed), len(d.Changed), len(d.ConfigProblems))}
	}
	return nil
}

// uniqueIDs returns the non-empty ids, each once.
func uniqueIDs(ids ...string) []string {
	var out []string
	for _, id := range ids {
		if id != "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// printTaskDiff lists the tasks only in the checked set, only in the other, and the
// columns that changed, one line each.
func printTaskDiff(f *factory, d *export.ReleaseDiff, added, removed string) {
	w := max(len(added), len(removed), len("changed")) + 2
	for _, id := range d.Added {
		fmt.Fprintf(f.Out, "%-*s%s\n", w, added, id)
	}
	for _, id := range d.Removed {
		fmt.Fprintf(f.Out, "%-*s%s\n", w, removed, id)
	}
	for _, c := range d.Changed {
		fmt.Fprintf(f.Out, "%-*s%s: %s\n", w, "changed", c.InstanceID, strings.Join(c.Columns, ", "))
	}
}

type hubPublishOptions struct {
	Dir      string
	Repo     string
	DryRun   bool
	Endpoint string
	Revision string
	Message  string
	Private  bool
}

func newHubPublishCommand(f *factory) *cobra.Command {
	opts := &hubPublishOptions{}
	c := &cobra.Command{
		Use:   "publish DIR --repo OWNER/NAME",
		Short: "Upload an exported folder to a Hub dataset repository",
		Long: `Upload the exported folder DIR to the dataset repository OWNER/NAME in one commit, through
the Hub's HTTP API, creating the repository when it is missing. Files the Hub already has
(same git blob id, or same SHA-256 for LFS files) are not sent; parquet and other large
files go through LFS. Remote files under data/ that DIR no longer has are deleted; other
remote files are left alone. The token is read from HF_TOKEN and is never printed or
stored. --dry-run lists what would change and uploads nothing.`,
		Example: "  envgap hub publish release/ --repo me/EnvGap --dry-run\n  HF_TOKEN=... envgap hub publish release/ --repo me/EnvGap",
		Args:    exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Dir = args[0]
			if err := hub.CheckRepo(opts.Repo); err != nil {
				return usageError{err}
			}
			return runHubPublish(c, f, opts)
		},
	}
	c.Flags().StringVar(&opts.Repo, "repo", "", "the dataset repository, OWNER/NAME")
	c.Flags().BoolVar(&opts.DryRun, "dry-run", false, "list what would change; upload nothing")
	c.Flags().StringVar(&opts.Endpoint, "endpoint", hub.DefaultEndpoint, "the Hub endpoint")
	c.Flags().StringVar(&opts.Revision, "revision", hub.DefaultRevision, "the branch to commit to")
	c.Flags().StringVar(&opts.Message, "message", "", "the commit summary (default: Publish EnvGap <corpus id>)")
	c.Flags().BoolVar(&opts.Private, "private", false, "create the repository private when it is missing")
	return c
}

func runHubPublish(c *cobra.Command, f *factory, opts *hubPublishOptions) error {
	client := &hub.Client{Endpoint: opts.Endpoint, Token: f.Getenv(hub.EnvToken), HTTP: &http.Client{}}
	if opts.DryRun {
		plan, err := client.MakePlan(c.Context(), opts.Repo, opts.Revision, opts.Dir)
		if err != nil {
			return err
		}
		if f.Global.JSON {
			return f.printJSON(plan)
		}
		printPlan(f, plan)
		return nil
	}
	msg := opts.Message
	if msg == "" {
		msg = "Publish EnvGap"
		if tasks, err := release.ReadTasks(opts.Dir); err == nil {
			if id, err := schemas.CorpusID(tasks); err == nil {
				msg += " " + id
			}
		}
	}
	res, err := client.Publish(c.Context(), opts.Repo, opts.Dir, hub.PublishOptions{Revision: opts.Revision, Summary: msg, Private: opts.Private})
	if err != nil {
		return err
	}
	if f.Global.JSON {
		return f.printJSON(res)
	}
	if res.Created {
		fmt.Fprintf(f.Out, "created dataset repository %s\n", opts.Repo)
	}
	printPlan(f, res.Plan)
	if res.Commit == "" {
		fmt.Fprintln(f.Out, "nothing to publish: the repository already holds these files")
		return nil
	}
	fmt.Fprintf(f.Out, "committed %s (%d LFS object(s) uploaded)\n", res.Commit, res.Uploaded)
	if res.CommitURL != "" {
		fmt.Fprintln(f.Out, res.CommitURL)
	}
	return nil
}

func printPlan(f *factory, p *hub.Plan) {
	if !p.RepoExists {
		fmt.Fprintf(f.Out, "dataset repository %s does not exist; publishing creates it\n", p.Repo)
	}
	for _, ch := range p.Changes {
		if ch.Action == hub.ChangeUnchanged {
			f.logf("unchanged %s", ch.Path)
			continue
		}
		fmt.Fprintf(f.Out, "%-9s %s", ch.Action, ch.Path)
		if ch.Size > 0 {
			fmt.Fprintf(f.Out, " (%d bytes)", ch.Size)
		}
		fmt.Fprintln(f.Out)
	}
	n := p.Counts()
	fmt.Fprintf(f.Out, "%s@%s: %d to add, %d to update, %d to delete, %d unchanged\n", p.Repo, p.Revision,
		n[hub.ChangeAdd], n[hub.ChangeUpdate], n[hub.ChangeDelete], n[hub.ChangeUnchanged])
}

func isParquet(p string) bool {
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		return false
	}
	return strings.HasSuffix(strings.ToLower(p), ".parquet")
}

// runHarborTie checks a Harbor tasks.parquet against its release.
func runHarborTie(f *factory, opts *hubCheckOptions) error {
	against := opts.Against
	if against == "" && filepath.Base(filepath.Dir(opts.Release)) == path.Dir(harbor.ParquetPath) {
		against = filepath.Dir(filepath.Dir(opts.Release))
	}
	if against == "" {
		return usageError{fmt.Errorf("%s is not inside an exported folder (DIR/%s): give the folder with --against DIR", opts.Release, harbor.ParquetPath)}
	}
	tasks, err := release.ReadTasks(against)
	if err != nil {
		return err
	}
	id, err := schemas.CorpusID(tasks)
	if err != nil {
		return err
	}
	if opts.CorpusID != "" && opts.CorpusID != id {
		return damageError{fmt.Errorf("hf check: %s has corpus id %s, not %s", against, id, opts.CorpusID)}
	}
	ps, err := harbor.Tie(opts.Release, tasks, id)
	if err != nil {
		return err
	}
	if err := f.output(map[string]any{"release": opts.Release, "against": against, "corpus_id": id, "problems": ps}, func(w io.Writer) {
		for _, p := range ps {
			fmt.Fprintf(w, "FAIL %s\n", p)
		}
		if len(ps) == 0 {
			fmt.Fprintf(w, "%s: the rows are the tasks of %s (corpus id %s) that are not excluded from scoring\n", opts.Release, against, id)
		}
	}); err != nil {
		return err
	}
	if len(ps) > 0 {
		return damageError{fmt.Errorf("hf check: %s is not the Harbor form of %s (corpus id %s)", opts.Release, against, id)}
	}
	return nil
}
