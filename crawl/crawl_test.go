package crawl_test

import (
	"bytes"
	"context"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/envgap/envgap/crawl"
	"github.com/envgap/envgap/crawl/fakegithub"
	"github.com/envgap/envgap/crawl/gitfetch"
	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
)

func candidate(t *testing.T, st *catalog.Catalog, id string) schemas.Candidate {
	t.Helper()
	e, err := st.CandidateByID(id)
	if err != nil {
		t.Fatal(err)
	}
	if ps := e.Candidate.Validate(); len(ps) > 0 {
		t.Errorf("%s does not validate: %v", id, ps)
	}
	return e.Candidate
}

func ids(t *testing.T, st *catalog.Catalog) []string {
	t.Helper()
	all, err := st.Candidates()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range all {
		out = append(out, c.InstanceID)
	}
	return out
}

func TestCrawlPRs(t *testing.T) {
	w := newWorld(t)
	st := newStore(t)
	rep, err := crawl.CrawlPRs(context.Background(), w.options("pr-1"), w.deps(st))
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(t, st); !reflect.DeepEqual(got, []string{"envgap__acme__widgets-1"}) {
		t.Fatalf("candidates %v", got)
	}
	wantRejects := map[string]string{
		"acme/gone":              crawl.ReasonRepoNotFound,
		"acme/oldname":           crawl.ReasonRepoRenamed,
		"acme/widgets/pull/4":    crawl.ReasonDuplicate,       // backport of #3 to 1.x
		"acme/widgets/pull/5":    crawl.ReasonNotEnvOnly,      // also changes widgets/__init__.py
		"acme/widgets/pull/6":    crawl.ReasonNoLinkedIssue,   // closes no issue
		"acme/widgets/pull/7":    crawl.ReasonHeadUnavailable, // head force-pushed away
		"acme/widgets/pull/9":    crawl.ReasonFilesTruncated,  // 2 of 3500 files listed
		"acme/widgets/pull/11":   crawl.ReasonIssueNotFound,
		"acme/widgets/issues/12": crawl.ReasonIssueNotFound, // deleted issue (404)
	}
	if got := rejectsByRef(t, st, rep); !reflect.DeepEqual(got, wantRejects) {
		t.Errorf("rejects\n got %v\nwant %v", got, wantRejects)
	}
	if rep.Candidates != 1 || rep.Rejected != len(wantRejects) || rep.Considered != 7 || rep.Skipped["closed_not_merged"] != 1 {
		t.Errorf("report %+v", rep)
	}
	if rep.RejectedByReason[crawl.ReasonIssueNotFound] != 2 || rep.RequestsPerCandidate != float64(rep.HTTP.Requests) {
		t.Errorf("report counts %v %v", rep.RejectedByReason, rep.RequestsPerCandidate)
	}
	ref, err := st.Ref(data.RefCrawls + "pr-1")
	if err != nil || ref != rep.Digest {
		t.Errorf("crawls/pr-1 = %s, %v; want the report %s", ref, err, rep.Digest)
	}

	c := candidate(t, st, "envgap__acme__widgets-1")
	check := func(field string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", field, got, want)
		}
	}
	check("set", c.Set, schemas.SourceRepaired)
	check("base_commit", c.BaseCommit, w.sha["c2"])
	check("pr_head_commit", *c.PRHeadCommit, w.sha["fix3"])
	check("pr_merge_commit", *c.PRMergeCommit, w.sha["m3"])
	check("pr_number", *c.PRNumber, int64(3))
	check("pull_request", *c.PullRequest, "https://github.com/acme/widgets/pull/3")
	check("issue_url", *c.IssueURL, "https://github.com/acme/widgets/issues/1")
	check("issue_number", c.IssueNumber, int64(1))
	check("crawl_id", *c.CrawlID, "pr-1")
	check("created_at", c.CreatedAt, "2023-02-05T12:00:00Z")
	check("registry_date", c.RegistryDate, "2023-02-07T10:00:00Z")
	check("registry_date_source", c.RegistryDateSource, schemas.DateFromPRMerged)
	check("ecosystem", c.Ecosystem, schemas.EcosystemPython)
	check("image", c.Image, "envgap-python-eval")
	check("manifest_path", c.ManifestPath, "setup.py")
	check("manifest_paths", c.ManifestPaths, []string{"requirements.txt", "setup.py"})
	check("repo_license", *c.RepoLicense, "MIT")
	check("made_by", c.MadeBy, crawl.MadeByMaintainer)
	check("outcome", c.Outcome, schemas.OutcomeNotChecked)
	gold := map[string]*string{}
	for _, f := range c.GoldFiles {
		gold[f.Path] = f.Content
	}
	if len(gold) != 3 || gold["requirements.txt"] != nil || gold["setup.py"] == nil || *gold["setup.py"] != setupPin ||
		gold["requirements/base.txt"] == nil || *gold["requirements/base.txt"] != reqsPin {
		t.Errorf("gold_files %+v", c.GoldFiles)
	}
	for _, want := range []string{"diff --git a/setup.py b/setup.py", "-    install_requires=['requests'],", "+    install_requires=['requests<3'],",
		"diff --git a/requirements.txt b/requirements.txt", "deleted file mode", "+++ b/requirements/base.txt"} {
		if !strings.Contains(c.Patch, want) {
			t.Errorf("patch lacks %q:\n%s", want, c.Patch)
		}
	}
	if !strings.HasPrefix(c.ProblemStatement, "pip install fails: no matching distribution for requests\n\nInstalling from") || c.ProblemStatementTruncated {
		t.Errorf("problem_statement %q", c.ProblemStatement)
	}
	if !strings.Contains(c.FailureSignature, "Could not find a version that satisfies the requirement requests>=99") {
		t.Errorf("failure_signature %q", c.FailureSignature)
	}
}

