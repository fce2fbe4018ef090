package registry

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/schemas"
)

// StoreCache adapts the content-addressed store to the registry proxy's caches: artifacts
// are store objects, and the proxy's small mutable records are memo entries of stage
// "registry" pointing at objects.
type StoreCache struct {
	Store interface {
		data.Objects
		data.Memos
	}
}

var (
	_ BlobCache = StoreCache{}
	_ RefStore  = StoreCache{}
)

func hexDigest(h string) (schemas.Digest, error) {
	var d schemas.Digest
	b, err := hex.DecodeString(h)
	if err != nil || len(b) != len(d) {
		return d, fmt.Errorf("bad sha256 %q", h)
	}
	copy(d[:], b)
	return d, nil
}

// OpenBlob opens a cached artifact.
func (c StoreCache) OpenBlob(h string) (io.ReadCloser, error) {
	d, err := hexDigest(h)
	if err != nil {
		return nil, err
	}
	rc, err := c.Store.OpenObject(d)
	if errors.Is(err, data.ErrNotFound) {
		return nil, fmt.Errorf("%w: %v", fs.ErrNotExist, err)
	}
	return rc, err
}

// PutBlob stores an artifact after checking its hash.
func (c StoreCache) PutBlob(r io.Reader, h string) error {
	want, err := hexDigest(h)
	if err != nil {
		return err
	}
	if c.Store.Has(want) {
		_, err := io.Copy(io.Discard, r)
		return err
	}
	if _, err := c.Store.PutReaderExpect(r, want); err != nil {
		if errors.Is(err, data.ErrCorrupt) {
			return fmt.Errorf("%w: %v", ErrHashMismatch, err)
		}
		return err
	}
	return nil
}

func memoKey(key string) schemas.Digest { return schemas.Hash([]byte("registry-ref:" + key)) }

// GetRef returns a small record.
func (c StoreCache) GetRef(key string) ([]byte, error) {
	d, err := c.Store.Memo("registry", memoKey(key))
	if errors.Is(err, data.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", fs.ErrNotExist, key)
	}
	if err != nil {
		return nil, err
	}
	return c.Store.Get(d)
}

// PutRef stores a small record.
func (c StoreCache) PutRef(key string, val []byte) error {
	d, err := c.Store.Put(val)
	if err != nil {
		return err
	}
	return c.Store.SetMemo("registry", memoKey(key), d)
}
