package schemas

// CandidateRequired lists the JSON fields a candidate record must have.
var CandidateRequired = []string{"instance_id", "set", "repo", "created_at", "registry_date", "ecosystem", "issue_number"}

// TaskRequired lists the JSON fields a task row must have: all of them, nullable or not,
// because the card's columns are all present in every row.
var TaskRequired = jsonFieldNames(Task{})

// ToTask turns a candidate into a task row with the card's derived fields filled: source,
// image (when empty), registry_date_source (when empty), splits (full, plus lite for the
// lite set), and exclusion fields null. Categories and security flags come from the audit.
func (c *Candidate) ToTask() Task {
	t := Task{Ident: c.Ident, Spec: c.Spec, Source: c.Set, Origin: c.Origin, License: c.License}
	if t.Image == "" {
		t.Image = t.Ecosystem.Image()
	}
	if t.RegistryDateSource == "" {
		t.RegistryDateSource = DateSourceFor(c.Set)
	}
	t.Splits = []Split{SplitFull}
	if c.Set == SourceLite {
		t.Splits = append(t.Splits, SplitLite)
	}
	fillLists(&t)
	return t
}
