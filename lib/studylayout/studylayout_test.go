package studylayout

import (
	"strings"
	"testing"
)

func TestParseMetaRoundsAndClass(t *testing.T) {
	base := `"created_at":"2026-01-01T00:00:00Z","repaired_at":"2026-01-01T01:00:00Z","run_command":"x"`
	for _, c := range []struct {
		meta, err string
	}{
		{`{` + base + `,"worked_first_time":false,"made_to_work":true,"repair_rounds":3,"error_class":"SystemLib"}`, ""},
		{`{` + base + `,"worked_first_time":false,"made_to_work":false,"repair_rounds":10}`, ""},
		{`{` + base + `,"worked_first_time":true,"made_to_work":true,"repair_rounds":2}`, "worked_first_time is true"},
		{`{` + base + `,"worked_first_time":false,"made_to_work":true,"repair_rounds":0}`, "ran at round 1 or later"},
		{`{` + base + `,"worked_first_time":false,"made_to_work":true,"repair_rounds":-1}`, "counts rounds"},
		{`{` + base + `,"worked_first_time":false,"made_to_work":true,"error_class":"Network"}`, `error_class "Network"`},
	} {
		_, err := ParseMeta([]byte(c.meta))
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.meta, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %v, want an error with %q", c.meta, err, c.err)
		}
	}
}

func TestReadProblemsStdlibSufficient(t *testing.T) {
	ps, err := ReadProblems("p.json", strings.NewReader(`[{"number":1,"title":"T","domain":"D","stdlib_sufficient":["python","cpp"],"requirements":["a","b"]}]`))
	if err != nil || len(ps[0].StdlibSufficient) != 2 || len(ps[0].Requirements) != 2 {
		t.Fatalf("%v %+v", err, ps)
	}
	_, err = ReadProblems("p.json", strings.NewReader(`[{"number":1,"title":"T","domain":"D","stdlib_sufficient":["rust"]}]`))
	if err == nil || !strings.Contains(err.Error(), `stdlib_sufficient: "rust"`) {
		t.Errorf("unknown language: %v", err)
	}
	idx := IndexProblems([]Problem{{Number: 1, Title: "T", Domain: "D", StdlibSufficient: []string{"python"}}}, []Problem{{Number: 1, Description: "x"}})
	if idx[1].Description != "x" || len(idx[1].StdlibSufficient) != 1 {
		t.Errorf("merge: %+v", idx[1])
	}
}

func TestParseRounds(t *testing.T) {
	if _, err := ParseRounds([]byte(`{"agent":"a","variant":"explicit","max_repairs":10,"first_ran":1,"rounds":[{"round":0,"ran":false,"error":"e"},{"round":1,"ran":true}]}`)); err != nil {
		t.Error(err)
	}
	if _, err := ParseRounds([]byte(`{"agent":"a","variant":"explicit","max_repairs":10,"first_ran":0,"rounds":[{"round":0,"ran":false}]}`)); err == nil {
		t.Error("first_ran at a round that did not run was accepted")
	}
	if _, err := ParseRounds([]byte(`{"agent":"a","variant":"explicit","max_repairs":10,"rounds":[{"round":1,"ran":false}]}`)); err == nil {
		t.Error("rounds out of order were accepted")
	}
	if _, err := ParseLayers([]byte(`{"d2":[]}`)); err == nil {
		t.Error("layers without d3 were accepted")
	}
}
