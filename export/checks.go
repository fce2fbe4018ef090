package export

import (
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/envgap/envgap/schemas"
)

// RowError stops an export: one row (named by its config and instance id) has a value no
// reader would accept. Nothing is written when it is returned.
type RowError struct {
	Config     string
	InstanceID string
	Field      string
	Msg        string
}

// Error names the config, task and field.
func (e *RowError) Error() string {
	return fmt.Sprintf("export %s: task %s: field %s: %s", e.Config, e.InstanceID, e.Field, e.Msg)
}

// checkRow checks every string of a row (a *schemas.Task or *schemas.Candidate) for valid
// UTF-8 and every file list for repeated paths. Parquet writers do not check UTF-8, and a
// reader that meets one bad string refuses the whole column.
func checkRow(config, id string, row any) error {
	v := reflect.ValueOf(row).Elem()
	for _, c := range schemas.ColumnsOf(v.Type()) {
		if err := checkValue(v.FieldByIndex(c.Index), c.Name); err != "" {
			field, msg, _ := strings.Cut(err, "\x00")
			return &RowError{Config: config, InstanceID: id, Field: field, Msg: msg}
		}
	}
	return nil
}

// checkValue returns "" or "field\x00message".
func checkValue(v reflect.Value, field string) string {
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		if !utf8.ValidString(s) {
			return field + "\x00" + fmt.Sprintf("invalid UTF-8 at byte %d; fix the stored record (re-encode the text, or escape binary content) and run envgap admit again", badUTF8Offset(s))
		}
	case reflect.Pointer:
		if !v.IsNil() {
			return checkValue(v.Elem(), field)
		}
	case reflect.Slice:
		seen := map[string]int{}
		for i := 0; i < v.Len(); i++ {
			e := v.Index(i)
			if e.Kind() == reflect.Struct {
				fr := e.Interface().(schemas.File)
				if err := checkValue(e.Field(0), fmt.Sprintf("%s[%d].path", field, i)); err != "" {
					return err
				}
				if err := checkValue(e.Field(1), fmt.Sprintf("%s[%d].content", field, i)); err != "" {
					return err
				}
				if j, dup := seen[fr.Path]; dup {
					return fmt.Sprintf("%s[%d].path", field, i) + "\x00" +
						fmt.Sprintf("path %q repeats %s[%d]; a file list gives each path once (fix the record and admit it again)", fr.Path, field, j)
				}
				seen[fr.Path] = i
				continue
			}
			if err := checkValue(e, fmt.Sprintf("%s[%d]", field, i)); err != "" {
				return err
			}
		}
	}
	return ""
}

func badUTF8Offset(s string) int {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}
