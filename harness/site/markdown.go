package site

import (
	"bytes"
	"html"
	"strings"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// textHTML renders what goldmark would pass through or load as plain text: raw HTML
// (inline and blocks) is shown as the characters it was written with, and an image is
// shown as its description and address, never loaded (a page loads nothing from outside).
type textHTML struct{}

func (textHTML) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindRawHTML, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			segs := n.(*ast.RawHTML).Segments
			for i := 0; i < segs.Len(); i++ {
				s := segs.At(i)
				_, _ = w.WriteString(html.EscapeString(string(s.Value(src))))
			}
		}
		return ast.WalkSkipChildren, nil
	})
	reg.Register(ast.KindHTMLBlock, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			b := n.(*ast.HTMLBlock)
			var text strings.Builder
			for i := 0; i < b.Lines().Len(); i++ {
				s := b.Lines().At(i)
				text.Write(s.Value(src))
			}
			if b.HasClosure() {
				text.Write(b.ClosureLine.Value(src))
			}
			_, _ = w.WriteString("<pre class=\"raw\">" + html.EscapeString(text.String()) + "</pre>\n")
		}
		return ast.WalkSkipChildren, nil
	})
	reg.Register(ast.KindImage, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			img := n.(*ast.Image)
			var alt bytes.Buffer
			for c := img.FirstChild(); c != nil; c = c.NextSibling() {
				if t, ok := c.(*ast.Text); ok {
					alt.Write(t.Segment.Value(src))
				}
			}
			_, _ = w.WriteString(html.EscapeString("[image: " + alt.String() + " (" + string(img.Destination) + ")]"))
		}
		return ast.WalkSkipChildren, nil
	})
}

var markdown = goldmark.New(
	goldmark.WithExtensions(extension.Table, extension.Strikethrough),
	goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(textHTML{}, 0))),
)

// policy is what a rendered problem statement may keep: text formatting, lists, tables,
// code, and links to http, https and mailto addresses (no images, no attributes beyond
// href, no script, no style).
var policy = func() *bluemonday.Policy {
	p := bluemonday.NewPolicy()
	p.AllowElements("p", "br", "hr", "em", "strong", "del", "code", "pre", "blockquote",
		"ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6",
		"table", "thead", "tbody", "tr", "th", "td")
	p.AllowAttrs("class").Matching(bluemonday.SpaceSeparatedTokens).OnElements("pre", "code")
	p.AllowAttrs("href").OnElements("a")
	p.AllowURLSchemes("http", "https", "mailto")
	p.RequireParseableURLs(true)
	p.AllowRelativeURLs(false)
	p.RequireNoFollowOnLinks(true)
	p.RequireNoReferrerOnLinks(true)
	return p
}()

// Markdown renders hostile Markdown to HTML that runs nothing and loads nothing.
func Markdown(src string) (string, error) {
	var b bytes.Buffer
	if err := markdown.Convert([]byte(src), &b); err != nil {
		return "", err
	}
	return policy.Sanitize(b.String()), nil
}

// maxHighlight bounds the patch that is highlighted; a longer one is shown as plain text.
const maxHighlight = 256 << 10

var diffFormatter = chromahtml.New(chromahtml.WithClasses(true), chromahtml.TabWidth(4))

// chromaStyle is the highlighting style; its CSS is assets/chroma.css.
var chromaStyle = styles.Get("github")

// Diff renders a unified diff as highlighted HTML (CSS classes, no inline style).
func Diff(patch string) (string, error) {
	if len(patch) > maxHighlight {
		return "<pre class=\"chroma\">" + html.EscapeString(patch) + "</pre>", nil
	}
	lex := lexers.Get("diff")
	if lex == nil {
		lex = lexers.Fallback
	}
	it, err := chroma.Coalesce(lex).Tokenise(nil, patch)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := diffFormatter.Format(&b, chromaStyle, it); err != nil {
		return "", err
	}
	return b.String(), nil
}

// chromaCSS is the stylesheet of the highlighted diffs.
func chromaCSS() (string, error) {
	var b bytes.Buffer
	if err := diffFormatter.WriteCSS(&b, chromaStyle); err != nil {
		return "", err
	}
	return b.String(), nil
}
