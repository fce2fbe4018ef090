package verify

import (
	"context"
	"errors"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/schemas"
)

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

// OpenBox opens an agent's box on one of the stage's cores (spread as RunSpec does).
func (s *Stage) OpenBox(ctx context.Context, spec core.BoxSpec) (*core.Box, error) {
	if len(s.Cores) == 0 {
		return nil, errors.New("verify: no core")
	}
	cr := s.Cores[int(s.nextCore.Add(1)-1)%len(s.Cores)]
	return cr.OpenBox(ctx, spec)
}

// CheckAgentImage checks on every engine of the stage that an agent image is there and
// built on a card image (core.CheckAgentImage).
func (s *Stage) CheckAgentImage(ctx context.Context, agentRef, cardImage string) error {
	if len(s.Cores) == 0 {
		return errors.New("verify: no core")
	}
	for _, cr := range s.Cores {
		if err := cr.CheckAgentImage(ctx, agentRef, cardImage); err != nil {
			return err
		}
	}
	return nil
}
