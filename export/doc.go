// Package export turns verified candidates into task rows and publishes the task set as a
// Hugging Face Hub dataset folder.
//
// Admission. Admit makes a task row (schemas.Task) of every candidate whose verdict is
// verified (a repair task) and of every reported candidate whose verdict is already_works
// (a control: is_control true, empty patch, gold_files and failure_signature). The row is
// the candidate's fields, the verdict's recipe where the candidate has no commands, the
// registry audit's categories and security flags (through an AuditSource), and the splits
// (full; lite for the lite set; secure when flagged). It is stored as ref
// tasks/<instance_id>. Admitting again is a no-op for unchanged rows; a changed row is
// stored, reported with the changed columns, and the old one stays reachable through the
// store's ref log.
//
// Exclusions. A task found broken after admission is never deleted: an Exclusion record
// (ref exclusions/<instance_id>, each newer one pointing at the one it supersedes) marks it
// excluded_from_scoring. The card's table lists them; Exclude records a hand
// exclusion (a parser or harness case no recheck measures).
//
// The export folder (Export) is what the Hub serves:
//
//	README.md                                YAML front matter (configs) + the dataset card
//	images/candidates-funnel.png             the candidates funnel chart the card embeds
//	data/<config>/test-NNNNN-of-MMMMM.parquet one or more files per config
//
// for the configs full, reported, repaired, lite, secure (task rows: schemas.Task as it is)
// and candidates (every candidate with its current outcome: schemas.Candidate, its
// `candidates:"optional"` strings null on rows that are not tasks; the viewer's default).
// The rows are the records of schemas/layout.go, whose tags name the columns and give the
// card's descriptions (layout.go here says how they are written and read). Column names,
// order and types are the card's: required strings, nullable
// strings, int64, bool, list<string> and list<struct<path: string, content: string>> as
// 3-level parquet LISTs. Files are zstd-compressed, strings PLAIN-encoded, row groups cut at
// 1,000 rows or 64 MB of text, files at 512 MB of text. Every string is checked for valid
// UTF-8 and every file list for repeated paths before anything is written. There are no
// timestamps in any file: the same store exports to byte-identical files.
//
// release.ReadTasks reads the full config back; schemas.CorpusID over its rows is the corpus id of
// the store's task set. CompareReleases compares two exported folders task by task.
//
// The credential scan and the registry audit are separate packages; Export takes them
// through narrow interfaces (Options.Reviewer, Options.Audits) from the command, so this
// package does not import them. Export runs in phases: check the options, claim the
// folder, collect (read, review, redact and check every row; nothing written yet), write
// into a temporary sibling folder, publish it by one rename, record the release.
package export
