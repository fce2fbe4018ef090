// Package schemas is the data model of envgap: the record types of every row of the
// dataset card (Task, the full config's row; Candidate, the candidates config's row) and of
// the intermediate records the stages exchange through the store (Recipe, Run, Verdict,
// Finding, Exclusion, Release, CandidateSet), the card's enums, strict validation with
// errors that name file, line, record and field, canonical JSON, the one Digest type, the
// corpus id, and the embedded JSON Schema files of the external formats.
//
// Record layout (layout.go): every column of the card is one struct field, defined once,
// with its JSON and parquet name, its type and its card description (`doc:` tag). The
// columns both records have sit in four groups (Ident, Spec, Origin, License) that Task and
// Candidate embed in the card's order. ColumnsOf lists a record's columns; validation, the
// JSON Schema files, the parquet configs, the card's field tables, the canonical JSON
// behind the corpus id and Candidate.ToTask all follow from it. Rules on shared columns are
// written once (validate.go, shared.validate); each record adds its own in its Validate.
//
// Canonical JSON: object keys sorted bytewise, no insignificant whitespace, no HTML
// escaping, strings valid UTF-8, no trailing newline. A record's digest is the SHA-256 of
// its canonical JSON, written "sha256:<hex>".
//
// This package uses the standard library only.
package schemas
