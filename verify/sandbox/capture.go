package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
)

// capture keeps the head and tail of a byte stream in fixed memory and hashes
// all of it.
type capture struct {
	headCap int
	head    []byte
	tail    []byte // ring buffer of tailCap bytes
	tailPos int    // next write position in tail
	tailLen int    // bytes held in tail
	size    int64
	h       hash.Hash
}

func newCapture(limit int64) *capture {
	if limit < 0 {
		limit = 0
	}
	tailCap := int(limit / 2)
	return &capture{headCap: int(limit) - tailCap, tail: make([]byte, tailCap), h: sha256.New()}
}

// Write never fails.
func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	c.size += int64(n)
	c.h.Write(p)
	if room := c.headCap - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	if len(c.tail) == 0 {
		return n, nil
	}
	if len(p) >= len(c.tail) {
		copy(c.tail, p[len(p)-len(c.tail):])
		c.tailPos, c.tailLen = 0, len(c.tail)
		return n, nil
	}
	for len(p) > 0 {
		k := copy(c.tail[c.tailPos:], p)
		p = p[k:]
		c.tailPos = (c.tailPos + k) % len(c.tail)
		c.tailLen = min(c.tailLen+k, len(c.tail))
	}
	return n, nil
}

// output returns the kept bytes (with the omission line when truncated).
func (c *capture) output() ([]byte, bool) {
	var tail []byte
	if c.tailLen < len(c.tail) {
		tail = c.tail[:c.tailLen]
	} else {
		tail = append(append([]byte{}, c.tail[c.tailPos:]...), c.tail[:c.tailPos]...)
	}
	kept := int64(len(c.head) + len(tail))
	out := append([]byte{}, c.head...)
	truncated := kept < c.size
	if truncated {
		out = fmt.Appendf(out, "\n[envgap: %d bytes omitted]\n", c.size-kept)
	}
	return append(out, tail...), truncated
}

func (c *capture) digest() string { return hex.EncodeToString(c.h.Sum(nil)) }
