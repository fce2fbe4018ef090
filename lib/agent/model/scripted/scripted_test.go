package scripted

import (
	"context"
	"strings"
	"testing"

	"github.com/envgap/envgap/lib/agent/model"
)

func TestParseRefusesBadScripts(t *testing.T) {
	for _, tc := range []struct{ script, want string }{
		{`{"conversations":[]}`, "no conversations"},
		{`{"conversations":[{"turns":[]}]}`, "conversations[0]: no turns"},
		{`{"conversations":[{"turns":[{"tool_calls":[{"input":{}}]}]}]}`, "conversations[0].turns[0].tool_calls[0]: no name"},
		{`{"conversations":[{"turns":[{"tool_calls":[{"name":"bash","input":"ls"}]}]}]}`, "tool_calls[0].input: not a JSON object"},
		{`{"conversations":[{"turns":[{"errors":[{"status":200}]}]}]}`, "errors[0].status 200"},
		{`{"conversations":[{"turns":[{"txt":"x"}]}]}`, "unknown field"},
	} {
		if _, err := Parse([]byte(tc.script), "s.json"); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "s.json") {
			t.Errorf("%s: %v, want %q", tc.script, err, tc.want)
		}
	}
}

// The demo's script parses and picks a conversation by the task's text.
func TestDemoScript(t *testing.T) {
	s, err := Read("../../../../data/demo/agents/scripted-model.json")
	if err != nil {
		t.Fatal(err)
	}
	m := New(s)
	for task, want := range map[string]string{"TASK: Cron Expression Parser\n...": "cat package.json", "TASK: CSV Statistical Analyzer": "cat requirements.txt", "anything else": "ls -la"} {
		r, err := m.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: task}}})
		if err != nil || len(r.Message.ToolCalls) != 1 || !strings.Contains(string(r.Message.ToolCalls[0].Input), want) {
			t.Errorf("%q: %+v %v", task, r, err)
		}
	}
}

// match_all: a conversation is played only when the first user message holds every text.
func TestMatchAll(t *testing.T) {
	s, err := Parse([]byte(`{"conversations":[
		{"match":"TASK: A","match_all":["Python project"],"turns":[{"text":"a-python"}]},
		{"match":"TASK: A","match_all":["JavaScript (Node.js) project"],"turns":[{"text":"a-js"}]},
		{"match":"","turns":[{"text":"other"}]}]}`), "s.json")
	if err != nil {
		t.Fatal(err)
	}
	m := New(s)
	for task, want := range map[string]string{"TASK: A\nCreate a complete Python project": "a-python",
		"TASK: A\nCreate a complete JavaScript (Node.js) project": "a-js", "TASK: A\nCreate a complete Java project": "other"} {
		r, err := m.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: task}}})
		if err != nil || r.Message.Text != want {
			t.Errorf("%q: %+v %v, want %q", task, r, err, want)
		}
	}
}
