package registry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Server is a Proxy listening on a TCP address.
type Server struct {
	// Proxy is the handler; use it to open sessions.
	Proxy *Proxy
	ln    net.Listener
	srv   *http.Server
	done  chan error
}

// Listen builds a Proxy from opts and serves it on addr (e.g. "127.0.0.1:0") in the
// background until Close or Shutdown.
func Listen(addr string, opts Options) (*Server, error) {
	p, err := New(opts)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("registry proxy: listen %s: %w", addr, err)
	}
	s := &Server{Proxy: p, ln: ln, done: make(chan error, 1),
		srv: &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}}
	go func() {
		err := s.srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.done <- err
	}()
	return s, nil
}

// Addr returns the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// URL returns "http://<addr>", the root for clients on this host.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Shutdown stops accepting requests and waits for active ones until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if serr := <-s.done; err == nil {
		err = serr
	}
	return err
}

// Close stops the server at once.
func (s *Server) Close() error {
	err := s.srv.Close()
	if serr := <-s.done; err == nil {
		err = serr
	}
	return err
}

// Serve runs the proxy on addr until ctx is cancelled: the entry point of
// `envgap registry serve --addr ADDR`.
func Serve(ctx context.Context, addr string, opts Options) error {
	s, err := Listen(addr, opts)
	if err != nil {
		return err
	}
	pypi, npm, npmErr := s.Proxy.Upstreams()
	s.Proxy.log.Info("registry proxy listening", "url", s.URL(), "pypi_upstream", pypi, "npm_upstream", npm, "npm_error", npmErr)
	select {
	case <-ctx.Done():
	case err := <-s.done:
		return fmt.Errorf("registry proxy: %w", err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.Shutdown(sctx)
}
