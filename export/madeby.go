package export

import (
	"fmt"

	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
)

// checkedCandidate returns a candidate as its verdict checked it: with the fix, the
// commands and made_by of the proposal the verdict names (envgap propose; the candidate
// record itself stays as crawled), and made_by "recipe generator" for a Reported control
// whose commands came from the default recipe generator.
func checkedCandidate(st catalog.Store, c schemas.Candidate, v *schemas.Verdict) (schemas.Candidate, error) {
	if !v.Proposal.IsZero() {
		var p schemas.Proposal
		if err := st.GetJSON(v.Proposal, &p); err != nil {
			return c, fmt.Errorf("proposal %s of %s's verdict: %w", v.Proposal.Short(), c.InstanceID, err)
		}
		if p.Candidate != v.Candidate {
			return c, fmt.Errorf("proposal %s was made for another version of %s", v.Proposal.Short(), c.InstanceID)
		}
		return p.Apply(c), nil
	}
	if admitKind(&c, v) == schemas.TaskControl && v.Recipe.Generated && c.MadeBy == "" {
		c.MadeBy = schemas.MadeByRecipeGenerator
	}
	return c, nil
}
