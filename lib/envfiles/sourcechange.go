package envfiles

import (
	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/schemas"
)

// SourceChange returns the first path of the overlay that is not an environment file,
// or "". A new path whose content is an unchanged copy of one of the project's files is
// allowed (a source placed where the build tool expects it, as Lite fixes do); changing
// or deleting a source is not.
func SourceChange(project []core.File, ov []schemas.File) string {
	var contents map[string]bool
	existing := map[string]bool{}
	for _, f := range project {
		existing[f.Path] = true
	}
	for _, f := range ov {
		if ClassifyPath(f.Path).IsEnv() {
			continue
		}
		if f.Content != nil && !existing[f.Path] {
			if contents == nil {
				contents = map[string]bool{}
				for _, pf := range project {
					if pf.Link == "" {
						contents[string(pf.Content)] = true
					}
				}
			}
			if contents[*f.Content] {
				continue
			}
		}
		return f.Path
	}
	return ""
}
