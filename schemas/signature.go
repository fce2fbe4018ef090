package schemas

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// MaxSignatureLen caps the length in bytes of a failure signature line.
const MaxSignatureLen = 300

// sigRule recognises one kind of environment-failure line. A line's weight is the highest
// weight of the rules that match it; the heaviest line of a text is its signature, the
// first one on ties (the first report of a failure is usually its cause).
type sigRule struct {
	ecos   []Ecosystem // nil: every ecosystem
	re     *regexp.Regexp
	weight int
}

var (
	ecoPy   = []Ecosystem{EcosystemPython}
	ecoJS   = []Ecosystem{EcosystemJavaScript}
	ecoJava = []Ecosystem{EcosystemJava}
	ecoCPP  = []Ecosystem{EcosystemCPP}
	// ecoNative are the ecosystems whose installs compile C/C++ (sdists, node-gyp, CMake).
	ecoNative = []Ecosystem{EcosystemPython, EcosystemJavaScript, EcosystemCPP}
)

// sigRules are the messages the real tools print. They are read-only after package
// initialisation.
var sigRules = []sigRule{
	// Any ecosystem: a shared library missing at run time.
	{nil, regexp.MustCompile(`error while loading shared libraries: |cannot open shared object file`), 90},

	// C/C++ compilers, used by every native build.
	{ecoNative, regexp.MustCompile(`fatal error: \S+: No such file or directory`), 95},
	{ecoNative, regexp.MustCompile(`cannot find -l\S+`), 90},
	{ecoNative, regexp.MustCompile(`undefined reference to `), 70},
	{ecoNative, regexp.MustCompile(`error: command '[^']*' failed|command '[^']*' failed with exit`), 45},

	// pip, setuptools, build.
	{ecoPy, regexp.MustCompile(`ModuleNotFoundError: No module named `), 100},
	{ecoPy, regexp.MustCompile(`(?:^|: )No module named `), 96},
	{ecoPy, regexp.MustCompile(`Could not find a version that satisfies the requirement`), 92},
	{ecoPy, regexp.MustCompile(`No matching distribution found for`), 90},
	{ecoPy, regexp.MustCompile(`ResolutionImpossible|these package versions have conflicting dependencies|Cannot install .* because these package versions`), 88},
	{ecoPy, regexp.MustCompile(`requires a different Python`), 86},
	{ecoPy, regexp.MustCompile(`DistributionNotFound|VersionConflict`), 86},
	{ecoPy, regexp.MustCompile(`\bImportError: `), 80},
	{ecoPy, regexp.MustCompile(`Failed building wheel for|Failed to build `), 70},
	{ecoPy, regexp.MustCompile(`error: subprocess-exited-with-error`), 60},
	{ecoPy, regexp.MustCompile(`error: metadata-generation-failed|error: legacy-install-failure|Could not build wheels for|externally-managed-environment`), 55},
	// python -m build (pypa/build) without isolation: "ERROR Missing dependencies:", the
	// unmet requirements on the lines after it.
	{ecoPy, regexp.MustCompile(`^ERROR Missing dependencies:?$`), 84},
	{ecoPy, regexp.MustCompile(`^ERROR Backend subprocess exited when trying to invoke `), 50},
	{ecoPy, regexp.MustCompile(`^ERROR: `), 20},

	// npm and node.
	{ecoJS, regexp.MustCompile(`Cannot find module |Cannot find package |ERR_MODULE_NOT_FOUND`), 100},
	{ecoJS, regexp.MustCompile(`ERR_REQUIRE_ESM`), 95},
	// A subpath the installed version no longer exports (require('uuid/v4') on uuid 7+).
	{ecoJS, regexp.MustCompile(`ERR_PACKAGE_PATH_NOT_EXPORTED\]?: |Package subpath '[^']*' is not defined by "exports"`), 90},
	{ecoJS, regexp.MustCompile(`^npm (?:ERR!|error) notarget No matching version found for|^npm (?:ERR!|error) 404 .* is not in (?:this|the npm) registry`), 92},
	{ecoJS, regexp.MustCompile(`^npm (?:ERR!|error) code (?:ERESOLVE|ETARGET|E404|EBADENGINE|EINTEGRITY|ENOVERSIONS)\b`), 85},
	{ecoJS, regexp.MustCompile(`Unsupported engine|not compatible with your version of node`), 78},
	{ecoJS, regexp.MustCompile(`gyp ERR! stack Error: `), 75},
	{ecoJS, regexp.MustCompile(`gyp ERR! `), 70},
	{ecoJS, regexp.MustCompile(`Cannot use import statement outside a module|require is not defined in ES module scope`), 70},

	// Maven and javac.
	{ecoJava, regexp.MustCompile(`release version \d+ not supported|invalid target release: |invalid source release: |Source option \d+ is no longer supported|Target option \d+ is no longer supported`), 92},
	{ecoJava, regexp.MustCompile(`UnsupportedClassVersionError|compiled by a more recent version of the Java Runtime`), 92},
	{ecoJava, regexp.MustCompile(`package \S+ does not exist`), 90},
	{ecoJava, regexp.MustCompile(`Could not find artifact |Could not resolve dependencies|Non-resolvable parent POM|Non-resolvable import POM|Could not transfer artifact |Failure to find |or one of its dependencies could not be resolved|was not found in .* during a previous attempt`), 86},
	{ecoJava, regexp.MustCompile(`ClassNotFoundException|NoClassDefFoundError`), 85},
	{ecoJava, regexp.MustCompile(`no main manifest attribute`), 80},
	{ecoJava, regexp.MustCompile(`Could not find or load main class`), 75},
	{ecoJava, regexp.MustCompile(`cannot find symbol`), 60},
	{ecoJava, regexp.MustCompile(`\[ERROR\] Failed to execute goal`), 40},

	// CMake, pkg-config, the linker.
	{ecoCPP, regexp.MustCompile(`Could NOT find \S+`), 95},
	{ecoCPP, regexp.MustCompile(`By not providing "Find\S*\.cmake"|Could not find a package configuration file provided by`), 92},
	{ecoCPP, regexp.MustCompile(`Package '[^']+'.* not found|Package \S+ was not found in the pkg-config search path|No package '[^']+' found`), 88},
	{ecoCPP, regexp.MustCompile(`No CMAKE_(?:CXX|C)_COMPILER could be found|CMake \S+ or higher is required`), 85},
	{ecoCPP, regexp.MustCompile(`Unknown CMake command `), 65},
	{ecoCPP, regexp.MustCompile(`A required package was not found`), 60},
	{ecoCPP, regexp.MustCompile(`CMake Error at |CMake Error: `), 40},
}

