package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/envgap/envgap/crawl"
	"github.com/envgap/envgap/crawl/gitfetch"
	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/schemas"
	"github.com/spf13/cobra"
)

// envGitHubToken names the environment variable that holds the GitHub token.
const envGitHubToken = "GITHUB_TOKEN"

type crawlGitHubOptions struct {
	Kind           string // "issues" or "prs"
	CrawlID        string
	Repos          string
	Since          string
	APIURL         string
	GitURLTemplate string
}

func newCrawlIssuesCommand(f *factory) *cobra.Command {
	return newCrawlGitHubCommand(f, "issues", "Reported candidates from GitHub issues",
		`Find Reported candidates: issues (not pull requests) of the listed repositories whose text
reports an environment failure (install, build, resolve or import errors, recognised by the
messages pip, npm, Maven, CMake and the compilers print) of the project's ecosystem.
base_commit is the last default-branch commit at or before the issue was opened, and the
ecosystem and manifests are read from the tree at that commit, fetched alone without history.`)
}

func newCrawlPRsCommand(f *factory) *cobra.Command {
	return newCrawlGitHubCommand(f, "prs", "Repaired candidates from environment-only merged pull requests",
		`Find Repaired candidates: merged pull requests that GitHub records as closing an issue of the
same repository (GraphQL closingIssuesReferences) and whose every changed file is an
environment file (manifests, lockfiles, build and setup files, Dockerfiles, READMEs).
gold_files are the files at the pull request's head commit, patch the diff from its base.
One candidate per breakage: backports and second fixes of an issue are rejected.`)
}

func newCrawlGitHubCommand(f *factory, kind, short, long string) *cobra.Command {
	opts := &crawlGitHubOptions{Kind: kind}
	c := &cobra.Command{
		Use:   kind + " --crawl-id ID --repos FILE [--since DATE]",
		Short: short,
		Long: long + `

The repos file lists one owner/name per line (# starts a comment). A deleted, renamed or
blocked repository, a deleted issue or a truncated file list is recorded as a reject and the
crawl goes on. Candidates are stored as one set (candidates/crawl-` + kind + `-<ID>-...) with
every reject and its reason, and the report as crawls/<ID>.

The token comes from ` + envGitHubToken + ` (never printed or stored). Rate limits are waited out.
Answers are cached in the store: a crawl stopped halfway resumes where it stopped when run
again with the same --crawl-id, a finished one run again sends no request, and a new crawl id
asks again with the stored ETags (a 304 costs no rate limit).

Exit codes: 0 done; 4 done, but some repositories were rejected (listed); 3 the repos file
is malformed (every bad line is listed; nothing was crawled).`,
		Example: "  envgap crawl " + kind + " --crawl-id " + kind + "-20260924 --repos data/repos/python.txt --since 2023-01-01\n" +
			"  envgap crawl " + kind + " --crawl-id ghe-1 --repos repos.txt --api-url https://ghe.example/api/v3 --git-url-template 'https://ghe.example/{repo}.git'",
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, args []string) error {
			if opts.CrawlID == "" || opts.Repos == "" {
				return usageError{fmt.Errorf("--crawl-id and --repos are required (see envgap crawl %s --help)", kind)}
			}
			return f.run(c, opts, func() error { return runCrawlGitHub(c.Context(), f, opts) })
		},
	}
	c.Flags().StringVar(&opts.CrawlID, "crawl-id", "", "name of this crawl (letters, digits, . _ -)")
	c.Flags().StringVar(&opts.Repos, "repos", "", "file listing owner/name, one per line")
	c.Flags().StringVar(&opts.Since, "since", "", "only issues opened / pull requests merged at or after DATE (YYYY-MM-DD or RFC 3339)")
	c.Flags().StringVar(&opts.APIURL, "api-url", crawl.DefaultAPIURL, "GitHub REST base URL (GraphQL at URL/graphql; for GitHub Enterprise .../api/v3)")
	c.Flags().StringVar(&opts.GitURLTemplate, "git-url-template", gitfetch.DefaultURLTemplate, "where repositories are fetched from: {repo}, {owner}, {name}")
	return c
}

// parseSince accepts a date (midnight UTC) or an RFC 3339 time.
func parseSince(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--since %q: want YYYY-MM-DD or an RFC 3339 time", s)
}

// repoRejects are the reject codes of whole repositories: mistakes in the repos file.
var repoRejects = map[string]bool{crawl.ReasonRepoNotFound: true, crawl.ReasonRepoRenamed: true, crawl.ReasonRepoUnavailable: true}

func runCrawlGitHub(ctx context.Context, f *factory, opts *crawlGitHubOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	since, err := parseSince(opts.Since)
	if err != nil {
		return usageError{err}
	}
	if err := crawl.CheckCrawlID(opts.CrawlID); err != nil {
		return usageError{err}
	}
	repos, err := crawl.ReadReposFile(opts.Repos)
	if err != nil {
		return err
	}
	st, err := f.OpenStore()
	if err != nil {
		return err
	}
	token := f.Getenv(envGitHubToken)
	switch {
	case token != "":
	case strings.TrimRight(opts.APIURL, "/") == strings.TrimRight(crawl.DefaultAPIURL, "/"):
		fmt.Fprintf(f.Err, "envgap: %s is not set: GitHub allows 60 unauthenticated requests an hour\n", envGitHubToken)
	default:
		// Another API (a stand-in, GitHub Enterprise) may not count or may not ask.
		fmt.Fprintf(f.Err, "envgap: %s is not set: asking %s without a token\n", envGitHubToken, opts.APIURL)
	}
	o := crawl.Options{CrawlID: opts.CrawlID, Repos: repos, Since: since, APIURL: opts.APIURL,
		GitURLTemplate: opts.GitURLTemplate, Token: token}
	deps := crawl.Deps{Store: st}
	if f.Global.Verbose {
		deps.Logf = f.logf
	}
	run := crawl.CrawlIssues
	if opts.Kind == "prs" {
		run = crawl.CrawlPRs
	}
	rep, err := run(ctx, o, deps)
	if err != nil {
		return err
	}
	if f.Global.JSON {
		if err := f.printJSON(struct {
			*crawl.Report
			ReportRef    string         `json:"report_ref"`
			ReportDigest schemas.Digest `json:"report_digest"`
		}{rep, data.CrawlRef(rep.CrawlID), rep.Digest}); err != nil {
			return err
		}
	} else {
		rep.Print(f.Out)
	}
	var bad []string
	for code, n := range rep.RejectedByReason {
		if repoRejects[code] {
			bad = append(bad, fmt.Sprintf("%d %s", n, code))
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return partialError{errors.New("crawl " + opts.Kind + ": some repositories were skipped (" + strings.Join(bad, ", ") +
			"); see the rejects of " + rep.CandidateSet + " (envgap cat " + rep.CandidateSet + ") and fix the repos file")}
	}
	return nil
}
