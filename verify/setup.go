package verify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/verify/core"
	"github.com/envgap/envgap/verify/registry"
	"github.com/envgap/envgap/verify/sandbox"
)

// Env says which engines and registries a verify (or try, or recheck) session uses.
type Env struct {
	Store *data.Store
	// Engines are Docker Engine API endpoints; empty means DOCKER_HOST.
	Engines []string
	// Registry configures the date-limited proxy (upstreams). Its caches default to the
	// store.
	Registry registry.Options
	// ProxyListen is the proxy's listen address; empty means all interfaces on a free
	// port, reached by containers through each engine's host address.
	ProxyListen string
	// ProxyURL, when set, is the proxy's root as containers reach it (for engines on
	// other machines, whose bridge gateway is not this host).
	ProxyURL string
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
	cache := core.StoreCache{Store: env.Store}
	if opts.Blobs == nil {
		opts.Blobs = cache
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
	listen := env.ProxyListen
	if listen == "" {
		listen = ":0"
	}
	s := &Session{}
	srv, err := registry.Listen(listen, opts)
	if err != nil {
		return nil, err
	}
	s.server = srv
	_, port, _ := net.SplitHostPort(srv.Addr().String())
	sweep := env.SweepOlderThan
	if sweep == 0 {
		sweep = 3 * time.Hour
	}
	stage := &Stage{Store: env.Store}
	for _, h := range hosts {
		eng, err := sandbox.Connect(ctx, h)
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
		proxyURL := env.ProxyURL
		if proxyURL == "" {
			addr, err := eng.HostAddress(ctx)
			if err != nil {
				s.Close()
				return nil, fmt.Errorf("engine %s: %w (give --proxy-url)", eng.Host(), err)
			}
			proxyURL = "http://" + net.JoinHostPort(addr, port)
		}
		stage.Cores = append(stage.Cores, &core.Core{
			Runner: eng, Proxy: srv.Proxy, Store: env.Store, ProxyURL: proxyURL,
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
