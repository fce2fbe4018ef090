package export

import (
	"bytes"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/lib/release"
	"github.com/envgap/envgap/schemas"
	"github.com/parquet-go/parquet-go"
	"gopkg.in/yaml.v3"
)

func parquetNames(v any) []string {
	var out []string
	for _, f := range parquet.SchemaOf(v).Fields() {
		out = append(out, f.Name())
	}
	return out
}

func TestColumnsFollowTheCard(t *testing.T) {
	if got, want := parquetNames(schemas.Task{}), schemas.TaskFields(); !reflect.DeepEqual(got, want) {
		t.Errorf("task columns\n got %v\nwant %v", got, want)
	}
	var docs []string
	for _, d := range schemas.TaskColumns() {
		docs = append(docs, d.Name)
		if d.Doc == "" {
			t.Errorf("column %s has no description for the card", d.Name)
		}
	}
	if want := schemas.TaskFields(); !reflect.DeepEqual(docs, want) {
		t.Errorf("card field table\n got %v\nwant %v", docs, want)
	}
	var got []string
	for _, f := range release.CandidateSchema.Fields() {
		got = append(got, f.Name())
	}
	if want := schemas.CandidateFields(); !reflect.DeepEqual(got, want) {
		t.Errorf("candidates columns\n got %v\nwant %v", got, want)
	}
	for _, d := range candidateOnlyColumns() {
		if d.Doc == "" {
			t.Errorf("column %s has no description for the card", d.Name)
		}
	}
}

// rawNulls reads a config's parquet files as stored and returns, per instance id, the
// columns whose value is null.
func rawNulls(t *testing.T, dir, config string) map[string]map[string]bool {
	t.Helper()
	files, err := release.ConfigFiles(dir, config)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]bool{}
	for _, name := range files {
		pf := openParquet(t, name)
		leaves := pf.Schema().Columns()
		rows := make([]parquet.Row, pf.NumRows())
		r := parquet.NewReader(pf)
		if n, err := r.ReadRows(rows); n != len(rows) {
			t.Fatalf("read %d of %d rows: %v", n, len(rows), err)
		}
		for _, row := range rows {
			nulls := map[string]bool{}
			id := ""
			for _, v := range row {
				col := leaves[v.Column()][0]
				if col == "instance_id" {
					id = v.String()
				}
				if v.IsNull() && len(leaves[v.Column()]) == 1 {
					nulls[col] = true
				}
			}
			out[id] = nulls
		}
		r.Close()
	}
	return out
}

// openParquet opens a parquet file for the rest of the test.
func openParquet(t *testing.T, name string) *parquet.File {
	t.Helper()
	pf, fh, err := release.OpenParquetFile(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fh.Close() })
	return pf
}

