package agent

import (
	"encoding/json"
	"testing"
)

func TestParseSpec(t *testing.T) {
	for _, tc := range []struct {
		in                      string
		kind                    Kind
		model, builtin, command bool
	}{
		{"noop", KindNoop, false, true, false},
		{"gold", KindGold, false, true, false},
		{"openai", KindOpenAI, true, false, false},
		{"bedrock", KindBedrock, true, false, false},
		{"my-agent --model m", KindCommand, false, false, true},
		{"openai ", KindCommand, false, false, true}, // a command named openai, not the model agent
		{"", KindCommand, false, false, true},
	} {
		s := ParseSpec(tc.in)
		if s.Kind != tc.kind || s.IsModel() != tc.model || s.IsBuiltin() != tc.builtin || s.IsCommand() != tc.command || s.String() != tc.in {
			t.Errorf("ParseSpec(%q) = %+v (model %v, builtin %v, command %v)", tc.in, s, s.IsModel(), s.IsBuiltin(), s.IsCommand())
		}
		// In a plan's JSON the spec is the value as given, read back to the same kind.
		b, err := json.Marshal(struct {
			A Spec `json:"agent"`
		}{s})
		if err != nil {
			t.Fatal(err)
		}
		var back struct {
			A Spec `json:"agent"`
		}
		if err := json.Unmarshal(b, &back); err != nil || back.A != s {
			t.Errorf("%q: JSON %s read back as %+v (%v)", tc.in, b, back.A, err)
		}
		var set Spec
		if err := set.Set(tc.in); err != nil || set != s {
			t.Errorf("Set(%q) = %+v", tc.in, set)
		}
	}
	if !ParseSpec("  ").Empty() || ParseSpec("x").Empty() {
		t.Error("Empty")
	}
}