func TestCrawlIssues(t *testing.T) {
	w := newWorld(t)
	st := newStore(t)
	rep, err := crawl.CrawlIssues(context.Background(), w.options("issues-1"), w.deps(st))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"envgap__acme__webapp-21", "envgap__acme__webapp-23", "envgap__acme__widgets-1", "envgap__acme__widgets-10"}
	if got := ids(t, st); !reflect.DeepEqual(got, want) {
		t.Fatalf("candidates %v, want %v", got, want)
	}
	wantRejects := map[string]string{
		"acme/gone":              crawl.ReasonRepoNotFound,
		"acme/oldname":           crawl.ReasonRepoRenamed,
		"acme/widgets/issues/2":  crawl.ReasonNoFailure,    // feature request (the error is in the template's comment)
		"acme/widgets/issues/8":  crawl.ReasonNoFailure,    // no error at all
		"acme/widgets/issues/17": crawl.ReasonNoFailure,    // an npm error in a Python project
		"acme/webapp/issues/22":  crawl.ReasonNoBaseCommit, // opened before the first commit
	}
	if got := rejectsByRef(t, st, rep); !reflect.DeepEqual(got, wantRejects) {
		t.Errorf("rejects\n got %v\nwant %v", got, wantRejects)
	}
	if rep.Skipped["pull_request_in_issue_list"] != 9 || rep.Considered != 8 {
		t.Errorf("report %+v", rep)
	}
	for _, tc := range []struct {
		id, base, sig, eco, manifest string
		manifests                    []string
		license                      *string
		truncated                    bool
	}{
		{"envgap__acme__widgets-1", w.sha["c2"], "ERROR: Could not find a version that satisfies the requirement requests>=99 (from widgets) (from versions: 2.28.0, 2.28.1, 2.28.2)",
			"python", "setup.py", []string{"requirements.txt", "setup.py"}, ptr("MIT"), false},
		{"envgap__acme__widgets-10", w.sha["m7"], "ModuleNotFoundError: No module named 'yaml'",
			"python", "setup.py", []string{"setup.py", "requirements/base.txt"}, ptr("MIT"), false},
		{"envgap__acme__webapp-21", w.sha["w1"], "npm ERR! notarget No matching version found for left-pad@^9.0.0.",
			"javascript", "package.json", []string{"package.json"}, nil, false},
		{"envgap__acme__webapp-23", w.sha["w2"], "Error: Cannot find module 'express'",
			"javascript", "package.json", []string{"package.json", "packages/ui/package.json"}, nil, false},
	} {
		c := candidate(t, st, tc.id)
		if c.Set != schemas.SourceReported || c.BaseCommit != tc.base || c.FailureSignature != tc.sig || string(c.Ecosystem) != tc.eco ||
			c.ManifestPath != tc.manifest || !reflect.DeepEqual(c.ManifestPaths, tc.manifests) || !reflect.DeepEqual(c.RepoLicense, tc.license) ||
			c.ProblemStatementTruncated != tc.truncated || c.CrawlID != nil || c.PRNumber != nil || c.Patch != "" || len(c.GoldFiles) != 0 {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.id, c, tc)
		}
		if c.RegistryDate != c.CreatedAt || c.RegistryDateSource != schemas.DateFromIssueCreated {
			t.Errorf("%s: registry_date %s (%s), created_at %s", tc.id, c.RegistryDate, c.RegistryDateSource, c.CreatedAt)
		}
		re, err := schemas.CompileFailureRegex(c.ExpectedFailureRegex)
		if err != nil || !re.MatchString(c.FailureSignature) {
			t.Errorf("%s: expected_failure_regex %q does not find its signature: %v", tc.id, c.ExpectedFailureRegex, err)
		}
	}
	long := candidate(t, st, "envgap__acme__webapp-23")
	title, body, _ := strings.Cut(long.ProblemStatement, "\n\n")
	// A body of 4,341 characters is kept whole (only pathological sizes are cut).
	if title != "Server does not start" || len([]rune(body)) != 4341 {
		t.Errorf("problem statement: title %q, body of %d characters", title, len([]rune(body)))
	}
}

