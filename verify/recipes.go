package verify

import (
	"testing/fstest"

	"github.com/envgap/envgap/schemas"
	"github.com/envgap/envgap/verify/core"
	"github.com/envgap/envgap/verify/recipe"
)

// DefaultRecipe is the default recipe generator (package verify/recipe) over a project's
// files: the RecipeSource verify uses when none is given.
func DefaultRecipe(c *schemas.Candidate, project []core.File) (schemas.Recipe, error) {
	fsys := fstest.MapFS{}
	for _, f := range project {
		if f.Link == "" {
			fsys[f.Path] = &fstest.MapFile{Data: f.Content, Mode: 0o644}
		}
	}
	return recipe.Default(c.Ecosystem, fsys, recipe.Options{Workdir: "/work"})
}
