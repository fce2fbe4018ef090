// Package hub publishes an exported folder to a Hugging Face Hub dataset repository
// through the Hub's HTTP API, and tells what a publish would change.
//
// The wire format is the one the huggingface_hub client speaks:
//
//	GET  /api/datasets/{repo}/revision/{rev}      the head commit ({"id", "sha"}); 404 when the repo is missing
//	POST /api/repos/create                        {"name", "organization", "type": "dataset", "private"}; 409 when it exists
//	GET  /api/datasets/{repo}/tree/{rev}?recursive=true
//	                                              [{"type", "path", "oid", "size", "lfs": {"oid", "size", "pointerSize"}}],
//	                                              paged with a Link: <...>; rel="next" header
//	POST /api/datasets/{repo}/preupload/{rev}     {"files": [{"path", "sample", "size", "sha"}]}
//	                                              -> {"files": [{"path", "uploadMode": "lfs"|"regular", "shouldIgnore"}]}
//	POST /datasets/{repo}.git/info/lfs/objects/batch   (git-lfs batch API, application/vnd.git-lfs+json)
//	                                              {"operation": "upload", "transfers": ["basic", "multipart"],
//	                                               "objects": [{"oid", "size"}], "hash_algo": "sha256", "ref": {"name"}}
//	                                              -> {"objects": [{"oid", "size", "actions": {"upload": {"href", "header"},
//	                                                  "verify": {"href", "header"}}}]}; no actions: already stored
//	PUT  {upload.href}                            the bytes (or, with header.chunk_size, one PUT per part and a
//	                                              completion POST {"oid", "parts": [{"partNumber", "etag"}]})
//	POST {verify.href}                            {"oid", "size"}
//	POST /api/datasets/{repo}/commit/{rev}        application/x-ndjson, one {"key", "value"} object per line:
//	                                              header {"summary", "description", "parentCommit"}, then
//	                                              file {"content": base64, "path", "encoding": "base64"},
//	                                              lfsFile {"path", "algo": "sha256", "oid", "size"},
//	                                              deletedFile {"path"}
//
// The token (HF_TOKEN) goes as "Authorization: Bearer" to the Hub endpoint's own origin
// only: never to an LFS upload URL (a presigned storage URL), never into an error, a log
// line or a report.
//
// A plan compares the local files with the remote tree: a regular file is unchanged when
// its git blob id (SHA-1 of "blob <size>\0" + bytes) equals the tree's oid, an LFS file
// when its SHA-256 equals the tree's lfs.oid. Remote files under data/ that the folder no
// longer has are deleted (a config that shrank from two files to one); anything else on
// the remote (a LICENSE.md, the harness) is left alone.
package hub
