package main

import (
	"fmt"

	"github.com/envgap/envgap/images"
	"github.com/spf13/cobra"
)

type buildImagesOptions struct {
	images.Options
	Engine     string
	Local      bool
	Production bool
}

func newBuildImagesCommand(f *factory) *cobra.Command {
	opts := &buildImagesOptions{}
	c := &cobra.Command{
		Use:   "build-images",
		Short: "Build the four evaluation images",
		Long: `Build envgap-python-eval, envgap-javascript-eval, envgap-java-eval and envgap-cpp-eval
(tagged localhost/<name>:latest) through the engine. They are built FROM one common image,
envgap-eval-common, made first: the package lists (downloaded once) and what every image
holds; then --jobs of them at once (default: two per core, at most four). Each image, the
common one too, is labelled with the digest of its build inputs and skipped ("up to date")
when that label already matches. The production base is
ubuntu:22.04; where it can be neither found nor pulled, the local Debian base made by
images/setup-engine.sh is used instead, and a notice says so. Every engine call has a
deadline: an image's build (and the base image's pull) ends after --build-timeout, other
calls after 30 s, so an engine that stops answering ends the command with an error.`,
		Example: "  envgap build-images\n  envgap build-images --only python --force\n  envgap build-images --base localhost/envgap-base:bookworm\n" +
			"  envgap build-images --name-prefix cold- --no-cache   # a second set beside the one in use, from nothing",
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, args []string) error {
			if opts.Local && opts.Production {
				return usageError{fmt.Errorf("--local and --production exclude each other")}
			}
			return f.run(c, opts, func() error { return runBuildImages(c, f, opts) })
		},
	}
	c.Flags().StringVar(&opts.Base, "base", "", "base image (default "+images.ProductionBase+", else "+images.LocalBase+")")
	c.Flags().StringSliceVar(&opts.Only, "only", nil, "images or ecosystems to build (default all four)")
	c.Flags().BoolVar(&opts.Force, "force", false, "rebuild even when the inputs label matches")
	c.Flags().IntVar(&opts.Jobs, "jobs", 0, "images built at once after the common image (default: two per core, at most four)")
	c.Flags().StringVar(&opts.NamePrefix, "name-prefix", "", "put this in front of every image name (e.g. cold-): builds a second set beside the one runs use, to measure a build")
	c.Flags().BoolVar(&opts.NoCache, "no-cache", false, "do not use the engine's layer cache")
	c.Flags().BoolVar(&opts.Local, "local", false, "force the local flavour (npm-registry Node.js, Debian's Maven repository, host CA bundle)")
	c.Flags().BoolVar(&opts.Production, "production", false, "force the production flavour (NodeSource, Maven Central)")
	c.Flags().StringVar(&opts.NPMRegistry, "npm-registry", "", "npm registry for the local flavour (default: the npm client's configured registry)")
	c.Flags().StringVar(&opts.HostCAFile, "host-ca", "", "CA bundle copied into local-flavour images (default "+images.DefaultHostCAFile+"; none to skip)")
	c.Flags().StringVar(&opts.Engine, "engine", "", "Docker Engine API endpoint (default $DOCKER_HOST)")
	c.Flags().DurationVar(&opts.BuildTimeout, "build-timeout", images.DefaultBuildTimeout, "deadline of one image's build (and of the base image's pull); a build past it is stopped")
	return c
}

func runBuildImages(c *cobra.Command, f *factory, opts *buildImagesOptions) error {
	o := opts.Options
	switch {
	case opts.Local:
		o.Flavor = images.FlavorLocal
	case opts.Production:
		o.Flavor = images.FlavorProduction
	}
	if f.Global.Verbose || !f.Global.JSON {
		o.Progress = f.Err
	}
	built, err := images.BuildOnEngine(c.Context(), opts.Engine, o, f.Err)
	if err != nil {
		// An image that failed did not stop the others: say which were built, then fail.
		for _, b := range built {
			fmt.Fprintf(f.Err, "%s\t%s\t%s\n", b.Ref, b.ID, images.State(b))
		}
		return err
	}
	if f.Global.JSON {
		return f.printJSON(built)
	}
	for _, b := range built {
		fmt.Fprintf(f.Out, "%s\t%s\t%s\t%s\n", b.Ref, b.ID, images.State(b), b.Duration.Round(1e6))
	}
	return nil
}
