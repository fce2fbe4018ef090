package export

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/envgap/envgap/lib/release"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
	"gopkg.in/yaml.v3"
)

// The Hub's metadata beyond the configs: dataset_info features read from the written
// parquet files, the card's links and citation (ReleaseConfig), and eval.yaml.

// Feature is one entry of a config's dataset_info.features: a scalar (Dtype: string,
// int64, bool) or a list (List: of a scalar, or of a struct's fields).
type Feature struct {
	Name  string       `yaml:"name"`
	Dtype string       `yaml:"dtype,omitempty"`
	List  *FeatureList `yaml:"list,omitempty"`
}

// FeatureList is the element of a list feature: a scalar dtype (written `list: string`) or
// a struct's fields (written as a list of features).
type FeatureList struct {
	Dtype  string
	Fields []Feature
}

// MarshalYAML writes the element as the Hub writes it.
func (l FeatureList) MarshalYAML() (any, error) {
	if l.Fields != nil {
		return l.Fields, nil
	}
	return l.Dtype, nil
}

// UnmarshalYAML reads either form.
func (l *FeatureList) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		l.Dtype = n.Value
		return nil
	case yaml.SequenceNode:
		return n.Decode(&l.Fields)
	}
	return fmt.Errorf("line %d: a list feature is a dtype or a list of fields", n.Line)
}

// DatasetInfo is one config's entry of the front matter's dataset_info.
type DatasetInfo struct {
	ConfigName string      `yaml:"config_name"`
	Features   []Feature   `yaml:"features"`
	Splits     []SplitInfo `yaml:"splits"`
}

// SplitInfo is one split of a DatasetInfo.
type SplitInfo struct {
	Name        string `yaml:"name"`
	NumExamples int    `yaml:"num_examples"`
}

// FeaturesOf returns the Hub features of a parquet schema, column by column: strings,
// int64 and booleans, and LISTs of those or of groups of them. Any other type is an error
// (the Hub would read it some other way than the card says).
func FeaturesOf(s *parquet.Schema) ([]Feature, error) {
	return featuresOf(s.Fields())
}

func featuresOf(fields []parquet.Field) ([]Feature, error) {
	out := make([]Feature, 0, len(fields))
	for _, f := range fields {
		ft, err := featureOf(f)
		if err != nil {
			return nil, err
		}
		out = append(out, ft)
	}
	return out, nil
}

func featureOf(f parquet.Field) (Feature, error) {
	if f.Leaf() {
		dt, err := dtypeOf(f)
		return Feature{Name: f.Name(), Dtype: dt}, err
	}
	if lt := f.Type().LogicalType(); lt == nil || !isLogical[*format.ListType](lt) {
		return Feature{}, fmt.Errorf("column %s: a group that is not a LIST", f.Name())
	}
	// The three-level LIST: group (LIST) > repeated group list > element.
	rep := f.Fields()
	if len(rep) != 1 || !rep[0].Repeated() || len(rep[0].Fields()) != 1 {
		return Feature{}, fmt.Errorf("column %s: not a three-level LIST", f.Name())
	}
	el := rep[0].Fields()[0]
	if el.Leaf() {
		dt, err := dtypeOf(el)
		if err != nil {
			return Feature{}, fmt.Errorf("column %s: %w", f.Name(), err)
		}
		return Feature{Name: f.Name(), List: &FeatureList{Dtype: dt}}, nil
	}
	sub, err := featuresOf(el.Fields())
	if err != nil {
		return Feature{}, fmt.Errorf("column %s: %w", f.Name(), err)
	}
	return Feature{Name: f.Name(), List: &FeatureList{Fields: sub}}, nil
}

func dtypeOf(f parquet.Field) (string, error) {
	t := f.Type()
	switch t.Kind() {
	case parquet.ByteArray:
		if lt := t.LogicalType(); lt != nil && isLogical[*format.StringType](lt) {
			return "string", nil
		}
	case parquet.Int64:
		lt := t.LogicalType()
		if lt == nil || lt.Value == nil {
			return "int64", nil
		}
		if it, ok := lt.Value.(*format.IntType); ok && it.BitWidth == 64 && it.IsSigned {
			return "int64", nil
		}
	case parquet.Boolean:
		return "bool", nil
	}
	return "", fmt.Errorf("column %s: parquet type %v has no Hub feature here", f.Name(), t)
}

