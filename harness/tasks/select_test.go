package tasks

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envgap/envgap/lib/release"
	"github.com/envgap/envgap/schemas"
)

func TestSelect(t *testing.T) {
	var ts []schemas.Task
	for _, id := range []string{"envgap__a__a-1", "envgap__b__b-2", "envgap__c__c-3"} {
		ts = append(ts, schemas.Task{Ident: schemas.Ident{InstanceID: id}})
	}
	whole, _ := schemas.CorpusID(ts)
	got, sub, err := Select(ts, "full", "rows.jsonl", nil, 0)
	if err != nil || sub != nil || len(got) != 3 {
		t.Fatalf("no selection: %d tasks, subset %+v, %v", len(got), sub, err)
	}
	got, sub, err = Select(ts, "full", "rows.jsonl", nil, 2)
	if err != nil || len(got) != 2 || got[1].InstanceID != "envgap__b__b-2" || sub == nil || sub.Limit != 2 || sub.OfTasks != 3 || sub.OfCorpusID != whole {
		t.Fatalf("--limit 2: %v, %+v, %v", got, sub, err)
	}
	got, sub, err = Select(ts, "full", "rows.jsonl", []string{"envgap__c__c-3", "envgap__a__a-1"}, 1)
	if err != nil || len(got) != 1 || got[0].InstanceID != "envgap__a__a-1" || len(sub.IDs) != 2 {
		t.Fatalf("--ids then --limit: %v, %+v, %v", got, sub, err)
	}
	if _, _, err := Select(ts, "full", "rows.jsonl", []string{"envgap__x__x-9"}, 0); err == nil || !strings.Contains(err.Error(), "envgap__x__x-9: not a task of split full (tasks from rows.jsonl)") {
		t.Errorf("an unknown id: %v", err)
	}
	var empty *EmptyError
	if _, _, err := Select(nil, "lite", "rows.jsonl", nil, 0); !errors.As(err, &empty) || !strings.Contains(err.Error(), "split lite has no task (tasks from rows.jsonl)") {
		t.Errorf("an empty split: %v", err)
	}
}

func TestHarnessCheckout(t *testing.T) {
	dir := t.TempDir()
	if got := HarnessCheckout(dir); got != "" {
		t.Errorf("an empty folder is a harness checkout: %q", got)
	}
	if err := os.MkdirAll(filepath.Join(dir, "release"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, filepath.FromSlash(release.HarnessTasks)), []byte("\n"), 0o644)
	os.WriteFile(filepath.Join(dir, filepath.FromSlash(release.HarnessManifestPath)), []byte(`{"kind":"task"}`), 0o644)
	if got := HarnessCheckout(dir); got != "" {
		t.Errorf("a release.json of another kind makes a harness checkout: %q", got)
	}
	os.WriteFile(filepath.Join(dir, filepath.FromSlash(release.HarnessManifestPath)), []byte(`{"kind":"harness","corpus_id":"x"}`), 0o644)
	if got := HarnessCheckout(dir); got != release.HarnessTasks {
		t.Errorf("HarnessCheckout = %q, want %q", got, release.HarnessTasks)
	}
}
