package schemas

// File is one path of a project or of a fix. A nil Content in gold_files (and in a
// prediction's files) means "delete this path"; project_files never carry nil.
type File struct {
	Path    string  `json:"path"`
	Content *string `json:"content"`
}

// Task is one row of the full config: every column of the card's "Data Fields" table,
// spelled and typed as the card spells and types it. Pointer fields are the nullable ones.
type Task struct {
	InstanceID                string             `json:"instance_id"`
	Repo                      string             `json:"repo"`
	BaseCommit                string             `json:"base_commit"`
	ProjectFiles              []File             `json:"project_files"`
	Patch                     string             `json:"patch"`
	GoldFiles                 []File             `json:"gold_files"`
	ProblemStatement          string             `json:"problem_statement"`
	ProblemStatementTruncated bool               `json:"problem_statement_truncated"`
	CreatedAt                 string             `json:"created_at"`
	RegistryDate              string             `json:"registry_date"`
	RegistryDateSource        RegistryDateSource `json:"registry_date_source"`
	Ecosystem                 Ecosystem          `json:"ecosystem"`
	Image                     string             `json:"image"`
	ManifestPath              string             `json:"manifest_path"`
	ManifestPaths             []string           `json:"manifest_paths"`
	BootstrapCommand          string             `json:"bootstrap_command"`
	ResolveCommand            string             `json:"resolve_command"`
	ReproCommand              string             `json:"repro_command"`
	RunCommand                string             `json:"run_command"`
	D2Command                 *string            `json:"d2_command"`
	FailureSignature          string             `json:"failure_signature"`
	ExpectedFailureRegex      string             `json:"expected_failure_regex"`
	IsControl                 bool               `json:"is_control"`
	Splits                    []Split            `json:"splits"`
	Source                    Source             `json:"source"`
	CrawlID                   *string            `json:"crawl_id"`
	IssueURL                  *string            `json:"issue_url"`
	IssueNumber               int64              `json:"issue_number"`
	PullRequest               *string            `json:"pull_request"`
	PRNumber                  *int64             `json:"pr_number"`
	PRHeadCommit              *string            `json:"pr_head_commit"`
	PRMergeCommit             *string            `json:"pr_merge_commit"`
	Categories                []Category         `json:"categories"`
	SecurityFlags             []SecurityFlag     `json:"security_flags"`
	ExcludedFromScoring       bool               `json:"excluded_from_scoring"`
	ExclusionReason           *string            `json:"exclusion_reason"`
	ExcludedSince             *string            `json:"excluded_since"`
	RepoLicense               *string            `json:"repo_license"`
}

// Candidate is one thing the pipeline looked at: a GitHub issue (reported), a merged pull
// request (repaired) or a project from the coding-agent study (lite). It carries every field
// a task has that the crawl can know, plus the candidates config's own columns (set, outcome,
// reason, generated_by, domain). Commands and patterns may be empty: verify fills missing
// commands from the default recipe generator.
//
// A Candidate record is immutable once stored. Its Outcome is the outcome the crawl could
// decide on its own (not_checked for most; code_fix, fix_not_recorded, not_fixed or
// already_works for some Lite projects); later outcomes live in Verdict and task records.
type Candidate struct {
	InstanceID                string             `json:"instance_id"`
	Set                       Source             `json:"set"`
	Outcome                   Outcome            `json:"outcome"`
	Reason                    string             `json:"reason"`
	GeneratedBy               *string            `json:"generated_by"`
	Domain                    *string            `json:"domain"`
	MadeBy                    string             `json:"made_by"`
	Repo                      string             `json:"repo"`
	BaseCommit                string             `json:"base_commit"`
	ProjectFiles              []File             `json:"project_files"`
	Patch                     string             `json:"patch"`
	GoldFiles                 []File             `json:"gold_files"`
	ProblemStatement          string             `json:"problem_statement"`
	ProblemStatementTruncated bool               `json:"problem_statement_truncated"`
	CreatedAt                 string             `json:"created_at"`
	RegistryDate              string             `json:"registry_date"`
	RegistryDateSource        RegistryDateSource `json:"registry_date_source"`
	Ecosystem                 Ecosystem          `json:"ecosystem"`
	Image                     string             `json:"image"`
	ManifestPath              string             `json:"manifest_path"`
	ManifestPaths             []string           `json:"manifest_paths"`
	BootstrapCommand          string             `json:"bootstrap_command"`
	ResolveCommand            string             `json:"resolve_command"`
	ReproCommand              string             `json:"repro_command"`
	RunCommand                string             `json:"run_command"`
	D2Command                 *string            `json:"d2_command"`
	FailureSignature          string             `json:"failure_signature"`
	ExpectedFailureRegex      string             `json:"expected_failure_regex"`
	IsControl                 bool               `json:"is_control"`
	CrawlID                   *string            `json:"crawl_id"`
	IssueURL                  *string            `json:"issue_url"`
	IssueNumber               int64              `json:"issue_number"`
	PullRequest               *string            `json:"pull_request"`
	PRNumber                  *int64             `json:"pr_number"`
	PRHeadCommit              *string            `json:"pr_head_commit"`
	PRMergeCommit             *string            `json:"pr_merge_commit"`
	Categories                []Category         `json:"categories"`
	RepoLicense               *string            `json:"repo_license"`
}

// CandidateRequired lists the JSON fields a candidate record must have.
var CandidateRequired = []string{"instance_id", "set", "repo", "created_at", "registry_date", "ecosystem", "issue_number"}

// TaskRequired lists the JSON fields a task row must have: all of them, nullable or not,
// because the card's columns are all present in every row.
var TaskRequired = jsonFieldNames(Task{})

// ToTask turns a candidate into a task row with the card's derived fields filled: source,
// image (when empty), registry_date_source (when empty), splits (full, plus lite for the
// lite set), and exclusion fields null. Categories and security flags come from the audit.
func (c *Candidate) ToTask() Task {
	t := Task{
		InstanceID: c.InstanceID, Repo: c.Repo, BaseCommit: c.BaseCommit,
		ProjectFiles: nonNilFiles(c.ProjectFiles), Patch: c.Patch, GoldFiles: nonNilFiles(c.GoldFiles),
		ProblemStatement: c.ProblemStatement, ProblemStatementTruncated: c.ProblemStatementTruncated,
		CreatedAt: c.CreatedAt, RegistryDate: c.RegistryDate, RegistryDateSource: c.RegistryDateSource,
		Ecosystem: c.Ecosystem, Image: c.Image, ManifestPath: c.ManifestPath,
		ManifestPaths:    nonNil(c.ManifestPaths),
		BootstrapCommand: c.BootstrapCommand, ResolveCommand: c.ResolveCommand,
		ReproCommand: c.ReproCommand, RunCommand: c.RunCommand, D2Command: c.D2Command,
		FailureSignature: c.FailureSignature, ExpectedFailureRegex: c.ExpectedFailureRegex,
		IsControl: c.IsControl, Source: c.Set, CrawlID: c.CrawlID, IssueURL: c.IssueURL,
		IssueNumber: c.IssueNumber, PullRequest: c.PullRequest, PRNumber: c.PRNumber,
		PRHeadCommit: c.PRHeadCommit, PRMergeCommit: c.PRMergeCommit,
		Categories: nonNil(c.Categories), SecurityFlags: []SecurityFlag{},
		RepoLicense: c.RepoLicense,
	}
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
	return t
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func nonNilFiles(s []File) []File { return nonNil(s) }
