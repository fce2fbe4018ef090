package site

import (
	"fmt"
	"strings"

	"github.com/envgap/envgap/harness/report"
	"github.com/envgap/envgap/schemas"
)

// syntheticRelease is a release of n candidates (a quarter of them tasks, a few excluded)
// and the given number of result folders over its tasks, built in memory: the scale the
// site must handle, without an export of that size.
func syntheticRelease(n, folders int) (*Release, []*Results) {
	sets := []schemas.Source{schemas.SourceReported, schemas.SourceRepaired, schemas.SourceLite}
	outcomes := []schemas.Outcome{schemas.OutcomeTask, schemas.OutcomeVerified, schemas.OutcomeAlreadyWorks, schemas.OutcomeNotReproduced,
		schemas.OutcomeCodeFix, schemas.OutcomeFixNotRecorded, schemas.OutcomeNotFixed, schemas.OutcomeNotChecked}
	ecos := []schemas.Ecosystem{schemas.EcosystemPython, schemas.EcosystemCPP, schemas.EcosystemJava, schemas.EcosystemJavaScript}
	rel := &Release{CorpusID: "5a1e5a1e5a1e"}
	for i := 0; i < n; i++ {
		c := schemas.Candidate{}
		c.InstanceID = fmt.Sprintf("envgap__org%03d__proj%05d-%d", i%97, i, 1000+i)
		c.Set = sets[i%3]
		c.Outcome = outcomes[(i/3)%8]
		if i%4 == 0 {
			c.Outcome = schemas.OutcomeTask
		}
		c.Reason = fmt.Sprintf("reason %d: %s", i, strings.Repeat("the clean container said so ", 3))
		c.MadeBy = []string{"maintainer fix", "AI assistant", "recipe generator"}[i%3]
		c.Repo = fmt.Sprintf("org%03d/proj%05d", i%97, i)
		c.Ecosystem = ecos[i%4]
		c.RegistryDate = fmt.Sprintf("2024-%02d-%02dT00:00:00Z", 1+i%12, 1+i%28)
		c.ProblemStatement = fmt.Sprintf("Install fails on a clean machine (%d)\n\nRunning `pip install .` ends with:\n\n```\nerror: no matching distribution for pkg%d\n```\n\n- a list\n- of *things*\n", i, i)
		c.Patch = fmt.Sprintf("diff --git a/requirements.txt b/requirements.txt\n--- a/requirements.txt\n+++ b/requirements.txt\n@@ -1,2 +1,2 @@\n-pkg%d\n+pkg%d==1.2.3\n numpy<2\n", i, i)
		url := fmt.Sprintf("https://github.com/%s/issues/%d", c.Repo, 1000+i)
		c.IssueURL = &url
		rel.Candidates = append(rel.Candidates, c)
		if c.Outcome == schemas.OutcomeTask {
			t := schemas.Task{Ident: c.Ident, Spec: c.Spec, Source: c.Set, Origin: c.Origin, License: c.License}
			if i%40 == 0 {
				reason, since := "found broken later", "2026-09-29T12:00:00Z"
				t.ExcludedFromScoring, t.ExclusionReason, t.ExcludedSince = true, &reason, &since
			}
			rel.Tasks = append(rel.Tasks, t)
		}
	}
	var res []*Results
	for k := 0; k < folders; k++ {
		name := fmt.Sprintf("results/agent-%02d", k)
		sum := schemas.EvalSummary{Kind: "eval_summary", SchemaVersion: schemas.EvalSchemaVersion, Agent: fmt.Sprintf("agent-%02d", k),
			Split: "full", Mode: schemas.ModeRun, K: 1, MaxAttempts: 3, CorpusID: rel.CorpusID, Tasks: len(rel.Tasks)}
		f := &report.ResultFolder{Dir: name, Summary: sum}
		r := &Results{Name: name, Folder: f}
		for j, t := range rel.Tasks {
			if t.ExcludedFromScoring {
				f.Summary.ExcludedIDs = append(f.Summary.ExcludedIDs, t.InstanceID)
			}
			for a := 1; a <= 1+(j+k)%3; a++ {
				ok := (j*7+k*3+a)%5 == 0
				status := schemas.EvalUnresolved
				if ok {
					status = schemas.EvalResolved
				}
				fig := report.ResultFigures{InstanceID: t.InstanceID, Excluded: t.ExcludedFromScoring, Run: 1, Attempt: a, Status: status, Resolved: ok, Trajectory: "empty"}
				fig.ManifestF1.Measured, fig.ManifestF1.F1 = true, float64((j+k)%10)/10
				f.Results = append(f.Results, fig)
				at := Attempt{InstanceID: t.InstanceID, Excluded: t.ExcludedFromScoring, Run: 1, Attempt: a, Status: status, Resolved: ok}
				if !ok {
					at.Reason = "resolve_command exited 1"
				}
				r.Attempts = append(r.Attempts, at)
				if ok {
					break
				}
			}
		}
		res = append(res, r)
	}
	return rel, res
}
