package export

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/envgap/envgap/lib/release"
	"github.com/envgap/envgap/schemas"
	"gopkg.in/yaml.v3"
)

// The rules of the Hub's README YAML and eval.yaml that the export must follow
// (../shared/notes/hub.md: hub-docs, datasets, dataset-viewer, huggingface.js).
var (
	hubLicenses            = []string{"mit", "cc-by-4.0", "apache-2.0", "unknown", "other"}
	hubSizeCategories      = []string{"n<1K", "1K<n<10K", "10K<n<100K", "100K<n<1M", "1M<n<10M", "10M<n<100M", "100M<n<1B", "1B<n<10B", "10B<n<100B", "100B<n<1T", "n>1T", "unknown"}
	hubAnnotationsCreators = []string{"found", "crowdsourced", "expert-generated", "machine-generated", "no-annotation", "other"}
	// A few task_categories ids of huggingface.js pipelines.ts (the ones a code benchmark
	// could use).
	hubTaskCategories = []string{"text-generation", "question-answering", "summarization", "other"}
	hubSplitName      = regexp.MustCompile(`^\w+(\.\w+)*$`)
	iso639or          = regexp.MustCompile(`^([a-z]{2,3}|code)$`)
)

// cardTypeOfFeature writes a feature as the card's type names (duckType's keys).
func cardTypeOfFeature(f Feature) string {
	if f.List == nil {
		return f.Dtype
	}
	if f.List.Fields == nil {
		return "list<" + f.List.Dtype + ">"
	}
	var parts []string
	for _, s := range f.List.Fields {
		parts = append(parts, s.Name+": "+cardTypeOfFeature(s))
	}
	return "list<struct<" + strings.Join(parts, ", ") + ">>"
}

