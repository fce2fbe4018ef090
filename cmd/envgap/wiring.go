package main

import (
	"context"
	"fmt"
	"os"

	"github.com/envgap/envgap/crawl"
	"github.com/envgap/envgap/crawl/gitfetch"
	"github.com/envgap/envgap/lib/shell"
	"github.com/envgap/envgap/verify/core"
	"github.com/envgap/envgap/verify/registry"
)

// checkoutSource returns how verify materialises GitHub candidates: the files of
// base_commit alone, fetched at depth 1 (no later history, so never the fix), read from
// git's tree with their modes and link targets.
func checkoutSource(urlTemplate string) core.ProjectSource {
	return func(ctx context.Context, repo, commit string) ([]core.File, error) {
		url, err := crawl.GitURL(urlTemplate, repo)
		if err != nil {
			return nil, err
		}
		tree, err := gitfetch.ReadCommit(ctx, url, commit, "")
		if err != nil {
			return nil, err
		}
		files := make([]core.File, len(tree))
		for i, f := range tree {
			files[i] = core.File{Path: f.Path, Content: f.Content, Mode: f.Mode.Perm(), Link: f.Link}
		}
		return files, nil
	}
}

// reproCommand is how an agent runs repro_command: this binary's agent-repro ("" when
// the binary cannot name itself: no repro server then).
func reproCommand() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return shell.Quote(exe) + " agent-repro"
}

// npmRegistry returns the npm registry a command uses: the URL given on its command line,
// else the npm client's configured registry (asked once, here, and passed down to the
// registry proxy, the audit or the image build).
func npmRegistry(ctx context.Context, given string) (string, error) {
	if given != "" {
		return given, nil
	}
	return registry.NPMConfigRegistry(ctx)
}

// npmRegistryOrWarn is npmRegistry for commands that can do without npm: when the npm
// client cannot say, it warns and returns "" (npm requests through the proxy then fail
// with a message saying to pass the URL).
func npmRegistryOrWarn(ctx context.Context, f *factory, given, flag string) string {
	u, err := npmRegistry(ctx, given)
	if err != nil {
		fmt.Fprintf(f.Err, "warning: %v; npm will not work (pass %s URL)\n", err, flag)
	}
	return u
}
