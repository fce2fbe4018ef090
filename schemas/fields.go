package schemas

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// Column is one column of a record type (layout.go), as the card, the JSON Schema, the
// parquet configs and validation see it.
type Column struct {
	// Name is the column's JSON and parquet name.
	Name string
	// Field is the Go field's name (parquet-go names columns by it in tag replacements).
	Field string
	// Doc is the card's description of the column (the `doc:` tag).
	Doc string
	// Type is the Go type: *T for a nullable column, []T for a list.
	Type reflect.Type
	// Index is the field's index path in the record, through the embedded groups.
	Index []int
	// NullInCandidates is set for a string column the candidates config writes as null on a
	// row that is not a task when it is empty (`candidates:"optional"`).
	NullInCandidates bool
	// AgentVisible is set for a column an agent may see while it works on the task
	// (`agent:"visible"`); see AgentColumns.
	AgentVisible bool
}

// Nullable reports whether the column may hold null in every config (a pointer).
func (c Column) Nullable() bool { return c.Type.Kind() == reflect.Pointer }

// List reports whether the column is a list.
func (c Column) List() bool { return c.Type.Kind() == reflect.Slice }

// CardType is the column's type as the card writes it: string, int64, bool, list<string>,
// list<struct<path: string, content: string>>.
func (c Column) CardType() string { return cardType(c.Type) }

func cardType(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int64, reflect.Float64:
		return t.Kind().String()
	case reflect.Slice:
		return "list<" + cardType(t.Elem()) + ">"
	case reflect.Struct:
		var parts []string
		for _, c := range ColumnsOf(t) {
			parts = append(parts, c.Name+": "+cardType(c.Type))
		}
		return "struct<" + strings.Join(parts, ", ") + ">"
	}
	return t.String()
}

var columnCache sync.Map // reflect.Type -> []Column

// ColumnsOf lists the columns of a struct type in declaration order: every field with a
// JSON name, the fields of untagged embedded structs (the groups of layout.go) in their
// place. It works on any struct type, so a record built with reflect.StructOf from these
// types has its columns listed the same way.
func ColumnsOf(t reflect.Type) []Column {
	if c, ok := columnCache.Load(t); ok {
		return c.([]Column)
	}
	var cols []Column
	var walk func(t reflect.Type, index []int)
	walk = func(t reflect.Type, index []int) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			idx := append(append([]int(nil), index...), i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
				walk(f.Type, idx)
				continue
			}
			if name == "" || name == "-" || !f.IsExported() {
				continue
			}
			cols = append(cols, Column{Name: name, Field: f.Name, Doc: f.Tag.Get("doc"), Type: f.Type, Index: idx,
				NullInCandidates: f.Tag.Get("candidates") == "optional", AgentVisible: f.Tag.Get("agent") == "visible"})
		}
	}
	walk(t, nil)
	columnCache.Store(t, cols)
	return cols
}

// TaskColumns lists the task row's columns in the card's order.
func TaskColumns() []Column { return ColumnsOf(reflect.TypeOf(Task{})) }

// AgentColumns lists, in the card's order, the task columns an agent may see while it works
// on a task (`agent:"visible"` in the record layout): the one list behind the task file of
// envgap run and propose, a model agent's prompt, Harbor's instruction and the website.
// Never the fix (patch, gold_files, the pull request's columns), nor the commands that
// score it.
func AgentColumns() []Column {
	var out []Column
	for _, c := range TaskColumns() {
		if c.AgentVisible {
			out = append(out, c)
		}
	}
	return out
}

// AgentView fills view, a pointer to a struct whose fields are named by json tags like the
// record layout's, with the columns of t an agent may see. The struct must hold exactly the
// agent-visible columns (AgentColumns), each with the layout's type, in any order: one
// that holds another column, or lacks one, is an error, so a view type cannot drift from
// the layout.
func AgentView(t *Task, view any) error {
	rv := reflect.ValueOf(view)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("agent view: %T is not a pointer to a struct", view)
	}
	dst := rv.Elem()
	visible := map[string]Column{}
	for _, c := range AgentColumns() {
		visible[c.Name] = c
	}
	src := reflect.ValueOf(t).Elem()
	seen := map[string]bool{}
	for _, c := range ColumnsOf(dst.Type()) {
		col, ok := visible[c.Name]
		if !ok {
			return fmt.Errorf("agent view %s: field %s (%s) is not a column an agent may see (agent:\"visible\" in schemas/layout.go)", dst.Type(), c.Field, c.Name)
		}
		if c.Type != col.Type {
			return fmt.Errorf("agent view %s: field %s is %s, the column %s is %s", dst.Type(), c.Field, c.Type, c.Name, col.Type)
		}
		dst.FieldByIndex(c.Index).Set(src.FieldByIndex(col.Index))
		seen[c.Name] = true
	}
	for _, c := range AgentColumns() {
		if !seen[c.Name] {
			return fmt.Errorf("agent view %s: no field for the agent-visible column %s", dst.Type(), c.Name)
		}
	}
	return nil
}

// CandidateColumns lists the candidate record's columns (the candidates config's) in order.
func CandidateColumns() []Column { return ColumnsOf(reflect.TypeOf(Candidate{})) }

// jsonFieldNames returns the JSON names of a struct's columns in declaration order.
func jsonFieldNames(v any) []string { return columnNames(ColumnsOf(reflect.TypeOf(v))) }

func columnNames(cols []Column) []string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return names
}

// TaskFields lists the task row's columns in the card's order.
func TaskFields() []string { return columnNames(TaskColumns()) }

// CandidateFields lists the candidate record's fields in declaration order.
func CandidateFields() []string { return columnNames(CandidateColumns()) }

// fillLists sets every nil list column of the record v points at to an empty list: a row
// of the card has no null lists (parquet reads both back as []).
func fillLists(v any) {
	rv := reflect.ValueOf(v).Elem()
	for _, c := range ColumnsOf(rv.Type()) {
		if c.List() {
			if f := rv.FieldByIndex(c.Index); f.IsNil() {
				f.Set(reflect.MakeSlice(c.Type, 0, 0))
			}
		}
	}
}
