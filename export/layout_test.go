package export

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/envgap/envgap/schemas"
	"github.com/parquet-go/parquet-go"
)

// extraColumn is a hypothetical new column: one field added to the Spec group, the only
// edit of the record layout that adding it takes (its validation rule aside).
var extraColumn = reflect.StructField{Name: "BuildTimeout", Type: reflect.TypeOf(int64(0)),
	Tag: `json:"build_timeout" parquet:"build_timeout" doc:"Seconds the build may take before it counts as hung."`}

// withExtraColumn rebuilds a record type with extraColumn appended to its Spec group. (Every
// group is rebuilt as an unnamed struct: reflect.StructOf refuses to embed a named struct
// of one pointer, License, next to other fields.)
func withExtraColumn(t reflect.Type) reflect.Type {
	var fields []reflect.StructField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			var group []reflect.StructField
			for j := 0; j < f.Type.NumField(); j++ {
				group = append(group, f.Type.Field(j))
			}
			if f.Type == reflect.TypeOf(schemas.Spec{}) {
				group = append(group, extraColumn)
			}
			f.Type = reflect.StructOf(group)
		}
		fields = append(fields, f)
	}
	return reflect.StructOf(fields)
}

// TestOneEditAddsAColumn adds a column to the shared Spec group (as reflect.StructOf) and
// shows that the column list, the card's field table, the JSON Schema, strict decoding, the
// canonical JSON behind the corpus id and the parquet schemas of both records pick it up,
// in its place after is_control.
func TestOneEditAddsAColumn(t *testing.T) {
	for _, base := range []reflect.Type{reflect.TypeOf(schemas.Task{}), reflect.TypeOf(schemas.Candidate{})} {
		t.Run(base.Name(), func(t *testing.T) {
			rt := withExtraColumn(base)
			before := columnNames(schemas.ColumnsOf(base))
			at := slices.Index(before, "is_control") + 1
			want := slices.Insert(slices.Clone(before), at, "build_timeout")

			// The columns, and the card's field table made from them.
			cols := schemas.ColumnsOf(rt)
			if got := columnNames(cols); !reflect.DeepEqual(got, want) {
				t.Fatalf("columns\n got %v\nwant %v", got, want)
			}
			if c := cols[at]; c.CardType() != "int64" || c.Doc != "Seconds the build may take before it counts as hung." || c.Nullable() {
				t.Errorf("column %+v", c)
			}
			table, err := fieldTable(cols)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(table, "| is_control | bool | ") || !strings.Contains(table, "\n| build_timeout | int64 | Seconds the build may take before it counts as hung. |\n") {
				t.Errorf("field table does not show the column:\n%s", table)
			}

			// The JSON Schema: a property, required like every column of a task row.
			js, err := schemas.JSONSchemaOf(rt, "x.schema.json", want)
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Properties map[string]map[string]any `json:"properties"`
				Required   []string                  `json:"required"`
			}
			if err := json.Unmarshal(js, &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Properties["build_timeout"]["type"] != "integer" || !slices.Contains(doc.Required, "build_timeout") || len(doc.Properties) != len(want) {
				t.Errorf("JSON Schema: %v, required %v", doc.Properties["build_timeout"], doc.Required)
			}

			// Strict decoding knows the column: its type, its presence, and near misses.
			rec := reflect.New(rt)
			line := []byte(`{"instance_id": "envgap__o__r-1", "build_timeout": "ten", "build_timeot": 3}`)
			ps, ok := schemas.DecodeRecord(line, rec.Interface(), want)
			if !ok {
				t.Fatalf("decode: %v", ps)
			}
			msgs := map[string]string{}
			for _, p := range ps {
				msgs[p.Field] = p.Msg
			}
			if msgs["build_timeout"] != "wrong type: want an integer, got a string" ||
				msgs["build_timeot"] != `unknown field "build_timeot"; did you mean "build_timeout"?` ||
				msgs["repo"] != "missing required field" {
				t.Errorf("problems: %v", ps)
			}
			if ps, _ := schemas.DecodeRecord([]byte(`{"build_timeout": 600}`), rec.Interface(), nil); len(ps) != 0 {
				t.Errorf("a good value: %v", ps)
			}
			// Its rule is the one other edit (in schemas/validate.go); decoding hands it the
			// value.
			if got := rec.Elem().FieldByIndex(cols[at].Index).Int(); got != 600 {
				t.Errorf("decoded build_timeout = %d, want 600", got)
			}

			// The canonical JSON (the corpus id hashes it) carries the column.
			canon, err := schemas.Canonical(rec.Interface())
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(canon, []byte(`"build_timeout":600,"categories":`)) {
				t.Errorf("canonical JSON: %s", canon)
			}

			// The parquet schema: a required INT64 column in its place.
			ps2 := parquet.SchemaOf(reflect.New(rt).Interface())
			var names []string
			for _, f := range ps2.Fields() {
				names = append(names, f.Name())
			}
			if !reflect.DeepEqual(names, want) {
				t.Errorf("parquet columns\n got %v\nwant %v", names, want)
			}
			if f := ps2.Fields()[at]; f.Type().Kind() != parquet.Int64 || f.Optional() {
				t.Errorf("parquet column build_timeout: %v optional=%v", f.Type(), f.Optional())
			}
		})
	}
}

func columnNames(cols []schemas.Column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}
