package crawl_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/envgap/envgap/crawl"
	"github.com/envgap/envgap/crawl/fakegithub"
	"github.com/envgap/envgap/internal/testenv"
	"github.com/envgap/envgap/schemas"
)

// TestCrawlDemoWorld crawls the demo's small GitHub (data/demo/github) as make demo does:
// the world's repositories built as bare git repositories and served over git's smart
// HTTP protocol (git http-backend) beside the API fixtures rendered from it, fetched
// through go-git; crawl prs first, then crawl issues. One Repaired and one Reported
// candidate come out, and every decoy is rejected or skipped for its reason.
func TestCrawlDemoWorld(t *testing.T) {
	testenv.Tool(t, "git")
	w, err := fakegithub.ReadWorld("../data/demo/github")
	if err != nil {
		t.Fatal(err)
	}
	b, err := w.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	api, h, err := fakegithub.WorldHandler(b, fakegithub.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	api.BaseURL = srv.URL
	st := newStore(t)
	opts := crawl.Options{Repos: []string{"envgap-demo/grades", "envgap-demo/invoices"}, APIURL: srv.URL + "/",
		GitURLTemplate: srv.URL + "/{owner}/{name}.git", WorkDir: t.TempDir()}
	logs := &logBuf{}
	deps := crawl.Deps{Store: st, Logf: logs.logf}

	opts.CrawlID = "demo-prs"
	prs, err := crawl.CrawlPRs(context.Background(), opts, deps)
	if err != nil {
		t.Fatalf("crawl prs: %v\n%s", err, logs)
	}
	opts.CrawlID = "demo-issues"
	issues, err := crawl.CrawlIssues(context.Background(), opts, deps)
	if err != nil {
		t.Fatalf("crawl issues: %v\n%s", err, logs)
	}
	if got := ids(t, st); !reflect.DeepEqual(got, []string{"envgap__envgap-demo__grades-7", "envgap__envgap-demo__invoices-3"}) {
		t.Fatalf("candidates %v\n%s", got, logs)
	}
	if got, want := rejectsByRef(t, st, prs), map[string]string{
		"envgap-demo/grades/pull/6":   crawl.ReasonNoLinkedIssue, // a README change that closes nothing
		"envgap-demo/invoices/pull/2": crawl.ReasonNotEnvOnly,    // also changes main.py
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("crawl prs rejects\n got %v\nwant %v", got, want)
	}
	if prs.Skipped["closed_not_merged"] != 1 || prs.GitFetches == 0 {
		t.Errorf("crawl prs report: skipped %v, git fetches %d", prs.Skipped, prs.GitFetches)
	}
	if got, want := rejectsByRef(t, st, issues), map[string]string{
		"envgap-demo/grades/issues/5":   crawl.ReasonNoFailure, // a feature request
		"envgap-demo/invoices/issues/1": crawl.ReasonNoFailure,
		"envgap-demo/invoices/issues/3": crawl.ReasonAlreadyStored, // the Repaired candidate of pull request #4
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("crawl issues rejects\n got %v\nwant %v", got, want)
	}
	if issues.Skipped["pull_request_in_issue_list"] != 4 {
		t.Errorf("crawl issues report: skipped %v", issues.Skipped)
	}

	rep := candidate(t, st, "envgap__envgap-demo__invoices-3")
	sha := func(id string) string { return b.Commits[id] }
	if rep.Set != schemas.SourceRepaired || rep.BaseCommit != sha("envgap-demo/invoices@i3") ||
		*rep.PRHeadCommit != sha("envgap-demo/invoices@h4") || *rep.PRMergeCommit != sha("envgap-demo/invoices@m4") {
		t.Errorf("repaired candidate: set %s base %s head %s merge %s", rep.Set, rep.BaseCommit, *rep.PRHeadCommit, *rep.PRMergeCommit)
	}
	if len(rep.GoldFiles) != 1 || rep.GoldFiles[0].Path != "requirements.txt" || *rep.GoldFiles[0].Content != "tabulate==0.9.0\n" {
		t.Errorf("gold files %+v", rep.GoldFiles)
	}
	if rep.RegistryDate != "2026-02-10T17:05:00Z" || rep.Ecosystem != schemas.EcosystemPython || *rep.RepoLicense != "Apache-2.0" ||
		rep.FailureSignature != "ERROR: Could not find a version that satisfies the requirement python-tabulate>=0.9 (from versions: none)" {
		t.Errorf("repaired candidate: %s %s %v %q", rep.RegistryDate, rep.Ecosystem, rep.RepoLicense, rep.FailureSignature)
	}
	reported := candidate(t, st, "envgap__envgap-demo__grades-7")
	if reported.Set != schemas.SourceReported || reported.BaseCommit != sha("envgap-demo/grades@g2") ||
		reported.FailureSignature != "ModuleNotFoundError: No module named 'tabulate'" || len(reported.GoldFiles) != 0 {
		t.Errorf("reported candidate: set %s base %s signature %q gold %v", reported.Set, reported.BaseCommit, reported.FailureSignature, reported.GoldFiles)
	}

	// The same world built again has the same commits: the demo's candidates are the same
	// on every machine.
	again, err := w.Build(filepath.Join(t.TempDir(), "again"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Commits, b.Commits) {
		t.Errorf("a second build made other commits:\n%v\n%v", again.Commits, b.Commits)
	}
}
