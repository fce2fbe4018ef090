package export

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
)

func TestAdmitBuildsCardRows(t *testing.T) {
	st := verifiedStore(t)
	putAudit(t, st, idLite, []schemas.Category{schemas.CategorySecurity, schemas.CategoryUnderspecification}, []schemas.SecurityFlag{schemas.FlagUnpinned})
	rep, err := Admit(st, AdmitOptions{Audits: StoreAudits(st)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Admitted != 4 || rep.Refused != 0 || rep.Updated != 0 || rep.Waiting != 3 {
		t.Fatalf("report = %+v, want 4 admitted, 3 waiting", rep)
	}
	tests := []struct {
		id         string
		control    bool
		splits     []schemas.Split
		cats       []schemas.Category
		flags      []schemas.SecurityFlag
		resolve    string // from the candidate, or the verdict's recipe when it had none
		failureSig string
		goldFiles  int
	}{
		{idRepaired, false, []schemas.Split{"full"}, []schemas.Category{"misspecification"}, []schemas.SecurityFlag{}, "make install", "error: the build failed", 1},
		{idReported, false, []schemas.Split{"full"}, []schemas.Category{}, []schemas.SecurityFlag{}, "python3 -m pip install -r requirements.txt", "ModuleNotFoundError: No module named 'ghp_import'", 2},
		{idControl, true, []schemas.Split{"full"}, []schemas.Category{}, []schemas.SecurityFlag{}, "make install", "", 0},
		// The audit's categories replace the candidate's, in the card's order.
		{idLite, false, []schemas.Split{"full", "lite", "secure"}, []schemas.Category{"underspecification", "security"}, []schemas.SecurityFlag{"unpinned"}, "make install", "error: the build failed", 1},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			task := taskByID(t, st, tc.id)
			if task.IsControl != tc.control {
				t.Errorf("is_control = %v, want %v", task.IsControl, tc.control)
			}
			if !reflect.DeepEqual(task.Splits, tc.splits) {
				t.Errorf("splits = %v, want %v", task.Splits, tc.splits)
			}
			if !reflect.DeepEqual(task.Categories, tc.cats) || !reflect.DeepEqual(task.SecurityFlags, tc.flags) {
				t.Errorf("categories, flags = %v %v, want %v %v", task.Categories, task.SecurityFlags, tc.cats, tc.flags)
			}
			if task.ResolveCommand != tc.resolve {
				t.Errorf("resolve_command = %q, want %q", task.ResolveCommand, tc.resolve)
			}
			if task.FailureSignature != tc.failureSig {
				t.Errorf("failure_signature = %q, want %q", task.FailureSignature, tc.failureSig)
			}
			if len(task.GoldFiles) != tc.goldFiles {
				t.Errorf("gold_files has %d entries, want %d", len(task.GoldFiles), tc.goldFiles)
			}
			if tc.control && task.Patch != "" {
				t.Errorf("control patch = %q, want empty", task.Patch)
			}
			if task.ExcludedFromScoring || task.ExclusionReason != nil || task.ExcludedSince != nil {
				t.Errorf("exclusion fields set on a new task")
			}
			if task.RegistryDateSource != schemas.DateSourceFor(task.Source) {
				t.Errorf("registry_date_source %q does not fit source %q", task.RegistryDateSource, task.Source)
			}
			if ps := task.Validate(); len(ps) > 0 {
				t.Errorf("stored row breaks the card's rules: %v", ps)
			}
		})
	}
	// Outcomes the store derives now.
	for id, want := range map[string]schemas.Outcome{idRepaired: "task", idControl: "task", idWaiting: "not_checked", idNotRepro: "not_reproduced", idCodeFix: "code_fix"} {
		c, err := st.CandidateByID(id)
		if err != nil {
			t.Fatal(err)
		}
		s, err := st.CurrentOutcome(c.Candidate)
		if err != nil || s.Outcome != want {
			t.Errorf("%s outcome = %v (%v), want %s", id, s.Outcome, err, want)
		}
	}
}

