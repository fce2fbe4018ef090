package export

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
)

// A verdict whose object is lost is not "no verdict": export refuses to write a release
// that would count the candidate as waiting.
func TestExportRefusesLostVerdict(t *testing.T) {
	st := admittedStore(t)
	d, err := st.Ref(data.RefVerdicts + idNotRepro)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(st.(*catalog.Catalog).Dir(), "objects", d.Hex()[:2], d.Hex()[2:]))
	out := filepath.Join(t.TempDir(), "release")
	if _, err := Export(st, testOptions(out)); err == nil || !strings.Contains(err.Error(), "verdict of "+idNotRepro+" is lost") {
		t.Fatalf("export over a lost verdict: %v", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("export wrote a release")
	}
}