func TestExportRoundTripsTheCorpusID(t *testing.T) {
	st := admittedStore(t)
	out, rep := exportTo(t, st)
	tasks, err := st.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	storeID, err := schemas.CorpusID(tasks)
	if err != nil {
		t.Fatal(err)
	}
	read, err := release.ReadTasks(out)
	if err != nil {
		t.Fatal(err)
	}
	readID, err := schemas.CorpusID(read)
	if err != nil {
		t.Fatal(err)
	}
	if readID != storeID || rep.CorpusID != storeID || rep.StoreCorpusID != storeID {
		t.Fatalf("corpus ids: read back %s, report %s/%s, store %s", readID, rep.CorpusID, rep.StoreCorpusID, storeID)
	}
	if !reflect.DeepEqual(read, tasks) {
		for i := range tasks {
			if cols := DiffColumns(&tasks[i], &read[i]); len(cols) > 0 {
				t.Errorf("%s differs after the round trip in %v", tasks[i].InstanceID, cols)
			}
		}
	}
	wantRows := map[string][]string{
		release.ConfigFull:     {idRepaired, idReported, idControl, idLite},
		release.ConfigReported: {idReported, idControl},
		release.ConfigRepaired: {idRepaired},
		release.ConfigLite:     {idLite},
		release.ConfigSecure:   {idLite},
	}
	for cfg, ids := range wantRows {
		got, err := release.ReadTaskConfig(out, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var gotIDs []string
		for _, g := range got {
			gotIDs = append(gotIDs, g.InstanceID)
		}
		wantSorted := append([]string(nil), ids...)
		slicesSort(wantSorted)
		if !reflect.DeepEqual(gotIDs, wantSorted) {
			t.Errorf("config %s rows = %v, want %v", cfg, gotIDs, wantSorted)
		}
	}
	cands, err := release.ReadCandidates(out)
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]string{}
	for _, c := range cands {
		outcomes[c.InstanceID] = string(c.Outcome)
	}
	want := map[string]string{idRepaired: "task", idReported: "task", idControl: "task", idLite: "task",
		idWaiting: "not_checked", idNotRepro: "not_reproduced", idCodeFix: "code_fix"}
	if !reflect.DeepEqual(outcomes, want) {
		t.Errorf("candidate outcomes = %v, want %v", outcomes, want)
	}
	nulls := rawNulls(t, out, release.ConfigCandidates)
	for _, c := range cands {
		switch c.InstanceID {
		case idWaiting:
			if n := nulls[c.InstanceID]; !n["resolve_command"] || !n["patch"] || !n["failure_signature"] {
				t.Errorf("%s: unfilled strings should be null: nulls %v", c.InstanceID, n)
			}
		case idControl:
			// A task's candidate row carries the task's values (commands from the verdict,
			// the control's empty patch and failure signature, as "" rather than null).
			if n := nulls[c.InstanceID]; n["patch"] || n["failure_signature"] || n["resolve_command"] || !n["d2_command"] {
				t.Errorf("%s: a task's empty strings should not be null: nulls %v", c.InstanceID, n)
			}
			if c.ResolveCommand != "make install" || c.Patch != "" || len(c.GoldFiles) != 0 || !c.IsControl {
				t.Errorf("%s: candidate row does not carry the task's values: %+v", c.InstanceID, c)
			}
		case idCodeFix:
			if c.GeneratedBy == nil || *c.GeneratedBy != "claude-code" || c.Reason != "the repair changed src/main/java/App.java" {
				t.Errorf("%s: generated_by %v reason %q", c.InstanceID, c.GeneratedBy, c.Reason)
			}
		}
	}
}

func slicesSort(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func TestExportIsByteIdentical(t *testing.T) {
	st := admittedStore(t)
	if _, err := Exclude(st, ExcludeRequest{InstanceID: idControl, Reason: "setup.py builds its dependency list at run time, so the declared dependencies cannot be read.", Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	a, _ := exportTo(t, st)
	b, _ := exportTo(t, st)
	ta, tb := readTree(t, a), readTree(t, b)
	if !reflect.DeepEqual(keys(ta), keys(tb)) {
		t.Fatalf("file lists differ: %v vs %v", keys(ta), keys(tb))
	}
	for name := range ta {
		if !bytes.Equal(ta[name], tb[name]) {
			t.Errorf("%s differs between two exports of the same store", name)
		}
	}
	// Exporting again into the same folder replaces it with the same bytes.
	if _, err := Export(st, testOptions(a)); err != nil {
		t.Fatal(err)
	}
	tc := readTree(t, a)
	for name := range ta {
		if !bytes.Equal(ta[name], tc[name]) {
			t.Errorf("%s differs after exporting into the same folder", name)
		}
	}
	wantFiles := []string{"README.md", LicensePath, EvalPath, FunnelChartPath, release.HarnessPath}
	for _, c := range release.Configs {
		wantFiles = append(wantFiles, "data/"+c+"/test-00000-of-00001.parquet")
	}
	slicesSort(wantFiles)
	if got := keys(ta); !reflect.DeepEqual(got, wantFiles) {
		t.Errorf("files = %v, want %v", got, wantFiles)
	}
}

func TestExportRefuses(t *testing.T) {
	badUTF8 := func(t *schemas.Task) (int, error) {
		if t.InstanceID == idLite {
			s := "caf\xc3" // a redaction that cut a character in half
			t.ProjectFiles[1].Content = &s
		}
		return 0, nil
	}
	dupPath := func(t *schemas.Task) (int, error) {
		if t.InstanceID == idReported {
			t.GoldFiles = append(t.GoldFiles, t.GoldFiles[0])
		}
		return 0, nil
	}
	tests := []struct {
		name   string
		store  func(t testing.TB) catalog.Store
		opts   func(o *Options)
		is     error
		want   string
		rowErr *RowError
	}{
		{"no tasks", verifiedStore, nil, ErrNoTasks, "no tasks", nil},
		{"no reviewer", admittedStore, func(o *Options) { o.Reviewer = nil }, nil, "Options.Reviewer", nil},
		{"unreviewed findings", admittedStore, func(o *Options) {
			o.Reviewer = testReviewer{refuse: errors.New("2 credential findings not reviewed")}
		}, nil, "not reviewed", nil},
		{"invalid utf-8", admittedStore, func(o *Options) { o.Reviewer = testReviewer{redactTask: badUTF8} }, nil, "invalid UTF-8",
			&RowError{Config: "full", InstanceID: idLite, Field: "project_files[1].content"}},
		{"repeated gold path", admittedStore, func(o *Options) { o.Reviewer = testReviewer{redactTask: dupPath} }, nil, "repeats",
			&RowError{Config: "full", InstanceID: idReported, Field: "gold_files[2].path"}},
		{"no audit at all", unauditedStore, nil, ErrNoAudit, "--no-audit", nil},
		{"audit newer than the row", func(t testing.TB) catalog.Store {
			st := admittedStore(t)
			putAudit(t, st, idRepaired, nil, []schemas.SecurityFlag{schemas.FlagRemoved})
			return st
		}, nil, nil, "run envgap admit", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.store(t)
			out := filepath.Join(t.TempDir(), "release")
			o := testOptions(out)
			o.Audits = StoreAudits(st)
			if tc.opts != nil {
				tc.opts(&o)
			}
			_, err := Export(st, o)
			if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Fatalf("err = %v, want one mentioning %q", err, tc.want)
			}
			if tc.rowErr != nil {
				var re *RowError
				if !errors.As(err, &re) || re.Config != tc.rowErr.Config || re.InstanceID != tc.rowErr.InstanceID || re.Field != tc.rowErr.Field {
					t.Errorf("err = %#v, want task %s field %s", err, tc.rowErr.InstanceID, tc.rowErr.Field)
				}
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("the output folder exists after a refused export (%v)", err)
			}
			if leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".release.export-*")); len(leftovers) > 0 {
				t.Errorf("temporary folders left behind: %v", leftovers)
			}
		})
	}
}

