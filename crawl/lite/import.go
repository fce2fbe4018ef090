package lite

import (
	"errors"
	"fmt"
	"github.com/envgap/envgap/lib/studylayout"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/envgap/envgap/schemas"
)

// MadeBy is the card's "how it was made" value of every Lite candidate.
const MadeBy = "coding-agent study"

// Options configures Import.
type Options struct {
	// Problems is the problem list (data/problems.json). A study's own problems.json,
	// when present, fills or overrides entries number by number.
	Problems []studylayout.Problem
}

// Result is what Import found: one candidate per importable project, sorted by instance
// id, and one reject per folder or file that could not be imported.
type Result struct {
	Candidates []schemas.Candidate
	Rejects    []schemas.CrawlReject
	// NotListed are the projects of the study's extra runs (trial 2 and later) whose
	// repair had no environment part: the card lists every project of the main run
	// (trial 1) and, of the extra runs, only those. They are not candidates.
	NotListed []schemas.CrawlReject
}

// MainTrial is the trial of the study's main run: each agent once per task and language.
const MainTrial = 1

// Import reads a study folder (see the package documentation for its layout) and returns
// a candidate per project. A project with a missing or malformed meta.json, a file that
// is a symbolic link, binary or not UTF-8, or a folder that does not fit the layout is
// rejected by its study-relative path and the rest of the study is imported. The error
// is for a study that cannot be read at all.
func Import(study string, opts Options) (*Result, error) {
	info, err := os.Stat(study)
	if err != nil {
		return nil, fmt.Errorf("study: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("study %s is not a folder", study)
	}
	lists := [][]studylayout.Problem{opts.Problems}
	own, err := studylayout.StudyProblems(study)
	if err != nil {
		return nil, err
	}
	lists = append(lists, own)
	problems := studylayout.IndexProblems(lists...)
	if len(problems) == 0 {
		return nil, fmt.Errorf("study %s: no problem list: pass the study's problem list (data/problems.json) or put %s in the study", study, studylayout.ProblemsFile)
	}
	refs, rejects, err := studylayout.List(study)
	if err != nil {
		return nil, err
	}
	res := &Result{Rejects: rejects}
	for _, ref := range refs {
		c, rej := importProject(ref, problems)
		if len(rej) > 0 {
			res.Rejects = append(res.Rejects, rej...)
			continue
		}
		if ref.Trial != MainTrial && c.Outcome != schemas.OutcomeNotChecked {
			res.NotListed = append(res.NotListed, schemas.CrawlReject{Ref: ref.Rel,
				Reason: fmt.Sprintf("an extra run (trial %d) whose repair had no environment part (%s): only the main run (trial %d) is listed whole", ref.Trial, c.Outcome, MainTrial)})
			continue
		}
		res.Candidates = append(res.Candidates, *c)
	}
	return res, nil
}

// importProject turns one project folder into a candidate, or rejects it.
func importProject(ref studylayout.Project, problems map[int64]studylayout.Problem) (*schemas.Candidate, []schemas.CrawlReject) {
	id := schemas.InstanceID(ref.Repo(), ref.Problem)
	var rejects []schemas.CrawlReject
	reject := func(rel, format string, a ...any) {
		rejects = append(rejects, schemas.CrawlReject{Ref: rel, Reason: fmt.Sprintf(format, a...) + " (project " + id + " not imported)"})
	}
	prob, ok := problems[ref.Problem]
	if !ok {
		reject(ref.Rel, "problem %d is not in the problem list; add it to the study's %s", ref.Problem, studylayout.ProblemsFile)
		return nil, rejects
	}
	metaRel := ref.Rel + "/" + studylayout.MetaFile
	var meta *studylayout.Meta
	if st, err := os.Lstat(filepath.Join(ref.Dir, studylayout.MetaFile)); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			reject(metaRel, "is missing; every project needs its %s (created_at, worked_first_time, made_to_work, ...)", studylayout.MetaFile)
		} else {
			reject(metaRel, "cannot be read: %v", err)
		}
	} else if !st.Mode().IsRegular() {
		reject(metaRel, "is not a regular file (a symbolic link or folder)")
	} else if b, err := os.ReadFile(filepath.Join(ref.Dir, studylayout.MetaFile)); err != nil {
		reject(metaRel, "cannot be read: %v", err)
	} else if meta, err = studylayout.ParseMeta(b); err != nil {
		reject(metaRel, "%v", err)
	}
	wrel := ref.Rel + "/" + studylayout.WrittenDir
	var written []schemas.File
	if st, err := os.Lstat(filepath.Join(ref.Dir, studylayout.WrittenDir)); err != nil {
		reject(wrel, "is missing; the project as written goes in %s/", studylayout.WrittenDir)
	} else if !st.IsDir() {
		reject(wrel, "is not a folder")
	} else {
		var probs []fileProblem
		written, probs = readTree(filepath.Join(ref.Dir, studylayout.WrittenDir), wrel)
		for _, p := range probs {
			reject(p.Rel, "%s", p.Reason)
		}
		if len(probs) == 0 && len(written) == 0 {
			reject(wrel, "holds no files")
		}
	}
	rrel := ref.Rel + "/" + studylayout.RepairedDir
	var repaired []schemas.File
	haveRepaired := false
	if st, err := os.Lstat(filepath.Join(ref.Dir, studylayout.RepairedDir)); err == nil {
		if !st.IsDir() {
			reject(rrel, "is not a folder")
		} else {
			var probs []fileProblem
			repaired, probs = readTree(filepath.Join(ref.Dir, studylayout.RepairedDir), rrel)
			for _, p := range probs {
				reject(p.Rel, "%s", p.Reason)
			}
			haveRepaired = true
		}
	}
	// problem_statement is the card's form: a title, a blank line, the body. The body is
	// the prompt the agent got (prompt.txt); without it, the problem's description.
	statement := prob.Statement()
	if b, err := os.ReadFile(filepath.Join(ref.Dir, studylayout.PromptFile)); err == nil {
		if !utf8.Valid(b) {
			reject(ref.Rel+"/"+studylayout.PromptFile, "is not valid UTF-8; re-encode it")
		} else if s := strings.TrimRight(string(b), "\r\n"); strings.TrimSpace(s) != "" {
			statement = prob.Title + "\n\n" + s
		}
	}
	if len(rejects) > 0 {
		return nil, rejects
	}

	created, _ := time.Parse(time.RFC3339, meta.CreatedAt)
	created = created.UTC()
	// A project never repaired has no repair date: its registry_date is when the agent
	// wrote it, and registry_date_source says so (created_at, not repaired_at).
	regDate, dateSource := created, schemas.DateFromCreatedAt
	if meta.RepairedAt != "" {
		dateSource = schemas.DateFromRepairedAt
		regDate, _ = time.Parse(time.RFC3339, meta.RepairedAt)
		regDate = regDate.UTC()
	}
	base, err := BaseCommit(written, created)
	if err != nil {
		reject(wrel, "%v", err)
		return nil, rejects
	}
	agent, domain := ref.Agent, prob.Domain
	manifest, manifests := Manifests(ref.Eco, written)
	cmds := DefaultCommands(ref.Eco, manifest, meta.ResolveCommand, meta.RunCommand)
	c := &schemas.Candidate{
		Ident:       schemas.Ident{InstanceID: id},
		Set:         schemas.SourceLite,
		GeneratedBy: &agent,
		Domain:      &domain,
		MadeBy:      MadeBy,
		Spec: schemas.Spec{
			Repo: ref.Repo(), BaseCommit: base, ProjectFiles: written, ProblemStatement: statement,
			CreatedAt: created.Format(time.RFC3339), RegistryDate: regDate.Format(time.RFC3339),
			RegistryDateSource: dateSource, Ecosystem: ref.Eco, Image: ref.Eco.Image(),
			ManifestPath: manifest, ManifestPaths: manifests,
			BootstrapCommand: cmds.Bootstrap, ResolveCommand: cmds.Resolve, ReproCommand: cmds.Repro, RunCommand: cmds.Run,
		},
		Origin: schemas.Origin{IssueNumber: ref.Problem},
	}
	if sig := firstLine(meta.Error); sig != "" {
		c.FailureSignature = sig
		c.ExpectedFailureRegex = regexp.QuoteMeta(sig)
	}
	if manifest == "" {
		c.ManifestPaths = []string{}
	}
	c.Outcome, c.Reason, c.GoldFiles, c.Patch, err = decide(meta, written, repaired, haveRepaired, ref.Rel)
	if err != nil {
		reject(ref.Rel, "%v", err)
		return nil, rejects
	}
	for _, fp := range c.Validate() {
		reject(ref.Rel, "the candidate it gives is invalid: field %s: %s", fp.Field, fp.Msg)
	}
	if len(rejects) > 0 {
		return nil, rejects
	}
	return c, nil
}