func isLogical[T format.LogicalTypeValue](lt *format.LogicalType) bool {
	_, ok := lt.Value.(T)
	return ok
}

// fileFeatures reads the schema of a written parquet file and returns its features.
func fileFeatures(path string) ([]Feature, error) {
	pf, fh, err := release.OpenParquetFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer fh.Close()
	return FeaturesOf(pf.Schema())
}

// ReleaseConfig is what a release says about itself beyond its rows: the card's links and
// citation and the benchmark's evaluation framework. It comes from a YAML file
// (ReadReleaseConfig) and flags; empty fields get defaults from the Hub repository
// (WithDefaults).
type ReleaseConfig struct {
	// Site is the root URL of the EnvGap website (envgap site's output as published):
	// the card's first line links its four pages (Leaderboard, Tasks, How runs are scored,
	// Evaluation code). Leaderboard and Code, when given, win over the site's pages.
	Site string `yaml:"site"`
	// Leaderboard and Code are the first line's leaderboard and evaluation-code links;
	// Paper is cited in the Citation section, Discussion in Contact.
	Leaderboard string `yaml:"leaderboard"`
	Code        string `yaml:"code"`
	Paper       string `yaml:"paper"`
	Discussion  string `yaml:"discussion"`
	// Citation is the BibTeX entry the card's Citation section shows.
	Citation string `yaml:"citation"`
	// EvaluationFramework is eval.yaml's evaluation_framework: an id from the Hub's list of
	// evaluation frameworks.
	EvaluationFramework string `yaml:"evaluation_framework"`
}

// DefaultEvaluationFramework is eval.yaml's framework when the release config names none.
// The Hub's list has no envgap entry yet: name one of the Hub's ids in the release config
// to register the dataset as a benchmark.
const DefaultEvaluationFramework = "envgap"

// ReadReleaseConfig reads a release config file (YAML; unknown keys are refused).
func ReadReleaseConfig(path string) (ReleaseConfig, error) {
	var c ReleaseConfig
	b, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("release config: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("release config %s: %w (keys: site, leaderboard, code, paper, discussion, citation, evaluation_framework)", path, err)
	}
	return c, nil
}

// Merge returns c with the non-empty fields of o put over it.
func (c ReleaseConfig) Merge(o ReleaseConfig) ReleaseConfig {
	for _, p := range []struct{ dst, src *string }{
		{&c.Site, &o.Site}, {&c.Leaderboard, &o.Leaderboard}, {&c.Code, &o.Code}, {&c.Paper, &o.Paper},
		{&c.Discussion, &o.Discussion}, {&c.Citation, &o.Citation}, {&c.EvaluationFramework, &o.EvaluationFramework},
	} {
		if *p.src != "" {
			*p.dst = *p.src
		}
	}
	return c
}

// hubURL is the Hub address dataset links are built on.
const hubURL = "https://huggingface.co/datasets/"

// withDefaults fills what the release config leaves empty: the code is the site's
// Evaluation code page, or without a site the harness zip in the dataset repository, the
// discussion its discussion page, the citation a BibTeX entry
// of the dataset and this release's corpus id. Leaderboard and paper stay empty (the card
// leaves them out) unless given.
func (c ReleaseConfig) withDefaults(repo, corpusID string) ReleaseConfig {
	if c.Code == "" && c.Site != "" {
		c.Code = sitePage(c.Site, "evaluation.html")
	}
	if c.Code == "" {
		c.Code = hubURL + repo + "/blob/main/" + release.HarnessPath
	}
	if c.Discussion == "" {
		c.Discussion = hubURL + repo + "/discussions"
	}
	if c.EvaluationFramework == "" {
		c.EvaluationFramework = DefaultEvaluationFramework
	}
	if strings.TrimSpace(c.Citation) == "" {
		c.Citation = fmt.Sprintf("@misc{envgap,\n  title        = {{EnvGap}: real environment breakages an agent fixes by changing only the environment},\n  howpublished = {\\url{%s%s}},\n  note         = {Corpus id %s}\n}", hubURL, repo, corpusID)
	}
	c.Citation = strings.TrimSpace(c.Citation)
	return c
}