func ptr(s string) *string { return &s }

func TestFinishedCrawlRunAgainMakesNoRequests(t *testing.T) {
	for _, kind := range []string{"issues", "prs"} {
		t.Run(kind, func(t *testing.T) {
			w := newWorld(t)
			st := newStore(t)
			run := func(id string) *crawl.Report {
				t.Helper()
				f := crawl.CrawlIssues
				if kind == "prs" {
					f = crawl.CrawlPRs
				}
				rep, err := f(context.Background(), w.options(id), w.deps(st))
				if err != nil {
					t.Fatal(err)
				}
				return rep
			}
			first := run("c1")
			sent := len(w.fake.Requests())
			if first.HTTP.Requests != sent || sent == 0 || first.GitFetches == 0 {
				t.Fatalf("first run: report says %d requests, fake saw %d; %d git fetches", first.HTTP.Requests, sent, first.GitFetches)
			}
			again := run("c1")
			if n := len(w.fake.Requests()); n != sent {
				t.Errorf("the same crawl run again sent %d requests", n-sent)
			}
			if again.HTTP.Requests != 0 || again.HTTP.FromCache != first.HTTP.Requests-first.HTTP.Retried || !again.Unchanged ||
				again.CandidateSet != first.CandidateSet {
				t.Errorf("run again: %+v", again)
			}
			// Trees, fixes and commits found missing are memoized: no git at all.
			if again.GitFetches != 0 {
				t.Errorf("run again fetched %d commits", again.GitFetches)
			}
			// A new crawl asks again, conditionally: only answers without an ETag (404,
			// 301) and GraphQL queries are asked unconditionally.
			firstStatus := map[string]int{}
			for _, r := range w.fake.Requests()[:sent] {
				firstStatus[r.Path+"?"+r.Query] = r.Status
			}
			next := run("c2")
			for _, r := range w.fake.Requests()[sent:] {
				if r.Method == "GET" && !r.Conditional && firstStatus[r.Path+"?"+r.Query] == 200 {
					t.Errorf("new crawl asked %s?%s unconditionally", r.Path, r.Query)
				}
			}
			if next.HTTP.NotModified == 0 || next.HTTP.NotModified != next.HTTP.Conditional {
				t.Errorf("new crawl: %+v", next.HTTP)
			}
		})
	}
}

