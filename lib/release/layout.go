package release

import (
	"reflect"

	"github.com/envgap/envgap/schemas"
	"github.com/parquet-go/parquet-go"
)

// The parquet rows are the schemas records themselves: schemas.Task for the five task
// configs and schemas.Candidate for the candidates config (the record layout and its
// parquet tags are in schemas/layout.go). Only the candidates config writes some columns
// differently, as the card says: on a row that is not a task, a string column marked
// `candidates:"optional"` is null when the candidate left it empty.

// CandidateRow builds the candidates-config row of a candidate with its current outcome.
// task is the admitted task row when the candidate became one (nil otherwise): its values
// win, so the candidates row of a task agrees with the full config.
func CandidateRow(c *schemas.Candidate, outcome schemas.Outcome, reason string, task *schemas.Task) schemas.Candidate {
	r := *c
	r.Outcome, r.Reason = outcome, reason
	if r.Image == "" {
		r.Image = c.Ecosystem.Image()
	}
	if r.RegistryDateSource == "" {
		r.RegistryDateSource = schemas.DateSourceFor(c.Set)
	}
	if task != nil {
		r.Ident, r.Spec, r.Origin, r.License = task.Ident, task.Spec, task.Origin, task.License
	} else {
		// The card: the rows that are not tasks have no commands or failure patterns.
		r.BootstrapCommand, r.ResolveCommand, r.ReproCommand, r.RunCommand = "", "", "", ""
		r.D2Command = nil
		r.FailureSignature, r.ExpectedFailureRegex = "", ""
	}
	return r
}

// nullInCandidates are the columns marked `candidates:"optional"`.
var nullInCandidates = func() []schemas.Column {
	var out []schemas.Column
	for _, c := range schemas.CandidateColumns() {
		if c.NullInCandidates {
			out = append(out, c)
		}
	}
	return out
}()

// candidateTags are the tag replacements that make those columns optional in the
// candidates config.
var candidateTags = func() []*parquet.StructTagOption {
	out := make([]*parquet.StructTagOption, len(nullInCandidates))
	for i, c := range nullInCandidates {
		out[i] = &parquet.StructTagOption{ColumnPath: []string{c.Field},
			StructTag: reflect.StructTag(`parquet:"` + c.Name + `,optional"`)}
	}
	return out
}()

// CandidateSchema is the candidates config's parquet schema.
var CandidateSchema = RowLayout[schemas.Candidate]{name: "CandidateRow", tags: candidateTags}.schema()

// RowLayout is how a config's row type is written and read.
type RowLayout[T any] struct {
	// name is the parquet schema's (root) name. It stays what earlier releases wrote, so the
	// same rows give the same bytes.
	name string
	// tags replace the struct tags of some columns (nil: the tags as written).
	tags []*parquet.StructTagOption
	// write writes one batch of rows (nil: the writer's Write).
	write func(w *parquet.GenericWriter[T], rows []T) error
	// size approximates a row's uncompressed size (for cutting row groups and files).
	size func(*T) int64
}

func (l RowLayout[T]) schema() *parquet.Schema {
	opts := make([]parquet.SchemaOption, len(l.tags))
	for i, t := range l.tags {
		opts[i] = t
	}
	return parquet.NewSchema(l.name, parquet.SchemaOf(new(T), opts...))
}

// flatType is T with its columns as top-level fields: the same names, types and parquet
// tags (with the layout's tag replacements). Files are read into it and the values copied
// into T, because parquet-go v0.32.0 reads a null into a nil pointer only in a top-level
// field: a nullable column inside an embedded group (d2_command in schemas.Spec, say)
// reads back as a pointer to "" (its fieldByIndex allocates the last pointer of the path).
func (l RowLayout[T]) flatType() reflect.Type {
	rt := reflect.TypeFor[T]()
	replaced := map[string]reflect.StructTag{}
	for _, t := range l.tags {
		replaced[t.ColumnPath[0]] = t.StructTag
	}
	var fields []reflect.StructField
	for _, c := range schemas.ColumnsOf(rt) {
		tag := reflect.StructTag(`parquet:"` + rt.FieldByIndex(c.Index).Tag.Get("parquet") + `"`)
		if r, ok := replaced[c.Field]; ok {
			tag = r
		}
		fields = append(fields, reflect.StructField{Name: c.Field, Type: c.Type, Tag: tag})
	}
	return reflect.StructOf(fields)
}

var (
	TaskLayout      = RowLayout[schemas.Task]{name: "TaskRow", size: TaskBytes}
	CandidateLayout = RowLayout[schemas.Candidate]{name: "CandidateRow", tags: candidateTags, write: writeCandidates, size: candidateBytes}
)

// writeCandidates writes candidates-config rows. A row that is not a task is written as it
// is (its empty optional strings become null); a task row keeps an empty string as "". All
// rows go through WriteRows: in parquet-go v0.32.0, rows given to Write and to WriteRows in
// one row group did not all reach the file.
func writeCandidates(w *parquet.GenericWriter[schemas.Candidate], rows []schemas.Candidate) error {
	out := make([]parquet.Row, len(rows))
	for i := range rows {
		out[i] = CandidateSchema.Deconstruct(nil, &rows[i])
		if rows[i].Outcome == schemas.OutcomeTask {
			for j, v := range out[i] {
				if v.IsNull() && optionalColumns[v.Column()] {
					out[i][j] = parquet.ByteArrayValue([]byte{}).Level(v.RepetitionLevel(), v.DefinitionLevel()+1, v.Column())
				}
			}
		}
	}
	_, err := w.WriteRows(out)
	return err
}

// optionalColumns are the leaf indexes of those columns in the candidates schema.
var optionalColumns = func() map[int]bool {
	out := map[int]bool{}
	for _, c := range nullInCandidates {
		leaf, ok := CandidateSchema.Lookup(c.Name)
		if !ok {
			panic("export: candidates column " + c.Name + " is not in the parquet schema")
		}
		out[leaf.ColumnIndex] = true
	}
	return out
}()

// TaskBytes approximates a task row's uncompressed size: the bytes of its strings.
func TaskBytes(t *schemas.Task) int64 {
	n := int64(len(t.InstanceID) + len(t.Repo) + len(t.BaseCommit) + len(t.Patch) + len(t.ProblemStatement) +
		len(t.BootstrapCommand) + len(t.ResolveCommand) + len(t.ReproCommand) + len(t.RunCommand) +
		len(t.FailureSignature) + len(t.ExpectedFailureRegex) + 256)
	n += filesBytes(t.ProjectFiles) + filesBytes(t.GoldFiles)
	for _, s := range t.ManifestPaths {
		n += int64(len(s))
	}
	return n
}

// candidateBytes approximates a candidates row's uncompressed size.
func candidateBytes(c *schemas.Candidate) int64 {
	n := int64(len(c.InstanceID) + len(c.Repo) + len(c.Reason) + 256)
	n += int64(len(c.BaseCommit) + len(c.Patch) + len(c.ProblemStatement) + len(c.BootstrapCommand) + len(c.ResolveCommand) +
		len(c.ReproCommand) + len(c.RunCommand) + len(c.FailureSignature) + len(c.ExpectedFailureRegex))
	return n + filesBytes(c.ProjectFiles) + filesBytes(c.GoldFiles)
}

func filesBytes(fs []schemas.File) int64 {
	var n int64
	for _, f := range fs {
		n += int64(len(f.Path))
		if f.Content != nil {
			n += int64(len(*f.Content))
		}
	}
	return n
}
