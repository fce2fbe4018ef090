package export

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envgap/envgap/internal/testenv"
	"github.com/envgap/envgap/lib/release"
	"github.com/envgap/envgap/schemas"
)

// corpusIDDoc is the document that defines the corpus id; its Python block is run here.
var corpusIDDoc = filepath.Join("..", "docs", "corpus-id.md")

// docPython returns the Python block of the corpus-id document (docs/corpus-id.md).
func docPython(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(corpusIDDoc)
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "# Corpus id\n")
	if !ok {
		t.Fatalf("%s does not start with \"# Corpus id\"", corpusIDDoc)
	}
	_, code, ok := strings.Cut(sec, "```python\n")
	if !ok {
		t.Fatalf("%s has no python block", corpusIDDoc)
	}
	code, _, ok = strings.Cut(code, "```")
	if !ok {
		t.Fatalf("the python block of %s is not closed", corpusIDDoc)
	}
	return code
}

// trickyText has every kind of character the corpus id's canonical JSON treats apart:
// non-ASCII (two to four UTF-8 bytes), HTML characters, quotes and backslashes, the short
// escapes, other control characters, DEL, and U+2028/U+2029.
const trickyText = "Café 中文 😀 <b>&amp;</b> \"quoted\" back\\slash \b\f\t\r\n \x01\x1f\x7f line\u2028para\u2029 end"

// TestCorpusIDFromTheDoc recomputes the corpus id of an exported folder the way
// docs/corpus-id.md defines it, independently of envgap: DuckDB reads the full config's parquet
// rows, and the document's own Python block (json and hashlib) hashes them.
func TestCorpusIDFromTheDoc(t *testing.T) {
	python := testenv.Tool(t, "python3") // the document's corpus-id check runs its Python
	code := docPython(t)
	st := admittedStore(t)
	out := filepath.Join(t.TempDir(), "release")
	o := testOptions(out)
	o.Reviewer = testReviewer{redactTask: func(task *schemas.Task) (int, error) {
		if task.InstanceID != idReported {
			return 0, nil
		}
		task.ProblemStatement += "\n" + trickyText
		s := trickyText
		task.GoldFiles = append(task.GoldFiles, schemas.File{Path: "zz-notes.txt", Content: &s})
		return 1, nil
	}}
	rep, err := Export(st, o)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := st.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	if plain, _ := schemas.CorpusID(tasks); plain == rep.CorpusID {
		t.Fatal("the tricky text did not reach the published rows")
	}
	pyID := func(input []byte) string {
		t.Helper()
		cmd := exec.Command(python, "-c", code)
		cmd.Stdin = bytes.NewReader(input)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("the document's python: %v\n%s", err, stderr.String())
		}
		return strings.TrimSpace(string(b))
	}
	files, err := filepath.Glob(filepath.Join(out, "data", release.ConfigFull, "*.parquet"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no parquet files of full (%v)", err)
	}
	rows := runNode(t, "duckdb_rows.mjs", files...)
	if n := bytes.Count(rows, []byte("\n")); n != rep.Tasks {
		t.Fatalf("DuckDB read %d rows, the export wrote %d", n, rep.Tasks)
	}
	if got := pyID(rows); got != rep.CorpusID {
		t.Errorf("the document's definition gives %s from DuckDB's rows, envgap %s", got, rep.CorpusID)
	}
	// The harness zip's copy of the tasks gives the same id.
	h, err := release.ReadHarness(filepath.Join(out, release.HarnessPath))
	if err != nil {
		t.Fatal(err)
	}
	lines, err := TaskLines(h.Tasks)
	if err != nil {
		t.Fatal(err)
	}
	if got := pyID(lines); got != rep.CorpusID {
		t.Errorf("the document's definition gives %s from the harness's tasks, envgap %s", got, rep.CorpusID)
	}
}
