package data

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
