package core

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
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
