package registry

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestBlobCaches(t *testing.T) {
	for name, c := range map[string]BlobCache{"mem": NewMemBlobCache(), "store": newStoreCache(t, t.TempDir())} {
		t.Run(name, func(t *testing.T) {
			data := []byte("hello wheel")
			h := sha256hex(data)
			if _, err := c.OpenBlob(h); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("absent blob: %v", err)
			}
			if err := c.PutBlob(bytes.NewReader([]byte("other")), h); !errors.Is(err, ErrHashMismatch) {
				t.Fatalf("mismatch: %v", err)
			}
			if _, err := c.OpenBlob(h); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("mismatched put stored something: %v", err)
			}
			if err := c.PutBlob(bytes.NewReader(data), "NOTHEX"); err == nil {
				t.Fatal("bad key accepted")
			}
			if err := c.PutBlob(bytes.NewReader(data), h); err != nil {
				t.Fatal(err)
			}
			if err := c.PutBlob(bytes.NewReader(data), h); err != nil {
				t.Fatalf("second put: %v", err)
			}
			rc, err := c.OpenBlob(h)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(rc)
			rc.Close()
			if !bytes.Equal(got, data) {
				t.Errorf("got %q", got)
			}
		})
	}
}

func TestRefStores(t *testing.T) {
	for name, s := range map[string]RefStore{"mem": NewMemRefStore(), "store": newStoreCache(t, t.TempDir())} {
		t.Run(name, func(t *testing.T) {
			if _, err := s.GetRef("meta/abc"); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("absent: %v", err)
			}
			for _, v := range []string{"one", "two"} {
				if err := s.PutRef("meta/abc", []byte(v)); err != nil {
					t.Fatal(err)
				}
				if got, err := s.GetRef("meta/abc"); err != nil || string(got) != v {
					t.Fatalf("got %q %v, want %q", got, err, v)
				}
			}
		})
	}
}

func TestArtifactCacheHit(t *testing.T) {
	up := newUpstream(t)
	p, srv := newTestProxy(t, up, nil)
	paths := []struct{ proxy, upstream string }{
		{"/pypi/files/demo/demo-1.0-py3-none-any.whl", "/files/demo-1.0-py3-none-any.whl"},
		{"/pypi/files/demo/demo-1.0-py3-none-any.whl.metadata", "/files/demo-1.0-py3-none-any.whl.metadata"},
		{"/npm/demo-pkg/-/demo-pkg-1.0.0.tgz", npmTarballPath("demo-pkg", "1.0.0")},
		{"/npm/@scope/pkg/-/pkg-1.0.0.tgz", npmTarballPath("@scope/pkg", "1.0.0")},
	}
	for _, cutoff := range []string{testCutoff, "2024-06-01", testCutoff} {
		for _, pp := range paths {
			resp, body := get(t, srv.URL+"/c/"+cutoff+pp.proxy)
			if resp.StatusCode != 200 || !bytes.Equal(body, up.artifact(pp.upstream)) {
				t.Fatalf("%s: %d", pp.proxy, resp.StatusCode)
			}
		}
	}
	for _, pp := range paths {
		if n := up.count(pp.upstream); n != 1 {
			t.Errorf("%s fetched upstream %d times, want 1", pp.upstream, n)
		}
	}
	if n := p.UpstreamRequests()["artifact"]; n != len(paths) {
		t.Errorf("artifact requests = %d, want %d", n, len(paths))
	}
}

func TestStoreCachePersists(t *testing.T) {
	up := newUpstream(t)
	dir := t.TempDir()
	mk := func() *Options {
		c := newStoreCache(t, dir)
		return &Options{Blobs: c, Refs: c}
	}
	for round := 0; round < 2; round++ {
		o := mk()
		_, srv := newTestProxy(t, up, func(opts *Options) { opts.Blobs, opts.Refs = o.Blobs, o.Refs })
		for _, path := range []string{"/npm/demo-pkg/-/demo-pkg-1.1.0.tgz", "/pypi/files/demo/demo-1.0.tar.gz"} {
			if resp, _ := get(t, srv.URL+"/c/"+testCutoff+path); resp.StatusCode != 200 {
				t.Fatalf("round %d %s: %d", round, path, resp.StatusCode)
			}
		}
	}
	// The second proxy (a restart) found both artifacts and the metadata on disk.
	for _, path := range []string{npmTarballPath("demo-pkg", "1.1.0"), "/files/demo-1.0.tar.gz", "/npm/demo-pkg", "/simple/demo/"} {
		if n := up.count(path); n != 1 {
			t.Errorf("%s fetched %d times across restarts, want 1", path, n)
		}
	}
}

func TestTwoCutoffsOneDocument(t *testing.T) {
	up := newUpstream(t)
	_, srv := newTestProxy(t, up, nil)
	type result struct {
		pypiVersions []string
		npmLatest    string
	}
	run := func(cutoff string) result {
		_, b := get(t, srv.URL+"/c/"+cutoff+"/pypi/simple/demo/", "Accept", ctPyPIJSON)
		_, nb := get(t, srv.URL+"/c/"+cutoff+"/npm/demo-pkg", "Accept", npmAccept)
		pk, _ := decodePackument(t, nb)
		return result{decodePage(t, b).Versions, pk.DistTags["latest"]}
	}
	a, b := run("2023-06-15"), run("2024-01-15")
	if strings.Join(a.pypiVersions, ",") != "0.8,0.9,1.0" || strings.Join(b.pypiVersions, ",") != "0.8,0.9,1.0,1.1,2.0" {
		t.Errorf("pypi versions %v / %v", a.pypiVersions, b.pypiVersions)
	}
	if a.npmLatest != "1.1.0" || b.npmLatest != "2.0.0" {
		t.Errorf("npm latest %s / %s", a.npmLatest, b.npmLatest)
	}
	if n := up.count("/simple/demo/"); n != 1 {
		t.Errorf("pypi document fetched %d times, want 1", n)
	}
	if n := up.count("/npm/demo-pkg"); n != 1 {
		t.Errorf("packument fetched %d times, want 1", n)
	}
}

func TestRevalidation(t *testing.T) {
	up := newUpstream(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	_, srv := newTestProxy(t, up, func(o *Options) { o.MetadataTTL = time.Minute; o.Now = clock })
	u := srv.URL + "/c/" + testCutoff + "/npm/demo-pkg"
	for i, step := range []struct {
		advance        time.Duration
		hits, notModif int
	}{
		{0, 1, 0},                // cold
		{30 * time.Second, 1, 0}, // fresh: no upstream request
		{time.Minute, 2, 1},      // stale: conditional request, 304
		{10 * time.Second, 2, 1}, // fresh again
	} {
		mu.Lock()
		now = now.Add(step.advance)
		mu.Unlock()
		resp, body := get(t, u)
		if resp.StatusCode != 200 {
			t.Fatalf("step %d: %d %s", i, resp.StatusCode, body)
		}
		if pk, _ := decodePackument(t, body); pk.DistTags["latest"] != "1.2.0" {
			t.Errorf("step %d: latest %s", i, pk.DistTags["latest"])
		}
		up.mu.Lock()
		hits, cond := up.hits["/npm/demo-pkg"], up.cond["/npm/demo-pkg"]
		up.mu.Unlock()
		if hits != step.hits || cond != step.notModif {
			t.Errorf("step %d: upstream hits %d (304s %d), want %d (%d)", i, hits, cond, step.hits, step.notModif)
		}
	}
}
