package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"

	"github.com/envgap/envgap/core/headtail"
)

// capture keeps the head and tail of a byte stream in fixed memory (the odd byte of the
// limit goes to the head) and hashes all of it.
type capture struct {
	buf *headtail.Buffer
	h   hash.Hash
}

func newCapture(limit int64) *capture {
	limit = max(limit, 0)
	tail := int(limit / 2)
	return &capture{buf: headtail.New(int(limit)-tail, tail), h: sha256.New()}
}

// Write never fails.
func (c *capture) Write(p []byte) (int, error) {
	c.h.Write(p)
	return c.buf.Write(p)
}

// size is how many bytes were written.
func (c *capture) size() int64 { return c.buf.Size() }

// output returns the kept bytes (with the omission line when truncated).
func (c *capture) output() ([]byte, bool) {
	cut := c.buf.Cut()
	if cut == 0 {
		return c.buf.Join(""), false
	}
	return c.buf.Join(fmt.Sprintf("\n[envgap: %d bytes omitted]\n", cut)), true
}

func (c *capture) digest() string { return hex.EncodeToString(c.h.Sum(nil)) }
