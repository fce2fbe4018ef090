package schemas

import "fmt"

// EvalSchemaVersion is the version of the result folder's format (results.jsonl,
// summary.json) that `envgap eval` and `envgap run` write and `envgap report` reads.
const EvalSchemaVersion = 1

// The files of a result folder.
const (
	EvalResultsFile = "results.jsonl" // one EvalResult a line, by instance id, run, attempt
	EvalSummaryFile = "summary.json"  // EvalSummary
	EvalLogsDir     = "logs"          // logs/<instance_id>.log, for people
)

// The status of one evaluated attempt, exactly one of them.
const (
	EvalResolved   = "resolved"   // resolve_command and run_command exited 0, nothing rejected or leaked
	EvalUnresolved = "unresolved" // the project did not install or run
	EvalRejected   = "rejected"   // the prediction changed a source file or a path outside the project
	EvalLeaked     = "leaked"     // the trajectory shows the later history (the fix) was read
)

// EvalResult is one line of a result folder's results.jsonl: the score of one prediction
// (an attempt of an agent) for one task.
type EvalResult struct {
	Kind          RecordKind `json:"kind"`
	SchemaVersion int        `json:"schema_version"`
	InstanceID    string     `json:"instance_id"`
	Source        Source     `json:"source"`
	IsControl     bool       `json:"is_control"`
	// Excluded tasks are evaluated and listed, and left out of every figure.
	Excluded        bool   `json:"excluded"`
	ExclusionReason string `json:"exclusion_reason,omitempty"`
	// Run is the independent run (1..k) and Attempt the attempt within it (1 for eval).
	Run     int `json:"run"`
	Attempt int `json:"attempt"`
	// Status is resolved, unresolved, rejected or leaked; Resolved is Status == resolved.
	Status   string `json:"status"`
	Resolved bool   `json:"resolved"`
	// Reason says in words why the attempt is not resolved (empty when resolved).
	Reason string `json:"reason,omitempty"`
	// ChecksPassed: resolve_command and run_command both exited 0 (also for a leaked
	// attempt, which is scored unresolved all the same). False when nothing ran.
	ChecksPassed bool `json:"checks_passed"`
	// Rejection names the first path that rejected the prediction (empty if none).
	Rejection string `json:"rejection,omitempty"`
	// Leaks are the later-history rules the trajectory matched, with their evidence.
	Leaks []Leak `json:"leaks"`
	// Trajectory says how the trajectory was read: "inspected (SHAPE)", "empty", or
	// "not inspected: WHY" for a shape the rules do not know (kept, not guessed).
	Trajectory string `json:"trajectory"`
	// Files lists the paths the prediction writes (or deletes: DeletedFiles).
	Files        []string `json:"files"`
	DeletedFiles []string `json:"deleted_files"`
	// Steps are the container run's steps (empty when nothing ran).
	Steps      []EvalStep       `json:"steps"`
	RunRecord  Digest           `json:"run_record,omitzero"`
	D1         []string         `json:"d1"`
	D3         []string         `json:"d3"`
	ManifestF1 ManifestScore    `json:"manifest_f1"`
	Safe       SafeInstallScore `json:"safe_install"`
	CostUSD    *float64         `json:"cost_usd"`
	Prediction Digest           `json:"prediction"`
	ImageID    string           `json:"image_id,omitempty"`
	// CoreVersion is the evaluation core's version the run was made with.
	CoreVersion string `json:"core_version"`
	// Agent is how the agent command of this attempt ran (envgap run only).
	Agent *AgentAttempt `json:"agent,omitempty"`
}

// AgentAttempt is one run of an agent command (envgap run).
type AgentAttempt struct {
	Command    string `json:"command"`
	ExitCode   int    `json:"exit_code"`
	TimedOut   bool   `json:"timed_out"`
	DurationMS int64  `json:"duration_ms"`
	StdoutSize int64  `json:"stdout_size"`
	StderrSize int64  `json:"stderr_size"`
	// For envgap's own model agents (run --agent openai|bedrock): the provider's model
	// id, the attempt's turns and tokens, and why it stopped (finished, no_tools,
	// max_turns, max_tokens, budget, timeout, context).
	Model        string `json:"model,omitempty"`
	Turns        int    `json:"turns,omitempty"`
	InputTokens  int64  `json:"input_tokens,omitempty"`
	OutputTokens int64  `json:"output_tokens,omitempty"`
	Stop         string `json:"stop,omitempty"`
	// RefusedConnections counts the connections the box's egress door refused.
	RefusedConnections int `json:"refused_connections,omitempty"`
	// FirstRequestMS is the time from the attempt's start (the box opening) to the
	// model's first request.
	FirstRequestMS int64 `json:"first_request_ms,omitempty"`
	// AgentImage is the image of the box an agent command ran in (--agent-image); empty
	// for a command that ran on this host (not contained) and for the built-in agents
	// (always in a box from the task's evaluation image).
	AgentImage string `json:"agent_image,omitempty"`
}

