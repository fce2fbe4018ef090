package registry

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
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
