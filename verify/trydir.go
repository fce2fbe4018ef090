package verify

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/schemas"
)

// DirOptions describe an ad-hoc run of a directory (envgap try --dir).
type DirOptions struct {
	Dir       string
	Ecosystem schemas.Ecosystem
	Recipe    schemas.Recipe // commands given on the command line; missing ones are generated
	Cutoff    schemas.Cutoff // the registry cut-off; zero: now
	Side      core.Side      // before (repro) or after (run, traced)
	Options
}

// ReadDir reads a project directory as core files (core.ReadDir).
func ReadDir(dir string) ([]core.File, error) { return core.ReadDir(dir) }

// TryDir runs a recipe's steps in the ecosystem's image on a directory, once.
func (s *Stage) TryDir(ctx context.Context, o DirOptions) (*schemas.Run, error) {
	if err := o.Ecosystem.Valid(); err != nil {
		return nil, fmt.Errorf("--ecosystem: %w", err)
	}
	project, err := ReadDir(o.Dir)
	if err != nil {
		return nil, err
	}
	name := strings.Trim(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '-'
	}, filepath.Base(filepath.Clean(o.Dir))), "-")
	c := &schemas.Candidate{Ident: schemas.Ident{InstanceID: "dir:" + name}, Spec: schemas.Spec{Ecosystem: o.Ecosystem}}
	r := o.Recipe
	c.BootstrapCommand, c.ResolveCommand, c.ReproCommand, c.RunCommand = r.BootstrapCommand, r.ResolveCommand, r.ReproCommand, r.RunCommand
	c.ExpectedFailureRegex = r.ExpectedFailureRegex
	recipe, err := RecipeFor(c, project, o.Recipes)
	if err != nil {
		return nil, err
	}
	cutoff := o.Cutoff
	if cutoff.IsZero() {
		cutoff = schemas.CutoffAt(time.Now().Truncate(time.Second))
	}
	side := o.Side
	if side == "" {
		side = core.SideBefore
	}
	if len(s.Cores) == 0 {
		return nil, errors.New("try: no engine")
	}
	run, _, err := s.Cores[0].Run(ctx, core.Spec{InstanceID: c.InstanceID, Side: side, Project: project, Recipe: recipe, Cutoff: cutoff, Limits: o.Limits})
	return run, err
}
