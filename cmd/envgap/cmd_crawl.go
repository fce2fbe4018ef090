package main

import "github.com/spf13/cobra"

// newCrawlCommand is the parent of the crawl commands: issues, prs (GitHub) and lite (the
// coding-agent study). Each subcommand stores one candidate set.
func newCrawlCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "crawl",
		Short: "Find candidates: GitHub issues, environment-only pull requests, the Lite study",
	}
}
