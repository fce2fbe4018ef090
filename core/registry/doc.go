// Package registry is envgap's date-limited registry proxy: it serves the PyPI simple API
// and npm packuments as they stood at a cut-off instant, so that every client and client
// version in a container resolves against the registry of the candidate's registry_date.
//
// # URLs
//
// The cut-off is part of the path, so clients and caches never mix two cut-offs:
//
//	[/s/<session>]/c/<cutoff>/pypi/simple/<project>/            PEP 503 HTML or PEP 691 JSON
//	[/s/<session>]/c/<cutoff>/pypi/files/<project>/<file>       a wheel or sdist
//	[/s/<session>]/c/<cutoff>/pypi/files/<project>/<file>.metadata  PEP 658 metadata
//	[/s/<session>]/c/<cutoff>/npm/<name>                        packument (@scope%2fname too)
//	[/s/<session>]/c/<cutoff>/npm/<name>/<version-or-tag>       one version's document
//	[/s/<session>]/c/<cutoff>/npm/<name>/-/<file>.tgz           tarball
//
// <cutoff> is RFC 3339 with an offset (normalised to UTC) or a bare date, meaning the end
// of that day in UTC; a date-time without an offset is rejected (see schemas.ParseCutoff).
// The /s/<session> prefix attributes requests to a Session, whose Record lists what was
// served, hidden and refused and which upstream faults occurred; the evaluation core opens
// one session per container run and stores the record with the run.
//
// # Sessions
//
// The session is the cut-off. The core's proxy (Options with neither Cutoff nor AnyCutoff)
// serves only under a session bound to the asking address (Session.Bind, called with the
// container's address once it started; BindAnyAddress for a proxy behind a NAT, where the
// session's random id is the credential), at that session's cut-off. A request without a
// session, naming another date, or under a session that is unknown, closed, unbound or
// another container's is refused with RefusedStatus (403) and a message saying what was
// asked, what the asker's session allows, and that the cut-off is fixed; the refusal is
// recorded in the session the asking address holds (Record.Refused). Options.Cutoff serves
// one fixed cut-off without sessions (a Harbor task's registry); Options.AnyCutoff any cut-off
// a URL names (the stand-alone proxy of envgap registry serve).
//
// # Filtering
//
// PyPI: each file is filtered by its PEP 700 upload-time (served when at or before the
// cut-off); files without an upload time are hidden unless Options.IncludeUntimed; a
// version with no remaining file disappears from "versions"; a project with no remaining
// file is a 404. JSON answers carry exactly "application/vnd.pypi.simple.v1+json"; HTML
// "text/html; charset=utf-8" (or the v1+html type when that was negotiated); the choice
// follows Accept q-values (default HTML) and every answer has "Vary: Accept". Yanked files
// keep data-yanked="<reason>" / "yanked": true|"reason" (policy: Options.Yanked). Metadata
// files are announced under both PEP 658 and PEP 714 names. Project names are normalised
// (PEP 503) with a 301 redirect, as is a missing trailing slash.
//
// npm: versions published after the cut-off are dropped with their "time" entries;
// "time.modified" becomes the newest kept publish time; dist-tags are retargeted (a tag
// whose version is gone moves to the highest kept version at or below it, a stable tag
// never to a prerelease, "latest" is always present); a package created after the cut-off
// is a 404. Clients asking for the abbreviated form (application/vnd.npm.install-v1+json)
// get it with "time" kept, built from the full document. Tarball URLs are rewritten to the
// proxy. In strict mode (the default) files and tarballs of hidden versions are 404.
//
// # Upstreams and faults
//
// PyPI's upstream is any PEP 691 JSON index that reports upload-time (default
// DefaultPyPIUpstream); npm's is Options.NPMUpstream, which the command line sets to the
// registry the npm client is configured with (NPMConfigRegistry: `npm config get registry`,
// asked once where a command is wired) unless --npm-upstream names one.
// An upstream 404 is a 404. An upstream 5xx, timeout, connection error or malformed
// document is a 502 with a message, never a 404: an outage must not look like a package
// that does not exist.
//
// # Caches
//
// Artifacts and raw metadata documents live in a BlobCache keyed by SHA-256 (the index's
// sha256 for PyPI files; for npm tarballs, which are known by sha512 integrity, an alias in
// the RefStore maps the integrity to the SHA-256 after the first download). A second
// download of a file never goes upstream; bytes that do not match the index's digest are a
// 502. Metadata documents are cached with their validators (ETag, Last-Modified) in the
// RefStore under "meta/<sha256 of accept+url>" as JSON {url, accept, etag, last_modified,
// sha256, size, fetched_at}; after Options.MetadataTTL they are revalidated with a
// conditional request. The cached document is filtered per request, so two cut-offs over
// one document give two answers. Packuments are processed as streams: one pass builds a
// small index (times, tags, tarball digests) kept in memory per document digest, and each
// answer is written while reading the cached document again, decoding one version at a time.
//
// StoreCache keeps both in envgap's content-addressed store (package data): artifacts are
// objects, the small records memo entries of stage "registry". DiskBlobCache keeps artifacts
// in a directory of their own with a size bound and least-recently-used eviction (the store
// is write-once; see its doc for why eviction is safe with concurrent readers); the command
// line uses it, with StoreCache for the small records.
package registry
