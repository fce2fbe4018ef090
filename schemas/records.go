package schemas

// CandidateSet is the object a `candidates/<name>` ref points at: the candidates one `add`,
// crawl or study import produced, sorted by instance id.
type CandidateSet struct {
	Kind    RecordKind    `json:"kind"`
	Name    string        `json:"name"`
	Origin  string        `json:"origin"` // what produced it: "add FILE", "crawl prs ID", "crawl lite DIR"
	Members []SetMember   `json:"members"`
	Rejects []CrawlReject `json:"rejects,omitempty"`
}

// SetMember names one candidate of a set.
type SetMember struct {
	InstanceID string `json:"instance_id"`
	Digest     Digest `json:"digest"`
}

// CrawlReject is something a crawl or import looked at and did not turn into a candidate.
type CrawlReject struct {
	Ref    string `json:"ref"` // e.g. "owner/repo#123", a study path
	Reason string `json:"reason"`
}

// Recipe holds the commands and the failure pattern of one evaluation.
type Recipe struct {
	Ecosystem            Ecosystem `json:"ecosystem"`
	Image                string    `json:"image"`
	BootstrapCommand     string    `json:"bootstrap_command"`
	ResolveCommand       string    `json:"resolve_command"`
	ReproCommand         string    `json:"repro_command"`
	RunCommand           string    `json:"run_command"`
	D2Command            *string   `json:"d2_command"`
	ExpectedFailureRegex string    `json:"expected_failure_regex"`
	// Generated is set when the default recipe generator wrote the commands.
	Generated bool `json:"generated"`
}

// Dependency is one package of a D1, D2 or D3 set.
type Dependency struct {
	Name string `json:"name"`
	// Spec is the version constraint as declared (D1) or the installed version (D2).
	Spec string `json:"spec,omitempty"`
	// Pinned is set when Spec names exactly one version.
	Pinned bool `json:"pinned,omitempty"`
	// From is the manifest path (D1) or the traced file (D3) the entry came from.
	From string `json:"from,omitempty"`
}

// DepSet is one layer of dependencies with the reason it could not be measured, if any.
type DepSet struct {
	Deps []Dependency `json:"deps"`
	// Unreadable explains why the layer could not be measured (e.g. a setup.py that builds
	// its list at run time); empty when measured.
	Unreadable string `json:"unreadable,omitempty"`
}

// StepRecord is one executed step of a run.
type StepRecord struct {
	Name            string `json:"name"`
	Command         string `json:"command"`
	ExitCode        int    `json:"exit_code"`
	DurationMS      int64  `json:"duration_ms"`
	TimedOut        bool   `json:"timed_out"`
	OOMKilled       bool   `json:"oom_killed"`
	CommandNotFound bool   `json:"command_not_found"`
	Skipped         bool   `json:"skipped"`
	// DiskExceeded: the container wrote more than its disk bound and was killed.
	DiskExceeded bool `json:"disk_exceeded,omitempty"`
	// Output is the digest of the captured (capped) output stored as a blob.
	Output Digest `json:"output"`
	// FullOutput is the digest of the whole output, also when it was capped.
	FullOutput Digest `json:"full_output"`
	OutputSize int64  `json:"output_size"`
	Truncated  bool   `json:"truncated"`
}

// Failed reports whether the step ran and failed: a non-zero exit, a timeout, or more
// written to disk than the bound. A skipped step did not run (an earlier step timed out or
// went over the disk bound, which is the failure).
func (s StepRecord) Failed() bool {
	return !s.Skipped && (s.ExitCode != 0 || s.TimedOut || s.DiskExceeded)
}

// Run is the record of one evaluation-core run (DESIGN.md, "The evaluation core").
type Run struct {
	Kind         RecordKind   `json:"kind"`
	InstanceID   string       `json:"instance_id"`
	Side         string       `json:"side"` // "before", "after", "prediction"
	Key          Digest       `json:"key"`  // digest of the spec
	Recipe       Recipe       `json:"recipe"`
	RegistryDate string       `json:"registry_date"`
	Image        string       `json:"image"`
	ImageID      string       `json:"image_id"`
	CoreVersion  string       `json:"core_version"`
	Steps        []StepRecord `json:"steps"`
	// FailureMatched is set when expected_failure_regex matched the output of a failing step.
	FailureMatched bool   `json:"failure_matched"`
	MatchedStep    string `json:"matched_step,omitempty"`
	Resolved       bool   `json:"resolved"`
	D1             DepSet `json:"d1"`
	D2             DepSet `json:"d2"`
	D3             DepSet `json:"d3"`
	// Registry is the digest of the registry proxy's log of what it served and hid.
	Registry Digest `json:"registry"`
	// RegistryRefused are the requests the registry proxy refused to the run's container
	// (outside its session, under another cut-off than the run's, under another run's
	// session), each the proxy's message naming what was asked and what the session
	// allows; sorted, at most MaxRegistryRefused; absent when there were none (so runs
	// stored before the field existed read the same). The registry log (Registry) has them
	// all.
	RegistryRefused []string `json:"registry_refused,omitempty"`
	// SkippedLinks are the project's symbolic links that were not written into the
	// container because they point outside the project, nowhere, or through too many
	// links (sorted; absent when there were none, so runs without such links, and runs
	// stored before the field existed, read the same).
	SkippedLinks []string `json:"skipped_links,omitempty"`
	// RefusedConnections are the connections the sandbox's egress door refused during
	// the run (core/egress: everything but the registry proxy and the image's undated
	// package sources), by host, port and reason with a count, sorted; absent when there
	// were none. Connections that bypass the door are refused by the kernel and not listed.
	RefusedConnections []ConnectionCount `json:"refused_connections,omitempty"`
	// UserNamespace is the user namespace the run's container had (core/sandbox):
	// "auto" (Podman: a range of subordinate ids of its own), "remap" (a Docker daemon's
	// userns-remap), or "none" (the engine gives none: the container's root was the host's
	// root). Absent in runs stored before the field existed.
	UserNamespace string `json:"user_namespace,omitempty"`
	// Limits are the limits the run had (the output cap among them).
	Limits     RunLimits `json:"limits"`
	StartedAt  string    `json:"started_at"`
	FinishedAt string    `json:"finished_at"`
}

