package schemas

import (
	"embed"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// JSONSchemas holds the JSON Schema (draft 2020-12) files of the external formats:
// candidate.schema.json (input of `envgap add`), task.schema.json (a row of the full
// config) and prediction.schema.json (a line of a predictions file). A test regenerates
// them from the Go types and fails when they drift.
//
//go:embed jsonschema/*.schema.json
var JSONSchemas embed.FS

// SchemaFiles maps each embedded schema file to the Go value it describes.
var SchemaFiles = map[string]any{
	"candidate.schema.json":  Candidate{},
	"task.schema.json":       Task{},
	"prediction.schema.json": Prediction{},
}

var schemaRequired = map[string][]string{
	"candidate.schema.json":  CandidateRequired,
	"task.schema.json":       TaskRequired,
	"prediction.schema.json": {"instance_id", "files"},
}

var enumValues = map[reflect.Type][]string{
	reflect.TypeOf(Source("")):             strs(Sources),
	reflect.TypeOf(Outcome("")):            strs(Outcomes),
	reflect.TypeOf(Ecosystem("")):          strs(Ecosystems),
	reflect.TypeOf(Category("")):           strs(Categories),
	reflect.TypeOf(SecurityFlag("")):       strs(SecurityFlags),
	reflect.TypeOf(Split("")):              strs(Splits),
	reflect.TypeOf(RegistryDateSource("")): strs(RegistryDateSources),
}

func strs[T ~string](v []T) []string {
	out := make([]string, len(v))
	for i, s := range v {
		out[i] = string(s)
	}
	return out
}

// GenerateJSONSchema derives the JSON Schema of an embedded schema file from its Go type.
func GenerateJSONSchema(file string) ([]byte, error) {
	v, ok := SchemaFiles[file]
	if !ok {
		return nil, fmt.Errorf("no schema named %q", file)
	}
	return JSONSchemaOf(reflect.TypeOf(v), file, schemaRequired[file])
}

// JSONSchemaOf derives the JSON Schema of a record type (any struct type, also one built
// with reflect.StructOf from the layout's groups) with the given required fields; file names
// the schema ($id and title).
func JSONSchemaOf(t reflect.Type, file string, required []string) ([]byte, error) {
	s := typeSchema(t)
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	s["$id"] = "https://envgap.invalid/schemas/" + file
	s["title"] = strings.TrimSuffix(file, ".schema.json")
	s["required"] = required
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func typeSchema(t reflect.Type) map[string]any {
	if vals, ok := enumValues[t]; ok {
		return map[string]any{"type": "string", "enum": vals}
	}
	switch t.Kind() {
	case reflect.Pointer:
		inner := typeSchema(t.Elem())
		if typ, ok := inner["type"].(string); ok {
			inner["type"] = []string{typ, "null"}
			if enum, ok := inner["enum"].([]string); ok {
				inner["enum"] = append(append([]any{}, anySlice(enum)...), nil)
			}
		}
		return inner
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int64:
		return map[string]any{"type": "integer"}
	case reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice:
		return map[string]any{"type": []string{"array", "null"}, "items": typeSchema(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": typeSchema(t.Elem())}
	case reflect.Interface:
		return map[string]any{}
	case reflect.Struct:
		props := map[string]any{}
		var req []string
		for _, c := range ColumnsOf(t) {
			props[c.Name] = typeSchema(c.Type)
			if t == reflect.TypeOf(File{}) {
				req = append(req, c.Name)
			}
		}
		s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		if req != nil {
			s["required"] = req
		}
		return s
	}
	return map[string]any{}
}

func anySlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