func TestAdmitIsIdempotentAndNeverRewritesSilently(t *testing.T) {
	st := verifiedStore(t)
	if _, err := Admit(st, AdmitOptions{Audits: StoreAudits(st)}); err != nil {
		t.Fatal(err)
	}
	before, err := st.Ref(data.RefTasks + idRepaired)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Admit(st, AdmitOptions{Audits: StoreAudits(st)})
	if err != nil {
		t.Fatal(err)
	}
	if again.Admitted != 0 || again.Updated != 0 || again.Unchanged != 4 {
		t.Fatalf("second admit = %+v, want 4 unchanged", again)
	}
	// The audit arrives later: the row changes, and admit says so.
	putAudit(t, st, idRepaired, []schemas.Category{schemas.CategoryConflict}, []schemas.SecurityFlag{schemas.FlagVulnerable, schemas.FlagRemoved})
	third, err := Admit(st, AdmitOptions{Audits: StoreAudits(st)})
	if err != nil {
		t.Fatal(err)
	}
	if third.Updated != 1 {
		t.Fatalf("after the audit: %+v, want 1 updated", third)
	}
	var upd Admission
	for _, a := range third.Admissions {
		if a.Action == ActionUpdated {
			upd = a
		}
	}
	if upd.InstanceID != idRepaired || upd.Previous != before {
		t.Errorf("update = %+v, want %s with previous %s", upd, idRepaired, before.Short())
	}
	if want := []string{"splits", "categories", "security_flags"}; !reflect.DeepEqual(upd.Changed, want) {
		t.Errorf("changed columns = %v, want %v", upd.Changed, want)
	}
	// The old row stays in the store.
	if !st.Has(before) {
		t.Error("the previous row was removed from the store")
	}
	task := taskByID(t, st, idRepaired)
	if !slices.Contains(task.Splits, schemas.SplitSecure) || !reflect.DeepEqual(task.SecurityFlags, []schemas.SecurityFlag{"removed", "vulnerable"}) {
		t.Errorf("updated row: splits %v flags %v", task.Splits, task.SecurityFlags)
	}
}

func TestAdmitRefuses(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, st catalog.Store)
		id    string
		want  string
	}{
		{"repair without gold files", func(t *testing.T, st catalog.Store) {
			putVerdict(t, st, idNotRepro, schemas.OutcomeVerified)
		}, idNotRepro, "gold_files"},
		{"verdict for another candidate", func(t *testing.T, st catalog.Store) {
			putVerdict(t, st, idRepaired, schemas.OutcomeVerified)
			v, _, _ := st.Verdict(idRepaired)
			v.Candidate = schemas.Hash([]byte("another version"))
			d, _ := st.PutJSON(&v)
			if err := st.SetRef(data.RefVerdicts+idRepaired, d); err != nil {
				t.Fatal(err)
			}
		}, idRepaired, "envgap verify --ids"},
		{"audit with an unknown flag", func(t *testing.T, st catalog.Store) {
			putVerdict(t, st, idLite, schemas.OutcomeVerified)
			putAudit(t, st, idLite, nil, []schemas.SecurityFlag{"spooky"})
		}, idLite, "spooky"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := newStore(t)
			tc.setup(t, st)
			rep, err := Admit(st, AdmitOptions{Audits: StoreAudits(st)})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Refused != 1 || rep.Admissions[0].InstanceID != tc.id || !strings.Contains(strings.Join(rep.Admissions[0].Problems, "\n"), tc.want) {
				t.Fatalf("report = %+v, want %s refused mentioning %q", rep, tc.id, tc.want)
			}
			if _, err := st.Ref(data.RefTasks + tc.id); !isNotFound(err) {
				t.Errorf("a refused row was stored (ref err %v)", err)
			}
		})
	}
}

func TestAlreadyWorksOnlyMakesReportedControls(t *testing.T) {
	st := newStore(t)
	putVerdict(t, st, idRepaired, schemas.OutcomeAlreadyWorks) // repaired: not a control
	putVerdict(t, st, idControl, schemas.OutcomeAlreadyWorks)  // reported: a control
	rep, err := Admit(st, AdmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Admitted != 1 || rep.Admissions[0].InstanceID != idControl || rep.Admissions[0].Kind != schemas.TaskControl {
		t.Fatalf("report = %+v, want only the reported control", rep)
	}
}