// MaxRegistryRefused bounds Run.RegistryRefused.
const MaxRegistryRefused = 20

// ConnectionCount is how many connections to one host and port a run asked for (and,
// for refused ones, why they were refused).
type ConnectionCount struct {
	Host string `json:"host"`
	Port int    `json:"port"`
	// Reason is why the door refused them ("not on the allowlist", "CONNECT only to port
	// 443", "TLS SNI x is not the CONNECT host", ...); empty for connections let through,
	// and in runs stored before the field existed.
	Reason string `json:"reason,omitempty"`
	Count  int    `json:"count"`
}

// RunLimits are the limits of one run.
type RunLimits struct {
	StepTimeoutMS int64   `json:"step_timeout_ms"`
	MemoryBytes   int64   `json:"memory_bytes"`
	PIDs          int64   `json:"pids"`
	CPUs          float64 `json:"cpus"`
	OutputBytes   int64   `json:"output_bytes"`
}

// Verdict is the outcome verify decided for a candidate, with the runs behind it.
type Verdict struct {
	Kind       RecordKind `json:"kind"`
	InstanceID string     `json:"instance_id"`
	Candidate  Digest     `json:"candidate"`
	Key        Digest     `json:"key"` // the memo key: candidate, recipe, image, core version, repeats
	Outcome    Outcome    `json:"outcome"`
	Reason     string     `json:"reason"`
	IsControl  bool       `json:"is_control"`
	Recipe     Recipe     `json:"recipe"`
	Before     []Digest   `json:"before"`
	After      []Digest   `json:"after"`
	// Stability is "k/n": how many of n repeats agreed with the outcome.
	Stability        string `json:"stability"`
	CoreVersion      string `json:"core_version"`
	DecidedAt        string `json:"decided_at"`
	FailureSignature string `json:"failure_signature,omitempty"`
	// Proposal is the agent's proposal (envgap propose) this verdict checked as the fix;
	// zero when the candidate's own fix was checked.
	Proposal Digest `json:"proposal,omitzero"`
	Previous Digest `json:"previous,omitzero"`
}

// Tier says how likely a credential finding is to be real.
type Tier string

// The tiers of a credential finding.
const (
	TierLikelyReal    Tier = "likely_real"
	TierToReview      Tier = "to_review"
	TierPublicExample Tier = "public_example"
)

// Finding is one credential-scan hit. Match is always redacted.
type Finding struct {
	InstanceID  string `json:"instance_id"`
	Field       string `json:"field"`
	Path        string `json:"path,omitempty"`
	Line        int    `json:"line"`
	Rule        string `json:"rule"`
	Match       string `json:"match"`
	Tier        Tier   `json:"tier"`
	Fingerprint string `json:"fingerprint"`
}

// Exclusion marks a task excluded_from_scoring. Exclusions are never deleted; a newer one
// points at the one it supersedes.
type Exclusion struct {
	Kind       RecordKind `json:"kind"`
	InstanceID string     `json:"instance_id"`
	// TaskKind is TaskRepair or TaskControl, as in the card's table.
	TaskKind TaskKind `json:"task_kind"`
	Reason   string   `json:"reason"`
	Since    string   `json:"since"`
	// Recheck names the recheck that found it (its date), empty when recorded by hand.
	Recheck  string `json:"recheck,omitempty"`
	ByHand   bool   `json:"by_hand"`
	Previous Digest `json:"previous,omitzero"`
}

// Release records one exported task set.
type Release struct {
	Kind     RecordKind  `json:"kind"`
	Date     string      `json:"date"`
	CorpusID string      `json:"corpus_id"`
	Tasks    []SetMember `json:"tasks"`
}

// TaskKind is what a task is in the card's tables: a repair (the project needs a fix of
// its environment files) or a control (it works; the right move is to change nothing).
type TaskKind string

// The task kinds.
const (
	TaskRepair  TaskKind = "repair"
	TaskControl TaskKind = "control"
)

// KindOf returns the kind of a task row.
func KindOf(t *Task) TaskKind {
	if t.IsControl {
		return TaskControl
	}
	return TaskRepair
}
