package verify

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/core/registry"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
)

// A re-verify of unchanged GitHub candidates fetches no project: not for candidates that
// carry their commands, and not for those whose commands were generated (memoised).
func TestReverifyFetchesNothing(t *testing.T) {
	st, _ := catalog.Open(t.TempDir())
	url := "https://github.com/o/r/issues/1"
	mk := func(n int64, withCommands bool) schemas.Candidate {
		c := schemas.Candidate{
			Ident: schemas.Ident{InstanceID: schemas.InstanceID("o/r", n)},
			Set:   schemas.SourceRepaired,
			Spec: schemas.Spec{
				Repo:       "o/r",
				BaseCommit: strings.Repeat("a", 40), CreatedAt: "2026-01-01T00:00:00Z", RegistryDate: "2026-01-02T00:00:00Z",
				Ecosystem:            schemas.EcosystemJavaScript,
				GoldFiles:            []schemas.File{{Path: "package.json", Content: str(`{"dependencies":{"x":"1.0.0"}}`)}},
				ExpectedFailureRegex: "Cannot find module 'x'",
			},
			Origin: schemas.Origin{IssueNumber: n, IssueURL: &url},
		}
		if withCommands {
			c.ResolveCommand, c.ReproCommand, c.RunCommand = "npm install", "node index.js", "node index.js"
		}
		return c
	}
	st.AddCandidateSet("test", "test", []schemas.Candidate{mk(1, true), mk(2, false)}, nil)
	var fetches atomic.Int64
	checkout := func(ctx context.Context, repo, commit string) ([]core.File, error) {
		fetches.Add(1)
		return []core.File{{Path: "package.json", Content: []byte(`{"name":"r","main":"index.js"}`), Mode: 0o644},
			{Path: "index.js", Content: []byte("require('x')\n"), Mode: 0o644}}, nil
	}
	proxy, err := registry.New(registry.Options{NPMUpstream: "http://127.0.0.1:1/"})
	if err != nil {
		t.Fatal(err)
	}
	stage := &Stage{Store: st, Cores: []*core.Core{{Runner: &fakeRunner{}, Proxy: proxy, ProxyURL: "http://127.0.0.1:1", Store: st}}}
	ctx := context.Background()
	rep, err := stage.Run(ctx, Options{Checkout: checkout})
	if err != nil || rep.Ran != 2 {
		t.Fatalf("first verify: %+v %v", rep, err)
	}
	if n := fetches.Load(); n != 2 {
		t.Errorf("first verify fetched %d projects, want one per candidate", n)
	}
	rep, err = stage.Run(ctx, Options{IDs: []string{mk(1, true).InstanceID, mk(2, false).InstanceID}, Checkout: checkout})
	if err != nil || rep.Cached != 2 {
		t.Fatalf("re-verify: %+v %v", rep, err)
	}
	if n := fetches.Load(); n != 2 {
		t.Errorf("re-verify of unchanged candidates fetched %d more projects", n-2)
	}
}
