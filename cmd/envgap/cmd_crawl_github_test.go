package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envgap/envgap/crawl/fakegithub"
	"github.com/envgap/envgap/schemas"
)

const cliTestToken = "ghp_CliT3stT0k3nN0tR3alButSh4p3dL1k3On3"

// runGitHubCLI runs envgap with GITHUB_TOKEN set to token (none when empty).
func runGitHubCLI(t *testing.T, token string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := &factory{Global: &globalOptions{}, Out: &out, Err: &errOut, Getenv: func(k string) string {
		if k == envGitHubToken {
			return token
		}
		return ""
	}}
	root := newRootCommand(f)
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	err = root.Execute()
	return out.String(), errOut.String(), err
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCrawlGitHubRejectsBadInput(t *testing.T) {
	store := filepath.Join(t.TempDir(), "s")
	repos := writeFile(t, "repos.txt", "pallets/flask\nflask\n# comment\nnot a repo\n")
	_, _, err := runGitHubCLI(t, "", "--store", store, "crawl", "issues", "--crawl-id", "x", "--repos", repos)
	var ps schemas.Problems
	if !errors.As(err, &ps) || len(ps) != 2 || ps[0].Line != 2 || ps[1].Line != 4 {
		t.Fatalf("err = %v, want problems on lines 2 and 4 (exit 3)", err)
	}
	for _, args := range [][]string{
		{"crawl", "prs", "--repos", repos},
		{"crawl", "prs", "--crawl-id", "x"},
		{"crawl", "prs", "--crawl-id", "x", "--repos", repos, "--since", "last week"},
		{"crawl", "prs", "--crawl-id", "a/b", "--repos", repos},
	} {
		if _, _, err := runGitHubCLI(t, "", append([]string{"--store", store}, args...)...); !errors.As(err, new(usageError)) {
			t.Errorf("%v: err = %v, want a usage error", args, err)
		}
	}
}

func TestCrawlGitHubSkippedRepositoriesArePartial(t *testing.T) {
	fake := fakegithub.New(t, os.DirFS("../../crawl/testdata/github"), fakegithub.Options{Token: cliTestToken})
	store := filepath.Join(t.TempDir(), "s")
	repos := writeFile(t, "repos.txt", "acme/gone\nacme/oldname\n")
	for _, kind := range []string{"issues", "prs"} {
		out, errOut, err := runGitHubCLI(t, cliTestToken, "--store", store, "--json", "crawl", kind,
			"--crawl-id", kind+"-1", "--repos", repos, "--api-url", fake.URL, "--git-url-template", "file:///nonexistent/{repo}")
		if !errors.As(err, new(partialError)) || !strings.Contains(err.Error(), "1 repo_not_found, 1 repo_renamed") {
			t.Fatalf("%s: err = %v, want a partial error naming the skipped repositories (exit 4)", kind, err)
		}
		var rep struct {
			Command    string         `json:"command"`
			Candidates int            `json:"candidates"`
			Rejected   map[string]int `json:"rejected_by_reason"`
			Ref        string         `json:"report_ref"`
			HTTP       struct {
				Requests int `json:"requests"`
			} `json:"http"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%s: %v\n%s", kind, err, out)
		}
		if rep.Command != kind || rep.Candidates != 0 || rep.Rejected["repo_not_found"] != 1 || rep.Rejected["repo_renamed"] != 1 ||
			rep.Ref != "crawls/"+kind+"-1" || rep.HTTP.Requests != 3 {
			t.Errorf("%s: report %+v", kind, rep)
		}
		if strings.Contains(out+errOut+err.Error(), cliTestToken[:10]) {
			t.Errorf("%s: the token was printed", kind)
		}
	}
	// Without a token GitHub (here: the fake, which wants one) refuses, and the command
	// says why the crawl could not run.
	_, errOut, err := runGitHubCLI(t, "", "--store", store, "crawl", "issues", "--crawl-id", "anon", "--repos", repos, "--api-url", fake.URL)
	if err == nil || !strings.Contains(errOut, "GITHUB_TOKEN is not set") || !strings.Contains(err.Error(), "401") {
		t.Errorf("no token: err = %v, stderr %q", err, errOut)
	}
}
