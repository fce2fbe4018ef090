package main

import (
	"context"
	"os"

	"github.com/envgap/envgap/crawl"
	"github.com/envgap/envgap/verify"
	"github.com/envgap/envgap/verify/core"
)

// checkoutSource returns how verify materialises GitHub candidates: the crawl stage's
// checkout of base_commit alone (depth 1, no later history), read as project files.
func checkoutSource(urlTemplate string) verify.ProjectSource {
	return func(ctx context.Context, repo, commit string) ([]core.File, error) {
		url, err := crawl.GitURL(urlTemplate, repo)
		if err != nil {
			return nil, err
		}
		dir, err := os.MkdirTemp("", "envgap-checkout-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		if err := crawl.Checkout(ctx, url, commit, dir); err != nil {
			return nil, err
		}
		return verify.ReadDir(dir)
	}
}
