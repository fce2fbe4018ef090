package schemas

import (
	"reflect"
	"strings"
)

// jsonFieldNames returns the JSON names of a struct's fields in declaration order.
func jsonFieldNames(v any) []string {
	t := reflect.TypeOf(v)
	var names []string
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}

// TaskFields lists the task row's columns in the card's order.
func TaskFields() []string { return jsonFieldNames(Task{}) }

// CandidateFields lists the candidate record's fields in declaration order.
func CandidateFields() []string { return jsonFieldNames(Candidate{}) }
