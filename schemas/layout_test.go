package schemas

import (
	"reflect"
	"testing"
)

// fillColumns sets every column of the record v points at to a non-zero value.
func fillColumns(t *testing.T, v any) {
	t.Helper()
	rv := reflect.ValueOf(v).Elem()
	for i, c := range ColumnsOf(rv.Type()) {
		f := rv.FieldByIndex(c.Index)
		typ := c.Type
		if typ.Kind() == reflect.Pointer {
			f.Set(reflect.New(typ.Elem()))
			f, typ = f.Elem(), typ.Elem()
		}
		switch typ.Kind() {
		case reflect.String:
			f.SetString("v" + c.Name)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int64:
			f.SetInt(int64(i + 1))
		case reflect.Slice:
			f.Set(reflect.MakeSlice(typ, 1, 1))
		default:
			t.Fatalf("column %s: no test value for %v", c.Name, typ)
		}
	}
}

// TestToTaskCopiesEveryShared checks that Candidate.ToTask carries every column the two
// records share, whatever it is: a column added to a shared group needs no edit there.
func TestToTaskCopiesEveryShared(t *testing.T) {
	var c Candidate
	fillColumns(t, &c)
	task := c.ToTask()
	cv, tv := reflect.ValueOf(&c).Elem(), reflect.ValueOf(&task).Elem()
	taskCols := map[string]Column{}
	for _, col := range TaskColumns() {
		taskCols[col.Name] = col
	}
	shared := 0
	for _, col := range CandidateColumns() {
		tc, ok := taskCols[col.Name]
		if !ok {
			continue
		}
		shared++
		if tc.Type != col.Type {
			t.Errorf("column %s: task type %v, candidate type %v", col.Name, tc.Type, col.Type)
		}
		if got, want := tv.FieldByIndex(tc.Index).Interface(), cv.FieldByIndex(col.Index).Interface(); !reflect.DeepEqual(got, want) {
			t.Errorf("column %s: task has %v, candidate %v", col.Name, got, want)
		}
	}
	if shared != 32 {
		t.Errorf("%d shared columns, want 32", shared)
	}
	if task.Source != c.Set {
		t.Errorf("source %q, set %q", task.Source, c.Set)
	}
}

// TestTaskRowHasNoNullList checks that ToTask leaves no list column null.
func TestTaskRowHasNoNullList(t *testing.T) {
	task := (&Candidate{Set: SourceReported}).ToTask()
	v := reflect.ValueOf(task)
	for _, c := range TaskColumns() {
		if c.List() && v.FieldByIndex(c.Index).IsNil() {
			t.Errorf("column %s is null", c.Name)
		}
	}
}

// TestColumnsCarryTheCard checks that every column of both records has its card
// description and one of the card's types.
func TestColumnsCarryTheCard(t *testing.T) {
	types := map[string]bool{"string": true, "int64": true, "bool": true, "list<string>": true,
		"list<struct<path: string, content: string>>": true}
	for _, cols := range [][]Column{TaskColumns(), CandidateColumns()} {
		for _, c := range cols {
			if c.Doc == "" {
				t.Errorf("column %s has no doc tag", c.Name)
			}
			if !types[c.CardType()] {
				t.Errorf("column %s has card type %s", c.Name, c.CardType())
			}
		}
	}
}
