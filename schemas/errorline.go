package schemas

import (
	"regexp"
	"strings"
)

// The generic error lines of each ecosystem's tools, for output that holds no recognised
// environment failure (FailureSignature): the line a person reading the log would quote.
// A rule's line is the first of the text that matches it, or the last when last is set
// (a Python traceback ends with the exception it reports; chained tracebacks end with
// the one that stopped the program).
type errRule struct {
	ecos   []Ecosystem // nil: every ecosystem
	re     *regexp.Regexp
	weight int
	last   bool
	// next: the identifying text is on the next non-blank line ("CMake Error at
	// CMakeLists.txt:5 (message):" then the message, indented).
	next bool
}

var errRules = []errRule{
	// Python: the exception line that ends a traceback ("AttributeError: module
	// 'collections' has no attribute 'Mapping'", "pkg.errors.BuildError: ...").
	{ecoPy, regexp.MustCompile(`^(?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Za-z_][A-Za-z0-9_]*(?:Error|Exception|Warning|Exit|Interrupt|Failure)(?:: .*)?$`), 30, true, false},
	// Node.js: the thrown error, above its stack ("Error [ERR_PACKAGE_PATH_NOT_EXPORTED]:
	// Package subpath ...", "TypeError: program.name is not a function").
	{ecoJS, regexp.MustCompile(`^(?:[A-Za-z_$][A-Za-z0-9_$]*)?Error(?: \[[A-Z0-9_]+\])?: `), 30, false, false},
	{ecoJS, regexp.MustCompile(`^npm (?:ERR!|error) `), 15, false, false},
	// Java: an uncaught exception, Maven's first error.
	{ecoJava, regexp.MustCompile(`^Exception in thread "[^"]*" |^(?:[a-z][a-z0-9_]*\.)+[A-Z][A-Za-z0-9_$]*(?:Exception|Error)(?:: .*)?$`), 30, false, false},
	{ecoJava, regexp.MustCompile(`^\[ERROR\] \S`), 15, false, false},
	// CMake: the message of the first error.
	{ecoCPP, regexp.MustCompile(`^CMake Error(?: at [^:]+(?::\d+)?(?: \([^)]*\))?)?:$`), 30, false, true},
	{ecoCPP, regexp.MustCompile(`^CMake Error`), 20, false, false},
	{ecoNative, regexp.MustCompile(`: (?:fatal )?error: `), 25, false, false},
	// Any tool: a line that says error.
	{nil, regexp.MustCompile(`(?i)^(?:error|fatal)\b|\berror:`), 10, false, false},
}

// trailerRe matches the lines tools print after the error, which never identify it:
// version banners, pointers to logs and help pages, stack frames, blank markers.
var trailerRe = regexp.MustCompile(`^(?:` + strings.Join([]string{
	`Node\.js v\d`,
	`npm (?:ERR!|error)\s*$`,
	`npm (?:ERR!|error) (?:A complete log of this run can be found in|Log files were not written|You can rerun the command with)`,
	`\[ERROR\]\s*$`,
	`\[ERROR\] (?:To see the full stack trace|Re-run Maven using|For more information about the errors|\[Help \d+\]|-> \[Help \d+\])`,
	`-- Configuring incomplete, errors occurred!`,
	`See also "`,
	`Call Stack \(most recent call first\):`,
	`note: This error originates from a subprocess`,
	`hint: See above for`,
	`\[end of output\]`,
	`at \S`,
	`\^+$`,
	`[{}]$`,
	`code: '[A-Z0-9_]+'`,
	`throw \w+;`,
	`node:internal/\S+:\d+$`,
	`Traceback \(most recent call last\):`,
	`During handling of the above exception`,
	`The above exception was the direct cause`,
}, "|") + `)`)

