// Package data is envgap's content-addressed store (objects, refs, memo entries), and the
// home of committed inputs (repo lists, the demo study, reviewed scan decisions). What the
// records mean (candidates, verdicts, tasks, the funnel) is package data/catalog; stages
// depend on the small interfaces of iface.go rather than on *Store.
//
// On-disk layout of a store directory:
//
//	objects/<2 hex>/<62 hex>   immutable objects: canonical JSON records and raw blobs,
//	                           named by the SHA-256 of their bytes (sha256sum checks them),
//	                           written once (temp file, fsync, rename, fsync dir), mode 0444
//	refs/<name>                the only mutable names: one line "sha256:<hex>\n"; names are
//	                           slash-separated, e.g. candidates/add-1a2b3c, verdicts/<id>
//	memo/<stage>/<key hex>     stage keys (digest of a stage's inputs) to result digests
//	logs/refs.jsonl            append-only log of every ref change (time, name, old, new)
//	claims/<name>              work claimed by a running worker: owner and lease (claim.go)
//	lock                       the write lock (flock): ref changes, the ref log, claims
//	tmp/                       temp files of writes in progress; a killed write leaves at
//	                           most a file here, which fsck reports as removable and
//	                           never as damage
//
// Every read re-hashes the object and fails with ErrCorrupt when the bytes do not match
// their name. Nothing in objects/ is ever rewritten; refs and memo entries are replaced
// atomically by rename, refs under the store's lock (lock.go), so concurrent writers in
// several processes and machines are serialised. Fsck re-hashes every object and checks
// every ref and memo entry; the catalogue's fsck also follows what records point at.
package data
