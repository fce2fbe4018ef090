package study

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/envgap/envgap/lib/studylayout"
)

// fakeMeasurer measures from a project's path alone: layers named after it, a
// NotMeasuredError for projects of problem 2, an infrastructure fault for the project
// named fault. Each Measure waits until a second one runs when more than one may (so the
// test sees measures at once), and the most at once is kept.
type fakeMeasurer struct {
	fault      string
	mu         sync.Mutex
	cond       *sync.Cond
	in, most   int
	waitForTwo bool
}

func (m *fakeMeasurer) Measure(ctx context.Context, f Final) (*studylayout.Layers, error) {
	m.mu.Lock()
	m.in++
	m.most = max(m.most, m.in)
	m.cond.Broadcast()
	for m.waitForTwo && m.most < 2 {
		m.cond.Wait()
	}
	m.in--
	m.mu.Unlock()
	switch {
	case f.Rel == m.fault:
		return nil, errors.New("the engine did not answer")
	case strings.HasSuffix(f.Rel, "/p2"):
		return nil, &NotMeasuredError{Reason: "the final project did not run when measured (" + f.Rel + ")"}
	}
	return &studylayout.Layers{D2: []string{"six", "d2-" + f.Rel}, D3: []string{"six"}}, nil
}

// TestMeasureAtOnceAsOneByOne: study report measuring several projects at once (--jobs)
// fills every project as measuring them one by one does, and a fault names its project.
func TestMeasureAtOnceAsOneByOne(t *testing.T) {
	var ps []hp
	for _, a := range []string{"a", "b"} {
		for p := 1; p <= 3; p++ {
			ps = append(ps, hp{rel: fmt.Sprintf("%s/python-t1/p%d", a, p), worked: true, made: true, d1: []string{"six"}})
		}
	}
	dir := writeStudy(t, ps)
	load := func(jobs int, fault string) (*Study, *fakeMeasurer, error) {
		m := &fakeMeasurer{fault: fault, waitForTwo: jobs > 1}
		m.cond = sync.NewCond(&m.mu)
		s, err := Load(context.Background(), dir, LoadOptions{Measure: m, Jobs: jobs})
		return s, m, err
	}
	one, m1, err := load(1, "")
	if err != nil {
		t.Fatal(err)
	}
	many, m3, err := load(3, "")
	if err != nil {
		t.Fatal(err)
	}
	if m1.most != 1 || m3.most < 2 || m3.most > 3 {
		t.Fatalf("measures at once: %d with jobs 1, %d with jobs 3", m1.most, m3.most)
	}
	if !reflect.DeepEqual(one.Projects, many.Projects) {
		t.Fatalf("measured at once:\n%+v\none by one:\n%+v", many.Projects, one.Projects)
	}
	layered, reasons := 0, 0
	for _, p := range many.Projects {
		if p.HasLayers && len(p.D2) == 2 {
			layered++
		}
		if strings.Contains(p.LayersReason, p.Rel) {
			reasons++
		}
	}
	if layered != 4 || reasons != 2 {
		t.Fatalf("%d projects with their layers, %d with their own reason; want 4 and 2", layered, reasons)
	}
	_, _, err = load(3, "b/python-t1/p1")
	if err == nil || !strings.HasPrefix(err.Error(), "b/python-t1/p1: ") {
		t.Fatalf("a fault measuring b/python-t1/p1: %v", err)
	}
}
