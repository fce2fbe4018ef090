package crawl

import "github.com/envgap/envgap/crawl/gitfetch"

// GitURL expands a --git-url-template ({repo}, {owner}, {name}) for a repository.
func GitURL(template, repo string) (string, error) {
	if template == "" {
		template = gitfetch.DefaultURLTemplate
	}
	return gitfetch.URL(template, repo)
}
