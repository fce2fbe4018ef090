// Package scoring holds the text that says how runs are scored: resolved, manifest F1 and
// safe install, controls, the first attempt and the later-history rule, excluded tasks.
// The dataset card (export) and the website (harness/site) both include it, so the card
// and the site say the same thing in the same words.
package scoring

import (
	_ "embed"
	"strings"
	"text/template"
)

// Text is scoring.md.tmpl: text/template defines, one Markdown paragraph each.
//
//go:embed scoring.md.tmpl
var Text string

// Paragraphs are the names of the defines in Text, in the order the site shows them.
var Paragraphs = []string{"scoring-resolved", "scoring-controls", "scoring-first-attempt", "scoring-excluded"}

// AddTo parses Text into t, so t's text can include the paragraphs by name
// ({{template "scoring-resolved"}}).
func AddTo(t *template.Template) (*template.Template, error) {
	if _, err := t.New("scoring.md.tmpl").Parse(Text); err != nil {
		return nil, err
	}
	return t, nil
}

// Paragraph renders one define of Text.
func Paragraph(name string) (string, error) {
	t, err := template.New("scoring").Parse(Text)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, name, nil); err != nil {
		return "", err
	}
	return b.String(), nil
}
