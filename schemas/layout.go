package schemas

// The record layout: every column of the dataset card is defined once, here. A column is a
// struct field with its JSON and parquet name (`json:` and `parquet:` tags, spelled alike;
// parquet tags are plain strings, so this package needs nothing beyond the standard
// library), its card type (from the Go type: *T is nullable, []T a list) and its card
// description (`doc:`). The columns both records have live in four groups that Task and
// Candidate embed in the card's column order; each record adds its own columns around
// them. Validation, the JSON Schema files, the parquet rows of every config, the card's
// "Data Fields" table, the corpus id and Candidate.ToTask all follow from these types
// (Columns lists them), so adding a column is one field here plus its rule in validate.go.
//
// `candidates:"optional"` marks a string column the candidates config writes as null on a
// row that is not a task when the candidate left it empty.
//
// `agent:"visible"` marks a column an agent may see while it works on the task (the task
// file of envgap run and propose, a model agent's prompt, Harbor's instruction, the
// website: AgentColumns). Never the fix (patch, gold_files, the pull request's columns),
// nor the commands that score it.

// File is one path of a project or of a fix: struct<path: string, content: string> in the
// card. A nil Content in gold_files (and in a prediction's files) means "delete this path";
// project_files never carry nil.
type File struct {
	Path    string  `json:"path" parquet:"path"`
	Content *string `json:"content" parquet:"content,optional"`
}

// Ident is the id column of both records.
type Ident struct {
	InstanceID string `json:"instance_id" parquet:"instance_id" agent:"visible" doc:"Task id, envgap__<owner>__<repo>-<issue number>. The number is always the issue number, also for Repaired tasks (their pull request number is in pr_number). To get the repository, read repo rather than parsing the id."`
}