func TestRateLimitsLoseNoData(t *testing.T) {
	ctx := context.Background()
	clean := newWorld(t)
	cleanStore := newStore(t)
	if _, err := crawl.CrawlPRs(ctx, clean.options("pr-1"), clean.deps(cleanStore)); err != nil {
		t.Fatal(err)
	}
	w := newWorld(t,
		fakegithub.Fault{Path: "/repos/acme/widgets", Kind: fakegithub.HTML, Times: 1},
		fakegithub.Fault{Path: "/repos/acme/widgets/pulls", Kind: fakegithub.Primary, Times: 1},
		fakegithub.Fault{Path: "/graphql", Kind: fakegithub.GraphQL, Times: 1},
		fakegithub.Fault{Path: "/repos/acme/widgets/pulls/3/files", Kind: fakegithub.Secondary, Times: 1},
		fakegithub.Fault{Path: "/repos/acme/widgets/issues/1", Kind: fakegithub.TooMany, Times: 1},
		fakegithub.Fault{Path: "/repos/acme/webapp/pulls", Kind: fakegithub.HTML200, Times: 2},
	)
	st := newStore(t)
	rep, err := crawl.CrawlPRs(ctx, w.options("pr-1"), w.deps(st))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"html": 3, "primary": 2, "secondary": 1, "429": 1}
	if !reflect.DeepEqual(rep.HTTP.RateLimited, want) {
		t.Errorf("rate limited %v, want %v", rep.HTTP.RateLimited, want)
	}
	if rep.HTTP.WaitedSeconds < 2*120 || len(w.clock.Slept()) != 7 {
		t.Errorf("waited %.0fs in %d waits", rep.HTTP.WaitedSeconds, len(w.clock.Slept()))
	}
	a, err := cleanStore.Candidates()
	if err != nil {
		t.Fatal(err)
	}
	b, err := st.Candidates()
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 1 || len(b) != 1 || a[0].Digest != b[0].Digest {
		t.Errorf("with rate limits the crawl found %v, without %v", b, a)
	}
}

func TestKilledCrawlResumesWithoutAskingAgain(t *testing.T) {
	ctx := context.Background()
	// GitHub keeps answering with an HTML page until the transport gives up (8 attempts):
	// the crawl stops with an error halfway, after acme/widgets.
	w := newWorld(t, fakegithub.Fault{Path: "/repos/acme/webapp/pulls", Kind: fakegithub.HTML200, Times: 8})
	st := newStore(t)
	if _, err := crawl.CrawlPRs(ctx, w.options("pr-1"), w.deps(st)); err == nil || !strings.Contains(err.Error(), "HTML page") {
		t.Fatalf("err = %v, want the crawl to stop on the HTML pages", err)
	}
	if _, err := st.Ref(data.RefCrawls + "pr-1"); err == nil {
		t.Error("a report was stored for the stopped crawl")
	}
	answered := map[string]bool{}
	firstRun := w.fake.Requests()
	for _, r := range firstRun {
		if r.Status != 0 && r.Status < 500 && !(r.Status == 200 && r.Path == "/repos/acme/webapp/pulls") {
			answered[r.Method+" "+r.Path+"?"+r.Query] = true
		}
	}
	if !answered["GET /repos/acme/widgets?"] {
		t.Fatalf("first run never got acme/widgets: %v", answered)
	}
	rep, err := crawl.CrawlPRs(ctx, w.options("pr-1"), w.deps(st))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range w.fake.Requests()[len(firstRun):] {
		key := r.Method + " " + r.Path + "?" + r.Query
		if answered[key] && r.Path != "/graphql" {
			t.Errorf("resumed crawl asked again for %s", key)
		}
	}
	if rep.Candidates != 1 || rep.HTTP.FromCache == 0 {
		t.Errorf("resumed report %+v", rep)
	}
}

