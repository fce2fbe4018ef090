package export

import (
	"errors"
	"fmt"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
)

// Admission actions.
const (
	// ActionAdmitted: a new task row was stored.
	ActionAdmitted = "admitted"
	// ActionUnchanged: the stored task row is already exactly this one.
	ActionUnchanged = "unchanged"
	// ActionUpdated: the stored row differed (e.g. the audit came later); the new row is
	// stored and the ref now points at it. The old row stays in the store, and the ref
	// log (logs/refs.jsonl) records the change.
	ActionUpdated = "updated"
	// ActionRefused: the row would break the card's rules; nothing was stored.
	ActionRefused = "refused"
)

// Task kinds, as in the card's exclusion table.
const ()

// Admission is what admit did with one candidate.
type Admission struct {
	InstanceID string           `json:"instance_id"`
	Action     string           `json:"action"`
	Kind       schemas.TaskKind `json:"kind"`
	Task       schemas.Digest   `json:"task,omitzero"`
	Previous   schemas.Digest   `json:"previous,omitzero"`
	// Changed lists the columns an update changed.
	Changed []string `json:"changed,omitempty"`
	// Problems say why a row was refused, one per field.
	Problems []string `json:"problems,omitempty"`
}

// AdmitReport is the result of Admit.
type AdmitReport struct {
	Admissions []Admission `json:"admissions"`
	Admitted   int         `json:"admitted"`
	Updated    int         `json:"updated"`
	Unchanged  int         `json:"unchanged"`
	Refused    int         `json:"refused"`
	// Waiting counts candidates with no verdict that admits them (not verified, not a
	// reported control).
	Waiting int `json:"waiting"`
}

// AdmitOptions configure Admit.
type AdmitOptions struct {
	// Audits gives categories and security flags; nil means no audit results.
	Audits AuditSource
}

// Admit turns every verified candidate, and every reported candidate whose verdict is
// already_works (a control), into a task row stored as ref tasks/<instance_id>. It is
// idempotent: an unchanged row is not written again. A row that would change is written
// and reported as updated with the changed columns, never silently; a row that breaks the
// card's rules is refused with its problems and not stored.
func Admit(st catalog.Store, opts AdmitOptions) (*AdmitReport, error) {
	audits := opts.Audits
	if audits == nil {
		audits = NoAudits
	}
	cands, err := st.Candidates()
	if err != nil {
		return nil, fmt.Errorf("admit: %w", err)
	}
	rep := &AdmitReport{Admissions: []Admission{}}
	for i := range cands {
		c := &cands[i]
		v, _, err := st.Verdict(c.InstanceID)
		if errors.Is(err, data.ErrNotFound) {
			rep.Waiting++
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("admit %s: %w", c.InstanceID, err)
		}
		kind := admitKind(&c.Candidate, &v)
		if kind == "" {
			rep.Waiting++
			continue
		}
		a := Admission{InstanceID: c.InstanceID, Kind: kind}
		if !v.Candidate.IsZero() && v.Candidate != c.Digest {
			a.Action = ActionRefused
			a.Problems = []string{fmt.Sprintf("verdict %s was decided for candidate %s, but the store holds %s: run envgap verify --ids %s again", v.Key.Short(), v.Candidate.Short(), c.Digest.Short(), c.InstanceID)}
			rep.add(a)
			continue
		}
		audit, audited, err := audits.Audit(c.InstanceID)
		if err != nil {
			return nil, fmt.Errorf("admit %s: %w", c.InstanceID, err)
		}
		checked, err := checkedCandidate(st, c.Candidate, &v)
		if err != nil {
			return nil, fmt.Errorf("admit: %w", err)
		}
		t, problems := BuildTask(&checked, &v, audit, audited)
		if len(problems) > 0 {
			a.Action, a.Problems = ActionRefused, problems
			rep.add(a)
			continue
		}
		if err := storeTask(st, &t, &a); err != nil {
			return nil, err
		}
		rep.add(a)
	}
	return rep, nil
}

func (r *AdmitReport) add(a Admission) {
	r.Admissions = append(r.Admissions, a)
	switch a.Action {
	case ActionAdmitted:
		r.Admitted++
	case ActionUpdated:
		r.Updated++
	case ActionUnchanged:
		r.Unchanged++
	case ActionRefused:
		r.Refused++
	}
}

