package release

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/envgap/envgap/schemas"
	"github.com/parquet-go/parquet-go"
)

// The configs of the Hub folder, in the card's order.
const (
	ConfigFull       = "full"
	ConfigReported   = "reported"
	ConfigRepaired   = "repaired"
	ConfigLite       = "lite"
	ConfigSecure     = "secure"
	ConfigCandidates = "candidates"
)

// Configs lists every config of the Hub folder: five task configs, then candidates.
var Configs = []string{ConfigFull, ConfigReported, ConfigRepaired, ConfigLite, ConfigSecure, ConfigCandidates}

// HubSplit is the Hub's one split of every config (there is no training data); not a
// task config (Config*) nor a split label of a task row (schemas.Split).
const HubSplit = "test"

// Limits bound the parquet files: rows and uncompressed bytes per row group (the Hub's
// viewer wants row groups well under 100 MB), and uncompressed bytes per file (a config
// larger than that is written as several files).
type Limits struct {
	RowsPerGroup  int
	BytesPerGroup int64
	BytesPerFile  int64
}

// DefaultLimits are the limits Export uses when none are given.
var DefaultLimits = Limits{RowsPerGroup: 1000, BytesPerGroup: 64 << 20, BytesPerFile: 512 << 20}

// FileInfo describes one written parquet file.
type FileInfo struct {
	// Path is relative to the export folder, with forward slashes.
	Path      string `json:"path"`
	Rows      int    `json:"rows"`
	RowGroups int    `json:"row_groups"`
	Bytes     int64  `json:"bytes"`
	SHA256    string `json:"sha256"`
}

// createdBy is written into every file's footer instead of parquet-go's default, which
// names the build: the same rows must give the same bytes from any build of envgap.
const createdBy = "envgap export"

func writerOptions() []parquet.WriterOption {
	return []parquet.WriterOption{
		&parquet.WriterConfig{CreatedBy: createdBy},
		parquet.Compression(&parquet.Zstd),
		// PLAIN strings: parquet-go's default DELTA_LENGTH_BYTE_ARRAY is not read by
		// older readers, and PLAIN costs nothing measurable here.
		parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.Plain),
		// Page min/max statistics of 40 KB texts would double the pages' size and help no
		// query: the columns are read whole.
		parquet.DataPageStatistics(false),
	}
}

// DataDir returns the folder of a config, relative to the export folder.
func DataDir(config string) string { return path.Join("data", config) }

// WriteConfig writes rows as data/<config>/test-NNNNN-of-MMMMM.parquet under root.
func WriteConfig[T any](root, config string, rows []T, layout RowLayout[T], lim Limits) ([]FileInfo, error) {
	// Cut into files by uncompressed size; an empty config is one file with no rows, so
	// every config named in the card's YAML has a file.
	var shards [][]T
	start, acc := 0, int64(0)
	for i := range rows {
		n := layout.size(&rows[i])
		if i > start && acc+n > lim.BytesPerFile {
			shards = append(shards, rows[start:i])
			start, acc = i, 0
		}
		acc += n
	}
	shards = append(shards, rows[start:])
	dir := filepath.Join(root, filepath.FromSlash(DataDir(config)))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("export %s: %w", config, err)
	}
	infos := make([]FileInfo, 0, len(shards))
	for i, shard := range shards {
		name := fmt.Sprintf("%s-%05d-of-%05d.parquet", HubSplit, i, len(shards))
		rel := path.Join(DataDir(config), name)
		info, err := writeFile(filepath.Join(dir, name), shard, layout, lim)
		if err != nil {
			return nil, fmt.Errorf("export %s: %s: %w", config, rel, err)
		}
		info.Path = rel
		infos = append(infos, info)
	}
	return infos, nil
}

