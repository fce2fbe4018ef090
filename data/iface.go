package data

import (
	"context"
	"io"
	"time"

	"github.com/envgap/envgap/schemas"
)

// The store's parts as small interfaces: a stage names the parts it uses (or defines its
// own), so it depends on what it reads and writes and not on *Store. *Store implements all.

// ObjectReader reads immutable objects, checking each against its digest.
type ObjectReader interface {
	Has(d schemas.Digest) bool
	Get(d schemas.Digest) ([]byte, error)
	GetJSON(d schemas.Digest, v any) error
	OpenObject(d schemas.Digest) (io.ReadCloser, error)
}

// ObjectWriter stores immutable objects.
type ObjectWriter interface {
	Put(b []byte) (schemas.Digest, error)
	PutJSON(v any) (schemas.Digest, error)
	PutReader(r io.Reader) (schemas.Digest, int64, error)
	PutReaderExpect(r io.Reader, want schemas.Digest) (int64, error)
	NewBatch() *Batch
}

// RefReader reads refs, the store's mutable names.
type RefReader interface {
	Ref(name string) (schemas.Digest, error)
	Refs(prefix string) ([]RefEntry, error)
	RefJSON(name string, v any) (schemas.Digest, error)
}

// RefWriter points refs at stored objects.
type RefWriter interface {
	SetRef(name string, d schemas.Digest) error
}

// Memos records stage keys and their results.
type Memos interface {
	Memo(stage string, key schemas.Digest) (schemas.Digest, error)
	SetMemo(stage string, key, result schemas.Digest) error
	MemoResults(stage string) ([]schemas.Digest, error)
}

// Claimer claims work by name (see TryClaim).
type Claimer interface {
	TryClaim(name string, lease time.Duration) (*Claim, error)
	WaitClaim(ctx context.Context, name string, lease, poll time.Duration) (*Claim, error)
}

// Objects reads and writes objects.
type Objects interface {
	ObjectReader
	ObjectWriter
}

// Backend is the whole store: objects, refs, memo entries and claims.
type Backend interface {
	Objects
	RefReader
	RefWriter
	Memos
	Claimer
}

var _ Backend = (*Store)(nil)
