package harbor

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
)

// Row is one row of tasks.parquet: the task's path (its instance id, the folder name the
// archive unpacks into) and the gzipped tar of its task directory.
type Row struct {
	Path       string `parquet:"path"`
	TaskBinary []byte `parquet:"task_binary"`
}

// createdBy replaces parquet-go's default footer, which names the build.
const createdBy = "envgap export --harbor"

// WriteParquet writes rows (in the order given) as tasks.parquet: uncompressed pages (the
// archives are gzipped already), PLAIN byte arrays, no page statistics, a fixed
// created_by: the same rows give the same bytes.
func WriteParquet(w io.Writer, rows []Row) error {
	pw := parquet.NewGenericWriter[Row](w,
		&parquet.WriterConfig{CreatedBy: createdBy},
		parquet.Compression(&parquet.Uncompressed),
		parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.Plain),
		parquet.DataPageStatistics(false),
		parquet.MaxRowsPerRowGroup(64),
	)
	if _, err := pw.Write(rows); err != nil {
		return fmt.Errorf("tasks.parquet: %w", err)
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("tasks.parquet: %w", err)
	}
	return nil
}

// ReadParquet reads tasks.parquet.
func ReadParquet(b []byte) ([]Row, error) {
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("tasks.parquet: %w", err)
	}
	for _, col := range []string{"path", "task_binary"} {
		if _, ok := f.Schema().Lookup(col); !ok {
			return nil, fmt.Errorf("tasks.parquet: no column %q (want path and task_binary)", col)
		}
	}
	r := parquet.NewGenericReader[Row](f)
	defer r.Close()
	rows := make([]Row, r.NumRows())
	n, err := r.Read(rows)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("tasks.parquet: %w", err)
	}
	return rows[:n], nil
}