func TestTokenNeverStoredOrPrinted(t *testing.T) {
	w := newWorld(t)
	st := newStore(t)
	ctx := context.Background()
	var out bytes.Buffer
	for _, f := range []func(context.Context, crawl.Options, crawl.Deps) (*crawl.Report, error){crawl.CrawlIssues, crawl.CrawlPRs} {
		id := "t-" + string(rune('a'+out.Len()%26))
		rep, err := f(ctx, w.options(id), w.deps(st))
		if err != nil {
			t.Fatal(err)
		}
		rep.Print(&out)
	}
	// A wrong token: GitHub answers 401, and the error names neither token.
	opts := w.options("t-bad")
	opts.Token = "ghp_WrongWrongWrongWrongWrongWrongWrong1"
	_, err := crawl.CrawlIssues(ctx, opts, w.deps(st))
	if err == nil {
		t.Fatal("a wrong token was accepted")
	}
	out.WriteString(err.Error())
	texts := map[string]string{"output": out.String(), "log": w.logs.String()}
	for name, s := range texts {
		if strings.Contains(s, testToken) || strings.Contains(s, testToken[:10]) || strings.Contains(s, opts.Token[:10]) {
			t.Errorf("the token appears in the %s", name)
		}
	}
	files := 0
	err = filepath.WalkDir(st.Dir(), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(testToken[:10])) || bytes.Contains(b, []byte(opts.Token[:10])) {
			t.Errorf("%s holds the token", p)
		}
		return nil
	})
	if err != nil || files < 50 {
		t.Fatalf("walked %d files: %v", files, err)
	}
}

func TestCheckoutHoldsNoFix(t *testing.T) {
	w := newWorld(t)
	st := newStore(t)
	if _, err := crawl.CrawlPRs(context.Background(), w.options("pr-1"), w.deps(st)); err != nil {
		t.Fatal(err)
	}
	c := candidate(t, st, "envgap__acme__widgets-1")
	dir := filepath.Join(t.TempDir(), "work")
	gitURL := "file://" + filepath.ToSlash(w.gitRoot) + "/acme/widgets"
	if err := gitfetch.Checkout(context.Background(), gitURL, c.BaseCommit, dir); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) (string, error) {
		b, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		return strings.TrimSpace(string(b)), err
	}
	if log, err := git("log", "--format=%H"); err != nil || log != c.BaseCommit {
		t.Fatalf("git log = %q, %v; want only %s", log, err, c.BaseCommit)
	}
	for _, fix := range []string{*c.PRHeadCommit, *c.PRMergeCommit} {
		if _, err := git("cat-file", "-e", fix); err == nil {
			t.Errorf("the checkout holds %s of the fix", fix)
		}
	}
	// The gold files turn the checkout into the fixed project.
	for _, f := range c.GoldFiles {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		before, err := os.ReadFile(p)
		if f.Content == nil {
			if err != nil {
				t.Errorf("%s is deleted by the fix but absent at base", f.Path)
			}
			continue
		}
		if err == nil && string(before) == *f.Content {
			t.Errorf("%s is already fixed at base", f.Path)
		}
	}
}

func TestOneCandidatePerInstanceAcrossCrawls(t *testing.T) {
	w := newWorld(t)
	st := newStore(t)
	ctx := context.Background()
	if _, err := crawl.CrawlIssues(ctx, w.options("issues-1"), w.deps(st)); err != nil {
		t.Fatal(err)
	}
	rep, err := crawl.CrawlPRs(ctx, w.options("pr-1"), w.deps(st))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Candidates != 0 || rejectsByRef(t, st, rep)["acme/widgets/pull/3"] != crawl.ReasonAlreadyStored {
		t.Errorf("the repaired candidate of issue #1 was not rejected as already stored: %+v", rep)
	}
	if c := candidate(t, st, "envgap__acme__widgets-1"); c.Set != schemas.SourceReported {
		t.Errorf("stored candidate changed to %s", c.Set)
	}
	if _, err := crawl.CrawlIssues(ctx, w.options("pr-1"), w.deps(st)); err == nil || !strings.Contains(err.Error(), "already names a crawl prs run") {
		t.Errorf("reusing a prs crawl id for issues: %v", err)
	}
}

