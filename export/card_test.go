package export

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/lib/release"
	"github.com/envgap/envgap/schemas"
)

var update = flag.Bool("update", false, "rewrite the card's golden files under testdata/ from the card template")

// TestCardGolden renders the card of the export tests' store (once as it is, once with an
// exclusion and a credential-scan paragraph) and compares it with testdata/card*.golden.md.
// go test -run TestCardGolden -update rewrites them.
func TestCardGolden(t *testing.T) {
	for _, tc := range []struct {
		golden string
		setup  func(catalog.Store)
		notes  string
		harbor bool
	}{
		{golden: "card.golden.md"},
		{golden: "card-excluded.golden.md", harbor: true, notes: "All text was scanned for credentials before export; the only hits were text that looks like a token but is not one (ghp_import in " + idReported + ").",
			setup: func(st catalog.Store) {
				if _, err := Exclude(st, ExcludeRequest{InstanceID: idControl, Reason: "setup.py builds its dependency list at run time, so <deps> cannot be read.", Now: fixedNow}); err != nil {
					t.Fatal(err)
				}
			}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			st := admittedStore(t)
			if tc.setup != nil {
				tc.setup(st)
			}
			out := filepath.Join(t.TempDir(), "release")
			o := testOptions(out)
			if tc.notes != "" {
				o.Reviewer = testReviewer{notes: tc.notes}
			}
			if tc.harbor {
				o.Harbor = func(pub []schemas.Task, id string) (*HarborOutput, error) {
					n := 0
					for i := range pub {
						if !pub[i].ExcludedFromScoring {
							n++
						}
					}
					return &HarborOutput{Files: map[string][]byte{HarborParquetPath: []byte("rows of " + id), HarborDatasetPath: []byte("[dataset]\n")}, Tasks: n, SchemaVersion: "1.1"}, nil
				}
			}
			if _, err := Export(st, o); err != nil {
				t.Fatal(err)
			}
			if tc.harbor {
				if b, err := os.ReadFile(filepath.Join(out, HarborDatasetPath)); err != nil || string(b) != "[dataset]\n" {
					t.Fatalf("harbor files not written: %q %v", b, err)
				}
			}
			got, err := os.ReadFile(filepath.Join(out, "README.md"))
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", tc.golden)
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestCardGolden -update to write it)", err)
			}
			if !bytes.Equal(got, want) {
				gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
				for i := 0; i < max(len(gl), len(wl)); i++ {
					var g, w string
					if i < len(gl) {
						g = gl[i]
					}
					if i < len(wl) {
						w = wl[i]
					}
					if g != w {
						t.Fatalf("the card differs from %s at line %d:\n got: %q\nwant: %q\n(if the change is meant, rerun with -update and review the diff)", golden, i+1, g, w)
					}
				}
				t.Fatalf("the card differs from %s", golden)
			}
		})
	}
}

// TestCardNamesEveryOutcomeAndConfig checks the tables the card template writes row by
// row: every outcome and every config has its row, in the order of schemas.Outcomes and
// release.Configs.
func TestCardNamesEveryOutcomeAndConfig(t *testing.T) {
	card, err := os.ReadFile(filepath.Join("testdata", "card.golden.md"))
	if err != nil {
		t.Fatal(err)
	}
	last := 0
	for _, o := range schemas.Outcomes {
		i := bytes.Index(card, []byte("\n| "+string(o)+" | "))
		if i < last {
			t.Errorf("the outcome table has no row for %s after the one before it", o)
		}
		last = i
	}
	last = 0
	for _, c := range release.Configs {
		i := bytes.Index(card, []byte("\n| "+c+" | "))
		if i < last {
			t.Errorf("the splits table has no row for %s after the one before it", c)
		}
		last = i
	}
}
