package verify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/core/egress"
	"github.com/envgap/envgap/core/registry"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/data/catalog"
)

// Env says which engines and registries a verify (or try, or recheck) session uses.
type Env struct {
	Store catalog.Store
	// Engines are Docker Engine API endpoints; empty means DOCKER_HOST.
	Engines []string
	// Registry configures the date-limited proxy (upstreams). Its artifacts are cached in
	// RegistryCacheDir, its small records in the store.
	Registry registry.Options
	// RegistryCacheDir holds the proxy's artifacts and documents, bounded by
	// RegistryCacheBytes (least recently used go first; see registry.DiskBlobCache).
	// Empty: <store>/registry-cache for a store in a directory, else the store itself
	// (unbounded). The store is write-once evidence; the cache is refetchable.
	RegistryCacheDir string
	// RegistryCacheBytes bounds RegistryCacheDir (0: registry.DefaultCacheBytes; negative:
	// no bound).
	RegistryCacheBytes int64
	// ProxyListen is the proxy's listen address; empty means each engine's host address
	// (the gateway of its sandbox network) alone, on one free port: containers reach it,
	// and it is bound to no wider address.
	ProxyListen string
	// ProxyURL, when set, is the proxy's root as containers reach it (for engines on
	// other machines, whose bridge gateway is not this host).
	ProxyURL string
	// Network is each engine's sandbox network (sandbox.Options.Network; empty: the
	// default). An engine without it is refused before any container starts.
	Network string
	// SweepOlderThan removes leftover sandbox containers older than this at start
	// (zero: 3 hours; negative: no sweep).
	SweepOlderThan time.Duration
	Logger         *slog.Logger
}

// Session holds connected engines and a running registry proxy. Close it when done.
type Session struct {
	Stage   *Stage
	engines []*sandbox.Engine
	server  *registry.Server
}

// Open connects to every engine, sweeps leftovers, and starts the registry proxy.
func Open(ctx context.Context, env Env) (*Session, error) {
	if env.Store == nil {
		return nil, errors.New("verify: no store")
	}
	hosts := env.Engines
	if len(hosts) == 0 {
		hosts = []string{""}
	}
	opts := env.Registry
	cache := registry.StoreCache{Store: env.Store}
	if opts.Blobs == nil {
		dir := env.RegistryCacheDir
		if d, ok := env.Store.(interface{ Dir() string }); ok && dir == "" && d.Dir() != "" {
			dir = filepath.Join(d.Dir(), "registry-cache")
		}
		if dir != "" {
			blobs, err := registry.OpenDiskBlobCache(dir, env.RegistryCacheBytes)
			if err != nil {
				return nil, err
			}
			opts.Blobs = blobs
		} else {
			opts.Blobs = cache
		}
	}
	if opts.Refs == nil {
		opts.Refs = cache
	}
	if opts.TempDir == "" {
		opts.TempDir = os.TempDir()
	}
	if opts.Logger == nil {
		opts.Logger = env.Logger
	}
	s := &Session{}
	sweep := env.SweepOlderThan
	if sweep == 0 {
		sweep = 3 * time.Hour
	}
	var gateways []string // each engine's host address, when the proxy listens there
	for _, h := range hosts {
		eng, err := sandbox.ConnectWith(ctx, h, sandbox.Options{Network: env.Network})
		if err != nil {
			s.Close()
			return nil, err
		}
		s.engines = append(s.engines, eng)
		if sweep > 0 {
			if _, err := eng.Sweep(ctx, sandbox.SweepOptions{OlderThan: sweep}); err != nil {
				s.Close()
				return nil, fmt.Errorf("sweeping leftover containers on %s: %w", eng.Host(), err)
			}
		}
		addr := ""
		if env.ProxyURL == "" {
			if addr, err = eng.HostAddress(ctx); err != nil {
				s.Close()
				return nil, fmt.Errorf("engine %s: %w (give --proxy-url)", eng.Host(), err)
			}
		}
		gateways = append(gateways, addr)
	}
	lns, err := proxyListeners(env.ProxyListen, gateways)
	if err != nil {
		s.Close()
		return nil, err
	}
	srv, err := registry.ServeOn(opts, lns...)
	if err != nil {
		for _, ln := range lns {
			ln.Close()
		}
		s.Close()
		return nil, err
	}
	s.server = srv
	_, port, _ := net.SplitHostPort(srv.Addr().String())
	stage := &Stage{Store: env.Store}
	for i, eng := range s.engines {
		proxyURL := env.ProxyURL
		if proxyURL == "" {
			proxyURL = "http://" + net.JoinHostPort(gateways[i], port)
		}
		door := &egress.Door{Host: gateways[i], AdvertiseHost: egress.HostOf(proxyURL), Logger: env.Logger}
		if door.Host != "" {
			door.Listen = sandbox.ListenHost
		} else if h, _, err := net.SplitHostPort(env.ProxyListen); err == nil && h != "" {
			door.Host = h
		}
		stage.Cores = append(stage.Cores, &core.Core{
			Runner: eng, Proxy: srv.Proxy, Store: env.Store, ProxyURL: proxyURL, Door: door,
			// A proxy reached through a given URL may see the containers through a NAT.
			SessionsByID: env.ProxyURL != "",
		})
	}
	s.Stage = stage
	return s, nil
}

// Hosts lists the engines of the session.
func (s *Session) Hosts() []string {
	var out []string
	for _, e := range s.engines {
		out = append(out, e.Host())
	}
	return out
}

// ProxyURL returns the proxy's URL as this host reaches it.
func (s *Session) ProxyURL() string { return strings.Replace(s.server.URL(), "[::]", "127.0.0.1", 1) }

// proxyListeners opens the proxy's listeners: on listen when given, else on each distinct
// gateway address (one port for all).
func proxyListeners(listen string, gateways []string) ([]net.Listener, error) {
	if listen != "" {
		ln, err := net.Listen("tcp", listen)
		if err != nil {
			return nil, fmt.Errorf("registry proxy: listen %s: %w", listen, err)
		}
		return []net.Listener{ln}, nil
	}
	var lns []net.Listener
	seen := map[string]bool{}
	port := "0"
	for _, gw := range gateways {
		if gw == "" || seen[gw] {
			continue
		}
		seen[gw] = true
		ln, err := sandbox.ListenHost(net.JoinHostPort(gw, port))
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, fmt.Errorf("registry proxy: listen on %s, the address containers reach the host at: %w (or give --proxy-listen)", gw, err)
		}
		_, port, _ = net.SplitHostPort(ln.Addr().String())
		lns = append(lns, ln)
	}
	if len(lns) == 0 { // every engine has --proxy-url: this host only
		return proxyListeners("127.0.0.1:0", nil)
	}
	return lns, nil
}

// Close stops the proxy and closes the engines.
func (s *Session) Close() error {
	var errs []error
	if s.server != nil {
		errs = append(errs, s.server.Close())
	}
	for _, e := range s.engines {
		errs = append(errs, e.Close())
	}
	return errors.Join(errs...)
}
