package study

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/lib/studylayout"
	"github.com/envgap/envgap/schemas"
)

// synthStudy writes a study of the paper's scale: 3 agents x 4 languages x 50 tasks (the
// 600 primary instances) and two more trials of the first agent (400 runs): 1,000 project
// folders, each successful one with its layers.json (D2 and D3 already measured, as
// study run leaves them), with random but plausible declared, installed and traced sets.
func synthStudy(b *testing.B) string {
	rng := rand.New(rand.NewSource(1))
	pool := []string{"requests", "numpy", "pandas", "six", "tabulate", "urllib3", "idna", "certifi", "click", "pyyaml", "lxml", "pillow"}
	pick := func(n int) []string {
		var out []string
		for _, i := range rng.Perm(len(pool))[:n] {
			out = append(out, pool[i])
		}
		return out
	}
	var ps []hp
	for _, a := range []string{"claude", "codex", "gemini"} {
		trials := 1
		if a == "claude" {
			trials = 3
		}
		for _, l := range []string{"python", "javascript", "cpp", "java"} {
			for tr := 1; tr <= trials; tr++ {
				for p := 1; p <= 50; p++ {
					worked := rng.Intn(3) > 0
					made := worked || rng.Intn(10) > 0
					h := hp{rel: fmt.Sprintf("%s/%s-t%d/p%d", a, l, tr, p), worked: worked, made: made, rounds: rng.Intn(10) + 1, err: "Could NOT find OpenSSL"}
					d1 := pick(rng.Intn(4))
					if l == "cpp" {
						for i := range d1 {
							d1[i] = "fp:" + d1[i]
						}
					}
					h.d1 = d1
					if made {
						h.d2, h.d3 = pick(rng.Intn(8)), pick(rng.Intn(5))
					}
					ps = append(ps, h)
				}
			}
		}
	}
	return writeStudyTB(b, ps)
}

// BenchmarkReport1000 is study report on a 1,000-run study whose D2 and D3 are recorded:
// reading every project (meta.json, D1 from written/, layers.json), computing every
// metric, and writing report.md, report.json and the figures.
func BenchmarkReport1000(b *testing.B) {
	dir := synthStudy(b)
	out := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := Load(context.Background(), dir, LoadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if len(s.Projects) != 1000 {
			b.Fatalf("%d projects read, want 1000 (left out: %v)", len(s.Projects), s.Skipped[:min(3, len(s.Skipped))])
		}
		r := Compute(s, Options{})
		if err := WriteDir(out, r); err != nil {
			b.Fatal(err)
		}
	}
}

// imageRunner is an engine that knows the images and runs nothing.
type imageRunner struct{}

func (imageRunner) Run(context.Context, sandbox.Spec) (*sandbox.Result, error) {
	return nil, errors.New("the benchmark's runs must come from the memo")
}
func (imageRunner) ImageID(context.Context, string) (string, error) { return "sha256:bench-image", nil }

// BenchmarkReport1000Memoised is study report on the same 1,000-run study with no
// layers.json: D2 and D3 of each successful project come from the store's memo of its
// core run (as after a first report), so each project's final state is read, its recipe
// and memo key computed and its run record read from the store.
func BenchmarkReport1000Memoised(b *testing.B) {
	dir := synthStudy(b)
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == studylayout.LayersFile {
			os.Remove(p)
		}
		return nil
	})
	// The runs a first report would have made: each successful project's final state is
	// written/ (the synthetic study has no repaired/ copies), so prime the memo with a
	// resolved run per project.
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == studylayout.MetaFile {
			os.MkdirAll(filepath.Join(filepath.Dir(p), studylayout.RepairedDir), 0o755)
			copyTree(filepath.Join(filepath.Dir(p), studylayout.WrittenDir), filepath.Join(filepath.Dir(p), studylayout.RepairedDir))
		}
		return nil
	})
	st, err := catalog.Open(filepath.Join(b.TempDir(), "store"))
	if err != nil {
		b.Fatal(err)
	}
	cr := &core.Core{Runner: imageRunner{}, Store: st}
	prime := &Executor{Core: cr, Store: st, RunSpec: func(ctx context.Context, spec core.Spec) (*schemas.Run, schemas.Digest, error) {
		r := &schemas.Run{Resolved: true, D2: schemas.DepSet{Deps: []schemas.Dependency{{Name: "numpy"}, {Name: "six"}}}, D3: schemas.DepSet{Deps: []schemas.Dependency{{Name: "numpy"}}}}
		d, err := st.PutJSON(r)
		return r, d, err
	}}
	if _, err := Load(context.Background(), dir, LoadOptions{Measure: &CoreMeasurer{Exec: prime}}); err != nil {
		b.Fatal(err)
	}
	out := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m := &CoreMeasurer{Exec: &Executor{Core: cr, Store: st}}
		s, err := Load(context.Background(), dir, LoadOptions{Measure: m})
		if err != nil {
			b.Fatal(err)
		}
		r := Compute(s, Options{})
		if r.Layered == 0 || r.Layered != r.Successful {
			b.Fatalf("%d of %d successful projects measured from the memo", r.Layered, r.Successful)
		}
		if err := WriteDir(out, r); err != nil {
			b.Fatal(err)
		}
	}
}

func copyTree(src, dst string) {
	filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			os.MkdirAll(filepath.Join(dst, rel), 0o755)
			return nil
		}
		bs, _ := os.ReadFile(p)
		os.WriteFile(filepath.Join(dst, rel), bs, 0o644)
		return nil
	})
}
