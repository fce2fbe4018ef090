package crawl

import (
	"context"

	"github.com/envgap/envgap/crawl/gitfetch"
)

// Checkout materialises a GitHub candidate's project: dir (absent or empty) becomes a git
// repository holding commit alone, fetched with depth 1 from gitURL, checked out with
// HEAD detached, with no remote and no later history (so not the fix). It is
// gitfetch.Checkout; the evaluation core may import crawl/gitfetch directly, which
// depends on nothing else of envgap.
func Checkout(ctx context.Context, gitURL, commit, dir string) error {
	return gitfetch.Checkout(ctx, gitURL, commit, dir)
}

// GitURL expands a --git-url-template ({repo}, {owner}, {name}) for a repository.
func GitURL(template, repo string) (string, error) {
	if template == "" {
		template = gitfetch.DefaultURLTemplate
	}
	return gitfetch.URL(template, repo)
}
