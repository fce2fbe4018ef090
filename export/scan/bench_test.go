package scan

import (
	"context"
	"fmt"
	"math/rand"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

var prose = strings.Fields(`the build fails on a clean machine because the declared environment
does not match what the program needs at run time and the maintainers fixed it by pinning
a dependency to a version that still resolves while the issue reporter pasted the full log
of pip and npm including warnings about deprecated packages and a traceback from setup
tools that could not find the compiler headers for the extension module`)

// benchCorpus returns texts totalling about size bytes of code, prose and build logs,
// with a fake token in roughly one text of a hundred.
func benchCorpus(size int) []Text {
	r := rand.New(rand.NewSource(42))
	f := newFakes(43)
	var files []string
	for _, c := range cleanFiles {
		files = append(files, c)
	}
	sort.Strings(files)
	var out []Text
	total := 0
	for i := 0; total < size; i++ {
		var b strings.Builder
		target := 4<<10 + r.Intn(60<<10)
		for b.Len() < target {
			switch r.Intn(3) {
			case 0:
				b.WriteString(files[r.Intn(len(files))])
			case 1:
				for range 12 + r.Intn(30) {
					b.WriteString(prose[r.Intn(len(prose))])
					b.WriteByte(' ')
				}
				b.WriteString(".\n\n")
			default:
				fmt.Fprintf(&b, "Collecting package-%d==%d.%d.%d\n  Downloading package_%d-%d.%d-py3-none-any.whl (%d kB)\nERROR: Could not build wheels for pkg%d, which is required to install pyproject.toml-based projects\n",
					r.Intn(999), r.Intn(9), r.Intn(30), r.Intn(9), r.Intn(999), r.Intn(9), r.Intn(30), r.Intn(900), r.Intn(99))
			}
		}
		if i%100 == 0 {
			b.WriteString("export GITHUB_TOKEN=" + f.githubPAT() + "\n")
		}
		out = append(out, Text{InstanceID: fmt.Sprintf("envgap__bench__r-%d", i), Field: FieldProjectFiles, Path: fmt.Sprintf("f%d.py", i), Content: b.String()})
		total += b.Len()
	}
	return out
}

// BenchmarkScanThroughput scans 100 MB of varied code, manifests, logs, patches and prose
// (variedCorpus: no two texts alike) with one worker per CPU and reports MB/s and MB per
// CPU-second. Target: at least 50 MB/s on 2 cores with -tags gore2regex.
func BenchmarkScanThroughput(b *testing.B) {
	benchScan(b, variedCorpus(100<<20, 7, 30))
}

// BenchmarkScanRepetitive scans 100 MB of the old benchmark corpus, which repeats six
// files: repeated lines are cheaper than on real input.
func BenchmarkScanRepetitive(b *testing.B) {
	benchScan(b, benchCorpus(100<<20))
}

func benchScan(b *testing.B, corpus []Text) {
	sc, err := NewScanner(Options{})
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	for _, t := range corpus {
		size += int64(len(t.Content))
	}
	b.SetBytes(size)
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	b.ResetTimer()
	var found int
	for range b.N {
		in := make(chan Text, 64)
		go func() {
			for _, t := range corpus {
				in <- t
			}
			close(in)
		}()
		res := sc.ScanTexts(context.Background(), in, runtime.NumCPU())
		found = len(res.Findings)
	}
	b.StopTimer()
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := time.Duration(ru1.Utime.Nano() - ru0.Utime.Nano() + ru1.Stime.Nano() - ru0.Stime.Nano())
	// CPU seconds per MB, so a run on a busy shared machine still says what one core does.
	b.ReportMetric(float64(size)*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(size)/1e6/sec, "MB/s")
	b.ReportMetric(float64(found), "findings")
	b.ReportMetric(float64(runtime.NumCPU()), "workers")
}

// BenchmarkScanDense scans 8 MB of hostile texts where nearly every line holds a finding:
// Authorization headers and assignments, PEM markers, and one 2 MB line of markers and
// keys. It shows the scan stays linear in the number of findings (each finding reads
// only the hits and text near it).
func BenchmarkScanDense(b *testing.B) {
	rep := func(unit string, size int) string { return strings.Repeat(unit, size/len(unit)) }
	benchScan(b, []Text{
		{InstanceID: "envgap__bench__dense-1", Field: FieldProjectFiles, Path: "auth.txt",
			Content: rep("authorization: bearer xyz123 token=abcdefghijklmnop123\n", 3<<20)},
		{InstanceID: "envgap__bench__dense-2", Field: FieldProjectFiles, Path: "pem.txt",
			Content: rep("-----BEGIN RSA PRIVATE KEY-----\nabc KEY-----\n", 3<<20)},
		{InstanceID: "envgap__bench__dense-3", Field: FieldProjectFiles, Path: "line.txt",
			Content: rep("-----BEGIN PRIVATE KEY----- KEY----- api_key=abcdefghijk123456 ", 2<<20)},
	})
}
