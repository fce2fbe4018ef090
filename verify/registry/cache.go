package registry

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// BlobCache stores registry artifacts (wheels, sdists, npm tarballs, metadata files and the
// raw upstream metadata documents) by the SHA-256 of their bytes. Implementations must be
// safe for concurrent use.
type BlobCache interface {
	// OpenBlob opens the blob with the given lower-case hex SHA-256. When the blob is absent
	// the error satisfies errors.Is(err, fs.ErrNotExist).
	OpenBlob(sha256hex string) (io.ReadCloser, error)
	// PutBlob stores the bytes of r under sha256hex. It must verify the hash and store
	// nothing (returning an error wrapping ErrHashMismatch) when it does not match.
	PutBlob(r io.Reader, sha256hex string) error
}

// RefStore holds small mutable records: cached-document validators (ETag, Last-Modified,
// digest of the body) and aliases from other digests (npm's sha512 integrity) or URLs to
// SHA-256. Keys are short ASCII strings made of [a-z0-9/-]. Safe for concurrent use.
type RefStore interface {
	// GetRef returns the value stored under key, or an error satisfying
	// errors.Is(err, fs.ErrNotExist).
	GetRef(key string) ([]byte, error)
	// PutRef stores val under key, replacing any earlier value.
	PutRef(key string, val []byte) error
}

// ErrHashMismatch reports bytes whose digest is not the one they were stored or fetched under.
var ErrHashMismatch = errors.New("digest mismatch")

func validHex(h string) bool {
	if len(h) != 64 {
		return false
	}
	for _, c := range h {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// MemBlobCache is an in-memory BlobCache for tests and short-lived proxies.
type MemBlobCache struct {
	mu    sync.RWMutex
	blobs map[string][]byte
}

// NewMemBlobCache returns an empty in-memory BlobCache.
func NewMemBlobCache() *MemBlobCache { return &MemBlobCache{blobs: map[string][]byte{}} }

// OpenBlob implements BlobCache.
func (m *MemBlobCache) OpenBlob(h string) (io.ReadCloser, error) {
	m.mu.RLock()
	b, ok := m.blobs[h]
	m.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("blob %s: %w", h, fs.ErrNotExist)
	}
	return readSeekNopCloser{bytes.NewReader(b)}, nil
}

// PutBlob implements BlobCache.
func (m *MemBlobCache) PutBlob(r io.Reader, h string) error {
	if !validHex(h) {
		return fmt.Errorf("put blob: %q is not a lower-case hex sha256", h)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("put blob %s: %w", h, err)
	}
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != h {
		return fmt.Errorf("put blob %s: got %s: %w", h, got, ErrHashMismatch)
	}
	m.mu.Lock()
	m.blobs[h] = b
	m.mu.Unlock()
	return nil
}

// Len returns the number of blobs held.
func (m *MemBlobCache) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.blobs)
}

type readSeekNopCloser struct{ *bytes.Reader }

func (readSeekNopCloser) Close() error { return nil }

// DirBlobCache is a BlobCache in a directory: blob <hex> lives at <dir>/<hex[:2]>/<hex>,
// written atomically (temporary file, fsync, rename) and read-only once written, so
// `sha256sum` can check every file against its name.
type DirBlobCache struct{ dir string }

// NewDirBlobCache returns a BlobCache rooted at dir, creating the directory if needed.
func NewDirBlobCache(dir string) (*DirBlobCache, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("blob cache %s: %w", dir, err)
	}
	return &DirBlobCache{dir: dir}, nil
}

func (d *DirBlobCache) path(h string) string { return filepath.Join(d.dir, h[:2], h) }

// OpenBlob implements BlobCache. The returned reader is an *os.File (seekable).
func (d *DirBlobCache) OpenBlob(h string) (io.ReadCloser, error) {
	if !validHex(h) {
		return nil, fmt.Errorf("blob %q: not a sha256: %w", h, fs.ErrNotExist)
	}
	f, err := os.Open(d.path(h))
	if err != nil {
		return nil, fmt.Errorf("open blob: %w", err)
	}
	return f, nil
}