// ErrorLine returns the line of a failing step's output that identifies the failure:
// the FailureSignature line when the output holds a recognised environment failure;
// otherwise the error line of the ecosystem's tools (the exception that ends a Python
// traceback, the error Node.js throws above its stack, Maven's first [ERROR], the
// message of a CMake error); otherwise the last line that is not a trailer (Node's
// version banner, npm's and Maven's pointers to logs and help, stack frames). It is
// cleaned and capped like FailureSignature's; ok is false only for output with no line.
func ErrorLine(eco Ecosystem, text string) (line string, ok bool) {
	sig, sigOK := FailureSignature(eco, text)
	if sigOK && lineWeight(eco, sig) > maxGenericWeight {
		return sig, true
	}
	known := eco.Valid() == nil
	lines := splitLines(text)
	best, bestWeight, lastPlain := "", 0, ""
	if sigOK {
		// A generic recognised line ("[ERROR] Failed to execute goal ...") stands unless
		// the ecosystem's own error line says more.
		best, bestWeight = sig, sigGenericRank
	}
	for i, l := range lines {
		if l == "" || trailerRe.MatchString(l) {
			continue
		}
		lastPlain = l
		var rule *errRule
		for j := range errRules {
			r := &errRules[j]
			if (known && r.ecos != nil && !hasEco(r.ecos, eco)) || (rule != nil && r.weight <= rule.weight) {
				continue
			}
			if r.re.MatchString(l) {
				rule = r
			}
		}
		if rule == nil || rule.weight < bestWeight || (rule.weight == bestWeight && !rule.last) {
			continue
		}
		pick := l
		if rule.next {
			for _, n := range lines[i+1:] {
				if n != "" {
					if !trailerRe.MatchString(n) {
						pick = n
					}
					break
				}
			}
		}
		best, bestWeight = pick, rule.weight
	}
	if best == "" {
		best = lastPlain
	}
	if best == "" {
		return "", false
	}
	return capLine(best), true
}

// maxGenericWeight is the highest sigRules weight of a rule that names a kind of failure
// without saying what failed ("CMake Error at ...:", "[ERROR] Failed to execute goal",
// "ERROR: ..."); sigGenericRank is where such a line stands among errRules: below an
// exception, a thrown error or a CMake message, above a bare "[ERROR]" or "error" line.
const (
	maxGenericWeight = 40
	sigGenericRank   = 28
)

// lineWeight is the weight of one cleaned line under sigRules.
func lineWeight(eco Ecosystem, l string) int {
	known := eco.Valid() == nil
	w := 0
	for _, r := range sigRules {
		if r.weight <= w || (known && r.ecos != nil && !hasEco(r.ecos, eco)) {
			continue
		}
		if r.re.MatchString(l) {
			w = r.weight
		}
	}
	return w
}

// splitLines splits output into cleaned lines (blank ones kept, as ""), at \n and \r.
func splitLines(text string) []string {
	raw := strings.FieldsFunc(text, func(r rune) bool { return r == '\n' })
	out := make([]string, 0, len(raw))
	for _, l := range raw {
		// A carriage return redraws the line: the last part is what shows.
		if i := strings.LastIndexByte(strings.TrimRight(l, "\r"), '\r'); i >= 0 {
			l = l[i+1:]
		}
		out = append(out, cleanLine(l))
	}
	return out
}

// MatchedLine returns the line of text where re's first match starts, cleaned and capped
// like FailureSignature's, and whether re matches at all: with expected_failure_regex
// given, this is the failure's signature line.
func MatchedLine(re *regexp.Regexp, text string) (string, bool) {
	loc := re.FindStringIndex(text)
	if loc == nil {
		return "", false
	}
	// A match that starts with line breaks starts on the line after them.
	for loc[0] < loc[1] && (text[loc[0]] == '\n' || text[loc[0]] == '\r') {
		loc[0]++
	}
	start := strings.LastIndexAny(text[:loc[0]], "\n\r") + 1
	end := len(text)
	if i := strings.IndexAny(text[loc[0]:], "\n\r"); i >= 0 {
		end = loc[0] + i
	}
	return capLine(cleanLine(text[start:end])), true
}
