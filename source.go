// Package envgap holds envgap's own source tree, embedded at build time, so that the binary
// can write the harness zip of a Hub folder (export.HarnessPath) wherever it runs, without a
// checkout at hand.
//
// The embedded tree is every file git tracks that the harness zip carries (not what only tests
// use, export.HarnessOmits: the CI script .ci/ and data/datatest are not embedded; the test
// files and testdata of the package folders are, and the zip drops them): the module files,
// the Makefile, the README, the documents (docs/) and the package folders. The patterns must
// also match in the zip's own tree, which has no tests, so that the harness builds. It leaves out what a
// checkout accumulates but does not track: the runtime store (data/store), outputs (out/),
// binaries (bin/, ./envgap). A Go binary built inside a package folder or a test binary left
// there would be embedded by the folder patterns; export's harness writer drops those (see
// export.WriteHarness). TestSourceHoldsEveryTrackedFile checks the patterns against git.
package envgap

import (
	"embed"
	"io/fs"
)

// When a new top-level folder (or a new folder or file type under data/) is tracked, add it
// here (unless only tests use it); TestSourceHoldsEveryTrackedFile fails until then. A
// pattern naming a folder the zip leaves out would break the harness's build
// (TestHarnessZipBuilds).
//
//go:embed go.mod go.sum *.go Makefile README.md .gitignore docs
//go:embed cmd core crawl export harness lib schemas verify images scripts
//go:embed data/*.go data/*.json data/catalog data/demo data/demo/pypi/simple/.keep
var source embed.FS

// Source returns envgap's source tree as it was when this binary was built, rooted at the
// module folder (go.mod at its top).
func Source() fs.FS { return source }
