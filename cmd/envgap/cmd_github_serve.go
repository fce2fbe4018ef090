package main

import (
	"fmt"
	"os"

	"github.com/envgap/envgap/crawl/fakegithub"
	"github.com/spf13/cobra"
)

// newGitHubServeCommand is the demo's GitHub stand-in: a small world (data/demo/github)
// whose repositories are built as bare git repositories and served over git's smart HTTP
// protocol, beside GitHub's REST and GraphQL answers about them.
func newGitHubServeCommand(f *factory) *cobra.Command {
	var world, gitRoot, addr, urlFile string
	c := &cobra.Command{
		Use:   "github-serve --world DIR --git-root DIR",
		Short: "Serve a small world as a GitHub stand-in: REST, GraphQL and git over smart HTTP (the demo)",
		Long: `Build the repositories of a world description (crawl/fakegithub: world.json and the files
beside it) as bare git repositories under --git-root, then serve GitHub's REST and GraphQL
answers about them and the repositories over git's smart HTTP protocol (git http-backend),
until interrupted. crawl issues and crawl prs talk to it unchanged:
--api-url URL --git-url-template 'URL/{owner}/{name}.git'.`,
		Example: "  envgap github-serve --world data/demo/github --git-root out/demo/github --url-file out/demo/github.url",
		Hidden:  true,
		Args:    exactArgs(0),
		RunE: func(c *cobra.Command, args []string) error {
			w, err := fakegithub.ReadWorld(world)
			if err != nil {
				return usageError{err}
			}
			if err := os.RemoveAll(gitRoot); err != nil {
				return err
			}
			b, err := w.Build(gitRoot)
			if err != nil {
				return err
			}
			api, h, err := fakegithub.WorldHandler(b, fakegithub.Options{Errorf: f.logf})
			if err != nil {
				return err
			}
			return serveURL(c.Context(), addr, "", urlFile, h, func(base string) {
				api.BaseURL = base
				fmt.Fprintf(f.Out, "GitHub stand-in for %s (%d repositories) at %s; git at %s/{owner}/{name}.git\n", world, len(w.Repos), api.BaseURL, api.BaseURL)
			})
		},
	}
	c.Flags().StringVar(&world, "world", "", "the world's folder (world.json and its files)")
	c.Flags().StringVar(&gitRoot, "git-root", "", "where the bare repositories are built (emptied first)")
	c.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "where to listen")
	c.Flags().StringVar(&urlFile, "url-file", "", "write the base URL to this file once listening")
	c.MarkFlagRequired("world")
	c.MarkFlagRequired("git-root")
	return c
}