// ansiRe matches terminal colour and cursor sequences.
var ansiRe = regexp.MustCompile("\x1b\\[[0-9;?]*[A-Za-z]")

// FailureSignature returns the line of text (tool output, or an issue body that pastes
// output) that identifies an environment failure of the ecosystem, recognised by the
// messages the real tools print, and whether one was found. The most specific line wins
// (a "No module named" line over a generic "error:" line); among equally specific lines
// the first. The line is returned without terminal colour codes, surrounding blanks or
// quoting decorations, and capped at MaxSignatureLen bytes. An ecosystem that is not one
// of the card's uses the rules of every ecosystem.
func FailureSignature(eco Ecosystem, text string) (line string, ok bool) {
	best, bestWeight := "", 0
	for _, raw := range strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == '\r' }) {
		l := cleanLine(raw)
		if l == "" {
			continue
		}
		if w := lineWeight(eco, l); w > bestWeight {
			best, bestWeight = l, w
		}
	}
	if bestWeight == 0 {
		return "", false
	}
	return capLine(best), true
}

func hasEco(list []Ecosystem, e Ecosystem) bool {
	for _, x := range list {
		if x == e {
			return true
		}
	}
	return false
}

// cleanLine strips colour codes, blanks and the decorations issue bodies and pip's
// boxed output put before a line ("> ", "│ ", "╰─> ", "$ ").
func cleanLine(s string) string {
	s = ansiRe.ReplaceAllString(s, "")
	for {
		t := strings.TrimSpace(s)
		t = strings.TrimLeft(t, "│|╰─>")
		t = strings.TrimSpace(t)
		if t == s {
			return t
		}
		s = t
	}
}

func capLine(s string) string {
	if len(s) <= MaxSignatureLen {
		return s
	}
	s = s[:MaxSignatureLen]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return strings.TrimSpace(s)
}

// Pieces of the patterns FailureRegex writes.
const (
	quoteChars  = "'\"‘’`"
	pathStop    = `\s` + quoteChars + `:,;()<>\[\]{}`
	rxQuote     = `['"‘’` + "`" + `]`
	rxBlank     = `[ \t]+`
	rxVersion   = `[0-9][0-9A-Za-z._+\-]*`
	rxHex       = `[0-9a-fA-F]+`
	rxURL       = `[^\s'"‘’` + "`" + `<>()]+`
	rxPathStart = `(?:[A-Za-z]:|~)?[/\\]`
	rxPathDirs  = `(?:[^` + pathStop + `]*[/\\])?`
	rxPathAny   = `[^` + pathStop + `]*`
	rxVersions  = `\(from[ \t]+versions:[^)]*\)`
	rxNpmPrefix = `npm[ \t]+(?:ERR!|error)[ \t]+`
)

