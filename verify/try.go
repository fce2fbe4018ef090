package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/schemas"
)

// TryOptions configures one run of one candidate for people (envgap try).
type TryOptions struct {
	Options
	// Fix is "none" (the project as it is: the before side), "gold" (the candidate's
	// reference fix) or the path of a prediction file ({"files": {path: content|null}}).
	Fix string
}

// Try runs one candidate once through the core, uncached, and returns the run record.
func (s *Stage) Try(ctx context.Context, id string, opts TryOptions) (*schemas.Run, error) {
	c, err := s.Store.CandidateByID(id)
	if err != nil {
		return nil, err
	}
	project, err := s.project(ctx, &c.Candidate, opts.Options)
	if err != nil {
		return nil, err
	}
	recipe, err := RecipeFor(&c.Candidate, project, opts.Recipes)
	if err != nil {
		return nil, err
	}
	cutoff, err := c.Cutoff()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", id, err)
	}
	spec := core.Spec{InstanceID: id, Project: project, Recipe: recipe, Cutoff: cutoff, Limits: opts.Limits}
	switch opts.Fix {
	case "", "none":
		spec.Side = core.SideBefore
	case "gold":
		spec.Side, spec.Overlay = core.SideAfter, c.GoldFiles
	default:
		overlay, err := ReadPredictionFiles(opts.Fix, id)
		if err != nil {
			return nil, err
		}
		spec.Side, spec.Overlay = core.SidePrediction, overlay
	}
	if len(s.Cores) == 0 {
		return nil, errors.New("try: no engine")
	}
	r, _, err := s.Cores[0].Run(ctx, spec)
	return r, err
}

// ReadPredictionFiles reads the files of a prediction: a JSON object with "files"
// ({path: content or null}), or a predictions JSON Lines file from which the line for id is
// taken (schemas.ReadPrediction). Paths are checked by the core before anything runs.
func ReadPredictionFiles(path, id string) ([]schemas.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("prediction: %w", err)
	}
	defer f.Close()
	p, err := schemas.ReadPrediction(f, path, id)
	if err != nil {
		return nil, err
	}
	return p.Overlay(), nil
}

// PrintRun writes every step of a run with its captured output, for people.
func (s *Stage) PrintRun(w io.Writer, r *schemas.Run) error {
	fmt.Fprintf(w, "%s  side %s  image %s (%s)  registry cut-off %s\n", r.InstanceID, r.Side, r.Image, shortImage(r.ImageID), r.RegistryDate)
	if err := core.PrintSteps(w, s.Store, r.Steps); err != nil {
		return err
	}
	if _, err := io.WriteString(w, core.RefusedText(r)); err != nil {
		return err
	}
	if r.Side == string(core.SideBefore) {
		fmt.Fprintf(w, "\nexpected failure matched: %v", r.FailureMatched)
		if r.MatchedStep != "" {
			fmt.Fprintf(w, " (step %s)", r.MatchedStep)
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintf(w, "\nresolved (resolve and run exited 0): %v\n", r.Resolved)
	}
	return nil
}

func shortImage(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
