package registry

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"time"
)

func blobOf(n int, fill byte) ([]byte, string) {
	b := bytes.Repeat([]byte{fill}, n)
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:])
}

// TestDiskBlobCacheEvicts: a bounded cache keeps to its bound by removing the least
// recently used blobs, never one used within EvictGrace; a reader that opened a blob
// before its eviction reads it whole; reopening the directory finds what it holds.
func TestDiskBlobCacheEvicts(t *testing.T) {
	dir := t.TempDir()
	c, err := OpenDiskBlobCache(dir, 300)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c.now = func() time.Time { return now }
	var shas []string
	for i := range 3 {
		b, h := blobOf(100, byte('a'+i))
		if err := c.PutBlob(bytes.NewReader(b), h); err != nil {
			t.Fatal(err)
		}
		shas = append(shas, h)
		now = now.Add(time.Second)
	}
	if err := c.PutBlob(strings.NewReader("not it"), shas[0]); err != nil {
		t.Fatalf("a second put of a held blob: %v", err)
	}
	bad, _ := blobOf(10, 'z')
	if err := c.PutBlob(bytes.NewReader(bad), shas[1]); err != nil && !errors.Is(err, ErrHashMismatch) {
		t.Fatal(err) // held already: the bytes are not even read as the blob
	}
	_, hz := blobOf(10, 'y')
	if err := c.PutBlob(bytes.NewReader(bad), hz); !errors.Is(err, ErrHashMismatch) {
		t.Errorf("mismatching bytes: %v", err)
	}
	// All recent: a fourth blob takes the cache over its bound, and nothing goes.
	b3, h3 := blobOf(100, 'd')
	if err := c.PutBlob(bytes.NewReader(b3), h3); err != nil {
		t.Fatal(err)
	}
	if total, ev := c.Size(); total != 400 || ev != 0 {
		t.Fatalf("within the grace: total %d, evicted %d; want 400, 0", total, ev)
	}
	// Later: blob 0 is used again (and held open by a reader); a fifth put evicts the least
	// recently used others down to 90% of the bound.
	now = now.Add(EvictGrace + time.Minute)
	reader, err := c.OpenBlob(shas[1])
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(EvictGrace + time.Minute)
	if rc, err := c.OpenBlob(shas[0]); err != nil {
		t.Fatal(err)
	} else {
		rc.Close()
	}
	b4, h4 := blobOf(100, 'e')
	if err := c.PutBlob(bytes.NewReader(b4), h4); err != nil {
		t.Fatal(err)
	}
	total, ev := c.Size()
	if total > 270 || ev != 3 {
		t.Errorf("after eviction: total %d, evicted %d; want at most 270, 3", total, ev)
	}
	for _, keep := range []string{shas[0], h4} {
		if !c.Has(keep) {
			t.Errorf("%s (recently used) was evicted", keep[:8])
		}
	}
	for _, gone := range []string{shas[1], shas[2], h3} {
		if c.Has(gone) {
			t.Errorf("%s (least recently used) was kept", gone[:8])
		}
		if _, err := c.OpenBlob(gone); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("opening an evicted blob: %v, want fs.ErrNotExist", err)
		}
	}
	got, err := io.ReadAll(reader)
	reader.Close()
	if err != nil || len(got) != 100 || got[0] != 'b' {
		t.Errorf("a reader of an evicted blob read %d bytes (%v)", len(got), err)
	}
	again, err := OpenDiskBlobCache(dir, 300)
	if err != nil {
		t.Fatal(err)
	}
	if total, _ := again.Size(); total != 200 || !again.Has(h4) {
		t.Errorf("reopened: total %d, want 200 with the kept blobs", total)
	}
	if _, err := OpenDiskBlobCache(dir, 0); err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]int64{"20G": 20 << 30, "512MiB": 512 << 20, "1000": 1000, "0": 0, "-1": -1, "1.5K": 1536} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "big", "-2", "10X"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) accepted", in)
		}
	}
}

// TestProxyOverBoundedCache: the proxy over a cache so small that every put evicts what
// is older than the grace serves every request, fetching evicted documents and
// artifacts again, under concurrent requests too.
func TestProxyOverBoundedCache(t *testing.T) {
	up := newUpstream(t)
	c, err := OpenDiskBlobCache(t.TempDir(), 1)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	now := time.Now()
	c.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	_, srv := newTestProxy(t, up, func(o *Options) { o.Blobs = c })
	base := srv.URL + "/c/" + testCutoff
	paths := []string{"/npm/demo-pkg", "/npm/demo-pkg/-/demo-pkg-1.0.0.tgz", "/pypi/simple/demo/", "/pypi/files/demo/demo-1.0-py3-none-any.whl"}
	for round := range 2 {
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				p := paths[g%len(paths)]
				resp, body := get(t, base+p)
				if resp.StatusCode != 200 {
					t.Errorf("round %d %s: %d %s", round, p, resp.StatusCode, body)
				}
			})
		}
		wg.Wait()
		mu.Lock()
		now = now.Add(EvictGrace + time.Minute)
		mu.Unlock()
		// A put after the grace evicts everything older.
		b, h := blobOf(10, byte('0'+round))
		if err := c.PutBlob(bytes.NewReader(b), h); err != nil {
			t.Fatal(err)
		}
	}
	if _, ev := c.Size(); ev == 0 {
		t.Errorf("nothing was evicted")
	}
	if n := up.count("/npm/demo-pkg"); n != 2 {
		t.Errorf("the packument was fetched %d times, want 2 (again after its eviction)", n)
	}
	if n := up.count(npmTarballPath("demo-pkg", "1.0.0")); n != 2 {
		t.Errorf("the tarball was fetched %d times, want 2", n)
	}
}
