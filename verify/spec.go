package verify

import (
	"context"
	"errors"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/schemas"
	"github.com/envgap/envgap/verify/core"
)

// TaskProject returns a task's project at base_commit: its project_files (Lite tasks) or
// the commit fetched alone by checkout (tasks from GitHub).
func TaskProject(ctx context.Context, t *schemas.Task, checkout ProjectSource) ([]core.File, error) {
	cand := schemas.Candidate{
		Ident: schemas.Ident{InstanceID: t.InstanceID},
		Set:   t.Source,
		Spec: schemas.Spec{
			Repo: t.Repo, BaseCommit: t.BaseCommit,
			ProjectFiles: t.ProjectFiles, Ecosystem: t.Ecosystem,
		},
	}
	var s Stage
	return s.project(ctx, &cand, Options{Checkout: checkout})
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

// ImageID returns the id of a card image on the stage's first engine (asked once per Run
// of the stage).
func (s *Stage) ImageID(ctx context.Context, name string) (string, error) {
	if len(s.Cores) == 0 {
		return "", errors.New("no engine")
	}
	return s.imageID(ctx, s.Cores[0], name)
}

// RunSpec runs one spec through the core, memoised as verify's runs are (stage "run",
// keyed by the spec, the image and salt): the same spec on the same image runs no
// container again, and cached says so. Specs are spread over the stage's engines.
func (s *Stage) RunSpec(ctx context.Context, spec core.Spec, salt string) (*schemas.Run, schemas.Digest, bool, error) {
	if len(s.Cores) == 0 {
		return nil, schemas.Digest{}, false, errors.New("no engine")
	}
	cr := s.Cores[int(s.nextCore.Add(1)-1)%len(s.Cores)]
	image := spec.Recipe.Image
	if image == "" {
		image = spec.Recipe.Ecosystem.Image()
	}
	imageID, err := s.imageID(ctx, cr, image)
	if err != nil {
		return nil, schemas.Digest{}, false, &core.InfraError{Err: err}
	}
	var cached bool
	r, d, err := s.runCached(ctx, cr, spec, imageID, salt, 0, &cached)
	return r, d, cached, err
}

// RunFailure says in words why a run did not resolve: the step that failed, how, and the
// line of its output that identifies the failure.
func RunFailure(st data.ObjectReader, eco schemas.Ecosystem, r *schemas.Run) string {
	return whyNot(st, eco, r)
}

// OpenBox opens an agent's box on one of the stage's cores (spread as RunSpec does).
func (s *Stage) OpenBox(ctx context.Context, spec core.BoxSpec) (*core.Box, error) {
	if len(s.Cores) == 0 {
		return nil, errors.New("verify: no core")
	}
	cr := s.Cores[int(s.nextCore.Add(1)-1)%len(s.Cores)]
	return cr.OpenBox(ctx, spec)
}
