package verify

import (
	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/core/recipe"
	"github.com/envgap/envgap/schemas"
)

// DefaultRecipe is the default recipe generator (package core/recipe) over a project's
// files: the RecipeSource verify uses when none is given.
func DefaultRecipe(c *schemas.Candidate, project []core.File) (schemas.Recipe, error) {
	return recipe.Default(c.Ecosystem, core.FS(project), recipe.Options{Workdir: "/work"})
}
