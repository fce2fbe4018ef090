package crawl

import (
	"context"
	"errors"
	"fmt"

	"github.com/envgap/envgap/crawl/gitfetch"
	"github.com/envgap/envgap/schemas"
	"github.com/google/go-github/v62/github"
)

// CrawlIssues finds Reported candidates: issues (not pull requests) of the repositories
// whose text reports an environment failure of the project's ecosystem. It stores them as
// one candidate set (candidates/crawl-issues-<crawl id>-...) with the rejects, and the
// report as crawls/<crawl id>.
func CrawlIssues(ctx context.Context, opts Options, deps Deps) (*Report, error) {
	c, err := newCrawler("issues", opts, deps)
	if err != nil {
		return nil, err
	}
	defer c.close()
	for _, repo := range c.opts.Repos {
		if err := c.issuesOf(ctx, repo); err != nil {
			return nil, err
		}
	}
	return c.finish()
}

func (c *crawler) issuesOf(ctx context.Context, full string) error {
	info, ok, err := c.repo(ctx, full)
	if err != nil || !ok {
		return err
	}
	defer c.doneWithRepo(info)
	c.logf("issues of %s", full)
	lo := &github.IssueListByRepoOptions{State: "all", Sort: "created", Direction: "asc", Since: c.opts.Since,
		ListOptions: github.ListOptions{PerPage: 100}}
	for {
		issues, resp, err := c.gh.Issues.ListByRepo(ctx, info.owner, info.name, lo)
		if err != nil {
			return fmt.Errorf("issues of %s: %w", full, err)
		}
		for _, is := range issues {
			if is.IsPullRequest() {
				c.skip("pull_request_in_issue_list")
				continue
			}
			if !c.opts.Since.IsZero() && is.GetCreatedAt().Before(c.opts.Since) {
				c.skip("opened_before_since")
				continue
			}
			c.report.Considered++
			if err := c.issue(ctx, info, is); err != nil {
				return err
			}
		}
		if resp.NextPage == 0 {
			return nil
		}
		lo.Page = resp.NextPage
	}
}

// issue turns one issue into a Reported candidate or a reject.
func (c *crawler) issue(ctx context.Context, info *repoInfo, is *github.Issue) error {
	n := is.GetNumber()
	ref := issueRef(info.full, n)
	if by, ok := c.coveredBy(info.full, n, schemas.InstanceID(info.full, int64(n))); ok {
		c.reject(ref, ReasonDuplicate, fmt.Sprintf("the pull request of the repaired candidate %s closes it too: one breakage, one candidate", by))
		return nil
	}
	title, body := is.GetTitle(), is.GetBody()
	if _, _, ok := IssueFailure("", title, body); !ok {
		c.reject(ref, ReasonNoFailure, "the issue text has no install, build, resolve or import error line")
		return nil
	}
	created := is.GetCreatedAt()
	commits, _, err := c.gh.Repositories.ListCommits(ctx, info.owner, info.name, &github.CommitsListOptions{
		SHA: info.defaultBranch, Until: created.Time, ListOptions: github.ListOptions{PerPage: 1}})
	if err != nil {
		if st := statusOf(err); st == 404 || st == 409 {
			c.reject(ref, ReasonNoBaseCommit, fmt.Sprintf("listing commits of %s answers %d (empty repository?)", info.defaultBranch, st))
			return nil
		}
		return fmt.Errorf("commits of %s: %w", info.full, err)
	}
	if len(commits) == 0 || commits[0].GetSHA() == "" {
		c.reject(ref, ReasonNoBaseCommit, fmt.Sprintf("branch %s has no commit at or before %s", info.defaultBranch, rfc3339(created)))
		return nil
	}
	base := commits[0].GetSHA()
	manifests, err := c.manifestsAt(ctx, info, base)
	if errors.Is(err, gitfetch.ErrCommitNotFound) {
		c.reject(ref, ReasonBaseUnavailable, fmt.Sprintf("commit %s cannot be fetched from %s", base, info.gitURL))
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", ref, err)
	}
	if len(manifests) == 0 {
		c.reject(ref, ReasonNoEcosystem, fmt.Sprintf("no python, javascript, java or cpp manifest in the tree at %s", base))
		return nil
	}
	var allowed []schemas.Ecosystem
	sigs := map[schemas.Ecosystem][2]string{}
	for _, e := range ecosystemOrder {
		if len(manifests[e]) == 0 {
			continue
		}
		if line, re, ok := IssueFailure(e, title, body); ok {
			allowed = append(allowed, e)
			sigs[e] = [2]string{line, re}
		}
	}
	if len(allowed) == 0 {
		var have []string
		for _, e := range ecosystemOrder {
			if len(manifests[e]) > 0 {
				have = append(have, string(e))
			}
		}
		c.reject(ref, ReasonNoFailure, fmt.Sprintf("no error line of the project's ecosystem (%v) in the issue text", have))
		return nil
	}
	proj, _ := ChooseProject(manifests, nil, info.language, allowed...)
	ps, truncated := problemStatement(is.GetTitle(), is.GetBody())
	url := is.GetHTMLURL()
	cand := schemas.Candidate{
		Ident: schemas.Ident{InstanceID: schemas.InstanceID(info.full, int64(n))},
		Set:   schemas.SourceReported,
		Spec: schemas.Spec{
			Repo: info.full, BaseCommit: base, ProjectFiles: []schemas.File{}, GoldFiles: []schemas.File{},
			ProblemStatement: ps, ProblemStatementTruncated: truncated,
			CreatedAt: rfc3339(created), RegistryDate: rfc3339(created), RegistryDateSource: schemas.DateFromIssueCreated,
			Ecosystem: proj.Ecosystem, Image: proj.Ecosystem.Image(), ManifestPath: proj.ManifestPath, ManifestPaths: proj.ManifestPaths,
			FailureSignature: sigs[proj.Ecosystem][0], ExpectedFailureRegex: sigs[proj.Ecosystem][1],
		},
		Origin:  schemas.Origin{IssueURL: &url, IssueNumber: int64(n), Categories: []schemas.Category{}},
		License: schemas.License{RepoLicense: info.license},
	}
	c.addCandidate(ref, cand)
	return nil
}