// checkHubFolder checks an exported folder against the Hub's rules: the README's YAML
// (read generically and strictly), the configs and their files, dataset_info against what
// DuckDB reads from the files, LICENSE.md and eval.yaml. It returns the configs the YAML
// lists.
func checkHubFolder(t *testing.T, out string, rep *Report) []string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(out, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	fm, err := ParseFrontMatter(readme) // unknown keys are refused
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]int{}
	for _, c := range rep.Configs {
		rows[c.Name] = c.Rows
	}

	if !slices.Contains(hubLicenses, fm.License) {
		t.Errorf("license %q is not a Hub licence id", fm.License)
	}
	if fm.License != "other" || fm.LicenseName == "" || fm.LicenseLink != LicensePath {
		t.Errorf("license %q, license_name %q, license_link %q: want other, a name, %s", fm.License, fm.LicenseName, fm.LicenseLink, LicensePath)
	}
	if _, err := os.Stat(filepath.Join(out, fm.LicenseLink)); err != nil {
		t.Errorf("license_link %s: %v", fm.LicenseLink, err)
	}
	if !slices.Equal(fm.Language, []string{"en", "code"}) {
		t.Errorf("language = %v", fm.Language)
	}
	for _, l := range fm.Language {
		if !iso639or.MatchString(l) {
			t.Errorf("language %q is neither an ISO 639 code nor code", l)
		}
	}
	for _, field := range []struct {
		name    string
		got     []string
		allowed []string
	}{{"task_categories", fm.TaskCategories, hubTaskCategories}, {"annotations_creators", fm.AnnotationsCreators, hubAnnotationsCreators}, {"size_categories", fm.SizeCategories, hubSizeCategories}} {
		if len(field.got) == 0 {
			t.Errorf("%s is empty", field.name)
		}
		for _, v := range field.got {
			if !slices.Contains(field.allowed, v) {
				t.Errorf("%s: %q is not one of the Hub's", field.name, v)
			}
		}
	}
	if !slices.Equal(fm.AnnotationsCreators, []string{"machine-generated"}) {
		t.Errorf("annotations_creators = %v", fm.AnnotationsCreators)
	}
	if want := sizeCategory(rep.Candidates); !slices.Equal(fm.SizeCategories, []string{want}) {
		t.Errorf("size_categories = %v, want [%s] for %d rows", fm.SizeCategories, want, rep.Candidates)
	}

	// configs: candidates first and the one default; no config named default; every
	// config has rows and its glob matches the files written; every config with rows is
	// listed and no data folder is left unlisted.
	var names []string
	defaults := 0
	for i, c := range fm.Configs {
		names = append(names, c.ConfigName)
		if c.ConfigName == "" || c.ConfigName == "default" {
			t.Errorf("configs[%d] is named %q", i, c.ConfigName)
		}
		if c.Default {
			defaults++
			if i != 0 || c.ConfigName != release.ConfigCandidates {
				t.Errorf("default config %s at %d, want candidates first", c.ConfigName, i)
			}
		}
		if rows[c.ConfigName] == 0 {
			t.Errorf("config %s has no rows but is listed", c.ConfigName)
		}
		if len(c.DataFiles) != 1 {
			t.Fatalf("%s: data_files = %+v", c.ConfigName, c.DataFiles)
		}
		df := c.DataFiles[0]
		if !hubSplitName.MatchString(df.Split) || df.Split != release.HubSplit {
			t.Errorf("%s: split %q", c.ConfigName, df.Split)
		}
		matches, _ := filepath.Glob(filepath.Join(out, filepath.FromSlash(df.Path)))
		var written []string
		for _, rc := range rep.Configs {
			if rc.Name == c.ConfigName {
				for _, f := range rc.Files {
					written = append(written, filepath.Join(out, filepath.FromSlash(f.Path)))
				}
			}
		}
		if len(matches) == 0 || !slices.Equal(matches, written) {
			t.Errorf("%s: %s matches %v, the export wrote %v", c.ConfigName, df.Path, matches, written)
		}
	}
	if defaults != 1 {
		t.Errorf("%d default configs, want 1", defaults)
	}
	for _, c := range release.Configs {
		listed := slices.Contains(names, c)
		if listed != (rows[c] > 0) {
			t.Errorf("config %s with %d rows: listed %v", c, rows[c], listed)
		}
		if _, err := os.Stat(filepath.Join(out, "data", c)); (err == nil) != listed {
			t.Errorf("config %s: data folder present %v, listed %v", c, err == nil, listed)
		}
	}

	// dataset_info: one entry per listed config, in the same order, whose features and row
	// count are what DuckDB reads from the files.
	if len(fm.DatasetInfo) != len(fm.Configs) {
		t.Fatalf("dataset_info has %d entries for %d configs", len(fm.DatasetInfo), len(fm.Configs))
	}
	var files []string
	for _, c := range fm.Configs {
		m, _ := filepath.Glob(filepath.Join(out, filepath.FromSlash(c.DataFiles[0].Path)))
		files = append(files, m...)
	}
	var duck map[string]duckReport
	if err := json.Unmarshal(runNode(t, "duckdb_check.mjs", files...), &duck); err != nil {
		t.Fatal(err)
	}
	for i, info := range fm.DatasetInfo {
		c := fm.Configs[i]
		if info.ConfigName != c.ConfigName {
			t.Errorf("dataset_info[%d] is %s, configs[%d] %s", i, info.ConfigName, i, c.ConfigName)
			continue
		}
		m, _ := filepath.Glob(filepath.Join(out, filepath.FromSlash(c.DataFiles[0].Path)))
		n := 0
		for _, f := range m {
			d := duck[f]
			n += d.Rows
			if len(d.Columns) != len(info.Features) {
				t.Errorf("%s: DuckDB reads %d columns, dataset_info has %d features", f, len(d.Columns), len(info.Features))
				continue
			}
			for j, col := range d.Columns {
				ft := info.Features[j]
				if col.Name != ft.Name || col.Type != duckType[cardTypeOfFeature(ft)] {
					t.Errorf("%s: column %d is %s %s in DuckDB, %s %s (%s) in dataset_info", f, j, col.Name, col.Type, ft.Name, cardTypeOfFeature(ft), duckType[cardTypeOfFeature(ft)])
				}
			}
		}
		if len(info.Splits) != 1 || info.Splits[0].Name != release.HubSplit || info.Splits[0].NumExamples != n {
			t.Errorf("%s: splits %+v, DuckDB reads %d rows", info.ConfigName, info.Splits, n)
		}
	}
	// The card's column types are the features' (the Data Fields table of full).
	for _, info := range fm.DatasetInfo {
		if info.ConfigName != release.ConfigFull {
			continue
		}
		cols := schemas.TaskColumns()
		if len(cols) != len(info.Features) {
			t.Errorf("full: %d features, the card has %d fields", len(info.Features), len(cols))
		}
		for j, f := range info.Features {
			if j < len(cols) && (cols[j].Name != f.Name || cols[j].CardType() != cardTypeOfFeature(f)) {
				t.Errorf("full: feature %s %s, the card's field %s %s", f.Name, cardTypeOfFeature(f), cols[j].Name, cols[j].CardType())
			}
		}
	}

	// eval.yaml: the fields the Hub reads, one task per board with rows, each naming a
	// listed config and its split.
	eb, err := os.ReadFile(filepath.Join(out, EvalPath))
	if err != nil {
		t.Fatal(err)
	}
	var ev EvalFile
	dec := yaml.NewDecoder(bytes.NewReader(eb))
	dec.KnownFields(true)
	if err := dec.Decode(&ev); err != nil {
		t.Fatalf("eval.yaml: %v", err)
	}
	if ev.Name == "" || ev.Description == "" || ev.EvaluationFramework == "" || len(ev.Tasks) == 0 {
		t.Errorf("eval.yaml = %+v", ev)
	}
	var boards []string
	ids := map[string]bool{}
	for _, task := range ev.Tasks {
		if task.ID == "" || ids[task.ID] || !slices.Contains(names, task.Config) || task.Split != release.HubSplit {
			t.Errorf("eval.yaml task %+v: want a new id, a listed config and split %s", task, release.HubSplit)
		}
		ids[task.ID] = true
		boards = append(boards, task.Config)
	}
	var wantBoards []string
	for _, b := range []string{release.ConfigReported, release.ConfigRepaired, release.ConfigLite} {
		if rows[b] > 0 {
			wantBoards = append(wantBoards, b)
		}
	}
	if !slices.Equal(boards, wantBoards) {
		t.Errorf("eval.yaml boards %v, want %v", boards, wantBoards)
	}
	return names
}

