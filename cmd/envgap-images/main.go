// Command envgap-images builds the four evaluation images as `envgap build-images` does
// with its defaults: the engine at $DOCKER_HOST, the common image first, then the four at
// once, each skipped when its inputs label matches.
//
// It exists for the set-up (make demo, make images, make test): it compiles from about a
// third of envgap's packages, so on a fresh machine the images build while envgap itself
// still compiles, instead of after it. Everything else, flags included, is envgap
// build-images.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/envgap/envgap/images"
)

func main() {
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "usage: envgap-images (no arguments; for flags use envgap build-images)")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	built, err := images.BuildOnEngine(ctx, "", images.Options{Progress: os.Stderr}, os.Stderr)
	for _, b := range built {
		fmt.Printf("%s\t%s\t%s\t%s\n", b.Ref, b.ID, images.State(b), b.Duration.Round(1e6))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "envgap-images: %v\n", err)
		if errors.Is(err, context.Canceled) {
			os.Exit(130)
		}
		os.Exit(1)
	}
}
