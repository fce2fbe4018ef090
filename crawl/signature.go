package crawl

import (
	"regexp"
	"strings"

	"github.com/envgap/envgap/schemas"
)

// Issue-specific heuristics on top of schemas.FailureSignature, which recognises the
// messages the tools print. Issue text is not tool output: templates carry example
// errors in HTML comments, and a line that only says a build failed ("ERROR: ...",
// "CMake Error at ...") is not evidence of an environment failure on its own.

// htmlCommentRe matches HTML comments, where issue templates keep their hints.
var htmlCommentRe = regexp.MustCompile(`(?s)<!--.*?-->`)

// genericRes match the generic parts of error lines. A signature line is accepted only
// if it is still recognised once its generic part is removed.
var genericRes = []*regexp.Regexp{
	regexp.MustCompile(`^ERROR:\s*`),
	regexp.MustCompile(`CMake Error at \S+(?: \([^)]*\))?:?\s*`),
	regexp.MustCompile(`CMake Error:\s*`),
	regexp.MustCompile(`\[ERROR\] Failed to execute goal\s*`),
	regexp.MustCompile(`\[ERROR\]\s*`),
	regexp.MustCompile(`cannot find symbol`),
}

// IssueText is the text of an issue that signatures are looked for in: the title and the
// body without HTML comments.
func IssueText(title, body string) string {
	return title + "\n" + htmlCommentRe.ReplaceAllString(body, "")
}

// IssueSignature returns the line of an issue's text that identifies an environment
// failure of the ecosystem (empty ecosystem: any), with the pattern for it, or ok false.
// See schemas.FailureSignature and schemas.FailureRegex; a line recognised only by a
// generic error prefix does not count.
func IssueSignature(eco schemas.Ecosystem, text string) (line, regex string, ok bool) {
	line, ok = schemas.FailureSignature(eco, text)
	if !ok || isGenericOnly(eco, line) {
		return "", "", false
	}
	regex = schemas.FailureRegex(line)
	re, err := schemas.CompileFailureRegex(regex)
	if err != nil || !re.MatchString(line) {
		// The pattern must at least find the line it was written from.
		return "", "", false
	}
	return line, regex, true
}

// IssueFailure returns an issue's failure line and pattern (IssueSignature), looked for in
// the body first and in the title only when the body has none. The pattern is matched
// against the tool's output in the container, which the body quotes; a title that quotes an
// error usually wraps it in words of its own ("Crash on start: Cannot find module 'x'")
// that no output contains.
func IssueFailure(eco schemas.Ecosystem, title, body string) (line, regex string, ok bool) {
	if line, regex, ok = IssueSignature(eco, IssueText("", body)); ok {
		return line, regex, true
	}
	return IssueSignature(eco, IssueText(title, ""))
}

func isGenericOnly(eco schemas.Ecosystem, line string) bool {
	for _, g := range genericRes {
		loc := g.FindStringIndex(line)
		if loc == nil {
			continue
		}
		rest := strings.TrimSpace(line[:loc[0]] + " " + line[loc[1]:])
		if rest == "" {
			return true
		}
		if _, ok := schemas.FailureSignature(eco, rest); !ok {
			return true
		}
	}
	return false
}
