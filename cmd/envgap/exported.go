package main

import (
	"fmt"

	"github.com/envgap/envgap/schemas"
)

// readExportedTasks reads the task rows of an exported Hub folder (data/full/*.parquet).
func readExportedTasks(dir string) ([]schemas.Task, error) {
	return nil, fmt.Errorf("corpus id of %s: reading an exported folder needs the export stage, which has not landed yet; pass a tasks .jsonl file", dir)
}
