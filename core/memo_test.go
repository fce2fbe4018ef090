package core

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
)

// TestMemoised: a second run of one spec comes from the memo; a run whose step output was
// lost, and a spec that differs in any keyed input, run again; a run that comes back on
// another image is an infrastructure fault and is not memoised.
func TestMemoised(t *testing.T) {
	dir := t.TempDir()
	st, err := catalog.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	image := "sha256:aaaa"
	run := func(_ context.Context, spec Spec) (*schemas.Run, schemas.Digest, error) {
		ran++
		out, err := st.Put([]byte("output of run " + string(rune('0'+ran))))
		if err != nil {
			return nil, schemas.Digest{}, err
		}
		r := &schemas.Run{Kind: schemas.KindRun, InstanceID: spec.InstanceID, ImageID: image,
			RegistryDate: spec.Cutoff.String(), Steps: []schemas.StepRecord{{Name: "run", Output: out}}}
		d, err := st.PutJSON(r)
		return r, d, err
	}
	ctx := context.Background()
	spec := Spec{InstanceID: "x", Side: SideAfter, Cutoff: schemas.MustParseCutoff("2024-01-01")}
	_, d1, cached, err := Memoised(ctx, st, run, spec, "sha256:aaaa", "", 0)
	if err != nil || cached || ran != 1 {
		t.Fatalf("first run: cached %v, ran %d, %v", cached, ran, err)
	}
	_, d2, cached, err := Memoised(ctx, st, run, spec, "sha256:aaaa", "", 0)
	if err != nil || !cached || ran != 1 || d2 != d1 {
		t.Fatalf("second run: cached %v, ran %d, %v", cached, ran, err)
	}
	// Another spelling of the same cut-off is the same run.
	same := spec
	same.Cutoff = schemas.MustParseCutoff("2024-01-01T23:59:59.999999999Z")
	if _, _, cached, _ := Memoised(ctx, st, run, same, "sha256:aaaa", "", 0); !cached {
		t.Error("the same instant spelled otherwise ran again")
	}
	// Lost step output: run again, and the memo points at the new record.
	var r schemas.Run
	if err := st.GetJSON(d1, &r); err != nil {
		t.Fatal(err)
	}
	out := r.Steps[0].Output
	if err := os.Remove(filepath.Join(dir, "objects", out.Hex()[:2], out.Hex()[2:])); err != nil {
		t.Fatal(err)
	}
	_, d3, cached, err := Memoised(ctx, st, run, spec, "sha256:aaaa", "", 0)
	if err != nil || cached || ran != 2 || d3 == d1 {
		t.Fatalf("after a lost output: cached %v, ran %d, %v", cached, ran, err)
	}
	if _, d4, cached, _ := Memoised(ctx, st, run, spec, "sha256:aaaa", "", 0); !cached || d4 != d3 {
		t.Errorf("the memo does not point at the new run (cached %v)", cached)
	}
	// Keyed inputs: manifest paths, salt, repeat, image.
	for name, call := range map[string]func() (bool, error){
		"manifest paths": func() (bool, error) {
			s := spec
			s.ManifestPaths = []string{"requirements.txt"}
			_, _, c, err := Memoised(ctx, st, run, s, "sha256:aaaa", "", 0)
			return c, err
		},
		"salt": func() (bool, error) {
			_, _, c, err := Memoised(ctx, st, run, spec, "sha256:aaaa", "eval", 0)
			return c, err
		},
		"repeat": func() (bool, error) {
			_, _, c, err := Memoised(ctx, st, run, spec, "sha256:aaaa", "", 1)
			return c, err
		},
	} {
		if cached, err := call(); err != nil || cached {
			t.Errorf("%s: cached %v (%v), want a new run", name, cached, err)
		}
	}
	// The image changed during the run: an infrastructure fault, nothing memoised.
	image = "sha256:bbbb"
	n := ran
	_, _, _, err = Memoised(ctx, st, run, spec, "sha256:cccc", "", 0)
	var infra *InfraError
	if !errors.As(err, &infra) {
		t.Fatalf("image changed: %v, want an infrastructure fault", err)
	}
	if _, _, cached, _ := Memoised(ctx, st, run, spec, "sha256:cccc", "", 0); cached || ran != n+2 {
		t.Errorf("a run on a changed image was memoised (cached %v)", cached)
	}
}
