package schemas

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestJSONSchemasMatchGoTypes(t *testing.T) {
	for file := range SchemaFiles {
		want, err := GenerateJSONSchema(file)
		if err != nil {
			t.Fatal(err)
		}
		if *update {
			if err := os.WriteFile(filepath.Join("jsonschema", file), want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := JSONSchemas.ReadFile("jsonschema/" + file)
		if err != nil {
			t.Fatalf("%s is not embedded: %v (run go test ./schemas -update)", file, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("schemas/jsonschema/%s has drifted from the Go types; run `go test ./schemas -run JSONSchemas -update` and review the diff", file)
		}
	}
}