// Spec holds the columns both records have that say what to run and how: the project, the
// reference fix, the issue text, the dates, the ecosystem and image, the manifests, the
// commands and the failure pattern.
type Spec struct {
	Repo                      string             `json:"repo" parquet:"repo" agent:"visible" doc:"GitHub repository, owner/name. Lite tasks were never on GitHub: there it names the agent that wrote the project and the language and study trial, <agent>/<language>-t<trial>."`
	BaseCommit                string             `json:"base_commit" parquet:"base_commit" candidates:"optional" agent:"visible" doc:"The commit the agent starts from and the evaluation rebuilds. Reported tasks: the last default-branch commit at or before the issue was opened. Repaired tasks: the pull request's base commit. Lite tasks: the one commit the harness makes from project_files (fixed author and date, so the hash is always the same)."`
	ProjectFiles              []File             `json:"project_files" parquet:"project_files,list" doc:"Lite tasks only: the project exactly as the coding agent wrote it, one entry per file. The harness writes these files into a fresh repository to start the task. Empty for tasks from GitHub, which start from repo at base_commit."`
	Patch                     string             `json:"patch" parquet:"patch" candidates:"optional" doc:"The reference environment fix, as a unified diff against base_commit. It only touches environment files (manifests, lockfiles, build and setup files, Dockerfiles, READMEs), never source or tests; a Lite fix may also add an unchanged copy of one of the project's Java sources under src/main/java, where Maven compiles it. Empty for controls. Do not show it to the agent."`
	GoldFiles                 []File             `json:"gold_files" parquet:"gold_files,list" doc:"The same fix as full file contents, one entry per path (content null means delete). {f['path']: f['content'] for f in row['gold_files']} is exactly the files object of a prediction. Empty for controls. Do not show it to the agent."`
	ProblemStatement          string             `json:"problem_statement" parquet:"problem_statement" candidates:"optional" agent:"visible" doc:"Issue title, a blank line, then the issue body, exactly as the agents in the published runs saw it."`
	ProblemStatementTruncated bool               `json:"problem_statement_truncated" parquet:"problem_statement_truncated" agent:"visible" doc:"True when the issue body was already cut at 3,000 characters when it was collected. It ships as agents saw it."`
	CreatedAt                 string             `json:"created_at" parquet:"created_at" doc:"When the issue was opened (ISO 8601). For Lite tasks, when the agent wrote the project, which is also the date of the commit base_commit names."`
	RegistryDate              string             `json:"registry_date" parquet:"registry_date" agent:"visible" doc:"Package registries are limited to what was published by this time: PyPI through a date-filtered index, npm through npm_config_before. Maven and system packages are not date-limited."`
	RegistryDateSource        RegistryDateSource `json:"registry_date_source" parquet:"registry_date_source" doc:"Where registry_date comes from: pull_request_merged_at (Repaired), issue_created_at (Reported) or repaired_at (Lite: when the project's repair was saved)."`
	Ecosystem                 Ecosystem          `json:"ecosystem" parquet:"ecosystem" agent:"visible" doc:"python, cpp, java or javascript. Picks the evaluation image and how installed packages are listed."`
	Image                     string             `json:"image" parquet:"image" agent:"visible" doc:"Local Docker tag of the evaluation image, built with envgap build-images. Not pushed to any registry."`
	ManifestPath              string             `json:"manifest_path" parquet:"manifest_path" candidates:"optional" agent:"visible" doc:"The main dependency manifest (setup.py, CMakeLists.txt, pom.xml, package.json, ...)."`
	ManifestPaths             []string           `json:"manifest_paths" parquet:"manifest_paths,list" agent:"visible" doc:"Every manifest read to get the declared dependencies."`
	BootstrapCommand          string             `json:"bootstrap_command" parquet:"bootstrap_command" candidates:"optional" doc:"First evaluation step: sets up the toolchain."`
	ResolveCommand            string             `json:"resolve_command" parquet:"resolve_command" candidates:"optional" doc:"Installs or builds the declared environment. Must exit 0 for the task to count as resolved."`
	ReproCommand              string             `json:"repro_command" parquet:"repro_command" candidates:"optional" agent:"visible" doc:"Reproduces the failure: it fails at base_commit on repair tasks and passes after the reference fix. Agents may run it."`
	RunCommand                string             `json:"run_command" parquet:"run_command" candidates:"optional" doc:"The workload that is run under a system-call trace. Resolved means resolve_command and this both exit 0."`
	D2Command                 *string            `json:"d2_command" parquet:"d2_command,optional" doc:"Command that lists installed packages, when the ecosystem default does not work. Usually null."`
	FailureSignature          string             `json:"failure_signature" parquet:"failure_signature" candidates:"optional" agent:"visible" doc:"The line of the failing output that identifies the problem. Empty for controls."`
	ExpectedFailureRegex      string             `json:"expected_failure_regex" parquet:"expected_failure_regex" candidates:"optional" doc:"Pattern the evaluation looks for in the failing output. For controls it is the failure from the report that no longer happens; for a few of them it was taken from the issue text rather than from real build output."`
	IsControl                 bool               `json:"is_control" parquet:"is_control" doc:"True when the environment already works at base_commit. The right move is to change nothing and not break it."`
}

// Origin holds the columns both records have that say where the record came from (the
// crawl, the issue, the pull request) and its failure types.
type Origin struct {
	CrawlID       *string    `json:"crawl_id" parquet:"crawl_id,optional" doc:"Internal id of the collection run a Repaired task came from; null for Reported and Lite tasks."`
	IssueURL      *string    `json:"issue_url" parquet:"issue_url,optional" doc:"The GitHub issue; null for Lite tasks."`
	IssueNumber   int64      `json:"issue_number" parquet:"issue_number" doc:"The GitHub issue number; for Lite tasks, the number of the task the agent was given."`
	PullRequest   *string    `json:"pull_request" parquet:"pull_request,optional" doc:"The merged pull request whose environment changes are the reference fix (Repaired only). Do not show it to the agent."`
	PRNumber      *int64     `json:"pr_number" parquet:"pr_number,optional" doc:"Pull request number (Repaired only)."`
	PRHeadCommit  *string    `json:"pr_head_commit" parquet:"pr_head_commit,optional" doc:"Head commit of that pull request. gold_files match its contents exactly."`
	PRMergeCommit *string    `json:"pr_merge_commit" parquet:"pr_merge_commit,optional" doc:"Merge commit of that pull request."`
	Categories    []Category `json:"categories" parquet:"categories,list" doc:"Failure types (misspecification, underspecification, conflict, security). A task can have several or none. Assigned by rules and checked by an AI assistant."`
}

