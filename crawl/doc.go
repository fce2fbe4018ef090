// Package crawl is the crawl stage's GitHub part: it finds Reported candidates in issues
// (CrawlIssues) and Repaired candidates in environment-only merged pull requests
// (CrawlPRs), and stores them as one candidate set per crawl with every reject and its
// reason. The Lite study import is the sub-package crawl/lite.
//
// # Reported
//
// An issue (not a pull request) is a candidate when its title or body (HTML comments of
// issue templates removed) holds a line that identifies an environment failure of the
// project's ecosystem, as the tools print it (schemas.FailureSignature), and that line is
// not only a generic error prefix ("ERROR:", "CMake Error at", "[ERROR] Failed to execute
// goal"). failure_signature is that line (the body's first, the title's only when the body
// has none: a title tends to wrap the error in words no output contains) and
// expected_failure_regex schemas.FailureRegex of it. base_commit is the last default-branch commit at or before the issue was opened
// (REST commits?sha=<default>&until=<opened>); registry_date is when it was opened.
//
// # Repaired
//
// A merged pull request is a candidate when GitHub records it as closing an issue of the
// same repository (GraphQL closingIssuesReferences; never a regex over "fixes #N"), every
// changed file is an environment file (envfiles.ClassifyPath: manifests, lockfiles, build and setup
// files, Dockerfiles, READMEs; never source, tests or vendored code) and at least one is
// not a README, and the file list is complete (GraphQL changedFiles equals the REST list,
// which GitHub cuts at 3,000 files). base_commit is the pull request's base, gold_files the
// files at its head commit (null content for a deleted path, both sides of a rename),
// patch the unified diff from base to head of those files, registry_date its merge time.
// The instance id is built from the issue number. One candidate per breakage: pull requests
// are taken into the default branch first, then by merge time; one that closes an issue an
// earlier one already covers (a backport, a second fix) is rejected as a duplicate, and of
// the issues one pull request closes the first readable one is the candidate's.
//
// # Both
//
// problem_statement is the title, a blank line and the whole body, as the card's example
// row (PyRoaringBitMap-93, ~10,700 characters, problem_statement_truncated false) has it.
// Only a pathological body over MaxProblemBody (1 MiB) is cut, on a character boundary,
// and then problem_statement_truncated is true; the flag otherwise describes bodies an
// earlier collection cut at 3,000 characters, which stay as agents saw them.
// repo_license is GitHub's SPDX id (null for none or NOASSERTION). The ecosystem and the
// manifests are read from the tree at base_commit (FindManifests, ChooseProject): the
// ecosystems whose manifests the tree has, preferring for Reported the ones the issue's
// error belongs to and for Repaired the ones the fix changes, then GitHub's language.
// Commands are left empty for verify's default recipe generator. A candidate whose
// instance id the store already holds with other content (the same issue found by both
// crawls, or by an earlier crawl) is rejected as already_stored: one candidate per id.
//
// # GitHub access and the store
//
// REST goes through go-github, GraphQL through plain HTTP POSTs, both through
// crawl/ghhttp, which waits out rate limits and keeps an HTTP cache in the store (memo
// stages github-http and github-crawl), so a crawl stopped halfway resumes without asking
// again and a finished crawl run again sends no request. Git goes through crawl/gitfetch:
// every commit is fetched alone with depth 1, so no later history (no fix) is ever
// present; gitfetch.ReadCommit gives the evaluation core a project at base_commit the same
// way (cmd/envgap wires it into verify), and gitfetch.Checkout makes such a checkout on disk. Git
// results are memoized in the store by commit (memo stage crawl-git, records of kind
// crawl_tree and crawl_fix), so trees and fixes are not fetched twice.
//
// Each crawl stores a Report (kind crawl_report) as crawls/<crawl id>: requests sent,
// conditional, answered 304 and served from the cache, rate-limit waits, git fetches,
// candidates, rejects by reason code (the first word of each CrawlReject.Reason) and API
// requests per candidate. A crawl id names one crawl of one kind.
//
// The token (GITHUB_TOKEN in the CLI) is sent to the API host only and is never part of a
// cache key, a record, an error or a log line.
package crawl