// admitKind says whether a verdict makes a candidate a task: a repair for verified, a
// control for a reported candidate that already works, "" otherwise.
func admitKind(c *schemas.Candidate, v *schemas.Verdict) schemas.TaskKind {
	switch {
	case v.Outcome == schemas.OutcomeVerified:
		return schemas.TaskRepair
	case v.Outcome == schemas.OutcomeAlreadyWorks && c.Set == schemas.SourceReported:
		return schemas.TaskControl
	}
	return ""
}

// BuildTask makes the task row of an admitted candidate: the candidate's fields
// (schemas.Candidate.ToTask), the verdict's recipe and failure signature where the
// candidate has none, the control rules (empty patch, gold_files and failure_signature),
// the audit's categories and security flags when audited, the splits (full, lite for the
// lite set, secure when flagged) and null exclusion fields. It returns the row's problems
// against the card's rules; the row is only meaningful without problems.
func BuildTask(c *schemas.Candidate, v *schemas.Verdict, audit AuditResult, audited bool) (schemas.Task, []string) {
	t := c.ToTask()
	r := v.Recipe
	fill := func(dst *string, src string) {
		if *dst == "" {
			*dst = src
		}
	}
	if c.Image == "" && r.Image != "" {
		t.Image = r.Image
	}
	fill(&t.BootstrapCommand, r.BootstrapCommand)
	fill(&t.ResolveCommand, r.ResolveCommand)
	fill(&t.ReproCommand, r.ReproCommand)
	fill(&t.RunCommand, r.RunCommand)
	fill(&t.ExpectedFailureRegex, r.ExpectedFailureRegex)
	fill(&t.FailureSignature, v.FailureSignature)
	if t.D2Command == nil && r.D2Command != nil {
		d2 := *r.D2Command
		t.D2Command = &d2
	}
	var problems []string
	control := admitKind(c, v) == schemas.TaskControl
	if control {
		t.IsControl = true
		t.Patch = ""
		t.GoldFiles = []schemas.File{}
		t.FailureSignature = ""
	} else {
		t.IsControl = false
		if len(t.GoldFiles) == 0 {
			problems = append(problems, "gold_files: is empty; a repair task needs the reference fix as file contents (record them on the candidate)")
		}
	}
	t.Categories = inCardOrder(t.Categories, schemas.Categories)
	t.SecurityFlags = []schemas.SecurityFlag{}
	if audited {
		norm, err := audit.normalized(c.InstanceID)
		if err != nil {
			problems = append(problems, err.Error())
		} else {
			t.Categories, t.SecurityFlags = norm.Categories, norm.SecurityFlags
		}
	}
	t.Splits = []schemas.Split{schemas.SplitFull}
	if t.Source == schemas.SourceLite {
		t.Splits = append(t.Splits, schemas.SplitLite)
	}
	if len(t.SecurityFlags) > 0 {
		t.Splits = append(t.Splits, schemas.SplitSecure)
	}
	t.ExcludedFromScoring, t.ExclusionReason, t.ExcludedSince = false, nil, nil
	for _, p := range t.Validate() {
		problems = append(problems, p.Field+": "+p.Msg)
	}
	if err := checkRow("tasks", t.InstanceID, &t); err != nil {
		var re *RowError
		if errors.As(err, &re) {
			problems = append(problems, re.Field+": "+re.Msg)
		}
	}
	return t, problems
}

// storeTask stores a task row and points tasks/<id> at it, filling in what happened.
func storeTask(st catalog.Store, t *schemas.Task, a *Admission) error {
	ref := data.TaskRef(t.InstanceID)
	d, err := schemas.DigestOf(t)
	if err != nil {
		return fmt.Errorf("admit %s: %w", t.InstanceID, err)
	}
	a.Task = d
	old, err := st.Ref(ref)
	switch {
	case err == nil && old == d:
		a.Action = ActionUnchanged
		return nil
	case err == nil:
		var prev schemas.Task
		if err := st.GetJSON(old, &prev); err != nil {
			return fmt.Errorf("admit %s: previous row: %w", t.InstanceID, err)
		}
		a.Action, a.Previous, a.Changed = ActionUpdated, old, DiffColumns(&prev, t)
	case errors.Is(err, data.ErrNotFound):
		a.Action = ActionAdmitted
	default:
		return fmt.Errorf("admit %s: %w", t.InstanceID, err)
	}
	if _, err := st.PutJSON(t); err != nil {
		return fmt.Errorf("admit %s: %w", t.InstanceID, err)
	}
	if err := st.SetRef(ref, d); err != nil {
		return fmt.Errorf("admit %s: %w", t.InstanceID, err)
	}
	return nil
}