// PutBlob implements BlobCache.
func (d *DirBlobCache) PutBlob(r io.Reader, h string) error {
	if !validHex(h) {
		return fmt.Errorf("put blob: %q is not a lower-case hex sha256", h)
	}
	final := d.path(h)
	if _, err := os.Stat(final); err == nil {
		_, err := io.Copy(io.Discard, r)
		return err
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return fmt.Errorf("put blob %s: %w", h, err)
	}
	return writeAtomic(final, func(w io.Writer) error {
		hw := sha256.New()
		if _, err := io.Copy(io.MultiWriter(w, hw), r); err != nil {
			return err
		}
		if got := hex.EncodeToString(hw.Sum(nil)); got != h {
			return fmt.Errorf("got %s: %w", got, ErrHashMismatch)
		}
		return nil
	}, 0o444)
}

// writeAtomic writes a file through a temporary file in the same directory, fsyncs it,
// renames it into place and fsyncs the directory.
func writeAtomic(final string, write func(io.Writer) error, mode os.FileMode) error {
	dir := filepath.Dir(final)
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", final, err)
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", final, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", final, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", final, err)
	}
	if err := os.Chmod(tmp.Name(), mode); err != nil {
		return fmt.Errorf("write %s: %w", final, err)
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return fmt.Errorf("write %s: %w", final, err)
	}
	if df, err := os.Open(dir); err == nil {
		_ = df.Sync()
		df.Close()
	}
	return nil
}

// MemRefStore is an in-memory RefStore.
type MemRefStore struct {
	mu   sync.RWMutex
	refs map[string][]byte
}

// NewMemRefStore returns an empty in-memory RefStore.
func NewMemRefStore() *MemRefStore { return &MemRefStore{refs: map[string][]byte{}} }

// GetRef implements RefStore.
func (m *MemRefStore) GetRef(key string) ([]byte, error) {
	m.mu.RLock()
	v, ok := m.refs[key]
	m.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("ref %s: %w", key, fs.ErrNotExist)
	}
	return bytes.Clone(v), nil
}

// PutRef implements RefStore.
func (m *MemRefStore) PutRef(key string, val []byte) error {
	m.mu.Lock()
	m.refs[key] = bytes.Clone(val)
	m.mu.Unlock()
	return nil
}

// DirRefStore is a RefStore in a directory: key a/b lives in file <dir>/a/b, replaced atomically.
type DirRefStore struct{ dir string }

// NewDirRefStore returns a RefStore rooted at dir, creating the directory if needed.
func NewDirRefStore(dir string) (*DirRefStore, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("ref store %s: %w", dir, err)
	}
	return &DirRefStore{dir: dir}, nil
}

func (d *DirRefStore) path(key string) (string, error) {
	if key == "" || strings.HasPrefix(key, "/") || strings.Contains(key, "..") || strings.ContainsAny(key, "\\\x00") {
		return "", fmt.Errorf("ref key %q is not a relative path", key)
	}
	return filepath.Join(d.dir, filepath.FromSlash(key)), nil
}

// GetRef implements RefStore.
func (d *DirRefStore) GetRef(key string) ([]byte, error) {
	p, err := d.path(key)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("ref %s: %w", key, err)
	}
	return b, nil
}

// PutRef implements RefStore.
func (d *DirRefStore) PutRef(key string, val []byte) error {
	p, err := d.path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("put ref %s: %w", key, err)
	}
	return writeAtomic(p, func(w io.Writer) error { _, err := w.Write(val); return err }, 0o644)
}

// DirCaches returns a DirBlobCache at <dir>/blobs and a DirRefStore at <dir>/refs: the
// on-disk cache of a standalone proxy.
func DirCaches(dir string) (*DirBlobCache, *DirRefStore, error) {
	b, err := NewDirBlobCache(filepath.Join(dir, "blobs"))
	if err != nil {
		return nil, nil, err
	}
	r, err := NewDirRefStore(filepath.Join(dir, "refs"))
	if err != nil {
		return nil, nil, err
	}
	return b, r, nil
}
