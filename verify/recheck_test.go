package verify

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
)

func admitTask(t *testing.T, st *catalog.Catalog, c schemas.Candidate, control bool) {
	t.Helper()
	task := c.ToTask()
	task.IsControl = control
	if control {
		task.GoldFiles, task.Patch = []schemas.File{}, ""
	}
	d, err := st.PutJSON(&task)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetRef(data.RefTasks+task.InstanceID, d); err != nil {
		t.Fatal(err)
	}
}

func TestRecheckExcludesExactlyTheBrokenTasks(t *testing.T) {
	st, _ := catalog.Open(t.TempDir())
	sess := openEnv(t, st, "")
	mk := func(n string, project, gold map[string]string) schemas.Candidate {
		c := liteCandidate("envgap__codex__javascript-t2-"+n, schemas.EcosystemJavaScript, project, gold)
		c.ResolveCommand, c.ReproCommand, c.RunCommand = "test -f ok.txt", "test -f ok.txt", "test -f ok.txt"
		return c
	}
	healthy := mk("1", map[string]string{"a.txt": "x"}, map[string]string{"ok.txt": "y"})
	passesUnchanged := mk("2", map[string]string{"ok.txt": "x"}, map[string]string{"ok.txt": "y"})
	fixBroken := mk("3", map[string]string{"a.txt": "x"}, map[string]string{"b.txt": "y"})
	controlOK := mk("4", map[string]string{"ok.txt": "x"}, nil)
	controlBroken := mk("5", map[string]string{"a.txt": "x"}, nil)
	admitTask(t, st, healthy, false)
	admitTask(t, st, passesUnchanged, false)
	admitTask(t, st, fixBroken, false)
	admitTask(t, st, controlOK, true)
	admitTask(t, st, controlBroken, true)

	ctx := context.Background()
	rec, err := sess.Stage.Recheck(ctx, "2026-09-29", Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		passesUnchanged.InstanceID: "Passed with no change at all on the 2026-09-29 recheck, so doing nothing would count as a fix.",
		fixBroken.InstanceID:       "The reference fix no longer made the project run on the 2026-09-29 recheck.",
		controlBroken.InstanceID:   "The control no longer works with no change on the 2026-09-29 recheck",
	}
	for _, r := range rec.Results {
		if r.Error != "" {
			t.Fatalf("%s: %s", r.InstanceID, r.Error)
		}
		w, ok := want[r.InstanceID]
		if r.Excluded != ok || (ok && !strings.HasPrefix(r.Reason, w)) {
			t.Errorf("%s: excluded=%v %q; want excluded=%v %q", r.InstanceID, r.Excluded, r.Reason, ok, w)
		}
	}
	tasks, err := st.Tasks()
	if err != nil || len(tasks) != 5 {
		t.Fatalf("tasks after recheck: %d %v (no task may be deleted)", len(tasks), err)
	}
	for _, task := range tasks {
		_, ok := want[task.InstanceID]
		if task.ExcludedFromScoring != ok || (ok && (*task.ExcludedSince != "2026-09-29T00:00:00Z" || task.ExclusionReason == nil)) {
			t.Errorf("%s: row exclusion fields %v %v %v", task.InstanceID, task.ExcludedFromScoring, task.ExclusionReason, task.ExcludedSince)
		}
	}
	ex, _ := st.Exclusion(controlBroken.InstanceID)
	if ex.TaskKind != "control" || ex.Recheck != "2026-09-29" {
		t.Errorf("control exclusion %+v", ex)
	}
	// The same recheck again changes nothing: no ref moves.
	logBefore, _ := os.ReadFile(filepath.Join(st.Dir(), "logs", "refs.jsonl"))
	if _, err := sess.Stage.Recheck(ctx, "2026-09-29", Options{}); err != nil {
		t.Fatal(err)
	}
	logAfter, _ := os.ReadFile(filepath.Join(st.Dir(), "logs", "refs.jsonl"))
	if string(logBefore) != string(logAfter) {
		t.Errorf("running the same recheck twice moved refs:\n%s", strings.TrimPrefix(string(logAfter), string(logBefore)))
	}
	// A later recheck keeps the earlier exclusions as they are.
	rec3, err := sess.Stage.Recheck(ctx, "2026-10-29", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rec3.Results {
		if _, ok := want[r.InstanceID]; ok && !r.AlreadyExcl {
			t.Errorf("%s: an earlier exclusion was redone: %+v", r.InstanceID, r)
		}
	}
	if _, err := st.Ref(data.RefRechecks + "2026-10-29"); err != nil {
		t.Errorf("the later recheck was not kept: %v", err)
	}
	if _, err := st.Exclusion(healthy.InstanceID); !errors.Is(err, data.ErrNotFound) {
		t.Errorf("healthy task excluded")
	}
}
