package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/internal/testenv"
	"github.com/envgap/envgap/lib/release"
	"github.com/envgap/envgap/schemas"
)

// The independent parquet reader of the CI check: DuckDB through its Node.js package,
// installed with npm (whatever registry npm is configured with) into a cache folder.
const (
	duckdbPackage = "@duckdb/node-api"
	duckdbVersion = "1.5.6-r.1"
)

// duckdbDir returns a folder whose node_modules holds the pinned DuckDB package, installing
// it on first use. Without node or npm the test is skipped, or fails under
// ENVGAP_REQUIRE_ENGINE=1 (CI; testenv).
func duckdbDir(tb testing.TB) string {
	tb.Helper()
	for _, tool := range []string{"node", "npm"} {
		testenv.Tool(tb, tool) // the independent parquet check needs Node.js and npm
	}
	base := os.Getenv("ENVGAP_NODE_CACHE")
	if base == "" {
		if c, err := os.UserCacheDir(); err == nil {
			base = filepath.Join(c, "envgap")
		} else {
			base = filepath.Join(os.TempDir(), "envgap-cache")
		}
	}
	dir := filepath.Join(base, "duckdb-node-api-"+duckdbVersion)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@duckdb", "node-api", "package.json")); err == nil {
		return dir
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		tb.Fatal(err)
	}
	tmp, err := os.MkdirTemp(base, ".duckdb-install-*")
	if err != nil {
		tb.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	if err := os.WriteFile(filepath.Join(tmp, "package.json"), []byte(`{"private": true, "type": "module"}`+"\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--loglevel=error", duckdbPackage+"@"+duckdbVersion)
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("npm install %s@%s: %v\n%s", duckdbPackage, duckdbVersion, err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(dir); serr != nil { // not a concurrent install that won the race
			tb.Fatal(err)
		}
	}
	return dir
}

// runNode runs one of testdata's scripts with DuckDB available and returns its stdout.
func runNode(tb testing.TB, script string, args ...string) []byte {
	tb.Helper()
	dir := duckdbDir(tb)
	src, err := os.ReadFile(filepath.Join("testdata", script))
	if err != nil {
		tb.Fatal(err)
	}
	// ES modules resolve packages from the script's own folder.
	f, err := os.CreateTemp(dir, "check-*.mjs")
	if err != nil {
		tb.Fatal(err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(src); err != nil {
		tb.Fatal(err)
	}
	f.Close()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("node", append([]string{f.Name()}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		tb.Fatalf("node %s: %v\n%s", script, err, stderr.String())
	}
	return stdout.Bytes()
}

type duckReport struct {
	Rows    int `json:"rows"`
	Columns []struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"columns"`
	Nulls             map[string]int    `json:"nulls"`
	Repetition        map[string]string `json:"repetition"`
	RowGroups         []int             `json:"row_groups"`
	Encodings         []string          `json:"encodings"`
	Compressions      []string          `json:"compressions"`
	GoldNullContents  *int              `json:"gold_null_contents"`
	ProblemStatements map[string]string `json:"problem_statements"`
}

// duckType is the DuckDB type of a card type.
var duckType = map[string]string{
	"string":       "VARCHAR",
	"int64":        "BIGINT",
	"bool":         "BOOLEAN",
	"list<string>": "VARCHAR[]",
	"list<struct<path: string, content: string>>": `STRUCT(path VARCHAR, "content" VARCHAR)[]`,
}

// expectedColumns returns the columns of a config: name, DuckDB type (from the card type)
// and nullability (a pointer, an optional tag, or a column the candidates config writes as
// null).
func expectedColumns(cols []schemas.Column, rowType reflect.Type, candidates bool) (names, types []string, nullable map[string]bool) {
	nullable = map[string]bool{}
	for _, c := range cols {
		_, opts, _ := strings.Cut(rowType.FieldByIndex(c.Index).Tag.Get("parquet"), ",")
		names = append(names, c.Name)
		types = append(types, duckType[c.CardType()])
		nullable[c.Name] = c.Nullable() || opts == "optional" || (candidates && c.NullInCandidates)
	}
	return
}

// nullCounts counts, per column, the rows whose value the file must hold as null: a nil
// pointer; in the candidates config also an empty string of an optional column (on a row
// that is not a task, for the columns marked `candidates:"optional"`).
func nullCounts[T any](rows []T, candidates bool) map[string]int {
	out := map[string]int{}
	rt := reflect.TypeOf(rows).Elem()
	cols := schemas.ColumnsOf(rt)
	_, _, nullable := expectedColumns(cols, rt, candidates)
	for _, c := range cols {
		out[c.Name] = 0
		for j := range rows {
			row := reflect.ValueOf(&rows[j]).Elem()
			v := row.FieldByIndex(c.Index)
			switch {
			case v.Kind() == reflect.Pointer && v.IsNil():
				out[c.Name]++
			case v.Kind() == reflect.String && v.String() == "" && nullable[c.Name]:
				if c.NullInCandidates && row.FieldByName("Outcome").String() == string(schemas.OutcomeTask) {
					continue // a task row keeps its empty strings
				}
				out[c.Name]++
			}
		}
	}
	return out
}

func TestIndependentReaderDuckDB(t *testing.T) {
	st := admittedStore(t)
	if _, err := Exclude(st, ExcludeRequest{InstanceID: idControl, Reason: "setup.py builds its dependency list at run time.", Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "release")
	o := testOptions(out)
	o.Limits = release.Limits{RowsPerGroup: 2, BytesPerGroup: 64 << 20, BytesPerFile: 512 << 20}
	rep, err := Export(st, o)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, c := range rep.Configs {
		for _, f := range c.Files {
			files = append(files, filepath.Join(out, filepath.FromSlash(f.Path)))
		}
	}
	var got map[string]duckReport
	if err := json.Unmarshal(runNode(t, "duckdb_check.mjs", files...), &got); err != nil {
		t.Fatal(err)
	}
	tasks, err := st.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	cands, _, err := candidateRows(st, tasks, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Configs {
		for _, f := range c.Files {
			path := filepath.Join(out, filepath.FromSlash(f.Path))
			r, ok := got[path]
			if !ok {
				t.Fatalf("DuckDB did not report %s", f.Path)
			}
			t.Run(f.Path, func(t *testing.T) {
				var names, types []string
				var nullable map[string]bool
				var nulls map[string]int
				if c.Name == release.ConfigCandidates {
					names, types, nullable = expectedColumns(schemas.CandidateColumns(), reflect.TypeOf(schemas.Candidate{}), true)
					nulls = nullCounts(cands, true)
				} else {
					names, types, nullable = expectedColumns(schemas.TaskColumns(), reflect.TypeOf(schemas.Task{}), false)
					nulls = nullCounts(release.SelectConfig(tasks, c.Name), false)
				}
				var gotNames, gotTypes []string
				for _, col := range r.Columns {
					gotNames, gotTypes = append(gotNames, col.Name), append(gotTypes, col.Type)
				}
				if !reflect.DeepEqual(gotNames, names) {
					t.Errorf("columns\n got %v\nwant %v", gotNames, names)
				}
				if !reflect.DeepEqual(gotTypes, types) {
					t.Errorf("types\n got %v\nwant %v", gotTypes, types)
				}
				if r.Rows != f.Rows || r.Rows != c.Rows {
					t.Errorf("rows = %d, want %d", r.Rows, c.Rows)
				}
				if !reflect.DeepEqual(r.Nulls, nulls) {
					t.Errorf("nulls\n got %v\nwant %v", r.Nulls, nulls)
				}
				for _, n := range names {
					want := "REQUIRED"
					if nullable[n] {
						want = "OPTIONAL"
					}
					if r.Repetition[n] != want {
						t.Errorf("column %s is %s, want %s", n, r.Repetition[n], want)
					}
				}
				if len(r.RowGroups) != f.RowGroups || slices.Max(append(r.RowGroups, 0)) > 2 {
					t.Errorf("row groups %v, want %d of at most 2 rows", r.RowGroups, f.RowGroups)
				}
				if slices.Contains(r.Encodings, "DELTA_LENGTH_BYTE_ARRAY") || !slices.Contains(r.Encodings, "PLAIN") {
					t.Errorf("encodings = %v, want PLAIN strings", r.Encodings)
				}
				if !reflect.DeepEqual(r.Compressions, []string{"ZSTD"}) {
					t.Errorf("compressions = %v, want ZSTD", r.Compressions)
				}
			})
		}
	}
	full := got[filepath.Join(out, "data", "full", "test-00000-of-00001.parquet")]
	if full.GoldNullContents == nil || *full.GoldNullContents != 1 {
		t.Errorf("gold_files entries with null content = %v, want 1 (a deletion)", full.GoldNullContents)
	}
	for _, task := range tasks {
		if full.ProblemStatements[task.InstanceID] != task.ProblemStatement {
			t.Errorf("%s: DuckDB reads problem_statement %q, want %q", task.InstanceID, full.ProblemStatements[task.InstanceID], task.ProblemStatement)
		}
	}
}

// bigStore builds a store of n admitted tasks with about size bytes of text each.
func bigStore(b *testing.B, n, size int) (catalog.Store, []schemas.Task) {
	b.Helper()
	st, err := catalog.Open(filepath.Join(b.TempDir(), "store"))
	if err != nil {
		b.Fatal(err)
	}
	text := func(i, k int) string {
		var sb strings.Builder
		for sb.Len() < k {
			fmt.Fprintf(&sb, "line %d of task %d: requirement pkg-%d>=1.%d is not satisfiable\n", sb.Len(), i, sb.Len()%97, i%13)
		}
		return sb.String()
	}
	tasks := make([]schemas.Task, n)
	batch := st.NewBatch()
	for i := range tasks {
		content := text(i, size/2)
		issue := int64(i + 1)
		url := fmt.Sprintf("https://github.com/bench/repo/issues/%d", issue)
		tasks[i] = schemas.Task{
			Ident: schemas.Ident{InstanceID: schemas.InstanceID("bench/repo", issue)},
			Spec: schemas.Spec{
				Repo: "bench/repo", BaseCommit: strings.Repeat("a", 40),
				ProjectFiles: []schemas.File{}, Patch: text(i, size/4), GoldFiles: []schemas.File{{Path: "requirements.txt", Content: &content}},
				ProblemStatement: text(i, size/4), CreatedAt: "2024-01-01T00:00:00Z", RegistryDate: "2024-01-02T00:00:00Z",
				RegistryDateSource: schemas.DateFromIssueCreated, Ecosystem: schemas.EcosystemPython, Image: "envgap-python-eval",
				ManifestPath: "requirements.txt", ManifestPaths: []string{"requirements.txt"}, BootstrapCommand: "true",
				ResolveCommand: "pip install -r requirements.txt", ReproCommand: "pip install -r requirements.txt", RunCommand: "python -c 1",
				FailureSignature: "error", ExpectedFailureRegex: "error",
			},
			Splits: []schemas.Split{schemas.SplitFull},
			Source: schemas.SourceReported,
			Origin: schemas.Origin{
				IssueURL: &url, IssueNumber: issue,
				Categories: []schemas.Category{},
			},
			SecurityFlags: []schemas.SecurityFlag{},
		}
		if _, err := batch.PutJSON(&tasks[i]); err != nil {
			b.Fatal(err)
		}
	}
	if err := batch.Commit(); err != nil {
		b.Fatal(err)
	}
	for i := range tasks {
		d, _ := schemas.DigestOf(&tasks[i])
		if err := st.SetRef(data.RefTasks+tasks[i].InstanceID, d); err != nil {
			b.Fatal(err)
		}
	}
	return st, tasks
}

func textBytes(tasks []schemas.Task) int64 {
	var n int64
	for i := range tasks {
		n += release.TaskBytes(&tasks[i])
	}
	return n
}

// BenchmarkExport10k exports a store of benchTasks (10,000) tasks with 40 KB of text each (all six
// configs, the card and the chart; every task is in full and reported).
func BenchmarkExport10k(b *testing.B) {
	st, tasks := bigStore(b, benchTasks, 40<<10)
	mb := float64(textBytes(tasks)) / 1e6
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out := filepath.Join(b.TempDir(), "release")
		opts := testOptions(out)
		opts.NoAudit = true // the store's tasks have no registry audit (export refuses that since audits became required)
		if _, err := Export(st, opts); err != nil {
			b.Fatal(err)
		}
	}
	s := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(len(tasks))/s, "tasks/s")
	b.ReportMetric(mb/s, "MB/s")
}

// BenchmarkParquetVsDuckDB writes the same 10,000 task rows (40 KB of text each) as one
// zstd parquet file with envgap's writer and with DuckDB (COPY from JSON Lines, timed
// inside node without start-up), and reports both rates and their ratio.
func BenchmarkParquetVsDuckDB(b *testing.B) {
	const n, size = 10000, 40 << 10
	_, tasks := bigStore(b, n, size)
	mb := float64(textBytes(tasks)) / 1e6
	dir := b.TempDir()
	jsonl := filepath.Join(dir, "rows.jsonl")
	var buf bytes.Buffer
	for i := range tasks {
		line, _ := schemas.Canonical(&tasks[i])
		buf.Write(line)
		buf.WriteByte('\n')
	}
	if err := os.WriteFile(jsonl, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var duck float64
	for i := 0; i < b.N; i++ {
		out := filepath.Join(dir, fmt.Sprintf("go-%d", i))
		if _, err := release.WriteConfig(out, release.ConfigFull, tasks, release.TaskLayout, release.DefaultLimits); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		var res struct {
			Seconds float64 `json:"seconds"`
		}
		if err := json.Unmarshal(runNode(b, "duckdb_write.mjs", jsonl, filepath.Join(dir, fmt.Sprintf("duck-%d.parquet", i))), &res); err != nil {
			b.Fatal(err)
		}
		duck += res.Seconds
		b.StartTimer()
	}
	goS := b.Elapsed().Seconds() / float64(b.N)
	duckS := duck / float64(b.N)
	b.ReportMetric(float64(n)/goS, "go_rows/s")
	b.ReportMetric(mb/goS, "go_MB/s")
	b.ReportMetric(float64(n)/duckS, "duckdb_rows/s")
	b.ReportMetric(mb/duckS, "duckdb_MB/s")
	b.ReportMetric(duckS/goS, "duckdb_time/go_time")
}

// benchTasks is the size of the export benchmark's task set.
const benchTasks = 10000
