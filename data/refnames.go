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
)
