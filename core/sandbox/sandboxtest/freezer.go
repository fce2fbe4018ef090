// Package sandboxtest holds test helpers for code that runs containers: a Freezer stands
// for a frozen container engine.
package sandboxtest

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Freezer is a unix socket in front of the real engine (DOCKER_HOST) that forwards every
// byte until frozen; frozen, it holds every byte in both directions and every new
// connection, as a SIGSTOPped engine would, without freezing the engine other tests share.
type Freezer struct {
	ln     net.Listener
	frozen atomic.Bool
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  []net.Conn
}

// New starts a Freezer and returns it with its DOCKER_HOST value. It stops (thawed) when
// the test ends.
func New(t testing.TB) (*Freezer, string) {
	t.Helper()
	network, addr := "unix", "/var/run/docker.sock"
	if h := os.Getenv("DOCKER_HOST"); strings.HasPrefix(h, "unix://") {
		addr = strings.TrimPrefix(h, "unix://")
	} else if strings.HasPrefix(h, "tcp://") {
		network, addr = "tcp", strings.TrimPrefix(h, "tcp://")
	}
	sock := filepath.Join(t.TempDir(), "engine.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	f := &Freezer{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f.wg.Add(1)
			go func() {
				defer f.wg.Done()
				f.wait()
				u, err := net.Dial(network, addr)
				if err != nil {
					c.Close()
					return
				}
				f.track(c, u)
				go f.pipe(u, c)
				f.pipe(c, u)
			}()
		}
	}()
	t.Cleanup(f.close)
	return f, "unix://" + sock
}

// Freeze stops every byte; Thaw lets them go again.
func (f *Freezer) Freeze() { f.frozen.Store(true) }

// Thaw lets the held bytes and connections go.
func (f *Freezer) Thaw() { f.frozen.Store(false) }

func (f *Freezer) wait() {
	for f.frozen.Load() {
		time.Sleep(10 * time.Millisecond)
	}
}

func (f *Freezer) track(c ...net.Conn) {
	f.mu.Lock()
	f.conns = append(f.conns, c...)
	f.mu.Unlock()
}

// pipe copies src to dst, holding each chunk while frozen.
func (f *Freezer) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			f.wait()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	} else {
		dst.Close()
	}
}

func (f *Freezer) close() {
	f.frozen.Store(false)
	f.ln.Close()
	f.mu.Lock()
	for _, c := range f.conns {
		c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
}
