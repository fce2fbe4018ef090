package crawl

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/envgap/envgap/crawl/gitfetch"
	"github.com/envgap/envgap/lib/envfiles"
	"github.com/envgap/envgap/schemas"
	"github.com/google/go-github/v62/github"
)

// MadeByMaintainer is the card's "how it was made" value of Repaired candidates: the
// reference fix is the maintainers' own merged pull request.
const MadeByMaintainer = "maintainer fix"

// CrawlPRs finds Repaired candidates: merged pull requests that GitHub records as closing
// an issue of the same repository (GraphQL closingIssuesReferences) and whose every
// changed file is an environment file (envfiles.ClassifyPath). One candidate per breakage: of
// several pull requests closing one issue (backports, second fixes) only the first is a
// candidate, preferring pull requests into the default branch, then the earliest merged;
// the others are rejected as duplicates. It stores the candidates as one set
// (candidates/crawl-prs-<crawl id>-...) with the rejects, and the report as
// crawls/<crawl id>.
func CrawlPRs(ctx context.Context, opts Options, deps Deps) (*Report, error) {
	if opts.Token == "" {
		if opts.APIURL == "" || strings.TrimRight(opts.APIURL, "/") == strings.TrimRight(DefaultAPIURL, "/") {
			return nil, errors.New("crawl prs: GitHub's GraphQL API, which records which pull request closed which issue, needs a token; set GITHUB_TOKEN")
		}
		// Another API (GitHub Enterprise, a mirror) may answer without one; if it does
		// not, its 401 says so.
		if deps.Logf != nil {
			deps.Logf("crawl prs: no GITHUB_TOKEN; asking %s without one", opts.APIURL)
		}
	}
	c, err := newCrawler("prs", opts, deps)
	if err != nil {
		return nil, err
	}
	defer c.close()
	for _, repo := range c.opts.Repos {
		if err := c.prsOf(ctx, repo); err != nil {
			return nil, err
		}
	}
	return c.finish()
}

// envPR is a merged, linked, environment-only pull request.
type envPR struct {
	pr     *github.PullRequest
	link   *prLink
	issues []int
	paths  []string
	hints  []schemas.Ecosystem
}

