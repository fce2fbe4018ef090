package main

import (
	"github.com/envgap/envgap/export"
	"github.com/envgap/envgap/schemas"
)

// readExportedTasks reads the task rows of an exported Hub folder (data/full/*.parquet).
func readExportedTasks(dir string) ([]schemas.Task, error) {
	return export.ReadTasks(dir)
}
