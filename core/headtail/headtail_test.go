package headtail

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"testing"
)

// want is what a Buffer of head h and tail t keeps of data, with note between (none when
// all of it is kept).
func want(data []byte, h, t int, note string) ([]byte, int64) {
	if len(data) <= h+t {
		return append(append([]byte{}, data[:min(h, len(data))]...), append([]byte(note), data[min(h, len(data)):]...)...), 0
	}
	out := append(append([]byte{}, data[:h]...), note...)
	return append(out, data[len(data)-t:]...), int64(len(data) - h - t)
}

func TestBufferBoundaries(t *testing.T) {
	tests := []struct {
		name       string
		head, tail int
		data       string
		chunk      int
		join       string // Join("|")
		cut        int64
	}{
		{"empty", 3, 3, "", 1, "|", 0},
		{"under", 3, 3, "abcd", 2, "abc|d", 0},
		{"exactly at the limit", 3, 3, "abcdef", 4, "abc|def", 0},
		{"one over", 3, 3, "abcdefg", 1, "abc|efg", 1},
		{"one over, one write", 3, 3, "abcdefg", 100, "abc|efg", 1},
		{"head only", 2, 0, "abcdef", 3, "ab|", 4},
		{"tail only", 0, 2, "abcdef", 1, "|ef", 4},
		{"nothing kept", 0, 0, "abc", 1, "|", 3},
		{"negative sizes", -1, -5, "abc", 2, "|", 3},
		{"tail wraps several times", 1, 3, "abcdefghijklmnop", 2, "a|nop", 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New(tt.head, tt.tail)
			for rest := tt.data; rest != ""; {
				k := min(tt.chunk, len(rest))
				if n, err := b.Write([]byte(rest[:k])); n != k || err != nil {
					t.Fatalf("Write: %d %v", n, err)
				}
				rest = rest[k:]
			}
			if got := string(b.Join("|")); got != tt.join || b.Cut() != tt.cut || b.Size() != int64(len(tt.data)) {
				t.Fatalf("Join %q cut %d size %d; want %q cut %d size %d", got, b.Cut(), b.Size(), tt.join, tt.cut, len(tt.data))
			}
		})
	}
}

// Bytes are kept as written: a multi-byte UTF-8 character at the cut is split as the
// byte counts say (the callers' outputs were always cut by bytes).
func TestBufferCutsBytes(t *testing.T) {
	b := New(1, 1)
	b.Write([]byte("é-é")) // c3 a9 2d c3 a9
	if got := b.Join(""); !bytes.Equal(got, []byte{0xc3, 0xa9}) || b.Cut() != 3 {
		t.Fatalf("% x cut %d", got, b.Cut())
	}
}

func TestBufferMatchesSlicing(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		data := make([]byte, r.IntN(200))
		for j := range data {
			data[j] = byte(r.IntN(256))
		}
		h, tl := r.IntN(50), r.IntN(50)
		b := New(h, tl)
		for rest := data; len(rest) > 0; {
			k := 1 + r.IntN(len(rest))
			b.Write(rest[:k])
			rest = rest[k:]
		}
		w, cut := want(data, h, tl, "<>")
		if got := b.Join("<>"); !bytes.Equal(got, w) || b.Cut() != cut {
			t.Fatalf("len %d head %d tail %d: got %q cut %d, want %q cut %d", len(data), h, tl, got, b.Cut(), w, cut)
		}
	}
}

// A huge output streamed through keeps memory bounded by the two sizes.
func TestBufferStreamsInFixedMemory(t *testing.T) {
	const whole, chunk = 256 << 20, 64 << 10
	p := bytes.Repeat([]byte("x"), chunk)
	b := New(1<<10, 1<<10)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 0; i < whole/chunk; i++ {
		b.Write(p)
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Fatalf("streaming %d bytes allocated %d bytes", whole, grew)
	}
	if b.Size() != whole || b.Cut() != whole-2<<10 || len(b.Join("")) != 2<<10 {
		t.Fatalf("size %d cut %d", b.Size(), b.Cut())
	}
}
