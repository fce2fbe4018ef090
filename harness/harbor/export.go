package harbor

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/envgap/envgap/lib/agent"
	"github.com/envgap/envgap/schemas"
)

// Paths of the Hub folder's Harbor files.
const (
	ParquetPath = "harbor/tasks.parquet"
	DatasetPath = "harbor/dataset.toml"
)

// Options configure Build.
type Options struct {
	// Materialize writes a task's project at base_commit (as envgap run's workspace).
	Materialize agent.MaterializeFunc
	// Source is envgap's source tree (envgap.Source): envgap-task is built from it.
	Source fs.FS
	Meta   Meta
}

// Report says what Build made.
type Report struct {
	Tasks        int           `json:"tasks"`
	Excluded     int           `json:"excluded"`
	ParquetBytes int           `json:"parquet_bytes"`
	Duration     time.Duration `json:"duration_ns"`
}

// Build returns the Hub folder's Harbor files (ParquetPath, DatasetPath) of the published
// task rows: one row per task that is not excluded from scoring, sorted by instance id.
func Build(ctx context.Context, tasks []schemas.Task, o Options) (map[string][]byte, *Report, error) {
	start := time.Now()
	if o.Materialize == nil || o.Source == nil {
		return nil, nil, fmt.Errorf("harbor: no materializer or source tree wired in")
	}
	tool, err := ToolSource(o.Source)
	if err != nil {
		return nil, nil, fmt.Errorf("harbor: %w", err)
	}
	var sel []*schemas.Task
	rep := &Report{}
	for i := range tasks {
		if tasks[i].ExcludedFromScoring {
			rep.Excluded++
			continue
		}
		sel = append(sel, &tasks[i])
	}
	sort.Slice(sel, func(i, j int) bool { return sel[i].InstanceID < sel[j].InstanceID })
	rows := make([]Row, 0, len(sel))
	var ds strings.Builder
	ds.WriteString("# EnvGap in Harbor's dataset format, written by envgap export --harbor.\n")
	head := struct {
		Dataset struct {
			Name        string   `toml:"name"`
			Version     string   `toml:"version"`
			Description string   `toml:"description"`
			Keywords    []string `toml:"keywords"`
		} `toml:"dataset"`
	}{}
	head.Dataset.Name = Org + "/envgap"
	head.Dataset.Version = o.Meta.CorpusID
	head.Dataset.Description = fmt.Sprintf("EnvGap: %d environment-repair tasks (corpus id %s); tasks.parquet holds each task directory as a gzipped tar", len(sel), o.Meta.CorpusID)
	head.Dataset.Keywords = []string{"envgap", "environment-repair", "dependencies"}
	var hb bytes.Buffer
	if err := toml.NewEncoder(&hb).Encode(head); err != nil {
		return nil, nil, err
	}
	ds.Write(hb.Bytes())
	for _, t := range sel {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		proj, err := LoadProject(ctx, t, o.Materialize)
		if err != nil {
			return nil, nil, fmt.Errorf("harbor: %w", err)
		}
		files, err := TaskDir(t, proj, tool, o.Meta)
		if err != nil {
			return nil, nil, fmt.Errorf("harbor: %w", err)
		}
		b, err := Archive(files)
		if err != nil {
			return nil, nil, fmt.Errorf("harbor: %s: %w", t.InstanceID, err)
		}
		rows = append(rows, Row{Path: t.InstanceID, TaskBinary: b})
		fmt.Fprintf(&ds, "\n[[tasks]]\nname = %q\ndigest = %q\n", TaskName(t.InstanceID), "sha256:"+schemas.Hash(b).Hex())
	}
	var pq bytes.Buffer
	if err := WriteParquet(&pq, rows); err != nil {
		return nil, nil, fmt.Errorf("harbor: %w", err)
	}
	rep.Tasks, rep.ParquetBytes, rep.Duration = len(rows), pq.Len(), time.Since(start)
	return map[string][]byte{ParquetPath: pq.Bytes(), DatasetPath: []byte(ds.String())}, rep, nil
}
