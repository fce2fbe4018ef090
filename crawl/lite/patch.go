package lite

import (
	"fmt"
	"sort"
	"time"

	"github.com/envgap/envgap/crawl/gitfetch"
	"github.com/envgap/envgap/schemas"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

// Overlay applies a fix (content nil: delete) to a project's files and returns the result
// sorted by path.
func Overlay(project, fix []schemas.File) []schemas.File {
	m := make(map[string]*string, len(project)+len(fix))
	for _, f := range project {
		m[f.Path] = f.Content
	}
	for _, f := range fix {
		if f.Content == nil {
			delete(m, f.Path)
		} else {
			m[f.Path] = f.Content
		}
	}
	out := make([]schemas.File, 0, len(m))
	for p, c := range m {
		out = append(out, schemas.File{Path: p, Content: c})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Patch returns a fix as a unified diff in the card's form (gitfetch.PatchText: diff --git
// headers, no index lines, bare hunk headers, three lines of context) against the project as written; `git apply` applies it to a checkout
// of the base commit. An empty fix gives "".
func Patch(project, fix []schemas.File) (string, error) {
	if len(fix) == 0 {
		return "", nil
	}
	// The commit time does not affect the diff; any fixed instant works.
	when := time.Unix(0, 0).UTC()
	st := memory.NewStorage()
	from, err := writeCommit(st, project, when)
	if err != nil {
		return "", fmt.Errorf("patch: %w", err)
	}
	to, err := writeCommit(st, Overlay(project, fix), when)
	if err != nil {
		return "", fmt.Errorf("patch: %w", err)
	}
	fc, err := object.GetCommit(st, from)
	if err != nil {
		return "", fmt.Errorf("patch: %w", err)
	}
	tc, err := object.GetCommit(st, to)
	if err != nil {
		return "", fmt.Errorf("patch: %w", err)
	}
	p, err := fc.Patch(tc)
	if err != nil {
		return "", fmt.Errorf("patch: %w", err)
	}
	return gitfetch.PatchText(p), nil
}
