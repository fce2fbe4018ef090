package registry

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/envgap/envgap/schemas"
)

func TestListenAndServe(t *testing.T) {
	up := newUpstream(t)
	c := newStoreCache(t, t.TempDir())
	s, err := Listen("127.0.0.1:0", Options{PyPIUpstream: up.pypiURL(), NPMUpstream: up.npmURL(), Blobs: c, Refs: c})
	if err != nil {
		t.Fatal(err)
	}
	sess := localSession(t, s.Proxy, schemas.CutoffAt(time.Date(2023, 7, 30, 12, 0, 0, 0, time.UTC)))
	resp, body := get(t, sess.BaseURL(s.URL())+"/npm/demo-pkg")
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := http.Get(s.URL() + "/"); err == nil {
		t.Errorf("server still answers after Close")
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, "127.0.0.1:0", Options{PyPIUpstream: up.pypiURL(), NPMUpstream: up.npmURL()})
	}()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve after cancel: %v", err)
	}
	if err := Serve(context.Background(), "256.0.0.1:1", Options{NPMUpstream: up.npmURL()}); err == nil {
		t.Errorf("Serve on a bad address succeeded")
	}
	if _, err := New(Options{PyPIUpstream: "ftp://x", NPMUpstream: up.npmURL()}); err == nil {
		t.Errorf("New accepted an ftp upstream")
	}
}
