package schemas

// RecordKind is a stored record's "kind" field: what the object is. Readers check it
// before trusting a decoded object.
type RecordKind string

// The kinds of the records envgap stores.
const (
	KindRun            RecordKind = "run"
	KindVerdict        RecordKind = "verdict"
	KindCandidateSet   RecordKind = "candidate_set"
	KindExclusion      RecordKind = "exclusion"
	KindRelease        RecordKind = "release"
	KindProposal       RecordKind = "proposal"
	KindRecheck        RecordKind = "recheck"
	KindEvalResult     RecordKind = "eval_result"
	KindEvalSummary    RecordKind = "eval_summary"
	KindAudit          RecordKind = "audit"
	KindScan           RecordKind = "scan"
	KindHarness        RecordKind = "harness"
	KindCrawlReport    RecordKind = "crawl_report"
	KindCrawlMissing   RecordKind = "crawl_missing"
	KindCrawlTree      RecordKind = "crawl_tree"
	KindCrawlFix       RecordKind = "crawl_fix"
	KindGitHubResponse RecordKind = "github_response"
	KindWorkPlan       RecordKind = "work-plan"
)
