// Package release is the Hub folder's format, shared by the stage that writes it (export)
// and the one that reads it (harness): the configs (full, reported, repaired, lite,
// secure and candidates) and which tasks belong to each, the parquet layout of their
// rows (the schemas records themselves), the writer's row-group and file limits, and the
// readers of an exported folder.
package release
