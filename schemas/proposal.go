package schemas

// The card's "how it was made" values of a reference fix an agent proposed (envgap
// propose): "AI assistant" when the agent wrote the commands and the fix, "model" when it
// wrote only the fix.
const (
	MadeByAIAssistant = "AI assistant"
	MadeByModel       = "model"
	// MadeByRecipeGenerator is a control whose commands came from the default recipe
	// generator.
	MadeByRecipeGenerator = "recipe generator"
)

// Proposal is a reference fix an agent proposed for a candidate whose failure reproduces
// and that has none (envgap propose). The candidate stays as crawled: the proposal is a
// record of its own, linked to the candidate's digest, under the ref
// proposals/<instance_id>/<12 hex of the proposal's digest>. verify checks candidate and
// proposal together; the first proposal that verifies wins (its digest is recorded in
// the verdict), and admit takes the fix, the commands and made_by from it.
type Proposal struct {
	Kind       RecordKind `json:"kind"`
	InstanceID string     `json:"instance_id"`
	// Candidate and Reproduction are the digests of the candidate as crawled and of the
	// reproduction whose failing log the agent was given.
	Candidate    Digest `json:"candidate"`
	Reproduction Digest `json:"reproduction"`
	// Agent is the agent command that wrote it.
	Agent string `json:"agent"`
	// MadeBy is MadeByAIAssistant (fix and commands) or MadeByModel (the fix only).
	MadeBy string `json:"made_by"`
	// GoldFiles is the fix (content null deletes the path): environment files only.
	GoldFiles []File `json:"gold_files"`
	// Patch is the fix as a unified diff against base_commit, in the card's form.
	Patch string `json:"patch"`
	// Commands are the commands the agent proposed where the generated ones were wrong;
	// nil when it proposed none.
	Commands *ProposedCommands `json:"commands"`
	// Trajectory is the digest of the agent's trajectory (a JSON array blob); zero when it
	// wrote none.
	Trajectory Digest        `json:"trajectory,omitzero"`
	CostUSD    *float64      `json:"cost_usd"`
	Run        *AgentAttempt `json:"agent_run"`
	// Refused says why the proposal cannot be checked (a source edit, no change, a write
	// outside the workspace, a timeout, ...); empty when it can.
	Refused string `json:"refused,omitempty"`
	// ProposedAt is when it was proposed (RFC 3339 with nanoseconds, UTC): proposals are
	// checked in this order.
	ProposedAt string `json:"proposed_at"`
}

// ProposedCommands are the commands an agent may propose with its fix. Empty strings keep
// the candidate's (or the generated) command.
type ProposedCommands struct {
	BootstrapCommand     string `json:"bootstrap_command,omitempty"`
	ResolveCommand       string `json:"resolve_command,omitempty"`
	ReproCommand         string `json:"repro_command,omitempty"`
	RunCommand           string `json:"run_command,omitempty"`
	ExpectedFailureRegex string `json:"expected_failure_regex,omitempty"`
}

// Empty reports whether no command was proposed.
func (c *ProposedCommands) Empty() bool { return c == nil || *c == (ProposedCommands{}) }

// Apply returns the candidate checked with the proposal: its gold_files and patch, and
// the proposed commands where given. made_by becomes the proposal's.
func (p *Proposal) Apply(c Candidate) Candidate {
	c.GoldFiles, c.Patch, c.MadeBy = p.GoldFiles, p.Patch, p.MadeBy
	r := p.ApplyRecipe(Recipe{BootstrapCommand: c.BootstrapCommand, ResolveCommand: c.ResolveCommand,
		ReproCommand: c.ReproCommand, RunCommand: c.RunCommand, ExpectedFailureRegex: c.ExpectedFailureRegex})
	c.BootstrapCommand, c.ResolveCommand, c.ReproCommand = r.BootstrapCommand, r.ResolveCommand, r.ReproCommand
	c.RunCommand, c.ExpectedFailureRegex = r.RunCommand, r.ExpectedFailureRegex
	return c
}

// ApplyRecipe returns a recipe with the proposed commands in place of its own. The recipe
// stays Generated only when the proposal gave none of resolve, repro and run.
func (p *Proposal) ApplyRecipe(r Recipe) Recipe {
	cm := p.Commands
	if cm == nil {
		return r
	}
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&r.BootstrapCommand, cm.BootstrapCommand)
	set(&r.ResolveCommand, cm.ResolveCommand)
	set(&r.ReproCommand, cm.ReproCommand)
	set(&r.RunCommand, cm.RunCommand)
	set(&r.ExpectedFailureRegex, cm.ExpectedFailureRegex)
	if cm.ResolveCommand != "" || cm.ReproCommand != "" || cm.RunCommand != "" {
		r.Generated = false
	}
	return r
}
