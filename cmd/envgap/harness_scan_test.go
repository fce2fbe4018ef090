package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/envgap/envgap"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/export"
	"github.com/envgap/envgap/export/scan"
	"github.com/envgap/envgap/lib/release"
	"github.com/envgap/envgap/schemas"
)

var (
	harnessScannerOnce sync.Once
	harnessScanner     *scan.Scanner
	harnessScannerErr  error
)

func testScanner(t testing.TB) *scan.Scanner {
	t.Helper()
	harnessScannerOnce.Do(func() { harnessScanner, harnessScannerErr = scan.NewScanner(scan.Options{}) })
	if harnessScannerErr != nil {
		t.Fatal(harnessScannerErr)
	}
	return harnessScanner
}

// fakeToken is shaped like a GitHub personal access token (ghp_ and 36 letters and
// digits), built at run time so that no source file holds one.
func fakeToken() string {
	const alnum = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	b := []byte("ghp_")
	for i := range 36 {
		b = append(b, alnum[(i*17+5)%len(alnum)])
	}
	return string(b)
}

func scanHarness(t *testing.T, st catalog.Store, src fstest.MapFS, rv *scan.Review) *scan.Record {
	t.Helper()
	harness, err := harnessTexts(src)
	if err != nil {
		t.Fatal(err)
	}
	rec, _, err := scan.Run(context.Background(), st, testScanner(t), scan.RunOptions{Review: rv, Workers: 2, Harness: harness})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestScanHarnessPlantedToken: a token planted in a non-test source file of the harness
// is a finding (field harness, its path in the zip); the same token in a test file, a
// testdata folder or a test-helper package is not (the zip leaves them out). export
// refuses until the finding is decided, refuses a redact decision, and refuses again when
// the source changes after the scan.
func TestScanHarnessPlantedToken(t *testing.T) {
	store := verifiedStore(t)
	if out, err := runCLI(t, "--store", store, "admit"); err != nil {
		t.Fatalf("admit: %q, %v", out, err)
	}
	st, err := catalog.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	tok := fakeToken()
	line := []byte("package main\n\nconst token = \"" + tok + "\"\n")
	src := fstest.MapFS{
		"go.mod":                   {Data: []byte("module example.com/envgap\n\ngo 1.26\n")},
		"main.go":                  {Data: []byte("package main\n\nfunc main() {}\n")},
		"cmd/x/config.go":          {Data: line},
		"cmd/x/config_test.go":     {Data: line},
		"cmd/x/testdata/token.txt": {Data: line},
		"crawl/gittest/gittest.go": {Data: line},
		".ci/run":                  {Data: line},
	}
	rec := scanHarness(t, st, src, nil)
	// The fixture rows' ghp_import lookalikes are decided; the harness finding is not.
	var hits []scan.Occurrence
	decide := func(fp, decision string) *scan.Review {
		rv := &scan.Review{Version: 1}
		for _, o := range rec.Findings {
			d := scan.Decision{Fingerprint: o.Fingerprint, Decision: scan.DecisionFalsePositive, Reason: "fixture", By: "test"}
			if o.Fingerprint == fp {
				d.Decision = decision
			} else if o.Field == scan.FieldHarness {
				continue
			}
			if err := rv.Decide(d, rec, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		return rv
	}
	for _, o := range rec.Findings {
		if o.Field == scan.FieldHarness {
			hits = append(hits, o)
		}
	}
	if len(hits) != 1 || hits[0].Path != release.HarnessRoot+"cmd/x/config.go" || hits[0].Line != 3 || hits[0].InstanceID != "" ||
		hits[0].Tier != schemas.TierLikelyReal || hits[0].Decision != nil || strings.Contains(hits[0].Match, tok) {
		t.Fatalf("harness findings: %+v; want one undecided likely_real finding in %scmd/x/config.go line 3, redacted", hits, release.HarnessRoot)
	}
	exportWith := func(src fstest.MapFS) error {
		eo := export.Options{Out: filepath.Join(t.TempDir(), "release"), Source: src, NoAudit: true}
		if err := withReviewer(&eo); err != nil {
			return err
		}
		_, err := export.Export(st, eo)
		return err
	}
	scanHarness(t, st, src, decide("", ""))
	var un *scan.UnreviewedError
	if err := exportWith(src); !errors.As(err, &un) || len(un.Findings) != 1 || !strings.Contains(err.Error(), "harness "+release.HarnessRoot+"cmd/x/config.go line 3") {
		t.Fatalf("export with an undecided harness finding: %v", err)
	}
	scanHarness(t, st, src, decide(hits[0].Fingerprint, scan.DecisionRedact))
	if err := exportWith(src); err == nil || !strings.Contains(err.Error(), "decided redact") {
		t.Fatalf("export with a harness finding decided redact: %v", err)
	}
	scanHarness(t, st, src, decide(hits[0].Fingerprint, scan.DecisionFalsePositive))
	if err := exportWith(src); err != nil {
		t.Fatalf("export after the review: %v", err)
	}
	changed := fstest.MapFS{}
	for k, v := range src {
		changed[k] = v
	}
	changed["cmd/x/more.go"] = &fstest.MapFile{Data: []byte("package main\n")}
	var stale *scan.StaleError
	if err := exportWith(changed); !errors.As(err, &stale) || !strings.Contains(err.Error(), "harness") {
		t.Fatalf("export of a source changed after the scan: %v", err)
	}
	// A test file changed after the scan is not in the zip: nothing to scan again.
	testOnly := fstest.MapFS{}
	for k, v := range src {
		testOnly[k] = v
	}
	testOnly["cmd/x/more_test.go"] = &fstest.MapFile{Data: line}
	if err := exportWith(testOnly); err != nil {
		t.Fatalf("export after a test-only change: %v", err)
	}
}

// TestScanHarnessRealSource: the harness zip of this binary carries no tests, and its
// source scans clean with the committed review file's decisions.
func TestScanHarnessRealSource(t *testing.T) {
	harness, err := harnessTexts(envgap.Source())
	if err != nil {
		t.Fatal(err)
	}
	if len(harness) < 100 {
		t.Fatalf("the harness carries %d source files", len(harness))
	}
	for _, h := range harness {
		p := strings.TrimPrefix(h.Path, release.HarnessRoot)
		if strings.HasSuffix(p, "_test.go") || strings.Contains("/"+p, "/testdata/") || strings.HasPrefix(p, ".ci/") ||
			strings.HasPrefix(p, "crawl/gittest/") || strings.HasPrefix(p, "data/datatest/") {
			t.Errorf("the harness carries %s, which only tests use", p)
		}
	}
	rv, _, err := scan.LoadReview("../../" + scan.DefaultReviewFile)
	if err != nil {
		t.Fatal(err)
	}
	st, err := catalog.Open(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	rec, _, err := scan.Run(context.Background(), st, testScanner(t), scan.RunOptions{Review: rv, Workers: 2, Harness: harness})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range rec.Unreviewed() {
		t.Errorf("undecided finding in envgap's own source: %s:%d %s %q %s: fix the source, or decide it in %s (envgap scan decide)",
			o.Path, o.Line, o.Rule, o.Match, o.Fingerprint, scan.DefaultReviewFile)
	}
	if err := scan.CheckReviewed(st, harness); err != nil {
		t.Error(err)
	}
}

// BenchmarkScanHarnessSource measures the scan of the harness zip's source (this
// binary's, through the zip's filter); the scanner is built once, outside the timing.
func BenchmarkScanHarnessSource(b *testing.B) {
	harness, err := harnessTexts(envgap.Source())
	if err != nil {
		b.Fatal(err)
	}
	sc := testScanner(b)
	var n int64
	for _, h := range harness {
		n += int64(len(h.Content))
	}
	b.SetBytes(n)
	for b.Loop() {
		in := make(chan scan.Text, len(harness))
		for _, h := range harness {
			in <- h
		}
		close(in)
		sc.ScanTexts(context.Background(), in, 0)
	}
}

// TestScanOutsideTheCheckout: run where data/scan-review.json is not at hand (the tests run
// in cmd/envgap), the scan of an empty store finds envgap's own source decided by the
// review file embedded with it, so it reports nothing to review and export is not refused
// for every user of the binary.
func TestScanOutsideTheCheckout(t *testing.T) {
	if _, err := os.Stat(scan.DefaultReviewFile); err == nil {
		t.Fatalf("%s exists in the test's working directory; this test needs it absent", scan.DefaultReviewFile)
	}
	store := filepath.Join(t.TempDir(), "store")
	out, err := runCLI(t, "--store", store, "scan")
	if err != nil {
		t.Fatalf("scan outside the checkout: %v\n%s", err, out)
	}
	if !strings.Contains(out, "false_positive (h15-zipscan)") || strings.Contains(out, "UNREVIEWED") {
		t.Errorf("scan output: the source's decided findings should be decided:\n%s", out)
	}
	if src, err := sourceReview(envgap.Source()); err != nil || src == nil || len(src.Decisions) == 0 {
		t.Fatalf("the embedded review: %+v, %v", src, err)
	}
}