func TestExportOutFolderRules(t *testing.T) {
	st := admittedStore(t)
	foreign := t.TempDir()
	if err := os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Export(st, testOptions(foreign)); err == nil || !strings.Contains(err.Error(), "not written by envgap export") {
		t.Fatalf("export into a foreign folder: err = %v", err)
	}
	// An earlier export with an extra file of the maintainer's: the file stays.
	out, _ := exportTo(t, st)
	if err := os.WriteFile(filepath.Join(out, "NOTES.md"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Export(st, testOptions(out)); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "NOTES.md")); err != nil || string(b) != "mine" {
		t.Errorf("NOTES.md after a re-export: %q, %v", b, err)
	}
}

func TestRedactionChangesOnlyPublishedText(t *testing.T) {
	st := admittedStore(t)
	redact := func(t *schemas.Task) (int, error) {
		if t.InstanceID != idReported {
			return 0, nil
		}
		s := strings.ReplaceAll(*t.GoldFiles[0].Content, "ghp_import", "[REDACTED:test]")
		*t.GoldFiles[0].Content = s // writes through the pointer, as scan.ApplyRedactions does
		return 1, nil
	}
	out := filepath.Join(t.TempDir(), "release")
	o := testOptions(out)
	o.Reviewer = testReviewer{redactTask: redact}
	rep, err := Export(st, o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Redacted != 1 || rep.CorpusID == rep.StoreCorpusID {
		t.Errorf("report: redacted %d, ids %s/%s; want 1 and different ids", rep.Redacted, rep.CorpusID, rep.StoreCorpusID)
	}
	if task := taskByID(t, st, idReported); !strings.Contains(*task.GoldFiles[0].Content, "ghp_import") {
		t.Error("the redactor changed the store's row")
	}
	read, err := release.ReadTasks(out)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := schemas.CorpusID(read)
	if id != rep.CorpusID {
		t.Errorf("read back %s, report %s", id, rep.CorpusID)
	}
	readme, _ := os.ReadFile(filepath.Join(out, "README.md"))
	if !bytes.Contains(readme, []byte(rep.CorpusID)) || bytes.Contains(readme, []byte(rep.StoreCorpusID)) {
		t.Error("the card should name the published corpus id only")
	}
}

func TestCardFrontMatterHasTheHubShape(t *testing.T) {
	st := admittedStore(t)
	out, rep := exportTo(t, st)
	readme, err := os.ReadFile(filepath.Join(out, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	// Parse generically, as the Hub does, rather than into our own struct.
	rest, ok := bytes.CutPrefix(readme, []byte("---\n"))
	if !ok {
		t.Fatal("README.md does not start with ---")
	}
	head, body, ok := bytes.Cut(rest, []byte("\n---\n"))
	if !ok {
		t.Fatal("no closing ---")
	}
	// The generic read (as the Hub does); checkHubFolder checks every rule.
	var fm map[string]any
	if err := yaml.Unmarshal(head, &fm); err != nil {
		t.Fatal(err)
	}
	if fm["license"] != "other" || fm["license_link"] != LicensePath {
		t.Errorf("license = %v, license_link = %v", fm["license"], fm["license_link"])
	}
	if cfgs, ok := fm["configs"].([]any); !ok || len(cfgs) != len(release.Configs) || cfgs[0].(map[string]any)["config_name"] != release.ConfigCandidates {
		t.Errorf("configs = %#v", fm["configs"])
	}
	if _, err := ParseFrontMatter(readme); err != nil {
		t.Errorf("ParseFrontMatter: %v", err)
	}
	for _, want := range []string{"# Dataset Card for EnvGap", "## Dataset Summary", "### Data Fields", "### Data Splits",
		"## The candidates config", "## Dataset Creation", "### Personal and Sensitive Information", "## Evaluation",
		"## Licensing Information", rep.CorpusID, "![Candidates by outcome and set](" + FunnelChartPath + ")",
		`load_dataset("bhanuprakashvangala/EnvGap", "secure", split="test")`,
		"| task | 2 | 1 | 1 | 4 |", "| not_checked | 1 | 0 | 0 | 1 |", "| code_fix | 0 | 0 | 1 | 1 |",
		"No task is excluded from scoring"} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("card lacks %q", want)
		}
	}
}

func TestCardListsExclusions(t *testing.T) {
	st := admittedStore(t)
	reason := "The CMake parser misread a bracket | inside a quoted string."
	if _, err := Exclude(st, ExcludeRequest{InstanceID: idLite, Reason: strings.ReplaceAll(reason, "|", "/"), Kind: schemas.TaskControl, Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	out, rep := exportTo(t, st)
	if rep.Excluded != 1 {
		t.Errorf("excluded = %d", rep.Excluded)
	}
	readme, _ := os.ReadFile(filepath.Join(out, "README.md"))
	row := "| " + idLite + " | lite | control | The CMake parser misread a bracket / inside a quoted string. |"
	if !bytes.Contains(readme, []byte("| Task | Set | Kind | Reason |")) || !bytes.Contains(readme, []byte(row)) {
		t.Errorf("card lacks the exclusion row %q", row)
	}
	tasks, _ := release.ReadTasks(out)
	for _, x := range tasks {
		if x.InstanceID == idLite && (!x.ExcludedFromScoring || x.ExcludedSince == nil || *x.ExcludedSince != "2026-09-29T12:00:00Z") {
			t.Errorf("exported row of the excluded task: %v %v", x.ExcludedFromScoring, x.ExcludedSince)
		}
	}
}

func TestFunnelChart(t *testing.T) {
	f := &catalog.Funnel{Candidates: map[schemas.Source]map[schemas.Outcome]int{
		schemas.SourceReported: {schemas.OutcomeTask: 40, schemas.OutcomeNotReproduced: 300},
		schemas.SourceLite:     {schemas.OutcomeCodeFix: 12, schemas.OutcomeTask: 1},
	}}
	a, err := FunnelChart(f)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := FunnelChart(f)
	if !bytes.Equal(a, b) {
		t.Error("the same funnel gave different PNG bytes")
	}
	img, err := png.Decode(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	count := map[[3]uint32]int{}
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			count[[3]uint32{r >> 8, g >> 8, bl >> 8}]++
		}
	}
	colorPixels := func(s schemas.Source) int {
		c := setColors[s]
		return count[[3]uint32{uint32(c.R), uint32(c.G), uint32(c.B)}]
	}
	// Reported has 340 candidates, lite 13, repaired none (its legend swatch only).
	swatch := 20 * 16
	if r, l, p := colorPixels(schemas.SourceReported)-swatch, colorPixels(schemas.SourceLite)-swatch, colorPixels(schemas.SourceRepaired)-swatch; r <= 10*l || l <= 0 || p != 0 {
		t.Errorf("bar pixels: reported %d, lite %d, repaired %d", r, l, p)
	}
	if count[[3]uint32{0x22, 0x22, 0x22}] == 0 {
		t.Error("no label text drawn")
	}
}

func TestReadTasksRefusesForeignFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := release.ReadTasks(dir); !errors.Is(err, release.ErrNotExported) {
		t.Errorf("empty folder: err = %v", err)
	}
	// A parquet file with other columns is refused, not read with columns missing.
	type other struct {
		InstanceID string `parquet:"instance_id"`
	}
	p := filepath.Join(dir, "data", "full")
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := parquet.WriteFile(filepath.Join(p, "test-00000-of-00001.parquet"), []other{{"x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := release.ReadTasks(dir); err == nil || !strings.Contains(err.Error(), "schema differs") {
		t.Errorf("foreign file: err = %v", err)
	}
}

func TestRowGroupsAndShards(t *testing.T) {
	st := admittedStore(t)
	out := filepath.Join(t.TempDir(), "release")
	o := testOptions(out)
	o.Limits = release.Limits{RowsPerGroup: 2, BytesPerGroup: 1 << 20, BytesPerFile: 1500}
	rep, err := Export(st, o)
	if err != nil {
		t.Fatal(err)
	}
	full := rep.Configs[0]
	if len(full.Files) < 2 {
		t.Fatalf("full: %d files, want the 4 rows cut into several", len(full.Files))
	}
	rows := 0
	for i, f := range full.Files {
		rows += f.Rows
		if want := filepath.ToSlash(filepath.Join("data", "full", "test-0000"+string(rune('0'+i))+"-of-0000"+string(rune('0'+len(full.Files)))+".parquet")); f.Path != want {
			t.Errorf("file %d = %s, want %s", i, f.Path, want)
		}
		pf := openParquet(t, filepath.Join(out, filepath.FromSlash(f.Path)))
		for _, rg := range pf.RowGroups() {
			if rg.NumRows() > 2 {
				t.Errorf("%s: a row group of %d rows, limit 2", f.Path, rg.NumRows())
			}
		}
		if len(pf.RowGroups()) != f.RowGroups {
			t.Errorf("%s: %d row groups, report says %d", f.Path, len(pf.RowGroups()), f.RowGroups)
		}
	}
	if rows != 4 {
		t.Errorf("full has %d rows over its files, want 4", rows)
	}
	read, err := release.ReadTasks(out)
	if err != nil || len(read) != 4 {
		t.Fatalf("read %d tasks, %v", len(read), err)
	}
}

// unauditedStore is verifiedStore admitted with no registry audit at all.
func unauditedStore(t testing.TB) catalog.Store {
	st := verifiedStore(t)
	if _, err := Admit(st, AdmitOptions{Audits: StoreAudits(st)}); err != nil {
		t.Fatal(err)
	}
	return st
}

// An export with no audit at all is refused (TestExportRefuses); with NoAudit it is
// written and the card says the release was not audited; an audited release does not.
func TestExportWithoutAuditSaysSo(t *testing.T) {
	const sentence = "exported without a registry audit (envgap export --no-audit)"
	for _, tc := range []struct {
		name    string
		store   func(testing.TB) catalog.Store
		noAudit bool
		says    bool
	}{
		{"no audit, --no-audit", unauditedStore, true, true},
		{"audited", admittedStore, false, false},
		{"audited, --no-audit", admittedStore, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.store(t)
			out := filepath.Join(t.TempDir(), "release")
			o := testOptions(out)
			o.NoAudit = tc.noAudit
			if _, err := Export(st, o); err != nil {
				t.Fatal(err)
			}
			card, err := os.ReadFile(filepath.Join(out, "README.md"))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(card), sentence); got != tc.says {
				t.Errorf("card says it was not audited: %v, want %v", got, tc.says)
			}
		})
	}
}

// The card: the candidates rows that are not tasks have no commands or failure patterns.
func TestCandidateRowsOfNonTasksHaveNoCommands(t *testing.T) {
	out, _ := exportTo(t, admittedStore(t))
	cands, err := release.ReadCandidates(out)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, c := range cands {
		if c.Outcome == schemas.OutcomeTask {
			if c.ResolveCommand == "" || c.RunCommand == "" {
				t.Errorf("%s: a task row lost its commands", c.InstanceID)
			}
			continue
		}
		seen++
		if c.BootstrapCommand != "" || c.ResolveCommand != "" || c.ReproCommand != "" || c.RunCommand != "" || c.D2Command != nil ||
			c.FailureSignature != "" || c.ExpectedFailureRegex != "" {
			t.Errorf("%s (%s) carries commands or failure patterns: %+v", c.InstanceID, c.Outcome, c.Spec)
		}
	}
	if seen == 0 {
		t.Fatal("the fixture has no candidate that is not a task")
	}
}
