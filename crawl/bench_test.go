package crawl_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/envgap/envgap/crawl"
)

// BenchmarkFindManifests lists the manifests of a 20,000-file tree.
func BenchmarkFindManifests(b *testing.B) {
	var paths []string
	for d := 0; d < 200; d++ {
		for f := 0; f < 100; f++ {
			paths = append(paths, fmt.Sprintf("pkg%d/sub/file%d.py", d, f))
		}
		paths = append(paths, fmt.Sprintf("pkg%d/setup.py", d))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		crawl.FindManifests(paths)
	}
}

// BenchmarkCrawlPRs crawls the test world (two repositories served through file://, a
// fake GitHub) and reports the API requests and git fetches per candidate.
func BenchmarkCrawlPRs(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		w := newWorld(b)
		st := newStore(b)
		b.StartTimer()
		rep, err := crawl.CrawlPRs(context.Background(), w.options("bench"), w.deps(st))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(rep.RequestsPerCandidate, "requests/candidate")
		b.ReportMetric(float64(rep.GitFetches), "git-fetches")
	}
}
