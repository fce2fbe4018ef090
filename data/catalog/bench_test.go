package catalog

import (
	"fmt"
	"strings"
	"testing"

	"github.com/envgap/envgap/schemas"
)

func benchCatalog(b *testing.B) *Catalog {
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	for set := 0; set < 10; set++ {
		cands := make([]schemas.Candidate, 1000)
		for i := range cands {
			cands[i] = testCandidate(int64(set*1000 + i + 1))
			cands[i].ProblemStatement = strings.Repeat("text ", 200)
		}
		if _, err := s.AddCandidateSet(fmt.Sprint("add", set), "bench", cands, nil); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

func BenchmarkCandidateByID10k(b *testing.B) {
	s := benchCatalog(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.CandidateByID(schemas.InstanceID("o/r", 5000)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAddOneTo10k(b *testing.B) {
	s := benchCatalog(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := testCandidate(int64(20000 + i))
		if _, err := s.AddCandidateSet("one", "bench", []schemas.Candidate{c}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCorpusID10k(b *testing.B) {
	tasks := make([]schemas.Task, 10_000)
	for i := range tasks {
		c := testCandidate(int64(i + 1))
		c.ProblemStatement = strings.Repeat("text ", 200)
		tasks[i] = c.ToTask()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := schemas.CorpusID(tasks); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCandidateByID10kCold looks up one candidate in a fresh catalogue, as one
// command does: the index is built from the set objects first.
func BenchmarkCandidateByID10kCold(b *testing.B) {
	s := benchCatalog(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := New(s.Store).CandidateByID(schemas.InstanceID("o/r", 5000)); err != nil {
			b.Fatal(err)
		}
	}
}