// writeFile writes one parquet file, cutting row groups at lim.RowsPerGroup rows or
// lim.BytesPerGroup uncompressed bytes, whichever comes first.
func writeFile[T any](dst string, rows []T, layout RowLayout[T], lim Limits) (FileInfo, error) {
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return FileInfo{}, err
	}
	h := schemas.NewHasher()
	cw := &countingWriter{w: io.MultiWriter(f, h)}
	bw := bufio.NewWriterSize(cw, 1<<20)
	opts := append(writerOptions(), parquet.MaxRowsPerRowGroup(int64(lim.RowsPerGroup)), layout.schema())
	for _, t := range layout.tags {
		opts = append(opts, t)
	}
	w := parquet.NewGenericWriter[T](bw, opts...)
	write := layout.write
	if write == nil {
		write = func(w *parquet.GenericWriter[T], rows []T) error { _, err := w.Write(rows); return err }
	}
	groups := 0
	flush := func(batch []T) error {
		if len(batch) == 0 {
			return nil
		}
		if err := write(w, batch); err != nil {
			return err
		}
		groups++
		return w.Flush()
	}
	start, acc := 0, int64(0)
	for i := range rows {
		n := layout.size(&rows[i])
		if i > start && (i-start >= lim.RowsPerGroup || acc+n > lim.BytesPerGroup) {
			if err := flush(rows[start:i]); err != nil {
				f.Close()
				return FileInfo{}, err
			}
			start, acc = i, 0
		}
		acc += n
	}
	err = flush(rows[start:])
	if err == nil {
		err = w.Close()
	}
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return FileInfo{}, err
	}
	return FileInfo{Rows: len(rows), RowGroups: groups, Bytes: cw.n, SHA256: h.Digest().Hex()}, nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

// Write counts the bytes written through.
func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// ErrNotExported is returned when a folder has no parquet files for a config.
var ErrNotExported = errors.New("no parquet files")

// ConfigFiles lists data/<config>/*.parquet of an export folder, sorted by name.
func ConfigFiles(dir, config string) ([]string, error) {
	pattern := filepath.Join(dir, filepath.FromSlash(DataDir(config)), "*.parquet")
	files, err := filepath.Glob(pattern)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		if config != ConfigFull && config != ConfigCandidates {
			// A task config with no rows has no file; the folder is still an export when
			// full has files.
			if full, _ := filepath.Glob(filepath.Join(dir, filepath.FromSlash(DataDir(ConfigFull)), "*.parquet")); len(full) > 0 {
				return nil, nil
			}
		}
		return nil, fmt.Errorf("%s: %w under %s (is it a folder written by envgap export?)", dir, ErrNotExported, DataDir(config))
	}
	sort.Strings(files)
	return files, nil
}

// ReadConfig reads every row of a config of an export folder. The files' schema must be
// exactly T's (same columns, same types, same order): a file from another tool or an older
// layout is refused rather than read with columns silently missing.
func ReadConfig[T any](dir, config string, layout RowLayout[T]) ([]T, error) {
	files, err := ConfigFiles(dir, config)
	if err != nil {
		return nil, err
	}
	want := layout.schema()
	out := []T{} // a config with no rows (no file) reads as empty, not null
	for _, name := range files {
		rows, err := ReadParquetFile(name, want, layout)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		out = append(out, rows...)
	}
	return out, nil
}

// OpenParquetFile opens a parquet file; close the *os.File when done with it.
func OpenParquetFile(name string) (*parquet.File, *os.File, error) {
	fh, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	st, err := fh.Stat()
	if err == nil {
		var pf *parquet.File
		if pf, err = parquet.OpenFile(fh, st.Size()); err == nil {
			return pf, fh, nil
		}
	}
	fh.Close()
	return nil, nil, err
}

func ReadParquetFile[T any](name string, want *parquet.Schema, layout RowLayout[T]) ([]T, error) {
	pf, fh, err := OpenParquetFile(name)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	if got := SchemaText(pf.Schema()); got != SchemaText(want) {
		return nil, fmt.Errorf("schema differs from the card's columns:\n got: %s\nwant: %s", got, SchemaText(want))
	}
	flat := layout.flatType()
	r := parquet.NewReader(pf, parquet.SchemaOf(reflect.New(flat).Interface()))
	defer r.Close()
	cols := schemas.ColumnsOf(reflect.TypeFor[T]())
	rows := make([]T, pf.NumRows())
	for i := range rows {
		v := reflect.New(flat)
		if err := r.Read(v.Interface()); err != nil {
			return nil, fmt.Errorf("row %d of %d: %w", i, len(rows), err)
		}
		dst := reflect.ValueOf(&rows[i]).Elem()
		for j, c := range cols {
			dst.FieldByIndex(c.Index).Set(v.Elem().Field(j))
		}
	}
	return rows, nil
}

// SchemaText is a schema's printed form without its name, for comparing layouts.
func SchemaText(s *parquet.Schema) string {
	text := s.String()
	if i := strings.Index(text, "{"); i >= 0 {
		text = text[i:]
	}
	return strings.Join(strings.Fields(text), " ")
}