func TestBadOptions(t *testing.T) {
	w := newWorld(t)
	st := newStore(t)
	for _, tc := range []struct {
		name   string
		mutate func(o *crawl.Options)
		want   string
	}{
		{"crawl id", func(o *crawl.Options) { o.CrawlID = "a/b" }, "crawl id"},
		{"repo", func(o *crawl.Options) { o.Repos = []string{"acme"} }, "owner/name"},
		{"api url", func(o *crawl.Options) { o.APIURL = "ftp://x" }, "api url"},
		{"credentials in api url", func(o *crawl.Options) { o.APIURL = "https://user:secret@x/" }, "GITHUB_TOKEN"},
		{"git template", func(o *crawl.Options) { o.GitURLTemplate = "https://x/repo.git" }, "{repo}"},
		{"no token for GraphQL", func(o *crawl.Options) { o.Token = "" }, "GITHUB_TOKEN"},
	} {
		o := w.options("x")
		tc.mutate(&o)
		if _, err := crawl.CrawlPRs(context.Background(), o, w.deps(st)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to mention %q", tc.name, err, tc.want)
		}
	}
}

func TestReadRepos(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
		lines    []int
	}{
		{"good", "# repos\npallets/flask\n\n  numpy/numpy  # inline comment\nfoo-bar/baz.js\n", []string{"pallets/flask", "numpy/numpy", "foo-bar/baz.js"}, nil},
		{"malformed", "pallets/flask\nflask\nhttps://github.com/a/b\nowner/name/extra\n-bad/x\nok/x.git\n", nil, []int{2, 3, 4, 5, 6}},
		{"repeated", "a/b\nA/B\n", nil, []int{2}},
		{"empty", "# nothing\n\n", nil, []int{0}},
	} {
		got, err := crawl.ReadRepos("repos.txt", strings.NewReader(tc.in))
		if tc.lines == nil {
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s: %v, %v", tc.name, got, err)
			}
			continue
		}
		ps, ok := err.(schemas.Problems)
		if !ok {
			t.Errorf("%s: err %v, want problems", tc.name, err)
			continue
		}
		var lines []int
		for _, p := range ps {
			lines = append(lines, p.Line)
			if p.File != "repos.txt" || !strings.Contains(p.Error(), "repos.txt") {
				t.Errorf("%s: problem %q does not name the file", tc.name, p.Error())
			}
		}
		sort.Ints(lines)
		if !reflect.DeepEqual(lines, tc.lines) {
			t.Errorf("%s: problems on lines %v, want %v (%v)", tc.name, lines, tc.lines, ps)
		}
	}
}

func TestGraphQLURL(t *testing.T) {
	for _, tc := range []struct{ rest, want string }{
		{"https://api.github.com/", "https://api.github.com/graphql"},
		{"https://ghe.example/api/v3/", "https://ghe.example/api/graphql"},
		{"https://ghe.example/api/v3", "https://ghe.example/api/graphql"},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8080/graphql"},
	} {
		u, err := url.Parse(tc.rest)
		if err != nil {
			t.Fatal(err)
		}
		if got := crawl.GraphQLURL(u); got != tc.want {
			t.Errorf("GraphQLURL(%s) = %s, want %s", tc.rest, got, tc.want)
		}
	}
}

// overlayFS serves the files of over, then those of base.
type overlayFS struct {
	base fs.FS
	over map[string]string
}

func (o overlayFS) Open(name string) (fs.File, error) {
	if s, ok := o.over[name]; ok {
		return fstest.MapFS{name: &fstest.MapFile{Data: []byte(s)}}.Open(name)
	}
	return o.base.Open(name)
}

