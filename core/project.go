package core

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/envgap/envgap/schemas"
)

// ProjectSource materialises a GitHub project at its base commit, without the later
// history (the crawl provides it; cmd wires it in).
type ProjectSource func(ctx context.Context, repo, commit string) ([]File, error)

// SpecRunner runs specs through the core, memoised (verify.Stage is one): ImageID names the
// image a recipe runs on; RunSpec runs one spec (salt keeps runs of different purposes
// apart in the memo) and says whether the answer came from the memo.
type SpecRunner interface {
	ImageID(ctx context.Context, name string) (string, error)
	RunSpec(ctx context.Context, spec Spec, salt string) (*schemas.Run, schemas.Digest, bool, error)
}

// CandidateProject returns a candidate's files at base_commit: its project_files (Lite
// candidates, and any candidate that carries them) or the commit fetched alone by
// checkout (an *InfraError when the fetch fails).
func CandidateProject(ctx context.Context, c *schemas.Candidate, checkout ProjectSource) ([]File, error) {
	if c.Set == schemas.SourceLite || len(c.ProjectFiles) > 0 {
		files := make([]File, 0, len(c.ProjectFiles))
		for _, f := range c.ProjectFiles {
			if f.Content == nil {
				continue
			}
			mode := 0o644
			if strings.HasSuffix(f.Path, ".sh") {
				mode = 0o755
			}
			files = append(files, File{Path: f.Path, Content: []byte(*f.Content), Mode: os.FileMode(mode)})
		}
		return files, nil
	}
	if checkout == nil {
		return nil, fmt.Errorf("%s: no way to fetch %s at %s (no checkout configured)", c.InstanceID, c.Repo, c.BaseCommit)
	}
	files, err := checkout(ctx, c.Repo, c.BaseCommit)
	if err != nil {
		return nil, &InfraError{Err: fmt.Errorf("%s: fetching %s at %s: %w", c.InstanceID, c.Repo, c.BaseCommit, err)}
	}
	return files, nil
}

// TaskProject returns a task's project at base_commit: its project_files (Lite tasks) or
// the commit fetched alone by checkout (tasks from GitHub).
func TaskProject(ctx context.Context, t *schemas.Task, checkout ProjectSource) ([]File, error) {
	cand := schemas.Candidate{
		Ident: schemas.Ident{InstanceID: t.InstanceID},
		Set:   t.Source,
		Spec: schemas.Spec{
			Repo: t.Repo, BaseCommit: t.BaseCommit,
			ProjectFiles: t.ProjectFiles, Ecosystem: t.Ecosystem,
		},
	}
	return CandidateProject(ctx, &cand, checkout)
}

// TaskRecipe returns the recipe of a task row (tasks carry every command).
func TaskRecipe(t *schemas.Task) schemas.Recipe {
	r := schemas.Recipe{Ecosystem: t.Ecosystem, Image: t.Image, BootstrapCommand: t.BootstrapCommand,
		ResolveCommand: t.ResolveCommand, ReproCommand: t.ReproCommand, RunCommand: t.RunCommand,
		D2Command: t.D2Command, ExpectedFailureRegex: t.ExpectedFailureRegex}
	if r.Image == "" {
		r.Image = t.Ecosystem.Image()
	}
	return r
}