// decide sets the outcome the import can decide on its own, its reason, and for a
// repair with an environment part the fix (outcome not_checked: verify decides).
func decide(m *studylayout.Meta, written, repaired []schemas.File, haveRepaired bool, rel string) (schemas.Outcome, string, []schemas.File, string, error) {
	switch {
	case !*m.MadeToWork:
		return schemas.OutcomeNotFixed, "never made to work in the study: the agent's repairs did not get it running, so there is no working environment to take a fix from", nil, "", nil
	case *m.WorkedFirstTime:
		return schemas.OutcomeAlreadyWorks, "worked first time in the study's clean container: the project as written already runs, so there is nothing to repair", nil, "", nil
	case !haveRepaired:
		return schemas.OutcomeFixNotRecorded, fmt.Sprintf("the study says it was made to work, but no repaired copy was saved (%s/%s/ is missing), so the repair cannot be rebuilt", rel, studylayout.RepairedDir), nil, "", nil
	}
	w, r := fileMap(written), fileMap(repaired)
	if sameFiles(w, r) && len(m.SystemPackages) == 0 {
		return schemas.OutcomeFixNotRecorded, "the saved repaired copy is identical to the project as written and the study recorded no system packages, so the repair cannot be rebuilt from the saved files", nil, "", nil
	}
	var notChanged []string
	for _, p := range m.RepairChanges {
		wc, inW := w[p]
		rc, inR := r[p]
		if inW == inR && wc == rc {
			notChanged = append(notChanged, p)
		}
	}
	if len(notChanged) > 0 {
		return schemas.OutcomeFixNotRecorded, fmt.Sprintf("the study's notes say the repair changed %s, but the saved repaired copy has %s as written, so the recorded repair is incomplete", strings.Join(m.RepairChanges, ", "), strings.Join(notChanged, ", ")), nil, "", nil
	}
	ex, err := Extract(written, repaired, m.SystemPackages)
	if err != nil {
		return "", "", nil, "", err
	}
	if ex.Empty() {
		return schemas.OutcomeCodeFix, fmt.Sprintf("the repair changed only source files (%s) and installed no system packages: not an environment task", strings.Join(ex.SourceLeftOut, ", ")), nil, "", nil
	}
	patch, err := Patch(written, ex.Fix)
	if err != nil {
		return "", "", nil, "", err
	}
	reason := "environment part of the repair extracted (" + ex.Describe() + "); waiting for its clean-container check (envgap verify)"
	return schemas.OutcomeNotChecked, reason, ex.Fix, patch, nil
}

func sameFiles(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// firstLine returns the first non-empty line of s, trimmed.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}