// One breakage, one candidate, across sets: PR #3 closes issues #1 and #10 here, so
// whichever crawl runs first makes the breakage its candidate and the other adds none.
func TestOneCandidatePerBreakageAcrossSets(t *testing.T) {
	base := os.DirFS("testdata/github")
	b, err := fs.ReadFile(base, "graphql/acme/widgets/pull-3.json")
	if err != nil {
		t.Fatal(err)
	}
	two := strings.Replace(string(b), `"number": 99,
        "url": "https://github.com/other/tracker/issues/99",
        "repository": {
          "nameWithOwner": "other/tracker"`, `"number": 10,
        "url": "https://github.com/acme/widgets/issues/10",
        "repository": {
          "nameWithOwner": "acme/widgets"`, 1)
	if two == string(b) {
		t.Fatal("fixture changed: cannot make PR #3 close issue #10")
	}
	fsys := overlayFS{base, map[string]string{"graphql/acme/widgets/pull-3.json": two}}
	ctx := context.Background()

	t.Run("prs first", func(t *testing.T) {
		w := newWorldFS(t, fsys)
		st := newStore(t)
		prs, err := crawl.CrawlPRs(ctx, w.options("pr-1"), w.deps(st))
		if err != nil {
			t.Fatal(err)
		}
		want := []crawl.Breakage{{Repo: "acme/widgets", PullRequest: 3, Issues: []int{1, 10}, Candidate: "envgap__acme__widgets-1"}}
		if !reflect.DeepEqual(prs.Breakages, want) {
			t.Fatalf("breakages %+v, want %+v", prs.Breakages, want)
		}
		issues, err := crawl.CrawlIssues(ctx, w.options("issues-1"), w.deps(st))
		if err != nil {
			t.Fatal(err)
		}
		rj := rejectsByRef(t, st, issues)
		if rj["acme/widgets/issues/10"] != crawl.ReasonDuplicate || rj["acme/widgets/issues/1"] != crawl.ReasonAlreadyStored {
			t.Errorf("issue rejects %v", rj)
		}
		if got := ids(t, st); !reflect.DeepEqual(got, []string{"envgap__acme__webapp-21", "envgap__acme__webapp-23", "envgap__acme__widgets-1"}) {
			t.Errorf("candidates %v", got)
		}
	})
	t.Run("issues first", func(t *testing.T) {
		w := newWorldFS(t, fsys)
		st := newStore(t)
		if _, err := crawl.CrawlIssues(ctx, w.options("issues-1"), w.deps(st)); err != nil {
			t.Fatal(err)
		}
		prs, err := crawl.CrawlPRs(ctx, w.options("pr-1"), w.deps(st))
		if err != nil {
			t.Fatal(err)
		}
		if prs.Candidates != 0 || rejectsByRef(t, st, prs)["acme/widgets/pull/3"] != crawl.ReasonDuplicate || len(prs.Breakages) != 0 {
			t.Errorf("prs crawl: %+v, rejects %v", prs, rejectsByRef(t, st, prs))
		}
		for _, id := range []string{"envgap__acme__widgets-1", "envgap__acme__widgets-10"} {
			if c := candidate(t, st, id); c.Set != schemas.SourceReported {
				t.Errorf("%s is %s", id, c.Set)
			}
		}
	})
}