// EvalPath is the file at the root of the dataset repository that registers it with the
// Hub's benchmark leaderboards.
const EvalPath = "eval.yaml"

// EvalFile is eval.yaml: the benchmark's name, description, framework and one task per
// board (config) that has rows.
type EvalFile struct {
	Name                string     `yaml:"name"`
	Description         string     `yaml:"description"`
	EvaluationFramework string     `yaml:"evaluation_framework"`
	Tasks               []EvalTask `yaml:"tasks"`
}

// EvalTask is one scored task of eval.yaml: the share of a board's tasks resolved.
type EvalTask struct {
	ID     string `yaml:"id"`
	Config string `yaml:"config"`
	Split  string `yaml:"split"`
}

// evalFileOf builds eval.yaml: one task per board that has rows, in the card's order.
func evalFileOf(framework string, rowsOf map[string]int) EvalFile {
	e := EvalFile{Name: "EnvGap", EvaluationFramework: framework,
		Description: "Can an AI coding agent make a real project build and run on a clean machine by fixing only its environment (manifests, lockfiles, build and setup files)? Score: the share of a board's tasks resolved (excluded_from_scoring rows left out)."}
	for _, c := range []string{release.ConfigReported, release.ConfigRepaired, release.ConfigLite} {
		if rowsOf[c] > 0 {
			e.Tasks = append(e.Tasks, EvalTask{ID: c + "_resolved", Config: c, Split: release.HubSplit})
		}
	}
	return e
}

// marshalYAML encodes v with two-space indentation.
func marshalYAML(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// linksLine is the card's first line: the four pages of the EnvGap website, as the card
// names them (Leaderboard | Tasks | How runs are scored | Evaluation code). With a site
// they are its pages (index, tasks, scoring, evaluation); without one the leaderboard is
// the card's own section on it, the tasks the dataset viewer on the candidates config,
// how runs are scored the card's Evaluation section and the code the harness zip.
// Leaderboard and Code given in the release config win.
func linksLine(c ReleaseConfig, repo string) string {
	lb, tasks, scoring := "#supported-tasks-and-leaderboards", hubURL+repo+"/viewer/candidates", "#evaluation"
	if c.Site != "" {
		lb, tasks, scoring = sitePage(c.Site, "index.html"), sitePage(c.Site, "tasks.html"), sitePage(c.Site, "scoring.html")
	}
	if c.Leaderboard != "" {
		lb = c.Leaderboard
	}
	var parts []string
	for _, l := range []struct{ name, url string }{
		{"Leaderboard", lb}, {"Tasks", tasks}, {"How runs are scored", scoring}, {"Evaluation code", c.Code},
	} {
		parts = append(parts, "["+l.name+"]("+l.url+")")
	}
	return strings.Join(parts, " | ")
}

// sitePage is a page of the website at root.
func sitePage(root, page string) string { return strings.TrimSuffix(root, "/") + "/" + page }

// datasetInfos builds the dataset_info entries of the written configs, in YAML order, with
// the features read back from each config's first file (every file of a config has one
// schema) and the row count.
func datasetInfos(root string, written []ConfigReport) ([]DatasetInfo, error) {
	byName := map[string]ConfigReport{}
	for _, c := range written {
		byName[c.Name] = c
	}
	var out []DatasetInfo
	for _, name := range hubConfigOrder() {
		c := byName[name]
		if c.Rows == 0 || len(c.Files) == 0 {
			continue
		}
		feats, err := fileFeatures(filepath.Join(root, filepath.FromSlash(c.Files[0].Path)))
		if err != nil {
			return nil, fmt.Errorf("dataset_info of %s: %w", name, err)
		}
		out = append(out, DatasetInfo{ConfigName: name, Features: feats, Splits: []SplitInfo{{Name: release.HubSplit, NumExamples: c.Rows}}})
	}
	return out, nil
}
