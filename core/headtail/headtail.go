// Package headtail keeps the head and the tail of a long output, in fixed memory however
// much is written, for a note of how much was cut between them. The sandbox captures each
// step's output with it, and the agent loop cuts what the model is shown with it. It
// imports nothing of envgap, so the evaluation core may use it.
package headtail

// Buffer keeps the first bytes written to it (up to its head size) and the last ones (up
// to its tail size), and counts all of them. Its memory is the two sizes, however much is
// written. The zero Buffer keeps nothing.
type Buffer struct {
	headCap int
	head    []byte
	tail    []byte // ring buffer of the tail size
	tailPos int    // next write position in tail
	tailLen int    // bytes held in tail
	size    int64
}

// New returns a Buffer keeping the first head and the last tail bytes (a negative size
// keeps none).
func New(head, tail int) *Buffer {
	return &Buffer{headCap: max(head, 0), tail: make([]byte, max(tail, 0))}
}

// Write keeps what belongs to the head or the tail; it never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	n := len(p)
	b.size += int64(n)
	if room := b.headCap - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	if len(b.tail) == 0 {
		return n, nil
	}
	if len(p) >= len(b.tail) {
		copy(b.tail, p[len(p)-len(b.tail):])
		b.tailPos, b.tailLen = 0, len(b.tail)
		return n, nil
	}
	for len(p) > 0 {
		k := copy(b.tail[b.tailPos:], p)
		p = p[k:]
		b.tailPos = (b.tailPos + k) % len(b.tail)
		b.tailLen = min(b.tailLen+k, len(b.tail))
	}
	return n, nil
}

// Size is how many bytes were written.
func (b *Buffer) Size() int64 { return b.size }

// Cut is how many bytes were written and not kept (between the head and the tail).
func (b *Buffer) Cut() int64 { return b.size - int64(len(b.head)+b.tailLen) }

// Join returns the head, then note, then the tail (a new slice).
func (b *Buffer) Join(note string) []byte {
	out := make([]byte, 0, len(b.head)+len(note)+b.tailLen)
	out = append(append(out, b.head...), note...)
	if b.tailLen < len(b.tail) {
		return append(out, b.tail[:b.tailLen]...)
	}
	return append(append(out, b.tail[b.tailPos:]...), b.tail[:b.tailPos]...)
}
