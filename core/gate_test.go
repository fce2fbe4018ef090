package core

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestGateAdmitsItsPlacesAndNoMore(t *testing.T) {
	g := NewGate(2)
	ctx := context.Background()
	l1, err := g.Enter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := g.Enter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Full: a third waits until its context ends.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := g.Enter(cctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("third Enter on a full gate = %v, want context.Canceled", err)
	}
	// Leaving twice frees one place only.
	l1()
	l1()
	l3, err := g.Enter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Enter(cctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("after one leave (called twice) the gate admitted two: %v", err)
	}
	l2()
	l3()
}

func TestGateBoundsConcurrentHolders(t *testing.T) {
	const places, workers = 2, 16
	g := NewGate(places)
	var in, most atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				leave, err := g.Enter(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				n := in.Add(1)
				for {
					m := most.Load()
					if n <= m || most.CompareAndSwap(m, n) {
						break
					}
				}
				in.Add(-1)
				leave()
			}
		}()
	}
	wg.Wait()
	if most.Load() > places {
		t.Fatalf("%d holders at once through a gate of %d places", most.Load(), places)
	}
	if NewGate(0) == nil || cap(NewGate(0).slots) != 1 || Ahead(0) != 2 || Ahead(3) != 6 {
		t.Fatal("a gate has at least one place; Ahead is two runs a place")
	}
}

// TestGatePrepareLaneAndRemovals: as many containers of an engine (core) as the gate has
// places are prepared at a time, another engine's beside them; Wait waits for every
// removal noted and returns the failed ones, naming their runs.
func TestGatePrepareLaneAndRemovals(t *testing.T) {
	g2 := NewGate(2)
	var dones []func()
	for range 2 {
		d, err := g2.prepare(&Core{})(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		dones = append(dones, d)
	}
	c := &Core{}
	for range 2 {
		d, err := g2.prepare(c)(context.Background())
		if err != nil {
			t.Fatalf("a gate of 2 places prepares 2 containers of an engine at once: %v", err)
		}
		dones = append(dones, d)
	}
	full, cancelFull := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancelFull()
	if _, err := g2.prepare(c)(full); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a gate of 2 places prepared a third container of an engine at once: %v", err)
	}
	for _, d := range dones {
		d()
	}

	g := NewGate(1).RemoveInBackground()
	if !g.later {
		t.Fatal("RemoveInBackground did not mark the gate")
	}
	a, b := &Core{}, &Core{}
	ctx := context.Background()
	done, err := g.prepare(a)(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := g.prepare(a)(cctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a second container of the same engine prepared at once: %v", err)
	}
	doneB, err := g.prepare(b)(ctx)
	if err != nil {
		t.Fatalf("another engine's container waits for the first engine's: %v", err)
	}
	done()
	done() // leaving twice frees the lane once
	doneB()
	d1, err := g.prepare(a)(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cctx2, cancel2 := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel2()
	if _, err := g.prepare(a)(cctx2); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a lane left twice admitted two: %v", err)
	}
	d1()

	ok, bad, slow := make(chan error, 1), make(chan error, 1), make(chan error, 1)
	g.removing("x1: removing the before side's container", ok)
	g.removing("x2: removing the after side's container", bad)
	g.removing("x3: removing the after side's container", slow)
	ok <- nil
	bad <- errors.New("engine said no")
	waited := make(chan error, 1)
	go func() { waited <- g.Wait() }()
	select {
	case err := <-waited:
		t.Fatalf("Wait returned (%v) before every removal ended", err)
	case <-time.After(50 * time.Millisecond):
	}
	slow <- nil
	err = <-waited
	if err == nil || !strings.Contains(err.Error(), "x2: removing the after side's container: engine said no") || strings.Contains(err.Error(), "x1") || strings.Contains(err.Error(), "x3") {
		t.Fatalf("Wait = %v, want the failed removal alone, named", err)
	}
	if err := NewGate(1).Wait(); err != nil {
		t.Fatalf("a gate with no removals: %v", err)
	}
}