func TestHubFolderFollowsTheHubsRules(t *testing.T) {
	st := admittedStore(t)
	out := filepath.Join(t.TempDir(), "release")
	o := testOptions(out)
	o.Meta = ReleaseConfig{Leaderboard: "https://example.org/leaderboard", Paper: "https://arxiv.org/abs/2501.00001",
		Citation: "@article{envgap2026,\n  title = {EnvGap}\n}\n", EvaluationFramework: "harbor"}
	rep, err := Export(st, o)
	if err != nil {
		t.Fatal(err)
	}
	names := checkHubFolder(t, out, rep)
	if want := []string{release.ConfigCandidates, release.ConfigFull, release.ConfigReported, release.ConfigRepaired, release.ConfigLite, release.ConfigSecure}; !slices.Equal(names, want) {
		t.Errorf("configs %v, want %v", names, want)
	}
	readme, _ := os.ReadFile(filepath.Join(out, "README.md"))
	for _, want := range []string{
		"# Dataset Card for EnvGap\n\n[Leaderboard](https://example.org/leaderboard) | [Tasks](https://huggingface.co/datasets/" + DefaultRepo + "/viewer/candidates) | [How runs are scored](#evaluation) | [Evaluation code](https://huggingface.co/datasets/" + DefaultRepo + "/blob/main/" + release.HarnessPath + ")\n",
		"## Citation\n\nThe paper: <https://arxiv.org/abs/2501.00001>.\n\n```bibtex\n@article{envgap2026,\n  title = {EnvGap}\n}\n```",
		"[discussion page](https://huggingface.co/datasets/" + DefaultRepo + "/discussions)",
		"evaluation framework `harbor`",
	} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("the card lacks %q", want)
		}
	}
	if strings.Contains(string(readme), "left out of the configs") {
		t.Error("the card says a config was left out, but none is empty")
	}
	ev, _ := os.ReadFile(filepath.Join(out, EvalPath))
	if !strings.Contains(string(ev), "evaluation_framework: harbor") {
		t.Errorf("eval.yaml:\n%s", ev)
	}
}

