package export

import (
	"github.com/envgap/envgap/schemas"
)

// FileRow is one element of project_files or gold_files:
// struct<path: string, content: string> with a nullable content (null deletes the path).
type FileRow struct {
	Path    string  `parquet:"path"`
	Content *string `parquet:"content,optional"`
}

// TaskRow is one row of the task configs (full, reported, repaired, lite, secure): the
// card's "Data Fields" columns, in the card's order, with explicit parquet types. Pointer
// fields are the card's nullable columns; lists are 3-level parquet LISTs.
type TaskRow struct {
	InstanceID                string    `parquet:"instance_id"`
	Repo                      string    `parquet:"repo"`
	BaseCommit                string    `parquet:"base_commit"`
	ProjectFiles              []FileRow `parquet:"project_files,list"`
	Patch                     string    `parquet:"patch"`
	GoldFiles                 []FileRow `parquet:"gold_files,list"`
	ProblemStatement          string    `parquet:"problem_statement"`
	ProblemStatementTruncated bool      `parquet:"problem_statement_truncated"`
	CreatedAt                 string    `parquet:"created_at"`
	RegistryDate              string    `parquet:"registry_date"`
	RegistryDateSource        string    `parquet:"registry_date_source"`
	Ecosystem                 string    `parquet:"ecosystem"`
	Image                     string    `parquet:"image"`
	ManifestPath              string    `parquet:"manifest_path"`
	ManifestPaths             []string  `parquet:"manifest_paths,list"`
	BootstrapCommand          string    `parquet:"bootstrap_command"`
	ResolveCommand            string    `parquet:"resolve_command"`
	ReproCommand              string    `parquet:"repro_command"`
	RunCommand                string    `parquet:"run_command"`
	D2Command                 *string   `parquet:"d2_command,optional"`
	FailureSignature          string    `parquet:"failure_signature"`
	ExpectedFailureRegex      string    `parquet:"expected_failure_regex"`
	IsControl                 bool      `parquet:"is_control"`
	Splits                    []string  `parquet:"splits,list"`
	Source                    string    `parquet:"source"`
	CrawlID                   *string   `parquet:"crawl_id,optional"`
	IssueURL                  *string   `parquet:"issue_url,optional"`
	IssueNumber               int64     `parquet:"issue_number"`
	PullRequest               *string   `parquet:"pull_request,optional"`
	PRNumber                  *int64    `parquet:"pr_number,optional"`
	PRHeadCommit              *string   `parquet:"pr_head_commit,optional"`
	PRMergeCommit             *string   `parquet:"pr_merge_commit,optional"`
	Categories                []string  `parquet:"categories,list"`
	SecurityFlags             []string  `parquet:"security_flags,list"`
	ExcludedFromScoring       bool      `parquet:"excluded_from_scoring"`
	ExclusionReason           *string   `parquet:"exclusion_reason,optional"`
	ExcludedSince             *string   `parquet:"excluded_since,optional"`
	RepoLicense               *string   `parquet:"repo_license,optional"`
}