var (
	npmPrefixRe = regexp.MustCompile(`^npm (?:ERR!|error)\s+`)
	versionsRe  = regexp.MustCompile(`^\(from versions:[^)]*\)`)
	urlRe       = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.\-]*://[^\s'"‘’` + "`" + `<>()]+`)
	pathRe      = regexp.MustCompile(`^(?:[A-Za-z]:|~)?[/\\][^` + pathStop + `]*`)
	hexRe       = regexp.MustCompile(`^[0-9a-fA-F]{7,}`)
	versionRe   = regexp.MustCompile(`^[0-9]+(?:[._+\-]?[0-9A-Za-z]+)*`)
	blankRe     = regexp.MustCompile(`^\s+`)
)

// FailureRegex returns a Go regular expression that finds the signature line in real
// output robustly: the line's text is matched literally, except for the parts that change
// from one run or machine to the next, which may vary: absolute paths (their directory;
// a file name with an extension is kept), URLs, version numbers and other numbers that
// are not part of a word (line:column, so versions), hexadecimal ids, the list of
// versions pip prints, the kind of quote and the width of blanks, and npm's "npm ERR!"
// (npm up to 9) versus "npm error" (npm 10 and later) prefix. The pattern is not
// anchored, so it also finds the line inside a longer one.
func FailureRegex(line string) string {
	line = cleanLine(line)
	var b strings.Builder
	if m := npmPrefixRe.FindString(line); m != "" {
		b.WriteString(rxNpmPrefix)
		line = line[len(m):]
	}
	writeVolatile(&b, line, true)
	return b.String()
}

// writeVolatile writes the pattern of s; paths are recognised only when withPaths is set
// (a path's file name is written without them).
func writeVolatile(b *strings.Builder, s string, withPaths bool) {
	lit := 0 // start of the pending literal run
	flush := func(i int) {
		if i > lit {
			b.WriteString(regexp.QuoteMeta(s[lit:i]))
		}
	}
	for i := 0; i < len(s); {
		rest := s[i:]
		var prev byte = ' '
		if i > 0 {
			prev = s[i-1]
		}
		wordStart := !isWordByte(prev) && prev != '.' && prev != '-'
		emit := func(n int, pattern string) {
			flush(i)
			b.WriteString(pattern)
			i += n
			lit = i
		}
		if m := blankRe.FindString(rest); m != "" {
			emit(len(m), rxBlank)
			continue
		}
		if r, size := utf8.DecodeRuneInString(rest); strings.ContainsRune(quoteChars, r) {
			emit(size, rxQuote)
			continue
		}
		if m := versionsRe.FindString(rest); m != "" {
			emit(len(m), rxVersions)
			continue
		}
		if wordStart {
			if m := urlRe.FindString(rest); m != "" {
				emit(len(m), rxURL)
				continue
			}
		}
		if withPaths && (i == 0 || strings.IndexByte(" \t([{=,:<'\"`", prev) >= 0 || isQuoteBefore(s, i)) {
			if m := pathRe.FindString(rest); m != "" && len(m) > 1 {
				flush(i)
				writePath(b, m)
				i += len(m)
				lit = i
				continue
			}
		}
		if wordStart {
			if m := hexRe.FindString(rest); m != "" && isHexID(m) && endsWord(rest, len(m)) {
				emit(len(m), rxHex)
				continue
			}
		}
		if !isWordByte(prev) {
			if m := versionRe.FindString(rest); m != "" {
				emit(len(m), rxVersion)
				continue
			}
		}
		_, size := utf8.DecodeRuneInString(rest)
		i += size
	}
	flush(len(s))
}

// writePath writes the pattern of an absolute path: any directory, then the file name
// when it has an extension and is not itself a random name.
func writePath(b *strings.Builder, p string) {
	cut := strings.LastIndexAny(p, `/\`)
	base := p[cut+1:]
	dot := strings.LastIndexByte(base, '.')
	if dot <= 0 || dot == len(base)-1 || isHexID(base[:dot]) {
		b.WriteString(rxPathStart + rxPathAny)
		return
	}
	b.WriteString(rxPathStart + rxPathDirs)
	writeVolatile(b, base, false)
}

func isQuoteBefore(s string, i int) bool {
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return strings.ContainsRune(quoteChars, r)
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func endsWord(s string, n int) bool { return n == len(s) || !isWordByte(s[n]) }

// isHexID reports whether s looks like a hash or random id: seven or more hex digits
// with at least one digit and one letter.
func isHexID(s string) bool {
	if len(s) < 7 {
		return false
	}
	digit, letter := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F':
			letter = true
		default:
			return false
		}
	}
	return digit && letter
}
