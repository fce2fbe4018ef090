package verify

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
)

// proposal is a stored proposal with its digest.
type proposal struct {
	rec    schemas.Proposal
	digest schemas.Digest
}

// proposals returns the proposals (envgap propose) that can be checked as a candidate's
// fix: made for this very candidate, and not refused. They are in the order they were
// proposed (then by digest): the first that verifies wins.
func (s *Stage) proposals(c *catalog.CandidateEntry) ([]proposal, error) {
	refs, err := s.Store.Refs(data.ProposalsOf(c.InstanceID))
	if err != nil {
		return nil, err
	}
	var out []proposal
	for _, r := range refs {
		var p schemas.Proposal
		if err := s.Store.GetJSON(r.Digest, &p); err != nil {
			return nil, fmt.Errorf("proposal %s: %w", r.Name, err)
		}
		if p.Candidate != c.Digest || p.Refused != "" {
			continue
		}
		out = append(out, proposal{p, r.Digest})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].rec.ProposedAt != out[j].rec.ProposedAt {
			return out[i].rec.ProposedAt < out[j].rec.ProposedAt
		}
		return out[i].digest.String() < out[j].digest.String()
	})
	return out, nil
}

// withProposals checks a candidate's proposals in order, each like a fix of its own,
// until one verifies: that verdict (naming the proposal) is the candidate's. When none
// does, the candidate gets no verdict: it stays not_checked, waiting for a working fix,
// and each failed check is kept (proposal-checks/<id>/<proposal>).
func (s *Stage) withProposals(ctx context.Context, on checkOn, c catalog.CandidateEntry, props []proposal) Result {
	cached := true
	var failed []string
	for _, p := range props {
		r := s.check(ctx, on, c, &p)
		if r.Error != "" || r.deferred || r.Outcome == schemas.OutcomeVerified {
			return r
		}
		cached = cached && r.Cached
		failed = append(failed, fmt.Sprintf("proposal %s: %s: %s", p.digest.Short(), r.Outcome, r.Reason))
	}
	return Result{InstanceID: c.InstanceID, Outcome: schemas.OutcomeNotChecked, Cached: cached,
		Reason: fmt.Sprintf("%s %d proposed fix(es) did not verify (%s)", ReasonProposalsFailed, len(failed), strings.Join(failed, "; "))}
}

// ReasonProposalsFailed starts the not_checked reason of a candidate whose proposed fixes
// all failed their check.
const ReasonProposalsFailed = "no verdict yet: waiting for a working fix;"