// CandidateRow is one row of the candidates config: every field of a candidate record
// (schemas.Candidate's order: instance_id, set, outcome, reason, generated_by, domain,
// made_by, then the task columns a candidate can carry). outcome and reason are the
// candidate's current ones (data.Store.CurrentOutcome). Rows of admitted tasks carry the
// task row's values; on other rows a string the crawl did not fill (commands, patterns,
// patch, ...) is null rather than "".
type CandidateRow struct {
	InstanceID                string    `parquet:"instance_id"`
	Set                       string    `parquet:"set"`
	Outcome                   string    `parquet:"outcome"`
	Reason                    string    `parquet:"reason"`
	GeneratedBy               *string   `parquet:"generated_by,optional"`
	Domain                    *string   `parquet:"domain,optional"`
	MadeBy                    *string   `parquet:"made_by,optional"`
	Repo                      string    `parquet:"repo"`
	BaseCommit                *string   `parquet:"base_commit,optional"`
	ProjectFiles              []FileRow `parquet:"project_files,list"`
	Patch                     *string   `parquet:"patch,optional"`
	GoldFiles                 []FileRow `parquet:"gold_files,list"`
	ProblemStatement          *string   `parquet:"problem_statement,optional"`
	ProblemStatementTruncated bool      `parquet:"problem_statement_truncated"`
	CreatedAt                 string    `parquet:"created_at"`
	RegistryDate              string    `parquet:"registry_date"`
	RegistryDateSource        string    `parquet:"registry_date_source"`
	Ecosystem                 string    `parquet:"ecosystem"`
	Image                     string    `parquet:"image"`
	ManifestPath              *string   `parquet:"manifest_path,optional"`
	ManifestPaths             []string  `parquet:"manifest_paths,list"`
	BootstrapCommand          *string   `parquet:"bootstrap_command,optional"`
	ResolveCommand            *string   `parquet:"resolve_command,optional"`
	ReproCommand              *string   `parquet:"repro_command,optional"`
	RunCommand                *string   `parquet:"run_command,optional"`
	D2Command                 *string   `parquet:"d2_command,optional"`
	FailureSignature          *string   `parquet:"failure_signature,optional"`
	ExpectedFailureRegex      *string   `parquet:"expected_failure_regex,optional"`
	IsControl                 bool      `parquet:"is_control"`
	CrawlID                   *string   `parquet:"crawl_id,optional"`
	IssueURL                  *string   `parquet:"issue_url,optional"`
	IssueNumber               int64     `parquet:"issue_number"`
	PullRequest               *string   `parquet:"pull_request,optional"`
	PRNumber                  *int64    `parquet:"pr_number,optional"`
	PRHeadCommit              *string   `parquet:"pr_head_commit,optional"`
	PRMergeCommit             *string   `parquet:"pr_merge_commit,optional"`
	Categories                []string  `parquet:"categories,list"`
	RepoLicense               *string   `parquet:"repo_license,optional"`
}

// TaskRowOf converts a task to its parquet row. Nil lists become empty lists (parquet reads
// both back as []), so a row read back converts to exactly the same task.
func TaskRowOf(t *schemas.Task) TaskRow {
	return TaskRow{
		InstanceID: t.InstanceID, Repo: t.Repo, BaseCommit: t.BaseCommit,
		ProjectFiles: fileRows(t.ProjectFiles), Patch: t.Patch, GoldFiles: fileRows(t.GoldFiles),
		ProblemStatement: t.ProblemStatement, ProblemStatementTruncated: t.ProblemStatementTruncated,
		CreatedAt: t.CreatedAt, RegistryDate: t.RegistryDate, RegistryDateSource: string(t.RegistryDateSource),
		Ecosystem: string(t.Ecosystem), Image: t.Image, ManifestPath: t.ManifestPath,
		ManifestPaths:    strs(t.ManifestPaths),
		BootstrapCommand: t.BootstrapCommand, ResolveCommand: t.ResolveCommand,
		ReproCommand: t.ReproCommand, RunCommand: t.RunCommand, D2Command: t.D2Command,
		FailureSignature: t.FailureSignature, ExpectedFailureRegex: t.ExpectedFailureRegex,
		IsControl: t.IsControl, Splits: strs(t.Splits), Source: string(t.Source),
		CrawlID: t.CrawlID, IssueURL: t.IssueURL, IssueNumber: t.IssueNumber,
		PullRequest: t.PullRequest, PRNumber: t.PRNumber, PRHeadCommit: t.PRHeadCommit,
		PRMergeCommit: t.PRMergeCommit, Categories: strs(t.Categories), SecurityFlags: strs(t.SecurityFlags),
		ExcludedFromScoring: t.ExcludedFromScoring, ExclusionReason: t.ExclusionReason,
		ExcludedSince: t.ExcludedSince, RepoLicense: t.RepoLicense,
	}
}

