package data

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envgap/envgap/schemas"
)

// Store benchmarks report ns/op for the store and, as a custom metric, the ratio of the
// store's time to writing or reading the same bytes as plain files (ratio < 2 means the
// store is at least half as fast as plain files).

func smallRecords(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(fmt.Sprintf(`{"instance_id":"envgap__o__r-%d","outcome":"not_checked","reason":"%s"}`, i, strings.Repeat("x", 100)))
	}
	return out
}

func blobs(n, size int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = make([]byte, size)
		rand.Read(out[i])
	}
	return out
}

func plainWrite(b *testing.B, dir string, items [][]byte) {
	for i, it := range items {
		p := filepath.Join(dir, fmt.Sprint(i))
		f, err := os.Create(p)
		if err != nil {
			b.Fatal(err)
		}
		f.Write(it)
		f.Sync()
		f.Close()
	}
}

func benchPut(b *testing.B, items [][]byte) {
	var total int64
	for _, it := range items {
		total += int64(len(it))
	}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		plainDir := b.TempDir()
		b.StartTimer()
		start := nowNano()
		plainWrite(b, plainDir, items)
		plain := nowNano() - start
		s, _ := Open(b.TempDir())
		start = nowNano()
		batch := s.NewBatch()
		for _, it := range items {
			if _, err := batch.Put(it); err != nil {
				b.Fatal(err)
			}
		}
		if err := batch.Commit(); err != nil {
			b.Fatal(err)
		}
		store := nowNano() - start
		b.ReportMetric(float64(store)/float64(plain), "store/plain")
		b.ReportMetric(float64(total)/(float64(store)/1e9)/1e6, "store-MB/s")
		b.ReportMetric(float64(total)/(float64(plain)/1e9)/1e6, "plain-MB/s")

		start = nowNano()
		for j := range items {
			if _, err := os.ReadFile(filepath.Join(plainDir, fmt.Sprint(j))); err != nil {
				b.Fatal(err)
			}
		}
		plainRead := nowNano() - start
		start = nowNano()
		for _, it := range items {
			if _, err := s.Get(schemas.Hash(it)); err != nil {
				b.Fatal(err)
			}
		}
		storeRead := nowNano() - start
		b.ReportMetric(float64(storeRead)/float64(plainRead), "get/plain-read")

		start = nowNano()
		rep, err := s.Fsck(context.Background())
		if err != nil || !rep.Clean() {
			b.Fatal(err)
		}
		fs := nowNano() - start
		b.ReportMetric(float64(total)/(float64(fs)/1e9)/1e6, "fsck-MB/s")
		b.ReportMetric(float64(len(items))/(float64(fs)/1e9), "fsck-objects/s")
	}
}

func BenchmarkStoreSmallRecords100k(b *testing.B) { benchPut(b, smallRecords(100_000)) }
func BenchmarkStoreBlobs1k1MiB(b *testing.B)      { benchPut(b, blobs(1000, 1<<20)) }
