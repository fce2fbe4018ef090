package schemas

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"
)

// DigestPrefix is the algorithm prefix of every Digest's text form.
const DigestPrefix = "sha256:"

// Digest names stored bytes by their SHA-256. Its text form is "sha256:<64 hex>", so
// `sha256sum` can check any object of the store. The zero Digest means "none".
type Digest [sha256.Size]byte

// Hash returns the Digest of b. It is the one hashing entry point of the project; stream
// hashing goes through NewHasher.
func Hash(b []byte) Digest { return Digest(sha256.Sum256(b)) }

// Hasher computes a Digest of bytes written to it.
type Hasher struct{ h hash.Hash }

// NewHasher returns a Hasher for streamed content.
func NewHasher() *Hasher { return &Hasher{h: sha256.New()} }

// Write adds p to the hashed content. It never fails.
func (h *Hasher) Write(p []byte) (int, error) { return h.h.Write(p) }

// Digest returns the Digest of everything written so far.
func (h *Hasher) Digest() Digest {
	var d Digest
	copy(d[:], h.h.Sum(nil))
	return d
}

// ParseDigest parses "sha256:<64 lower-case hex>".
func ParseDigest(s string) (Digest, error) {
	var d Digest
	hexPart, ok := strings.CutPrefix(s, DigestPrefix)
	if !ok {
		return d, fmt.Errorf("digest %q: want %s followed by 64 hex digits", s, DigestPrefix)
	}
	if len(hexPart) != 2*len(d) || strings.ToLower(hexPart) != hexPart {
		return d, fmt.Errorf("digest %q: want %s followed by 64 lower-case hex digits", s, DigestPrefix)
	}
	if _, err := hex.Decode(d[:], []byte(hexPart)); err != nil {
		return d, fmt.Errorf("digest %q: %w", s, err)
	}
	return d, nil
}

// IsZero reports whether d is the zero Digest.
func (d Digest) IsZero() bool { return d == Digest{} }

// Hex returns the 64 hex digits of d without the prefix.
func (d Digest) Hex() string { return hex.EncodeToString(d[:]) }

// String returns "sha256:<hex>".
func (d Digest) String() string { return DigestPrefix + d.Hex() }

// Short returns the first 12 hex digits, for display.
func (d Digest) Short() string { return d.Hex()[:12] }

// MarshalText encodes d as "sha256:<hex>"; the zero Digest encodes as "".
func (d Digest) MarshalText() ([]byte, error) {
	if d.IsZero() {
		return []byte{}, nil
	}
	return []byte(d.String()), nil
}

// UnmarshalText decodes "sha256:<hex>"; "" gives the zero Digest.
func (d *Digest) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*d = Digest{}
		return nil
	}
	p, err := ParseDigest(string(b))
	if err != nil {
		return err
	}
	*d = p
	return nil
}
