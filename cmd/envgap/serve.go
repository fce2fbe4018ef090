package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"time"
)

// serveURL is the serve loop of the demo's stand-ins (github-serve, model-serve): it
// listens on addr, writes the base URL (the listener's http URL and path) to urlFile when
// set, hands it to ready (to print it, or to give it to the handler), then serves h until
// ctx ends.
func serveURL(ctx context.Context, addr, path, urlFile string, h http.Handler, ready func(base string)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	base := "http://" + ln.Addr().String() + path
	if urlFile != "" {
		if err := os.WriteFile(urlFile, []byte(base+"\n"), 0o644); err != nil {
			ln.Close()
			return err
		}
	}
	ready(base)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
