package main

import (
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/envgap/envgap/core/registry"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
	"github.com/spf13/cobra"
)

type registryServeOptions struct {
	Addr         string
	PyPIUpstream string
	NPMUpstream  string
	Cache        string
	Cutoff       string
}

func newRegistryCommand(f *factory) *cobra.Command {
	c := &cobra.Command{Use: "registry", Short: "The date-limited PyPI and npm proxy"}
	opts := &registryServeOptions{}
	serve := &cobra.Command{
		Use:   "serve",
		Short: "Run the date-limited registry proxy on its own",
		Long: `Serve PyPI (PEP 503/691 simple API) and npm (packuments and tarballs) filtered to what
was published at or before a cut-off carried in the URL path:

  http://ADDR/c/<cutoff>/pypi/simple/   (pip: --index-url)
  http://ADDR/c/<cutoff>/npm/           (npm: --registry)

The cut-off is RFC 3339 with an offset (2023-07-30T12:48:33Z) or a bare date (the end of
that day, UTC). Upstream faults answer 502, never 404. Artifacts are cached by sha256 in
<store>/registry-cache, bounded by $ENVGAP_REGISTRY_CACHE_SIZE (default 20G; least
recently used go first).

This stand-alone proxy serves any cut-off a URL names (for a person on this host); with
--cutoff it serves that cut-off alone and refuses (403) a URL naming another. The proxy
envgap's runs use is another: it serves only within the registry session the harness
opened for each container, at the run's cut-off.`,
		Example: "  envgap registry serve --addr 127.0.0.1:8080\n  pip install --index-url http://127.0.0.1:8080/c/2023-07-30/pypi/simple/ cython",
		Args:    exactArgs(0),
		RunE: func(c *cobra.Command, args []string) error {
			return f.run(c, opts, func() error { return runRegistryServe(c, f, opts) })
		},
	}
	serve.Flags().StringVar(&opts.Addr, "addr", "127.0.0.1:8080", "listen address")
	serve.Flags().StringVar(&opts.PyPIUpstream, "pypi-upstream", "", "PEP 691 index to filter (default "+registry.DefaultPyPIUpstream+")")
	serve.Flags().StringVar(&opts.NPMUpstream, "npm-upstream", "", "npm registry to filter (default: the npm client's configured registry)")
	serve.Flags().StringVar(&opts.Cutoff, "cutoff", "", "serve this cut-off alone (RFC 3339 or a date); default: any cut-off a URL names")
	serve.Flags().StringVar(&opts.Cache, "cache", "", "store directory to cache in instead of --store (a store like every other command opens)")
	c.AddCommand(serve)
	return c
}

// runRegistryServe serves the stand-alone date-limited proxy until the command's context ends.
func runRegistryServe(c *cobra.Command, f *factory, opts *registryServeOptions) error {
	ro := registry.Options{PyPIUpstream: opts.PyPIUpstream, NPMUpstream: npmRegistryOrWarn(c.Context(), f, opts.NPMUpstream, "--npm-upstream"),
		Logger: slog.New(slog.NewTextHandler(f.Err, nil)), AnyCutoff: true}
	if opts.Cutoff != "" {
		cut, err := schemas.ParseCutoff(opts.Cutoff)
		if err != nil {
			return usageError{fmt.Errorf("--cutoff: %w", err)}
		}
		ro.Cutoff, ro.AnyCutoff = cut, false
	}
	st, err := f.OpenStore()
	if opts.Cache != "" {
		st, err = catalog.Open(opts.Cache)
	}
	if err != nil {
		return err
	}
	cache := registry.StoreCache{Store: st}
	ro.Blobs, ro.Refs = cache, cache
	if d := st.Dir(); d != "" {
		size := int64(0)
		if v := f.Getenv(EnvRegistryCacheSize); v != "" {
			if size, err = registry.ParseSize(v); err != nil {
				return usageError{fmt.Errorf("$%s: %w", EnvRegistryCacheSize, err)}
			}
		}
		if ro.Blobs, err = registry.OpenDiskBlobCache(filepath.Join(d, "registry-cache"), size); err != nil {
			return err
		}
	}
	return registry.Serve(c.Context(), opts.Addr, ro)
}