// TestEmptyConfigsAreLeftOut exports a task set with no Lite task: lite and secure have no
// rows, so they get no file and no YAML entry, the card says so, and the folder still
// reads and compares.
func TestEmptyConfigsAreLeftOut(t *testing.T) {
	st := newStore(t)
	putVerdict(t, st, idRepaired, schemas.OutcomeVerified)
	putVerdict(t, st, idReported, schemas.OutcomeVerified)
	putAudit(t, st, idRepaired, []schemas.Category{schemas.CategoryMisspecification}, nil) // audited, as its row says
	if _, err := Admit(st, AdmitOptions{}); err != nil {
		t.Fatal(err)
	}
	out, rep := exportTo(t, st)
	names := checkHubFolder(t, out, rep)
	if want := []string{release.ConfigCandidates, release.ConfigFull, release.ConfigReported, release.ConfigRepaired}; !slices.Equal(names, want) {
		t.Errorf("configs %v, want %v", names, want)
	}
	readme, _ := os.ReadFile(filepath.Join(out, "README.md"))
	if !strings.Contains(string(readme), "is left out of the configs the Hub lists (the dataset viewer has failed on parquet files without rows): lite, secure.") {
		t.Error("the card does not say which configs were left out")
	}
	if strings.Contains(string(readme), `"lite", split="test")`) {
		t.Error("the card shows how to load the empty lite config")
	}
	for _, cfg := range []string{release.ConfigLite, release.ConfigSecure} {
		if got, err := release.ReadTaskConfig(out, cfg); err != nil || len(got) != 0 {
			t.Errorf("reading the empty config %s: %d rows, %v", cfg, len(got), err)
		}
	}
	if d, err := CompareReleases(out, out); err != nil || !d.Same {
		t.Errorf("hub check of a folder with empty configs against itself: %+v, %v", d, err)
	}
	// A re-export where lite has rows again brings its folder back; one where it has none
	// removes the old folder.
	full, _ := exportTo(t, admittedStore(t))
	if err := os.RemoveAll(out); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(full, out); err != nil {
		t.Fatal(err)
	}
	if _, err := Export(st, testOptions(out)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "data", release.ConfigLite)); err == nil {
		t.Error("re-exporting a task set without Lite tasks left the old data/lite folder")
	}
}

func TestSizeCategory(t *testing.T) {
	for n, want := range map[int]string{0: "n<1K", 999: "n<1K", 1000: "1K<n<10K", 99999: "10K<n<100K", 100000: "100K<n<1M", 5_000_000: "1M<n<10M"} {
		if got := sizeCategory(n); got != want || !slices.Contains(hubSizeCategories, got) {
			t.Errorf("sizeCategory(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestReleaseConfig(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "release.yaml")
	if err := os.WriteFile(p, []byte("leaderboard: https://example.org/lb\ncitation: |\n  @misc{x,\n    title = {X}\n  }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := ReadReleaseConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	c = c.Merge(ReleaseConfig{Paper: "https://arxiv.org/abs/1"})
	if c.Leaderboard != "https://example.org/lb" || c.Paper != "https://arxiv.org/abs/1" || !strings.HasPrefix(c.Citation, "@misc{x,") {
		t.Errorf("config = %+v", c)
	}
	d := ReleaseConfig{}.withDefaults("me/EnvGap", "0123456789ab")
	if d.Code != "https://huggingface.co/datasets/me/EnvGap/blob/main/"+release.HarnessPath || d.Discussion != "https://huggingface.co/datasets/me/EnvGap/discussions" ||
		!strings.Contains(d.Citation, "Corpus id 0123456789ab") || d.EvaluationFramework != DefaultEvaluationFramework || d.Leaderboard != "" {
		t.Errorf("defaults = %+v", d)
	}
	// With a site, the first line is its four pages; a leaderboard given wins.
	site := ReleaseConfig{Site: "https://example.org/envgap/"}.withDefaults("me/EnvGap", "0123456789ab")
	if got, want := linksLine(site, "me/EnvGap"), "[Leaderboard](https://example.org/envgap/index.html) | [Tasks](https://example.org/envgap/tasks.html) | [How runs are scored](https://example.org/envgap/scoring.html) | [Evaluation code](https://example.org/envgap/evaluation.html)"; got != want {
		t.Errorf("links with a site:\n got %s\nwant %s", got, want)
	}
	site.Leaderboard = "https://example.org/lb"
	if got := linksLine(site, "me/EnvGap"); !strings.HasPrefix(got, "[Leaderboard](https://example.org/lb) | [Tasks](https://example.org/envgap/tasks.html)") {
		t.Errorf("links with a site and a leaderboard: %s", got)
	}
	if err := os.WriteFile(p, []byte("leaderbord: https://example.org/lb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadReleaseConfig(p); err == nil || !strings.Contains(err.Error(), "leaderbord") {
		t.Errorf("a misspelt key was taken: %v", err)
	}
}