// License holds the license column of both records.
type License struct {
	RepoLicense *string `json:"repo_license" parquet:"repo_license,optional" doc:"SPDX license id of the repository (null if GitHub reported none). The issue text, patch and gold_files come from that repository and fall under this license. Null for Lite tasks, whose projects were written by coding agents in a study that distributes them for research replication without a license of their own."`
}

// Task is one row of the full config: every column of the card's "Data Fields" table, in
// the card's order, spelled and typed as the card spells and types it. Pointer fields are
// the nullable ones.
type Task struct {
	Ident
	Spec
	Splits []Split `json:"splits" parquet:"splits,list" doc:"Split labels the harness stores (full, lite, secure). The Hub configs are built from these and from source."`
	Source Source  `json:"source" parquet:"source" doc:"reported (a failure users reported in an issue), repaired (a breakage maintainers fixed with an environment-only pull request) or lite (a project a coding agent wrote whose environment did not work on a clean machine)."`
	Origin
	SecurityFlags       []SecurityFlag `json:"security_flags" parquet:"security_flags,list" doc:"Registry audit findings that put a task in secure."`
	ExcludedFromScoring bool           `json:"excluded_from_scoring" parquet:"excluded_from_scoring" doc:"True for tasks found to be broken after they were admitted. They stay in the data so you can see them, but every leaderboard leaves them out. Filter on this before scoring."`
	ExclusionReason     *string        `json:"exclusion_reason" parquet:"exclusion_reason,optional" doc:"Why the task is excluded; null when it is scored."`
	ExcludedSince       *string        `json:"excluded_since" parquet:"excluded_since,optional" doc:"When it was excluded (ISO 8601 UTC); null when scored."`
	License
}

// Candidate is one thing the pipeline looked at: a GitHub issue (reported), a merged pull
// request (repaired) or a project from the coding-agent study (lite). It carries every column
// a task has that the crawl can know, plus the candidates config's own columns (set, outcome,
// reason, generated_by, domain, made_by). Commands and patterns may be empty: verify fills
// missing commands from the default recipe generator.
//
// A Candidate record is immutable once stored. Its Outcome is the outcome the crawl could
// decide on its own (not_checked for most; code_fix, fix_not_recorded, not_fixed or
// already_works for some Lite projects); later outcomes live in Verdict and task records. In
// the candidates config, outcome and reason are the candidate's current ones.
type Candidate struct {
	Ident
	Set         Source  `json:"set" parquet:"set" doc:"Where the candidate came from: reported (a GitHub issue), repaired (a merged pull request) or lite (a project a coding agent wrote)."`
	Outcome     Outcome `json:"outcome" parquet:"outcome" doc:"What happened to it: task, verified, already_works, not_reproduced, code_fix, fix_not_recorded, not_fixed or not_checked."`
	Reason      string  `json:"reason" parquet:"reason" doc:"Why it has that outcome, in words."`
	GeneratedBy *string `json:"generated_by" parquet:"generated_by,optional" doc:"Lite only: the coding agent that wrote the project."`
	Domain      *string `json:"domain" parquet:"domain,optional" doc:"Lite only: the kind of program."`
	MadeBy      string  `json:"made_by" parquet:"made_by,optional" doc:"How the commands and the reference fix were made (see Annotations)."`
	Spec
	Origin
	License
}