// Task converts a parquet row back to a task.
func (r *TaskRow) Task() schemas.Task {
	return schemas.Task{
		InstanceID: r.InstanceID, Repo: r.Repo, BaseCommit: r.BaseCommit,
		ProjectFiles: files(r.ProjectFiles), Patch: r.Patch, GoldFiles: files(r.GoldFiles),
		ProblemStatement: r.ProblemStatement, ProblemStatementTruncated: r.ProblemStatementTruncated,
		CreatedAt: r.CreatedAt, RegistryDate: r.RegistryDate,
		RegistryDateSource: schemas.RegistryDateSource(r.RegistryDateSource),
		Ecosystem:          schemas.Ecosystem(r.Ecosystem), Image: r.Image, ManifestPath: r.ManifestPath,
		ManifestPaths:    enums[string](r.ManifestPaths),
		BootstrapCommand: r.BootstrapCommand, ResolveCommand: r.ResolveCommand,
		ReproCommand: r.ReproCommand, RunCommand: r.RunCommand, D2Command: r.D2Command,
		FailureSignature: r.FailureSignature, ExpectedFailureRegex: r.ExpectedFailureRegex,
		IsControl: r.IsControl, Splits: enums[schemas.Split](r.Splits), Source: schemas.Source(r.Source),
		CrawlID: r.CrawlID, IssueURL: r.IssueURL, IssueNumber: r.IssueNumber,
		PullRequest: r.PullRequest, PRNumber: r.PRNumber, PRHeadCommit: r.PRHeadCommit,
		PRMergeCommit: r.PRMergeCommit, Categories: enums[schemas.Category](r.Categories),
		SecurityFlags:       enums[schemas.SecurityFlag](r.SecurityFlags),
		ExcludedFromScoring: r.ExcludedFromScoring, ExclusionReason: r.ExclusionReason,
		ExcludedSince: r.ExcludedSince, RepoLicense: r.RepoLicense,
	}
}

