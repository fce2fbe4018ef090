package images

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/envgap/envgap/core/registry"
	"github.com/envgap/envgap/core/sandbox"
)

// BuildOnEngine connects to the Docker Engine API at host (empty: $DOCKER_HOST) for
// building only (image builds run no container on the sandbox network), fills in what a
// command line leaves empty (for the local flavour the npm client's configured registry,
// and the user's cache directory for npm tarballs), and calls Build. When the npm client
// cannot say its registry, a warning goes to warn and the JavaScript image's local build
// will say what to pass. `envgap build-images` and `envgap-images` (the set-up scripts'
// build of the images while envgap itself still compiles) both come here.
func BuildOnEngine(ctx context.Context, host string, o Options, warn io.Writer) ([]Built, error) {
	eng, err := sandbox.ConnectWith(ctx, host, sandbox.Options{NoWall: true})
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	if o.NPMRegistry == "" && o.Flavor != FlavorProduction {
		u, err := registry.NPMConfigRegistry(ctx)
		if err != nil && warn != nil {
			fmt.Fprintf(warn, "warning: %v; npm will not work (pass --npm-registry URL)\n", err)
		}
		o.NPMRegistry = u
	}
	if o.CacheDir == "" {
		if d, err := os.UserCacheDir(); err == nil {
			o.CacheDir = filepath.Join(d, "envgap", "images")
		}
	}
	return Build(ctx, eng.Client(), o)
}

// State is what happened to an image: "built", or "up to date" (its inputs label
// matched, so it was not rebuilt).
func State(b Built) string {
	if b.Skipped {
		return "up to date"
	}
	return "built"
}
