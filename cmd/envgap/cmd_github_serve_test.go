package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/internal/testenv"
)

// TestGitHubServeCrawl runs the demo's GitHub stand-in as make demo does (github-serve on
// data/demo/github) and crawl prs and crawl issues against it through the command line.
func TestGitHubServeCrawl(t *testing.T) {
	testenv.Tool(t, "git")
	dir := t.TempDir()
	urlFile := filepath.Join(dir, "github.url")
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut bytes.Buffer
	f := &factory{Global: &globalOptions{}, Out: &out, Err: &errOut, Getenv: func(string) string { return "" }}
	root := newRootCommand(f)
	root.SetArgs([]string{"github-serve", "--world", "../../data/demo/github", "--git-root", filepath.Join(dir, "git"), "--url-file", urlFile})
	served := make(chan error, 1)
	go func() { served <- root.ExecuteContext(ctx) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("github-serve: %v", err)
		}
	}()
	var base string
	for i := 0; i < 300 && base == ""; i++ {
		if b, err := os.ReadFile(urlFile); err == nil {
			base = strings.TrimSpace(string(b))
		} else {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if base == "" {
		t.Fatalf("github-serve wrote no URL")
	}
	store := filepath.Join(dir, "store")
	for _, kind := range []string{"prs", "issues"} {
		got, err := runCLI(t, "--store", store, "crawl", kind, "--crawl-id", kind+"-demo", "--repos", "../../data/demo/github/repos.txt",
			"--api-url", base+"/", "--git-url-template", base+"/{owner}/{name}.git")
		if err != nil {
			t.Fatalf("crawl %s: %v\n%s", kind, err, got)
		}
		if !strings.Contains(got, "1 candidates (1 new)") {
			t.Errorf("crawl %s: %s", kind, got)
		}
	}
	got, err := runCLI(t, "--store", store, "--json", "status")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"repaired": {`, `"reported": {`, `"total_candidates": 2`} {
		if !strings.Contains(got, want) {
			t.Errorf("status lacks %s:\n%s", want, got)
		}
	}
}