// TestCrawlAgainWritesBackLostRecord: a candidate record lost from the store (fsck:
// missing) is written back by running the same crawl again, as add and crawl lite do,
// for both crawls; and one-breakage-one-candidate still holds while it is lost. A lost
// record that no crawl wrote (an add's) is not guessed at: the crawl stops and says
// which writer to run again.
func TestCrawlAgainWritesBackLostRecord(t *testing.T) {
	ctx := context.Background()
	lose := func(t *testing.T, st *catalog.Catalog, id string) {
		t.Helper()
		d, _, err := st.CandidateDigest(id)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(st.Dir(), "objects", d.Hex()[:2], d.Hex()[2:])); err != nil {
			t.Fatal(err)
		}
		if _, err := st.CandidateByID(id); err == nil {
			t.Fatalf("%s is not lost", id)
		}
	}
	fsckClean := func(t *testing.T, st *catalog.Catalog) {
		t.Helper()
		rep, err := st.Fsck(ctx)
		if err != nil || !rep.Clean() {
			t.Fatalf("fsck after the crawl again: %v %+v", err, rep)
		}
	}
	for _, tc := range []struct {
		name string
		run  func(context.Context, crawl.Options, crawl.Deps) (*crawl.Report, error)
		id   string
	}{
		{"prs", crawl.CrawlPRs, "envgap__acme__widgets-1"},
		{"issues", crawl.CrawlIssues, "envgap__acme__webapp-21"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			st := newStore(t)
			first, err := tc.run(ctx, w.options("c-1"), w.deps(st))
			if err != nil {
				t.Fatal(err)
			}
			lose(t, st, tc.id)
			again, err := tc.run(ctx, w.options("c-1"), w.deps(st))
			if err != nil {
				t.Fatalf("crawl %s again over a lost record: %v", tc.name, err)
			}
			if !again.Unchanged || again.CandidateSetDigest != first.CandidateSetDigest {
				t.Errorf("crawl again: unchanged %v, set %s; want the first crawl's set %s", again.Unchanged, again.CandidateSetDigest, first.CandidateSetDigest)
			}
			candidate(t, st, tc.id)
			fsckClean(t, st)
		})
	}
	t.Run("breakage while lost", func(t *testing.T) {
		w := newWorld(t)
		st := newStore(t)
		if _, err := crawl.CrawlIssues(ctx, w.options("issues-1"), w.deps(st)); err != nil {
			t.Fatal(err)
		}
		lose(t, st, "envgap__acme__widgets-1")
		rep, err := crawl.CrawlPRs(ctx, w.options("pr-1"), w.deps(st))
		if err != nil {
			t.Fatal(err)
		}
		if rep.Candidates != 0 || rejectsByRef(t, st, rep)["acme/widgets/pull/3"] != crawl.ReasonAlreadyStored {
			t.Errorf("the pull request of the lost Reported candidate's issue: %+v", rep)
		}
	})
	t.Run("lost record of an add", func(t *testing.T) {
		w := newWorld(t)
		st := newStore(t)
		c := testCandidateFor(t, w, st)
		lose(t, st, c.InstanceID)
		_, err := crawl.CrawlPRs(ctx, w.options("pr-1"), w.deps(st))
		if err == nil || !strings.Contains(err.Error(), c.InstanceID) || !strings.Contains(err.Error(), "the add or crawl that stored it") {
			t.Fatalf("crawl over a lost record of an add: %v", err)
		}
	})
}

// testCandidateFor stores, through an add, the Reported candidate a crawl issues of w
// makes for acme/widgets#1, and returns it.
func testCandidateFor(t *testing.T, w *world, st *catalog.Catalog) schemas.Candidate {
	t.Helper()
	tmp := newStore(t)
	if _, err := crawl.CrawlIssues(context.Background(), w.options("issues-1"), w.deps(tmp)); err != nil {
		t.Fatal(err)
	}
	c := candidate(t, tmp, "envgap__acme__widgets-1")
	if _, err := st.AddCandidateSet("add", "add x.jsonl", []schemas.Candidate{c}, nil); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestFsckWalksIntoTheCrawlReport: store fsck follows a crawl report to the candidate set
// it stored: the set object lost is missing under crawls/<id>, which says to run the
// same crawl again.
func TestFsckWalksIntoTheCrawlReport(t *testing.T) {
	w := newWorld(t)
	st := newStore(t)
	rep, err := crawl.CrawlPRs(context.Background(), w.options("pr-1"), w.deps(st))
	if err != nil {
		t.Fatal(err)
	}
	d := rep.CandidateSetDigest
	if err := os.Remove(filepath.Join(st.Dir(), "objects", d.Hex()[:2], d.Hex()[2:])); err != nil {
		t.Fatal(err)
	}
	fr, err := st.Fsck(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, dmg := range fr.Damage {
		if dmg.Kind == "missing" && dmg.Path == "refs/"+data.RefCrawls+"pr-1" && strings.Contains(dmg.Detail, "its candidate set") &&
			strings.Contains(dmg.Detail, "--crawl-id pr-1") {
			found = true
		}
	}
	if !found {
		t.Errorf("fsck with the crawl's candidate set lost: %+v", fr.Damage)
	}
}