// candidateRowOf builds the candidates-config row of a candidate with its current outcome.
// task is the admitted task row when the candidate became one (nil otherwise): its values
// win, so the candidates row of a task agrees with the full config.
func candidateRowOf(c *schemas.Candidate, outcome schemas.Outcome, reason string, task *schemas.Task) CandidateRow {
	r := CandidateRow{
		InstanceID: c.InstanceID, Set: string(c.Set), Outcome: string(outcome), Reason: reason,
		GeneratedBy: c.GeneratedBy, Domain: c.Domain, MadeBy: nonEmpty(c.MadeBy), Repo: c.Repo,
		BaseCommit: nonEmpty(c.BaseCommit), ProjectFiles: fileRows(c.ProjectFiles),
		Patch: nonEmpty(c.Patch), GoldFiles: fileRows(c.GoldFiles),
		ProblemStatement: nonEmpty(c.ProblemStatement), ProblemStatementTruncated: c.ProblemStatementTruncated,
		CreatedAt: c.CreatedAt, RegistryDate: c.RegistryDate, RegistryDateSource: string(c.RegistryDateSource),
		Ecosystem: string(c.Ecosystem), Image: c.Image, ManifestPath: nonEmpty(c.ManifestPath),
		ManifestPaths: strs(c.ManifestPaths), BootstrapCommand: nonEmpty(c.BootstrapCommand),
		ResolveCommand: nonEmpty(c.ResolveCommand), ReproCommand: nonEmpty(c.ReproCommand),
		RunCommand: nonEmpty(c.RunCommand), D2Command: c.D2Command,
		FailureSignature: nonEmpty(c.FailureSignature), ExpectedFailureRegex: nonEmpty(c.ExpectedFailureRegex),
		IsControl: c.IsControl, CrawlID: c.CrawlID, IssueURL: c.IssueURL, IssueNumber: c.IssueNumber,
		PullRequest: c.PullRequest, PRNumber: c.PRNumber, PRHeadCommit: c.PRHeadCommit,
		PRMergeCommit: c.PRMergeCommit, Categories: strs(c.Categories), RepoLicense: c.RepoLicense,
	}
	if r.Image == "" {
		r.Image = c.Ecosystem.Image()
	}
	if r.RegistryDateSource == "" {
		r.RegistryDateSource = string(schemas.DateSourceFor(c.Set))
	}
	if task != nil {
		t := task
		r.Repo, r.BaseCommit = t.Repo, &t.BaseCommit
		r.ProjectFiles, r.Patch, r.GoldFiles = fileRows(t.ProjectFiles), &t.Patch, fileRows(t.GoldFiles)
		r.ProblemStatement, r.ProblemStatementTruncated = &t.ProblemStatement, t.ProblemStatementTruncated
		r.CreatedAt, r.RegistryDate, r.RegistryDateSource = t.CreatedAt, t.RegistryDate, string(t.RegistryDateSource)
		r.Ecosystem, r.Image, r.ManifestPath, r.ManifestPaths = string(t.Ecosystem), t.Image, &t.ManifestPath, strs(t.ManifestPaths)
		r.BootstrapCommand, r.ResolveCommand = &t.BootstrapCommand, &t.ResolveCommand
		r.ReproCommand, r.RunCommand, r.D2Command = &t.ReproCommand, &t.RunCommand, t.D2Command
		r.FailureSignature, r.ExpectedFailureRegex = &t.FailureSignature, &t.ExpectedFailureRegex
		r.IsControl, r.CrawlID, r.IssueURL, r.IssueNumber = t.IsControl, t.CrawlID, t.IssueURL, t.IssueNumber
		r.PullRequest, r.PRNumber, r.PRHeadCommit, r.PRMergeCommit = t.PullRequest, t.PRNumber, t.PRHeadCommit, t.PRMergeCommit
		r.Categories, r.RepoLicense = strs(t.Categories), t.RepoLicense
	}
	return r
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func fileRows(fs []schemas.File) []FileRow {
	out := make([]FileRow, len(fs))
	for i, f := range fs {
		out[i] = FileRow{Path: f.Path, Content: f.Content}
	}
	return out
}

func files(rs []FileRow) []schemas.File {
	out := make([]schemas.File, len(rs))
	for i, r := range rs {
		out[i] = schemas.File{Path: r.Path, Content: r.Content}
	}
	return out
}

func strs[T ~string](in []T) []string {
	out := make([]string, len(in))
	for i, v := range in {
		out[i] = string(v)
	}
	return out
}

func enums[T ~string](in []string) []T {
	out := make([]T, len(in))
	for i, v := range in {
		out[i] = T(v)
	}
	return out
}

// rowBytes approximates a row's uncompressed size: the bytes of its strings.
func taskRowBytes(r *TaskRow) int64 {
	n := int64(len(r.InstanceID) + len(r.Repo) + len(r.BaseCommit) + len(r.Patch) + len(r.ProblemStatement) +
		len(r.BootstrapCommand) + len(r.ResolveCommand) + len(r.ReproCommand) + len(r.RunCommand) +
		len(r.FailureSignature) + len(r.ExpectedFailureRegex) + 256)
	n += filesBytes(r.ProjectFiles) + filesBytes(r.GoldFiles)
	for _, s := range r.ManifestPaths {
		n += int64(len(s))
	}
	return n
}

func candidateRowBytes(r *CandidateRow) int64 {
	n := int64(len(r.InstanceID) + len(r.Repo) + len(r.Reason) + 256)
	for _, p := range []*string{r.BaseCommit, r.Patch, r.ProblemStatement, r.BootstrapCommand, r.ResolveCommand,
		r.ReproCommand, r.RunCommand, r.FailureSignature, r.ExpectedFailureRegex} {
		if p != nil {
			n += int64(len(*p))
		}
	}
	return n + filesBytes(r.ProjectFiles) + filesBytes(r.GoldFiles)
}

func filesBytes(fs []FileRow) int64 {
	var n int64
	for _, f := range fs {
		n += int64(len(f.Path))
		if f.Content != nil {
			n += int64(len(*f.Content))
		}
	}
	return n
}
