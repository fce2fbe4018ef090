package data

import "github.com/envgap/envgap/schemas"

// Ref name prefixes: the conventions every stage follows.
const (
	// RefCandidates + name points at a schemas.CandidateSet.
	RefCandidates = "candidates/"
	// RefVerdicts + instance id points at the latest schemas.Verdict.
	RefVerdicts = "verdicts/"
	// RefTasks + instance id points at the admitted schemas.Task row (exclusion fields null).
	RefTasks = "tasks/"
	// RefExclusions + instance id points at the latest schemas.Exclusion.
	RefExclusions = "exclusions/"
	// RefReleases + date points at a schemas.Release.
	RefReleases = "releases/"
	// RefCrawls + crawl id points at a crawl report.
	RefCrawls = "crawls/"
	// RefRechecks + date points at a recheck record.
	RefRechecks = "rechecks/"
	// RefProposals + instance id + "/" + 12 hex points at a schemas.Proposal: a reference
	// fix an agent proposed for a candidate (envgap propose). A candidate may have several.
	RefProposals = "proposals/"
	// RefProposalChecks + instance id + "/" + 12 hex of the proposal points at the verdict
	// of checking that proposal when it did not verify (a verified one is verdicts/<id>).
	RefProposalChecks = "proposal-checks/"
	// RefReproductions + instance id points at a reproduction: the runs of a failure that
	// reproduced in a clean container for a candidate with no fix to check (not a verdict).
	RefReproductions = "reproductions/"
	// RefAudits + instance id points at the latest registry audit record of the instance.
	RefAudits = "audits/"
	// RefScanLatest points at the record of the latest credential scan.
	RefScanLatest = "scans/latest"
)

// The ref names, built here alone.

// CandidateSetRef is the ref of the candidate set named name.
func CandidateSetRef(name string) string { return RefCandidates + name }

// VerdictRef is the ref of an instance's latest verdict.
func VerdictRef(id string) string { return RefVerdicts + id }

// TaskRef is the ref of an instance's admitted task row.
func TaskRef(id string) string { return RefTasks + id }

// ExclusionRef is the ref of an instance's latest exclusion.
func ExclusionRef(id string) string { return RefExclusions + id }

// ReleaseRef is the ref of the release of a date.
func ReleaseRef(date string) string { return RefReleases + date }

// CrawlRef is the ref of a crawl's report.
func CrawlRef(crawlID string) string { return RefCrawls + crawlID }

// RecheckRef is the ref of the recheck record of a label (a date).
func RecheckRef(label string) string { return RefRechecks + label }

// ProposalsOf is the prefix of the refs of an instance's proposals.
func ProposalsOf(id string) string { return RefProposals + id + "/" }

// ProposalRef is the ref of the proposal d of an instance.
func ProposalRef(id string, d schemas.Digest) string { return ProposalsOf(id) + d.Short() }

// ProposalChecksOf is the prefix of the refs of the checks of an instance's proposals.
func ProposalChecksOf(id string) string { return RefProposalChecks + id + "/" }

// ProposalCheckRef is the ref of the verdict of checking the proposal d of an instance.
func ProposalCheckRef(id string, d schemas.Digest) string { return ProposalChecksOf(id) + d.Short() }

// ReproductionRef is the ref of an instance's reproduction.
func ReproductionRef(id string) string { return RefReproductions + id }

// AuditRef is the ref of an instance's latest registry audit.
func AuditRef(id string) string { return RefAudits + id }
