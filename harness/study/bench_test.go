package study

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
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
		r := Compute(s)
		if err := WriteDir(out, r); err != nil {
			b.Fatal(err)
		}
	}
}
