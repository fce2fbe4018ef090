// Package scan is the credential scan of everything envgap exports or stores: the text
// fields of every candidate and task (problem_statement, patch, gold_files and
// project_files contents, commands, failure patterns), the captured step outputs of
// the runs behind every verdict, the bodies of the crawl's cached GitHub answers
// (field crawl_cache, path "METHOD URL": a server may echo a credential into an answer),
// and the source files the harness zip carries (field harness, path the entry's name in
// the zip; RunOptions.Harness, the bytes export.HarnessSource gives, so tests and their
// fixtures are not among them). A harness finding cannot be redacted: the zip carries the
// source as built, so CheckReviewed refuses a redact decision there.
// Run logs and the crawl cache are stored, not published: their findings still need a
// decision before an export, but the card does not list them.
//
// # Engine
//
// The scan runs gitleaks v8 as a library. Its configuration is built once per Scanner,
// in code, from gitleaks' embedded default rules (read with a private viper instance, so
// no package-level state of gitleaks' TOML loader is touched), then adjusted:
//
//   - Path allowlists are removed. gitleaks skips whole paths such as package-lock.json,
//     vendor/, node_modules/ and go.sum; every text envgap exports is published, so every
//     path is scanned. An allowlist that combined a path with another condition (AND) is
//     dropped whole, because without its path it would allow more than it did.
//     Content allowlists (regexes, stop words) are kept.
//   - `gitleaks:allow` comments are ignored (IgnoreGitleaksAllow): the scanned text is
//     untrusted and may say anything.
//   - Encoded text (base64, hex, percent) is decoded and scanned again (MaxDecodeDepth,
//     default 1).
//   - The jwt rule's keyword "ey" (in "key", "they": every text) becomes ".ey", which every
//     match of its regex contains: the same findings for a fraction of the work.
//   - Three envgap rules are added: AWS secret access keys next to their variable name
//     (gitleaks has no such rule), Authorization header values, and text that starts like
//     a GitHub token but is not one (the `ghp_import` case of the dataset card).
//
// Texts are cut into chunks of about 256 KiB at line breaks (or anywhere, for very long
// lines) with 16 KiB of overlap, scanned by a bounded pool of workers, and findings from
// overlapping chunks are merged by their byte range.
//
// # Detectors: the reference and the fast one
//
// A Scanner cuts texts into chunks and hands each to a detector, which finds every
// rule's hits in it. gitleaksDetector, gitleaks alone with every rule on every chunk (with
// decoding), is the reference; fastDetector, the line prefilter below, is the one a
// Scanner uses. The fast one must find exactly what the reference finds:
// TestFastDetectorEveryRule scans, for each rule of the configuration, a text made from
// samples of the rule's own regex (in code, prose, alone and base64-encoded) with both
// and names every rule on which they differ; TestPrefilterSameFindings and
// TestWindowedRulesSameFindings compare them on corpora. A gitleaks upgrade is therefore a
// version bump (and EngineName) plus a run of these tests: the rules they name are the
// ones whose reading in the fast path must be fixed (or that must run as whole rules).
//
// # Speed: the line prefilter
//
// gitleaks runs a rule on a whole fragment when one of the rule's keywords occurs
// anywhere in it, and a handful of rules have keywords that occur in almost every text
// ("key", "token", "s.", "api-", "authorization"). Each chunk is therefore read once in Go
// for keywords, and the rules are split into groups that run, without decoding, on the
// parts of the chunk that can hold a match:
//
//   - Cold rules (most): every match of the rule's regex contains one of its keywords
//     (or starts with one: the prefixes a match must start with are read from the
//     regex, so ((?:A3T[A-Z0-9]|AKIA|ASIA|...)...) is anchored on its keywords too),
//     and a match holds at most a bounded number of newlines before and after it
//     (both checked on the regex's syntax tree when the Scanner is built). They run on
//     the lines with one of their keywords, widened by that keyword's own bounds plus
//     one line. For gitleaks' semi-generic rules (an identifier, then
//     [ \t\w.-]{0,20}[\s'"]{0,3} and an assignment operator, see semiGeneric), a keyword
//     that only such rules use opens a window only where an operator follows it.
//   - Hot rules (generic-api-key, vault-service-token, octopus-deploy-api-key, the
//     Authorization rule, and twilio-api-key, authress-service-client-access-key and
//     databricks-api-token, whose keywords "sk", "ext_" and "dapi" occur in most code):
//     a Go pre-check, a necessary condition for a match at a keyword occurrence (the
//     rest of generic-api-key's match after the keyword, "SK" and 32 hex digits for
//     twilio-api-key, ...), selects the lines up to where such a match can end, plus one
//     line each side. A pre-check is tied to the rule's exact regex; if a gitleaks
//     update changes it, the rule becomes a cold or whole rule (a test reports it).
//   - Rules evaluated in Go (direct.go): generic-api-key and the Authorization rule,
//     whose windows hold many matches, each costing gitleaks a submatch and allowlist
//     regexes. Their regexes are evaluated in Go with RE2's leftmost-first semantics
//     (generic.go, authAll; TestGenericMatcherIsTheRegex and TestAuthMatcherIsTheRegex
//     compare them with the regex engine) and each match gets detectRule's treatment:
//     the secret group taken from the match again, Shannon entropy against the rule's
//     threshold, the global and rule allowlists (stop words first, then the regexes
//     through gitleaks' own methods, answers remembered), the location and line as
//     gitleaks computes them, and, for the decoding pass, gitleaks' exported segment
//     functions. TestDirectRulesMatchGitleaks and TestDirectDecodingPassMatchesGitleaks
//     compare them hit for hit with gitleaks. A window that cannot be decided in Go (a
//     secret whose entropy is the threshold up to rounding, unless it is exact in any
//     order; invalid UTF-8; a rune folding to ASCII) goes to gitleaks.
//   - Rules with their own windows (linerules.go): private-key runs on windows from
//     each header to an end marker its match must stop at, each window scanned alone
//     (its [\s\S-] would cross a separator); sourcegraph-access-token (any word of 40
//     hex digits) and slack-webhook-url (hooks.slack.com with unescaped dots) run with
//     the cold rules on the lines a Go reading of their regexes finds, plus the first
//     line holding one of their keywords so that gitleaks runs them on the fragment.
//   - Whole rules (curl-auth-user, path conditions, multi-part rules, ...): they run on
//     the whole chunk when one of their keywords occurs (or the path matches, or they
//     have no keyword).
//
// The selected windows of a group are joined into one fragment, separated by 16
// newlines, a NUL byte and 16 newlines, which no match of those rules can cross; hits
// are mapped back to the chunk. gitleaks' rule that drops a generic finding when a
// specific rule's secret on the same line contains it is applied again across groups.
// Hot windows that go to gitleaks are remembered by their text (bounded memo per
// Scanner): repeated windows are scanned once.
//
// Decoding. gitleaks' decoder (base64, hex, percent, unicode escapes) is first run,
// in effect, in Go: decodeCandidate (decode.go) finds the values the decoder's regex
// would take on a line and decodes them as the decoder does, so that a line it rejects
// holds nothing the decoder decodes (TestDecodeCandidateIsNecessary checks it against
// the decoder); the decoder itself then runs on the remaining candidate lines. When it
// decodes something, the chunk gets the decoding pass of gitleaks alone, locally: the
// whole rules run with decoding on the whole chunk (instead of their plain run) when
// one of them runs on the chunk, one of their keywords is in the decoded text, or a
// decoded value lies in a private-key window; the cold and hot rules run with decoding
// on the candidate lines and 16 lines around them, joined into one fragment with the
// separator above (also after the last window when it does not end the chunk); of the
// latter only the decoding pass's hits (tagged "decoded:") are kept, mapped back to the
// chunk, the plain pass being the prefiltered one. The rules evaluated in Go take
// that decoding pass in Go.
//
// The prefilter's reading uses tables: a 32 KB set of hashed trigrams that can start a
// keyword (every case variant) rejects about 95% of positions; then the keyword pair
// table, indexed by the raw bytes, guarded by a 64 Kbit set of the pairs that start a
// keyword and, per pair, a 256-bit set of the bytes that can follow; byte classes
// (\w, hex, base64, \s) are one 256-byte table. Path conditions are evaluated with Go's
// regexp package (a call into gitleaks' engine costs more than the match on a path).
//
// A chunk holding a rune that lower-cases or case-folds to an ASCII letter (ſ, K, İ)
// is planned on a copy with each replaced by its ASCII letter: its lines are the same,
// and every keyword and pre-check that holds for the chunk (as gitleaks lower-cases it,
// and as case-insensitive regexes fold) holds for the copy. The findings are the same
// as those of the exhaustive scan (every rule on every chunk, with decoding);
// TestPrefilterSameFindings compares both on texts with many providers' secrets (plain,
// encoded and with folding runes) and on both benchmark corpora, and
// TestWindowedRulesSameFindings on texts made for the rules with their own windows.
//
// Measured with -tags gore2regex on 2 shared cores (make bench): 59-62 MB/s (about 31 MB
// per CPU-second) on BenchmarkScanThroughput's 100 MB of varied code, logs, manifests
// and prose, 2.3x the previous version measured back to back (26 MB/s); the shared
// machine has slower periods, in which both read about 25% lower. About 150 MB/s on
// BenchmarkScanRepetitive; BenchmarkScanDense shows dense hostile texts stay linear.
// About 40% of the rest is the prefilter's own reading (keywords, then
// decodeCandidate), then the rules evaluated in Go, the cold windows, the decoding
// passes and the whole rules.
//
// # Findings and tiers
//
// A finding (schemas.Finding) names the instance, the field, the path (a file path, or
// "<side>/<step>" for run logs), the 1-based line, the rule, a redacted match and a tier:
//
//   - likely_real: a provider-specific rule (GitHub, AWS, Slack, Stripe, GitLab, npm,
//     a private key with a base64 body, ...).
//   - to_review: a generic rule (generic-api-key, curl headers, Authorization values, the
//     GitHub lookalike rule).
//   - public_example: a known public example (AWS's documentation keys, jwt.io's sample
//     token), a placeholder (`Bearer <your-token>`, `${TOKEN}`, `xxxx`), or PEM BEGIN/END
//     markers with no key body between them (string literals in code).
//
// The secret itself is never stored or printed. Match keeps only the text around it with
// the secret replaced by `[REDACTED]`. The fingerprint is the SHA-256 of
// "envgap-scan-v1", instance id, field, path, rule and secret, separated by NUL bytes, so
// a decision survives re-scans and line moves. (A fingerprint of a short, guessable
// secret could be confirmed by guessing; provider tokens are far too long for that.)
//
// # Review
//
// Decisions live in a committed JSON file (data/scan-review.json by default):
//
//	{
//	  "version": 1,
//	  "decisions": [
//	    {"fingerprint": "…", "decision": "false_positive",
//	     "reason": "ghp_import is the ghp-import package, not a token",
//	     "card": "ghp_import",
//	     "instance_id": "…", "field": "patch", "path": "setup.py", "rule": "…",
//	     "by": "reviewer name", "at": "2026-09-28"}
//	  ]
//	}
//
// decision is "false_positive" (left as written; reason required) or "redact" (the
// secret is replaced by `[REDACTED:<rule>]` in every export). card is the short phrase the
// dataset card uses for the hit; instance_id, field, path and rule are context for people
// (filled from the finding by `envgap scan decide`): only the fingerprint selects the
// finding. Decisions are sorted by fingerprint so the file diffs well.
// Findings of the public_example tier are decided automatically (false_positive, by
// "envgap scan", with the example they match) unless the file decides them otherwise.
//
// The decisions about envgap's own source (field harness) come with that source: the
// binary embeds its data/scan-review.json (RunOptions.SourceReview), whose decisions
// decide the harness findings the review file in use leaves undecided, so a binary run
// outside its checkout (where data/scan-review.json is not at hand) needs no decision
// about its own source. They are never listed as stale. A finding left undecided on a
// line of the source's go.sum that is a whole Go module checksum ("module version h1:"
// and the base64 of a SHA-256) is decided false_positive by the scan itself: every
// dependency update adds such lines, and generic-api-key takes some of them for keys.
//
// # Store
//
// Each `envgap scan` stores a Record (kind "scan") and points the ref scans/latest at
// it. The record lists every scanned object (task, candidate, verdict) by digest, every
// finding occurrence (its schemas.Finding nested under "finding") with the digest of the
// text it is in and the byte range of the
// secret, the decision that applies, every skipped text with its reason, and notes on
// texts scanned with a caveat (binary, invalid UTF-8, lines cut). CheckReviewed, Redactions
// and CardSection read that record; export calls them.
package scan
