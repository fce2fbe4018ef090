package export

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
)

func TestExcludeChainsAndNeverDeletes(t *testing.T) {
	st := admittedStore(t)
	first, err := Exclude(st, ExcludeRequest{InstanceID: idControl, Reason: "setup.py builds its dependency list at run time.", Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if first.Unchanged || first.Exclusion.TaskKind != schemas.TaskControl || !first.Exclusion.ByHand || first.Exclusion.Since != "2026-09-29T12:00:00Z" || !first.Exclusion.Previous.IsZero() {
		t.Fatalf("first exclusion = %+v", first)
	}
	// The same reason again: nothing new.
	same, err := Exclude(st, ExcludeRequest{InstanceID: idControl, Reason: " setup.py builds its dependency list at run time. ", Now: fixedNow})
	if err != nil || !same.Unchanged || same.Digest != first.Digest {
		t.Fatalf("repeat = %+v, %v; want unchanged", same, err)
	}
	// A new reason supersedes it, keeps the date it was first excluded, and points back.
	later := func() time.Time { return fixedNow().Add(48 * time.Hour) }
	second, err := Exclude(st, ExcludeRequest{InstanceID: idControl, Reason: "The dependency list cannot be read.", Kind: schemas.TaskControl, Now: later})
	if err != nil {
		t.Fatal(err)
	}
	if second.Unchanged || second.Exclusion.Previous != first.Digest || second.Exclusion.Since != first.Exclusion.Since {
		t.Fatalf("second exclusion = %+v", second.Exclusion)
	}
	if !st.Has(first.Digest) {
		t.Error("the superseded exclusion was deleted")
	}
	got, err := storeExclusions(st)
	if err != nil {
		t.Fatal(err)
	}
	want := []ExcludedTask{{InstanceID: idControl, Set: schemas.SourceReported, Kind: schemas.TaskControl, Reason: "The dependency list cannot be read.", Since: "2026-09-29T12:00:00Z", ByHand: true}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Exclusions = %+v, want %+v", got, want)
	}
	// The task row itself is not rewritten; the task set applies the exclusion.
	var row schemas.Task
	d, _ := st.Ref(data.RefTasks + idControl)
	if err := st.GetJSON(d, &row); err != nil || row.ExcludedFromScoring {
		t.Errorf("stored row changed: excluded=%v err=%v", row.ExcludedFromScoring, err)
	}
	if task := taskByID(t, st, idControl); !task.ExcludedFromScoring || *task.ExclusionReason != "The dependency list cannot be read." {
		t.Errorf("task set row: %+v", task)
	}
}

func TestExcludeRefuses(t *testing.T) {
	st := admittedStore(t)
	tests := []struct {
		name string
		req  ExcludeRequest
		want string
	}{
		{"empty reason", ExcludeRequest{InstanceID: idRepaired, Reason: "  "}, "reason is empty"},
		{"two lines", ExcludeRequest{InstanceID: idRepaired, Reason: "a\nb"}, "one line"},
		{"bad kind", ExcludeRequest{InstanceID: idRepaired, Reason: "x", Kind: "maybe"}, "want repair or control"},
		{"not a task", ExcludeRequest{InstanceID: idWaiting, Reason: "x"}, "no such task"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Exclude(st, tc.req)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if ex, _ := storeExclusions(st); len(ex) != 0 {
		t.Errorf("refused requests recorded exclusions: %v", ex)
	}
}

func TestCompareReleases(t *testing.T) {
	st := admittedStore(t)
	a, _ := exportTo(t, st)
	same, err := CompareReleases(a, a)
	if err != nil {
		t.Fatal(err)
	}
	if !same.Same || len(same.Added)+len(same.Removed)+len(same.Changed) != 0 {
		t.Fatalf("a folder against itself: %+v", same)
	}
	// Exclude one task: b differs from a in that task's exclusion columns.
	if _, err := Exclude(st, ExcludeRequest{InstanceID: idRepaired, Reason: "Passed with no change at all on the 2026-09-29 recheck.", Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	b, _ := exportTo(t, st)
	diff, err := CompareReleases(b, a)
	if err != nil {
		t.Fatal(err)
	}
	if diff.Same || diff.ReleaseID == diff.AgainstID {
		t.Fatalf("releases should differ: %+v", diff)
	}
	wantChanged := []ChangedTask{{InstanceID: idRepaired, Columns: []string{"excluded_from_scoring", "exclusion_reason", "excluded_since"}}}
	if !reflect.DeepEqual(diff.Changed, wantChanged) || len(diff.Added) != 0 || len(diff.Removed) != 0 {
		t.Errorf("diff = %+v, want %+v", diff, wantChanged)
	}
}

func TestCompareReleasesAddedAndRemoved(t *testing.T) {
	small := verifiedStore(t)
	putVerdict(t, small, idLite, schemas.OutcomeNotReproduced)                                // the lite task is not admitted here
	putAudit(t, small, idRepaired, []schemas.Category{schemas.CategoryMisspecification}, nil) // audited, as its row says
	if _, err := Admit(small, AdmitOptions{}); err != nil {
		t.Fatal(err)
	}
	a, _ := exportTo(t, small)
	b, _ := exportTo(t, admittedStore(t))
	diff, err := CompareReleases(b, a)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(diff.Added, []string{idLite}) || len(diff.Removed) != 0 {
		t.Errorf("added %v removed %v, want the lite task added", diff.Added, diff.Removed)
	}
	back, err := CompareReleases(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Removed, []string{idLite}) {
		t.Errorf("removed %v, want the lite task", back.Removed)
	}
}

// storeExclusions lists the excluded tasks of the store's task set, as the card does.
func storeExclusions(st catalog.Store) ([]ExcludedTask, error) {
	tasks, err := st.Tasks()
	if err != nil {
		return nil, err
	}
	return exclusionsOf(st, tasks)
}
