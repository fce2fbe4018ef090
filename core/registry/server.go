package registry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Server is a Proxy listening on one or more TCP addresses.
type Server struct {
	// Proxy is the handler; use it to open sessions.
	Proxy *Proxy
	lns   []net.Listener
	srv   *http.Server
	done  chan error
}

// Listen builds a Proxy from opts and serves it on addr (e.g. "127.0.0.1:0") in the
// background until Close or Shutdown.
func Listen(addr string, opts Options) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("registry proxy: listen %s: %w", addr, err)
	}
	s, err := ServeOn(opts, ln)
	if err != nil {
		ln.Close()
	}
	return s, err
}

// ServeOn builds a Proxy from opts and serves it on every listener in the background
// until Close or Shutdown, which close them.
func ServeOn(opts Options, lns ...net.Listener) (*Server, error) {
	if len(lns) == 0 {
		return nil, errors.New("registry proxy: no listener")
	}
	p, err := New(opts)
	if err != nil {
		return nil, err
	}
	s := &Server{Proxy: p, lns: lns, done: make(chan error, len(lns)),
		srv: &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}}
	for _, ln := range lns {
		go func() {
			err := s.srv.Serve(ln)
			if errors.Is(err, http.ErrServerClosed) {
				err = nil
			}
			s.done <- err
		}()
	}
	return s, nil
}

// Addr returns the (first) address the server listens on.
func (s *Server) Addr() net.Addr { return s.lns[0].Addr() }

// URL returns "http://<addr>" of the first address, the root for clients on this host.
func (s *Server) URL() string { return "http://" + s.lns[0].Addr().String() }

// Shutdown stops accepting requests and waits for active ones until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	return errors.Join(s.srv.Shutdown(ctx), s.wait())
}

// Close stops the server at once.
func (s *Server) Close() error {
	return errors.Join(s.srv.Close(), s.wait())
}

// wait collects the end of every listener's Serve.
func (s *Server) wait() error {
	var errs []error
	for range s.lns {
		errs = append(errs, <-s.done)
	}
	return errors.Join(errs...)
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
		s.srv.Close()
		for range s.lns[1:] {
			<-s.done
		}
		return fmt.Errorf("registry proxy: %w", err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.Shutdown(sctx)
}