// EvalStep is one step of the run of a prediction.
type EvalStep struct {
	Name       string `json:"name"`
	Command    string `json:"command"`
	ExitCode   int    `json:"exit_code"`
	TimedOut   bool   `json:"timed_out,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	// Output is the digest of the captured (capped) output in the store; FullOutput the
	// SHA-256 of the whole output, OutputSize its length.
	Output     Digest `json:"output"`
	FullOutput Digest `json:"full_output"`
	OutputSize int64  `json:"output_size"`
	Truncated  bool   `json:"truncated,omitempty"`
}

// Leak is one later-history rule a trajectory matched.
type Leak struct {
	Rule string `json:"rule"`
	// Step is the index of the trajectory entry (0-based) the evidence is in.
	Step     int    `json:"step"`
	Evidence string `json:"evidence"`
}

// ManifestScore is the manifest F1 of a prediction: the packages declared after it (D1)
// against those the trace saw loaded (D3), with the paper's conventions.
type ManifestScore struct {
	Measured  bool     `json:"measured"`
	Reason    string   `json:"reason,omitempty"`
	Precision float64  `json:"precision"`
	Recall    float64  `json:"recall"`
	F1        float64  `json:"f1"`
	Phantom   []string `json:"phantom"`
	Hidden    []string `json:"hidden"`
}

// SafeInstallScore is the share of declared packages that exist, are pinned to an exact
// version and have no known advisory (packages without a registry here are not counted).
type SafeInstallScore struct {
	Measured  bool    `json:"measured"`
	Reason    string  `json:"reason,omitempty"`
	Safe      int     `json:"safe"`
	Total     int     `json:"total"`
	Share     float64 `json:"share"`
	Unchecked int     `json:"unchecked"`
}

// EvalSummary is a result folder's summary.json.
type EvalSummary struct {
	Kind          RecordKind `json:"kind"`
	SchemaVersion int        `json:"schema_version"`
	// Agent names what made the predictions (--agent, or the predictions file).
	Agent string `json:"agent"`
	Split string `json:"split"`
	// Mode is ModeEval (one attempt, no feedback) or ModeRun (an agent with feedback).
	Mode        EvalMode `json:"mode"`
	K           int      `json:"k"`
	MaxAttempts int      `json:"max_attempts"`
	// AttemptTimeoutS is the time limit of one attempt of the agent in seconds (envgap
	// run; absent for eval and in folders written before it was recorded).
	AttemptTimeoutS int64 `json:"attempt_timeout_s,omitempty"`
	// CorpusID is the corpus id of the task set the split was taken from.
	CorpusID string `json:"corpus_id"`
	Tasks    int    `json:"tasks"`
	// Scored counts the tasks with a result that are not excluded.
	Scored      int      `json:"scored"`
	ExcludedIDs []string `json:"excluded_ids"`
	// The ids of the scored tasks by the status of their first attempt (run 1).
	ResolvedIDs   []string `json:"resolved_ids"`
	UnresolvedIDs []string `json:"unresolved_ids"`
	RejectedIDs   []string `json:"rejected_ids"`
	LeakedIDs     []string `json:"leaked_ids"`
	// NotInspectedIDs have a trajectory in a shape the leak rules do not know.
	NotInspectedIDs []string `json:"not_inspected_ids"`
	// Faults are tasks without a result: an infrastructure fault stopped them; the next
	// run retries them. Never scored.
	Faults []EvalFault `json:"faults"`
	// Ran counts container runs made, Reused results taken from the store's memo.
	Ran    int `json:"ran"`
	Reused int `json:"reused"`
	// ScoredOn is the UTC day the folder was last written (YYYY-MM-DD): the date the
	// leaderboard shows. Absent in folders written before it was recorded.
	ScoredOn string `json:"scored_on,omitempty"`
	// Subset is set when the folder scored part of its split (--ids, --limit): not a
	// leaderboard entry. CorpusID and Tasks are then the subset's own.
	Subset *EvalSubset `json:"subset,omitempty"`
}

// EvalSubset says how a result folder's tasks were picked from its split and what the
// whole split was: --ids (the ids asked, in order) and --limit (the first N by instance id).
type EvalSubset struct {
	IDs   []string `json:"ids,omitempty"`
	Limit int      `json:"limit,omitempty"`
	// OfTasks and OfCorpusID are the whole split's task count and corpus id.
	OfTasks    int    `json:"of_tasks"`
	OfCorpusID string `json:"of_corpus_id"`
}

// Label says what the subset is, for people: "subset: 2 of 5 tasks of corpus X".
func (s *EvalSubset) Label(tasks int) string {
	return fmt.Sprintf("subset: %d of %d tasks of corpus %s", tasks, s.OfTasks, s.OfCorpusID)
}

// EvalFault is a task an infrastructure fault left without a result.
type EvalFault struct {
	InstanceID string `json:"instance_id"`
	Error      string `json:"error"`
}

// EvalMode says how a result folder was scored.
type EvalMode string

// The modes of a result folder.
const (
	ModeEval EvalMode = "eval" // envgap eval: one prediction a task, scored once
	ModeRun  EvalMode = "run"  // envgap run --agent: attempts with feedback
)
