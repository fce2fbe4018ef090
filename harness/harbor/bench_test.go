package harbor

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/envgap/envgap/schemas"
)

// BenchmarkHarborExport measures envgap export --harbor's part per task (materialize the
// project, write the task directory, archive it, the parquet row) and the parquet's size
// per task, on 20 tasks of the test project with envgap's real source as envgap-task's.
func BenchmarkHarborExport(b *testing.B) {
	base, mat := testTasks(b)
	const n = 20
	tasks := make([]schemas.Task, n)
	for i := range tasks {
		tasks[i] = base[0]
		tasks[i].InstanceID = fmt.Sprintf("envgap__acme__stats-%d", 100+i)
	}
	src := os.DirFS("../..")
	var files map[string][]byte
	start := time.Now()
	for b.Loop() {
		var err error
		if files, _, err = Build(context.Background(), tasks, Options{Materialize: mat, Source: src, Meta: Meta{CorpusID: "sha256:bench"}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N*n), "ms/task")
	b.ReportMetric(float64(len(files[ParquetPath]))/n, "parquet-bytes/task")
}
