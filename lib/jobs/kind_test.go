package jobs

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

type testEnv struct{ opened []string }

type countKind struct {
	N int `json:"n"`
}

func (k *countKind) Command() string  { return "count" }
func (k *countKind) ItemsAtOnce() int { return k.N }
func (k *countKind) Open(_ context.Context, env *testEnv, items []string, _ func(string, ...any)) (Handler, func(), error) {
	env.opened = append(env.opened, items...)
	return func(_ context.Context, item string) (json.RawMessage, string) {
		b, _ := json.Marshal(testItem{Name: item, Value: len(item)})
		return b, ""
	}, func() {}, nil
}

type testItem struct {
	Name  string `json:"name"`
	Value int    `json:"value"`
	Error string `json:"error,omitempty"`
}

func (it *testItem) Head() (*string, *string) { return &it.Name, &it.Error }
func (it *testItem) Lacking() string {
	if it.Value == 0 {
		return "no value"
	}
	return ""
}

// TestKinds: a plan's command picks its kind with the plan's arguments read into it; an
// unknown command or bad arguments are errors; a worker's result reads back as the kind's
// item, and a missing, foreign or lacking result is the item's error.
func TestKinds(t *testing.T) {
	kinds := Kinds[*testEnv]{"count": func() Kind[*testEnv] { return &countKind{} }}
	k, err := kinds.Decode(Plan{Command: "count", Args: json.RawMessage(`{"n":3}`)})
	if err != nil || k.ItemsAtOnce() != 3 || k.Command() != "count" {
		t.Fatalf("decode: %+v %v", k, err)
	}
	env := &testEnv{}
	do, closeFn, err := k.Open(context.Background(), env, []string{"ab"}, nil)
	if err != nil || len(env.opened) != 1 {
		t.Fatal(err)
	}
	defer closeFn()
	res, _ := do(context.Background(), "ab")
	if it := ItemOf[testItem](&Done{Item: "ab", Result: res}); it.Name != "ab" || it.Value != 2 || it.Error != "" {
		t.Errorf("item: %+v", it)
	}
	if _, err := kinds.Decode(Plan{Command: "other"}); err == nil || !strings.Contains(err.Error(), `"other"`) {
		t.Errorf("unknown command: %v", err)
	}
	if _, err := kinds.Decode(Plan{Command: "count", Args: json.RawMessage(`{"n":"x"}`)}); err == nil {
		t.Error("bad arguments read")
	}
	for _, tc := range []struct {
		d    *Done
		want string
	}{
		{&Done{Item: "ab", Result: json.RawMessage(`{"name":"cd","value":1}`)}, "the worker's result could not be read"},
		{&Done{Item: "ab", Error: "worker died"}, "worker died"},
		{&Done{Item: "ab", Result: json.RawMessage(`{"name":"ab"}`)}, "no value"},
		{(&Outcome{Missing: "the array ended"}).NotDone(0, "ab"), "not run: the array ended"},
		{(&Outcome{}).NotDone(0, "ab"), "not run: interrupted"},
	} {
		if it := ItemOf[testItem](tc.d); it.Name != "ab" || it.Error != tc.want {
			t.Errorf("%+v: item %+v, want error %q", tc.d, it, tc.want)
		}
	}
}
