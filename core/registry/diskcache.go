package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultCacheBytes is the size bound of a DiskBlobCache when none is given: 20 GiB.
const DefaultCacheBytes int64 = 20 << 30

// EvictGrace is how recently a blob must have been used to be safe from eviction: a
// request that found a blob opens it well within it.
const EvictGrace = 10 * time.Minute

// DiskBlobCache is a BlobCache in a directory of its own, bounded in size: when a new
// blob takes it over Max, the least recently used blobs go until it is at 90% of Max.
//
// Why not the content store: the store is write-once and its objects are the evidence of
// runs (outputs, records), which nothing may delete; registry artifacts are a cache that
// can always be fetched again, so they live apart, under <dir>/<sha[:2]>/<sha>.
//
// Eviction is safe with concurrent readers: a blob used within EvictGrace (by this
// process, or by another sharing the directory: each use refreshes the file's time) is
// never removed, so a request that found a blob can still open it; an open file stays
// readable after its removal (POSIX unlink), so a download in progress is not cut; and a
// reader that finds a blob gone fetches it again (the proxy treats a missing blob as not
// cached). When everything is recent, the cache stays over its bound until it is not.
type DiskBlobCache struct {
	dir string
	max int64
	now func() time.Time

	mu    sync.Mutex
	total int64
	blobs map[string]*diskBlob
	// Evicted counts blobs removed to keep the bound (tests and benchmarks read it).
	evicted int
}

type diskBlob struct {
	size int64
	used time.Time // last use known to this process
}

// OpenDiskBlobCache opens (creating) the cache in dir with a size bound of max bytes
// (zero: DefaultCacheBytes; negative: no bound), indexing what dir holds already.
func OpenDiskBlobCache(dir string, max int64) (*DiskBlobCache, error) {
	if max == 0 {
		max = DefaultCacheBytes
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("registry cache: %w", err)
	}
	c := &DiskBlobCache{dir: dir, max: max, now: time.Now, blobs: map[string]*diskBlob{}}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.Type().IsRegular() && validHex(name) && filepath.Base(filepath.Dir(p)) == name[:2] {
			if info, err := d.Info(); err == nil {
				c.blobs[name] = &diskBlob{size: info.Size(), used: info.ModTime()}
				c.total += info.Size()
			}
		} else if d.Type().IsRegular() && strings.HasPrefix(name, ".put-") {
			os.Remove(p) // a put cut short by a crash
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("registry cache %s: %w", dir, err)
	}
	return c, nil
}

// ParseSize reads a size bound: bytes, or a number with K, M, G or T (powers of 1024,
// an optional "iB" or "B" after it), e.g. "20G", "512MiB". "0" is the default bound,
// "-1" none.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "i")
	mult := int64(1)
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'K', 'k':
			mult = 1 << 10
		case 'M', 'm':
			mult = 1 << 20
		case 'G', 'g':
			mult = 1 << 30
		case 'T', 't':
			mult = 1 << 40
		}
		if mult > 1 {
			t = t[:n-1]
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || (v < 0 && v != -1) {
		return 0, fmt.Errorf("size %q: want bytes or a number with K, M, G or T (20G, 512MiB), 0 for the default, -1 for no bound", s)
	}
	return int64(v * float64(mult)), nil
}

func (c *DiskBlobCache) path(h string) string { return filepath.Join(c.dir, h[:2], h) }

// Max returns the size bound (negative: none).
func (c *DiskBlobCache) Max() int64 { return c.max }

// Size returns the bytes held and the blobs evicted so far.
func (c *DiskBlobCache) Size() (total int64, evicted int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total, c.evicted
}

// Has reports whether the blob is held (the proxy asks before using what it derived
// from a blob earlier: a blob evicted since is fetched again).
func (c *DiskBlobCache) Has(h string) bool {
	if !validHex(h) {
		return false
	}
	c.mu.Lock()
	_, ok := c.blobs[h]
	c.mu.Unlock()
	if ok {
		return true
	}
	// Another process sharing the directory may have put it.
	info, err := os.Stat(c.path(h))
	if err != nil || !info.Mode().IsRegular() {
		return false
	}
	c.mu.Lock()
	if _, ok := c.blobs[h]; !ok {
		c.blobs[h] = &diskBlob{size: info.Size(), used: info.ModTime()}
		c.total += info.Size()
	}
	c.mu.Unlock()
	return true
}

