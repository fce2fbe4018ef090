package registry

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"testing"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/schemas"
)

// newStoreCache opens the store in dir as the proxy's caches.
func newStoreCache(t testing.TB, dir string) StoreCache {
	t.Helper()
	st, err := data.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return StoreCache{Store: st}
}

func TestStoreCacheVerifiesHashes(t *testing.T) {
	st, _ := data.Open(t.TempDir())
	c := StoreCache{Store: st}
	body := []byte("wheel bytes")
	h := schemas.Hash(body).Hex()
	if _, err := c.OpenBlob(h); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing blob: %v", err)
	}
	if err := c.PutBlob(bytes.NewReader([]byte("other bytes")), h); !errors.Is(err, ErrHashMismatch) {
		t.Fatalf("mismatch accepted: %v", err)
	}
	if st.Has(schemas.Hash([]byte("other bytes"))) {
		t.Error("mismatched bytes were stored")
	}
	if err := c.PutBlob(bytes.NewReader(body), h); err != nil {
		t.Fatal(err)
	}
	rc, err := c.OpenBlob(h)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if !bytes.Equal(got, body) {
		t.Errorf("got %q", got)
	}
	if _, err := c.GetRef("meta/x"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing ref: %v", err)
	}
	c.PutRef("meta/x", []byte("v1"))
	c.PutRef("meta/x", []byte("v2"))
	if v, err := c.GetRef("meta/x"); err != nil || string(v) != "v2" {
		t.Errorf("ref: %q %v", v, err)
	}
}
