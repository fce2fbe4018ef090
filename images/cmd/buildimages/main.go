// Command buildimages builds the EnvGap evaluation images. It is the stand-in
// for `envgap build-images` that images/ci-prepare.sh uses until the CLI
// exists; flags mean the same.
//
//	go run ./images/cmd/buildimages [--base IMAGE] [--only NAME]... [--force] [--json]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/docker/docker/client"

	"github.com/envgap/envgap/images"
)

func main() {
	var opts images.Options
	var only string
	var asJSON, local, production bool
	flag.StringVar(&opts.Base, "base", "", "base image (default "+images.ProductionBase+", falling back to "+images.LocalBase+" when it cannot be pulled)")
	flag.StringVar(&only, "only", "", "comma-separated images or ecosystems to build (default all four)")
	flag.BoolVar(&opts.Force, "force", false, "rebuild even when the inputs label matches")
	flag.BoolVar(&opts.NoCache, "no-cache", false, "do not use the engine's layer cache")
	flag.BoolVar(&local, "local", false, "force the local flavour (npm-registry Node.js, Debian Maven repo, host CA)")
	flag.BoolVar(&production, "production", false, "force the production flavour")
	flag.StringVar(&opts.NPMRegistry, "npm-registry", "", "npm registry for the local flavour (default: npm config get registry)")
	flag.StringVar(&opts.HostCAFile, "host-ca", "", "CA bundle copied into local-flavour images (default "+images.DefaultHostCAFile+"; none to skip)")
	flag.StringVar(&opts.CacheDir, "cache-dir", defaultCache(), "cache for downloaded npm tarballs")
	flag.BoolVar(&asJSON, "json", false, "print the result as JSON")
	flag.Parse()
	if local && production {
		fmt.Fprintln(os.Stderr, "buildimages: --local and --production exclude each other")
		os.Exit(2)
	}
	if local {
		opts.Flavor = images.FlavorLocal
	}
	if production {
		opts.Flavor = images.FlavorProduction
	}
	if only != "" {
		opts.Only = strings.Split(only, ",")
	}
	opts.Progress = os.Stderr

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		fail(err)
	}
	defer cli.Close()
	if _, err := cli.Ping(ctx); err != nil {
		fail(fmt.Errorf("no container engine answers (%v): start one with `make engine` (images/setup-engine.sh) and export the DOCKER_HOST it prints", err))
	}
	built, err := images.Build(ctx, cli, opts)
	if err != nil {
		fail(err)
	}
	if asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(built); err != nil {
			fail(err)
		}
		return
	}
	for _, b := range built {
		state := "built"
		if b.Skipped {
			state = "up to date"
		}
		fmt.Printf("%s\t%s\t%s\t%s\n", b.Ref, b.ID, state, b.Duration.Round(1e6))
	}
}

func defaultCache() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "envgap", "images")
	}
	return ""
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "buildimages:", err)
	os.Exit(1)
}