func (c *crawler) prsOf(ctx context.Context, full string) error {
	info, ok, err := c.repo(ctx, full)
	if err != nil || !ok {
		return err
	}
	defer c.doneWithRepo(info)
	c.logf("pull requests of %s", full)
	merged, err := c.mergedPRs(ctx, info)
	if err != nil {
		return err
	}
	numbers := make([]int, len(merged))
	for i, pr := range merged {
		numbers[i] = pr.GetNumber()
	}
	links, err := c.gql.prLinks(ctx, info.owner, info.name, numbers)
	if err != nil {
		return err
	}
	var envPRs []*envPR
	for _, pr := range merged {
		e, err := c.screenPR(ctx, info, pr, links[pr.GetNumber()])
		if err != nil {
			return err
		}
		if e != nil {
			envPRs = append(envPRs, e)
		}
	}
	// One candidate per breakage: pull requests into the default branch first, then the
	// earliest merged.
	sort.SliceStable(envPRs, func(i, j int) bool {
		a, b := envPRs[i].pr, envPRs[j].pr
		da, db := a.GetBase().GetRef() == info.defaultBranch, b.GetBase().GetRef() == info.defaultBranch
		if da != db {
			return da
		}
		if !a.GetMergedAt().Equal(b.GetMergedAt()) {
			return a.GetMergedAt().Before(b.GetMergedAt().Time)
		}
		return a.GetNumber() < b.GetNumber()
	})
	taken := map[int]int{} // issue -> pull request whose candidate covers it
	for _, e := range envPRs {
		n := e.pr.GetNumber()
		ref := pullRef(full, n)
		dup := false
		for _, is := range e.issues {
			if by, ok := taken[is]; ok {
				c.reject(ref, ReasonDuplicate, fmt.Sprintf("also closes issue #%d, already covered by pull request #%d (a backport or a second fix of the same breakage)", is, by))
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		for _, is := range e.issues {
			taken[is] = n
		}
		issue, err := c.firstReadableIssue(ctx, info, e)
		if err != nil {
			return err
		}
		if issue == nil {
			c.reject(ref, ReasonIssueNotFound, fmt.Sprintf("none of the issues it closes (%s) can be read", intList(e.issues)))
			continue
		}
		// The issue itself already a Reported candidate: finish rejects it as
		// already_stored. Another issue it closes already one: the same breakage.
		if id, ok := c.reportedAmong(full, e.issues, issue.GetNumber()); ok {
			c.reject(ref, ReasonDuplicate, fmt.Sprintf("closes an issue that is already the reported candidate %s: one breakage, one candidate", id))
			continue
		}
		for _, other := range e.issues {
			if other != issue.GetNumber() {
				c.reject(issueRef(full, other), ReasonDuplicate, fmt.Sprintf("closed by pull request #%d together with issue #%d, whose candidate covers it", n, issue.GetNumber()))
			}
		}
		if err := c.repaired(ctx, info, e, issue); err != nil {
			return err
		}
		id := schemas.InstanceID(full, int64(issue.GetNumber()))
		c.breakages[id] = Breakage{Repo: full, PullRequest: n, Issues: append([]int(nil), e.issues...), Candidate: id}
	}
	return nil
}

// mergedPRs lists the repository's merged pull requests (merged at or after --since),
// by merge time then number.
func (c *crawler) mergedPRs(ctx context.Context, info *repoInfo) ([]*github.PullRequest, error) {
	lo := &github.PullRequestListOptions{State: "closed", Sort: "updated", Direction: "desc", ListOptions: github.ListOptions{PerPage: 100}}
	var out []*github.PullRequest
	for {
		prs, resp, err := c.gh.PullRequests.List(ctx, info.owner, info.name, lo)
		if err != nil {
			return nil, fmt.Errorf("pull requests of %s: %w", info.full, err)
		}
		older := false
		for _, pr := range prs {
			if !c.opts.Since.IsZero() && pr.GetUpdatedAt().Before(c.opts.Since) {
				// Sorted by update time, newest first: the rest is older still.
				older = true
				break
			}
			switch {
			case pr.MergedAt == nil:
				c.skip("closed_not_merged")
			case !c.opts.Since.IsZero() && pr.GetMergedAt().Before(c.opts.Since):
				c.skip("merged_before_since")
			default:
				out = append(out, pr)
			}
		}
		if older || resp.NextPage == 0 {
			break
		}
		lo.Page = resp.NextPage
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if !a.GetMergedAt().Equal(b.GetMergedAt()) {
			return a.GetMergedAt().Before(b.GetMergedAt().Time)
		}
		return a.GetNumber() < b.GetNumber()
	})
	c.report.Considered += len(out)
	return out, nil
}

// screenPR checks a merged pull request: linked to an issue of the repository, every
// changed file listed (not truncated) and an environment file. It returns nil after
// recording a reject.
func (c *crawler) screenPR(ctx context.Context, info *repoInfo, pr *github.PullRequest, l *prLink) (*envPR, error) {
	n := pr.GetNumber()
	ref := pullRef(info.full, n)
	if l == nil {
		c.reject(ref, ReasonPullNotFound, "GitHub's GraphQL API has no record of it")
		return nil, nil
	}
	if !l.Merged {
		c.reject(ref, ReasonNotMerged, "the REST API says merged but GraphQL says not")
		return nil, nil
	}
	issues := l.closingIssues(info.full)
	if len(issues) == 0 {
		detail := "GitHub records no issue that it closes"
		if k := len(l.ClosingIssuesReferences.Nodes); k > 0 {
			detail = fmt.Sprintf("it closes only issues of other repositories (%d)", k)
		}
		c.reject(ref, ReasonNoLinkedIssue, detail)
		return nil, nil
	}
	files, err := c.prFiles(ctx, info, n)
	if err != nil {
		return nil, err
	}
	if len(files) >= MaxPRFiles || len(files) != l.ChangedFiles {
		c.reject(ref, ReasonFilesTruncated, fmt.Sprintf("GitHub lists %d of its %d changed files (the list stops at %d)", len(files), l.ChangedFiles, MaxPRFiles))
		return nil, nil
	}
	var offenders []string
	seen := map[string]bool{}
	var paths []string
	ecoCount := map[schemas.Ecosystem]int{}
	core := false
	for _, f := range files {
		for _, p := range []string{f.GetFilename(), f.GetPreviousFilename()} {
			if p == "" || seen[p] {
				continue
			}
			seen[p] = true
			paths = append(paths, p)
			cl := envfiles.ClassifyPath(p)
			if !cl.IsEnv() {
				offenders = append(offenders, fmt.Sprintf("%s (%s)", p, cl.Kind))
				continue
			}
			if cl.IsCoreEnv() {
				core = true
			}
			if cl.Ecosystem != "" {
				ecoCount[cl.Ecosystem]++
			}
		}
	}
	if len(offenders) > 0 {
		sort.Strings(offenders)
		more := ""
		if len(offenders) > 5 {
			more = fmt.Sprintf(" and %d more", len(offenders)-5)
			offenders = offenders[:5]
		}
		c.reject(ref, ReasonNotEnvOnly, "changes files that are not environment files: "+strings.Join(offenders, ", ")+more)
		return nil, nil
	}
	if !core {
		c.reject(ref, ReasonReadmeOnly, "changes only READMEs, no manifest, lockfile, build file or Dockerfile")
		return nil, nil
	}
	sort.Strings(paths)
	var hints []schemas.Ecosystem
	for _, e := range ecosystemOrder {
		if ecoCount[e] > 0 {
			hints = append(hints, e)
		}
	}
	sort.SliceStable(hints, func(i, j int) bool { return ecoCount[hints[i]] > ecoCount[hints[j]] })
	return &envPR{pr: pr, link: l, issues: issues, paths: paths, hints: hints}, nil
}

// prFiles lists a pull request's changed files (GitHub stops at MaxPRFiles).
func (c *crawler) prFiles(ctx context.Context, info *repoInfo, n int) ([]*github.CommitFile, error) {
	lo := &github.ListOptions{PerPage: 100}
	var out []*github.CommitFile
	for {
		files, resp, err := c.gh.PullRequests.ListFiles(ctx, info.owner, info.name, n, lo)
		if err != nil {
			return nil, fmt.Errorf("files of %s: %w", pullRef(info.full, n), err)
		}
		out = append(out, files...)
		if resp.NextPage == 0 || len(out) >= MaxPRFiles {
			return out, nil
		}
		lo.Page = resp.NextPage
	}
}

// firstReadableIssue reads the pull request's issues in number order and returns the
// first that exists in the repository, recording the others as rejects; nil when none.
func (c *crawler) firstReadableIssue(ctx context.Context, info *repoInfo, e *envPR) (*github.Issue, error) {
	for _, num := range e.issues {
		ref := issueRef(info.full, num)
		is, _, err := c.gh.Issues.Get(ctx, info.owner, info.name, num)
		switch st := statusOf(err); {
		case err == nil:
		case st == http.StatusNotFound || st == http.StatusGone:
			c.reject(ref, ReasonIssueNotFound, fmt.Sprintf("GitHub answers %d (deleted or hidden); pull request #%d closes it", st, e.pr.GetNumber()))
			continue
		case st == http.StatusMovedPermanently:
			c.reject(ref, ReasonIssueMoved, "GitHub answers 301 (transferred to another repository)")
			continue
		default:
			return nil, fmt.Errorf("%s: %w", ref, err)
		}
		if ru := strings.ToLower(is.GetRepositoryURL()); ru != "" && !strings.HasSuffix(ru, "/repos/"+strings.ToLower(info.full)) {
			c.reject(ref, ReasonIssueMoved, fmt.Sprintf("transferred to another repository (%s)", is.GetHTMLURL()))
			continue
		}
		if is.IsPullRequest() {
			c.reject(ref, ReasonIssueNotFound, "it is a pull request, not an issue")
			continue
		}
		return is, nil
	}
	return nil, nil
}

// repaired turns a screened pull request and its issue into a Repaired candidate.
func (c *crawler) repaired(ctx context.Context, info *repoInfo, e *envPR, issue *github.Issue) error {
	pr := e.pr
	n := pr.GetNumber()
	ref := pullRef(info.full, n)
	base, head, merge := pr.GetBase().GetSHA(), pr.GetHead().GetSHA(), pr.GetMergeCommitSHA()
	if l := e.link; l.HeadRefOid != "" && l.HeadRefOid != head || l.BaseRefOid != "" && l.BaseRefOid != base ||
		l.MergeCommit != nil && l.MergeCommit.Oid != merge {
		c.reject(ref, ReasonInvalid, "the REST and GraphQL APIs disagree on its base, head or merge commit")
		return nil
	}
	if merge == "" {
		c.reject(ref, ReasonNotMerged, "GitHub records no merge commit")
		return nil
	}
	gold, patch, binary, err := c.fix(ctx, info, base, head, e.paths)
	if errors.Is(err, gitfetch.ErrCommitNotFound) {
		which, commit := "head", head
		code := ReasonHeadUnavailable
		if strings.HasPrefix(err.Error(), "base:") {
			which, commit, code = "base", base, ReasonBaseUnavailable
		}
		c.reject(ref, code, fmt.Sprintf("its %s commit %s cannot be fetched from %s (force-pushed away?)", which, commit, info.gitURL))
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", ref, err)
	}
	if len(binary) > 0 {
		c.reject(ref, ReasonBinaryFile, "changes binary files, which gold_files cannot carry: "+strings.Join(binary, ", "))
		return nil
	}
	manifests, err := c.manifestsAt(ctx, info, base)
	if err != nil {
		return fmt.Errorf("%s: %w", ref, err)
	}
	proj, ok := ChooseProject(manifests, e.hints, info.language)
	if !ok {
		c.reject(ref, ReasonNoEcosystem, fmt.Sprintf("no python, javascript, java or cpp manifest in the tree at its base %s", base))
		return nil
	}
	sig, re, _ := IssueFailure(proj.Ecosystem, issue.GetTitle(), issue.GetBody())
	ps, truncated := problemStatement(issue.GetTitle(), issue.GetBody())
	issueURL, prURL, crawlID := issue.GetHTMLURL(), pr.GetHTMLURL(), c.opts.CrawlID
	prNum := int64(n)
	num := issue.GetNumber()
	cand := schemas.Candidate{
		Ident:  schemas.Ident{InstanceID: schemas.InstanceID(info.full, int64(num))},
		Set:    schemas.SourceRepaired,
		MadeBy: MadeByMaintainer,
		Spec: schemas.Spec{
			Repo: info.full, BaseCommit: base, ProjectFiles: []schemas.File{}, Patch: patch, GoldFiles: gold,
			ProblemStatement: ps, ProblemStatementTruncated: truncated,
			CreatedAt: rfc3339(issue.GetCreatedAt()), RegistryDate: rfc3339(pr.GetMergedAt()), RegistryDateSource: schemas.DateFromPRMerged,
			Ecosystem: proj.Ecosystem, Image: proj.Ecosystem.Image(), ManifestPath: proj.ManifestPath, ManifestPaths: proj.ManifestPaths,
			FailureSignature: sig, ExpectedFailureRegex: re,
		},
		Origin: schemas.Origin{
			CrawlID: &crawlID, IssueURL: &issueURL, IssueNumber: int64(num), PullRequest: &prURL, PRNumber: &prNum,
			PRHeadCommit: &head, PRMergeCommit: &merge, Categories: []schemas.Category{},
		},
		License: schemas.License{RepoLicense: info.license},
	}
	c.addCandidate(ref, cand)
	return nil
}

// reportedAmong returns a stored Reported candidate of one of the issues other than
// except, if any: a crawl issues that ran first already made the breakage a candidate.
func (c *crawler) reportedAmong(repo string, issues []int, except int) (string, bool) {
	for _, n := range issues {
		if n == except {
			continue
		}
		id := schemas.InstanceID(repo, int64(n))
		if e, ok := c.stored[id]; ok && e.Set == schemas.SourceReported {
			return id, true
		}
	}
	return "", false
}

func intList(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprintf("#%d", n)
	}
	return strings.Join(s, ", ")
}
