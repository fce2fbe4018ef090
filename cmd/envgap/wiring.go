package main

import (
	"context"

	"github.com/envgap/envgap/crawl"
	"github.com/envgap/envgap/crawl/gitfetch"
	"github.com/envgap/envgap/verify"
	"github.com/envgap/envgap/verify/core"
)

// checkoutSource returns how verify materialises GitHub candidates: the files of
// base_commit alone, fetched at depth 1 (no later history, so never the fix), read from
// git's tree with their modes and link targets.
func checkoutSource(urlTemplate string) verify.ProjectSource {
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
