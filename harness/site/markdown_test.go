package site

import (
	"regexp"
	"strings"
	"testing"
)

// hostileMarkdown carries the payloads a problem statement from GitHub may hold.
const hostileMarkdown = "# Crash <script>window.__pwned=1</script>\n\n" +
	"<img src=x onerror=\"window.__pwned=2\">\n\n" +
	"Click [here](javascript:window.__pwned=3) or [there](https://github.com/a/b/issues/1).\n\n" +
	"![logo](https://example.invalid/logo.png) and <a href=\"javascript:alert(1)\">raw</a>\n\n" +
	"<iframe src=\"https://example.invalid/\"></iframe>\n\n" +
	"```\n<script>alert(4)</script>\n```\n"

var (
	tagRE  = regexp.MustCompile(`<([a-zA-Z][a-zA-Z0-9]*)([^>]*)>`)
	attrRE = regexp.MustCompile(`([a-zA-Z-]+)="([^"]*)"`)
)

func TestMarkdownRunsAndLoadsNothing(t *testing.T) {
	out, err := Markdown(hostileMarkdown)
	if err != nil {
		t.Fatal(err)
	}
	// Every tag left is a harmless one with harmless attributes.
	allowed := map[string]bool{"h1": true, "p": true, "pre": true, "code": true, "a": true}
	for _, m := range tagRE.FindAllStringSubmatch(out, -1) {
		if !allowed[strings.ToLower(m[1])] {
			t.Errorf("rendered Markdown holds a <%s> tag:\n%s", m[1], out)
		}
		for _, a := range attrRE.FindAllStringSubmatch(m[2], -1) {
			if a[1] != "href" && a[1] != "rel" && a[1] != "class" || strings.Contains(strings.ToLower(a[2]), "javascript") {
				t.Errorf("rendered Markdown holds attribute %s=%q:\n%s", a[1], a[2], out)
			}
		}
	}
	// What was HTML is shown as text, and the plain link stays a link.
	for _, want := range []string{"&lt;script&gt;window.__pwned=1&lt;/script&gt;", "onerror=&#34;window.__pwned=2&#34;",
		"&lt;iframe", "[image: logo (https://example.invalid/logo.png)]",
		`<a href="https://github.com/a/b/issues/1" rel="nofollow noreferrer">there</a>`, "here"} {
		if !strings.Contains(out, want) {
			t.Errorf("rendered Markdown lacks %q:\n%s", want, out)
		}
	}
}

func TestDiffHighlightsWithClasses(t *testing.T) {
	out, err := Diff("--- a/setup.py\n+++ b/setup.py\n@@ -1 +1 @@\n-numpy\n+numpy<2 # <script>alert(1)</script>\n")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "<script") || strings.Contains(out, "style=") {
		t.Errorf("highlighted diff holds markup from the patch or inline style:\n%s", out)
	}
	if !strings.Contains(out, `class="gi"`) || !strings.Contains(out, `class="gd"`) || !strings.Contains(out, "&lt;script&gt;") {
		t.Errorf("diff not highlighted by class, or the payload not escaped:\n%s", out)
	}
}