// OpenBlob implements BlobCache; it marks the blob used.
func (c *DiskBlobCache) OpenBlob(h string) (io.ReadCloser, error) {
	if !validHex(h) {
		return nil, fmt.Errorf("blob %q: not a lower-case hex sha256: %w", h, fs.ErrNotExist)
	}
	f, err := os.Open(c.path(h))
	if err != nil {
		c.mu.Lock()
		if b := c.blobs[h]; b != nil && errors.Is(err, fs.ErrNotExist) {
			c.total -= b.size // removed by another process
			delete(c.blobs, h)
		}
		c.mu.Unlock()
		return nil, fmt.Errorf("blob %s: %w", h, err)
	}
	c.touch(h, f)
	return f, nil
}

// touch records a use; the file's time is refreshed when it is older than a quarter of
// EvictGrace, so other processes sharing the directory see the use too.
func (c *DiskBlobCache) touch(h string, f *os.File) {
	now := c.now()
	c.mu.Lock()
	b := c.blobs[h]
	if b == nil {
		if info, err := f.Stat(); err == nil {
			b = &diskBlob{size: info.Size(), used: info.ModTime()}
			c.blobs[h] = b
			c.total += b.size
		}
	}
	stale := b != nil && now.Sub(b.used) > EvictGrace/4
	if b != nil {
		b.used = now
	}
	c.mu.Unlock()
	if stale {
		os.Chtimes(f.Name(), now, now)
	}
}

// PutBlob implements BlobCache: the bytes are written to a temporary file, checked and
// renamed into place; then the cache is brought back under its bound.
func (c *DiskBlobCache) PutBlob(r io.Reader, h string) error {
	if !validHex(h) {
		return fmt.Errorf("put blob: %q is not a lower-case hex sha256", h)
	}
	if c.Has(h) {
		if f, err := os.Open(c.path(h)); err == nil {
			c.touch(h, f)
			f.Close()
			_, err := io.Copy(io.Discard, r)
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(c.dir, h[:2]), 0o755); err != nil {
		return fmt.Errorf("put blob %s: %w", h, err)
	}
	tmp, err := os.CreateTemp(filepath.Join(c.dir, h[:2]), ".put-")
	if err != nil {
		return fmt.Errorf("put blob %s: %w", h, err)
	}
	defer os.Remove(tmp.Name())
	hw := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, hw), r)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("put blob %s: %w", h, err)
	}
	if got := hex.EncodeToString(hw.Sum(nil)); got != h {
		return fmt.Errorf("put blob %s: got %s: %w", h, got, ErrHashMismatch)
	}
	now := c.now()
	os.Chtimes(tmp.Name(), now, now) // the file's time is its last use
	if err := os.Rename(tmp.Name(), c.path(h)); err != nil {
		return fmt.Errorf("put blob %s: %w", h, err)
	}
	c.mu.Lock()
	if old := c.blobs[h]; old != nil {
		c.total -= old.size
	}
	c.blobs[h] = &diskBlob{size: n, used: now}
	c.total += n
	c.mu.Unlock()
	c.evict()
	return nil
}

// evict removes the least recently used blobs not used within EvictGrace until the cache
// is at 90% of its bound. A candidate's file time is read again first: another process
// may have used it.
func (c *DiskBlobCache) evict() {
	if c.max < 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.total <= c.max {
		return
	}
	target := c.max / 10 * 9
	now := c.now()
	type cand struct {
		h    string
		used time.Time
	}
	var cands []cand
	for h, b := range c.blobs {
		if now.Sub(b.used) > EvictGrace {
			cands = append(cands, cand{h, b.used})
		}
	}
	slices.SortFunc(cands, func(a, b cand) int { return a.used.Compare(b.used) })
	for _, k := range cands {
		if c.total <= target {
			break
		}
		p := c.path(k.h)
		b := c.blobs[k.h]
		if info, err := os.Stat(p); err == nil && now.Sub(info.ModTime()) <= EvictGrace {
			b.used = info.ModTime() // used by another process
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		c.total -= b.size
		delete(c.blobs, k.h)
		c.evicted++
	}
}
