package images

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/client"
)

// stallingEngine serves the Docker Engine API's image endpoints the way an engine does
// (the docker client talks to it over HTTP), except that the call named by stall never
// answers: it writes what it has and then waits until the client gives up. gone is closed
// when the client has closed that request (for a build, the engine then stops it).
func stallingEngine(t *testing.T, stall string) (*client.Client, <-chan struct{}) {
	t.Helper()
	gone := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wait := func() {
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
			<-r.Context().Done()
			close(gone)
		}
		switch {
		case strings.HasSuffix(r.URL.Path, "/images/"+LocalBase+"/json"):
			if stall == "inspect" {
				wait()
				return
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"Id": "sha256:" + strings.Repeat("b", 64), "Config": map[string]any{}})
		case strings.HasSuffix(r.URL.Path, "/json") && strings.Contains(r.URL.Path, "/images/"):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			json.NewEncoder(w).Encode(map[string]string{"message": "no such image"})
		case strings.HasSuffix(r.URL.Path, "/build") && stall == "build":
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]string{"stream": "STEP 1/9: FROM " + LocalBase + "\n"})
			wait()
		default:
			http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusInternalServerError)
		}
	}))
	t.Cleanup(srv.Close)
	cli, err := client.NewClientWithOpts(client.WithHost("tcp://"+strings.TrimPrefix(srv.URL, "http://")), client.WithVersion("1.41"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli, gone
}

// TestBuildDeadlines: an engine that stops answering in the middle of a build, or at an
// inspect, ends Build with ErrDeadline naming what did not finish, and the request is
// closed (so the engine stops the build) instead of Build waiting forever.
func TestBuildDeadlines(t *testing.T) {
	ctx := context.Background()
	t.Run("build", func(t *testing.T) {
		eng, gone := stallingEngine(t, "build")
		_, err := Build(ctx, eng, Options{Base: LocalBase, Only: []string{"cpp"}, HostCAFile: "none", BuildTimeout: time.Second})
		if !errors.Is(err, ErrDeadline) || !strings.Contains(err.Error(), "envgap-eval-common: the build (--build-timeout) did not finish within its deadline (1s)") {
			t.Fatalf("Build on an engine that stalls in the build: %v", err)
		}
		<-gone // the build request was closed: the engine stops the build
	})
	t.Run("inspect", func(t *testing.T) {
		defer func(d time.Duration) { callTimeout = d }(callTimeout)
		callTimeout = 500 * time.Millisecond
		eng, gone := stallingEngine(t, "inspect")
		_, err := Build(ctx, eng, Options{Base: LocalBase, Only: []string{"cpp"}, HostCAFile: "none"})
		if !errors.Is(err, ErrDeadline) || !strings.Contains(err.Error(), "inspecting "+LocalBase+" did not finish within its deadline") {
			t.Fatalf("Build on an engine that does not answer an inspect: %v", err)
		}
		<-gone
	})
}
