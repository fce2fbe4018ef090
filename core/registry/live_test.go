package registry

import (
	"context"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/internal/testenv"
	"github.com/envgap/envgap/schemas"
	"github.com/envgap/envgap/schemas/semver"
)

// TestLiveNPM goes through the npm registry the npm client is configured with. Its
// expectation is computed from the packument that registry serves now (a mirror's times
// are its own publish times, not history), never from remembered dates.
func TestLiveNPM(t *testing.T) {
	if testing.Short() {
		t.Skip("live registry skipped in -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	upstreamRoot, err := NPMConfigRegistry(ctx)
	if err != nil {
		testenv.Missing(t, "no npm registry configured: %v", err)
	}
	const pkg = "chalk"
	req, _ := http.NewRequestWithContext(ctx, "GET", strings.TrimSuffix(upstreamRoot, "/")+"/"+pkg, nil)
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Skipf("npm registry unreachable: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Skipf("npm registry answered %d", resp.StatusCode)
	}
	var doc struct {
		DistTags map[string]string `json:"dist-tags"`
		Versions map[string]struct {
			Dist struct{ Integrity string } `json:"dist"`
		} `json:"versions"`
		Time map[string]string `json:"time"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("upstream packument: %v", err)
	}
	// Cut-off: the publish time of the median stable version (inclusive boundary).
	type vt struct {
		v string
		t time.Time
	}
	var stable []vt
	for v := range doc.Versions {
		tm, ok := parseRegistryTime(doc.Time[v])
		if sv, ok2 := semver.Parse(v); ok && ok2 && !sv.Prerelease() {
			stable = append(stable, vt{v, tm})
		}
	}
	if len(stable) < 3 {
		t.Skipf("%s has too few timed stable versions", pkg)
	}
	slices.SortFunc(stable, func(a, b vt) int { return a.t.Compare(b.t) })
	cutoff := schemas.CutoffAt(stable[len(stable)/2].t)
	var wantKept []string
	for v := range doc.Versions {
		if tm, ok := parseRegistryTime(doc.Time[v]); ok && cutoff.Includes(tm) {
			wantKept = append(wantKept, v)
		}
	}
	slices.Sort(wantKept)
	upLatest, _ := semver.Parse(doc.DistTags["latest"])
	wantLatest := ""
	var best semver.Version
	for _, v := range wantKept {
		sv, ok := semver.Parse(v)
		if !ok || sv.Prerelease() || sv.Compare(upLatest) > 0 {
			continue
		}
		if wantLatest == "" || sv.Compare(best) > 0 {
			wantLatest, best = v, sv
		}
	}

	t.Logf("cut-off %s: %d of %d versions kept, latest %s (upstream latest %s)", cutoff.String(), len(wantKept), len(doc.Versions), wantLatest, doc.DistTags["latest"])
	p, err := New(Options{PyPIUpstream: "http://127.0.0.1:9/simple/", NPMUpstream: upstreamRoot, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	defer srv.Close()
	s := localSession(t, p, cutoff)
	for _, accept := range []string{"application/json", npmAccept} {
		r, b := get(t, s.BaseURL(srv.URL)+"/npm/"+pkg, "Accept", accept)
		if r.StatusCode != 200 {
			t.Fatalf("proxy: %d %s", r.StatusCode, b)
		}
		pk, _ := decodePackument(t, b)
		if got := slices.Sorted(maps.Keys(pk.Versions)); !slices.Equal(got, wantKept) {
			t.Errorf("Accept %q: versions %v, want %v", accept, got, wantKept)
		}
		if pk.DistTags["latest"] != wantLatest {
			t.Errorf("Accept %q: latest %q, want %q (cut-off %s)", accept, pk.DistTags["latest"], wantLatest, cutoff.String())
		}
	}
	// The tarball of the expected latest comes through the proxy with upstream's integrity.
	r, tgz := get(t, s.BaseURL(srv.URL)+"/npm/"+pkg+"/-/"+pkg+"-"+wantLatest+".tgz")
	sum := sha512.Sum512(tgz)
	if r.StatusCode != 200 || "sha512-"+base64.StdEncoding.EncodeToString(sum[:]) != doc.Versions[wantLatest].Dist.Integrity {
		t.Errorf("tarball %s: %d, integrity mismatch", wantLatest, r.StatusCode)
	}
	// And the npm client agrees.
	if _, err := exec.LookPath("npm"); err == nil {
		env := clientEnv(t, s.Root(srv.URL), cutoff, "npm_config_before")
		out, err := run(t, t.TempDir(), env, "npm", "view", pkg, "version")
		if err != nil || strings.TrimSpace(out) != wantLatest {
			t.Errorf("npm view %s version = %q (%v), want %s", pkg, out, err, wantLatest)
		}
	}
	if rec := s.Close(); len(rec.Errors) != 0 {
		t.Errorf("proxy errors: %+v", rec.Errors)
	}
}
