package deps

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"

	"github.com/envgap/envgap/schemas"
)

// CMakeArg is one argument of a CMake command invocation.
type CMakeArg struct {
	Value   string
	Quoted  bool // "..."
	Bracket bool // [[...]] or [=[...]=]
}

// CMakeCommand is one command invocation of a CMake file.
type CMakeCommand struct {
	Name string // lower case: command names are case-insensitive
	Args []CMakeArg
	Line int
}

// ParseCMake tokenises a CMake file by the CMake language grammar: command invocations
// (identifier, blanks, parenthesised arguments, with nested parentheses passed as "(" and
// ")" arguments), quoted arguments with escapes and line continuations, bracket
// arguments of any level, unquoted arguments (split at unescaped ";" as CMake lists are),
// line comments, and bracket comments. A "#" or "[[" inside a quoted argument is text.
// Variable references are kept as written.
func ParseCMake(src string) ([]CMakeCommand, error) {
	s := &cmakeScanner{src: src, line: 1}
	var cmds []CMakeCommand
	for {
		s.skipSpaceAndComments(true)
		if s.err != nil {
			return nil, s.err
		}
		if s.i >= len(s.src) {
			return cmds, nil
		}
		c := s.src[s.i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return nil, fmt.Errorf("line %d: expected a command name, found %q", s.line, c)
		}
		start, line := s.i, s.line
		for s.i < len(s.src) && (isPyNameChar(s.src[s.i]) && s.src[s.i] < 0x80) {
			s.i++
		}
		name := strings.ToLower(s.src[start:s.i])
		for s.i < len(s.src) && (s.src[s.i] == ' ' || s.src[s.i] == '\t') {
			s.i++
		}
		if s.i >= len(s.src) || s.src[s.i] != '(' {
			return nil, fmt.Errorf("line %d: command %s is not followed by \"(\"", line, name)
		}
		s.i++
		args, err := s.arguments()
		if err != nil {
			return nil, err
		}
		cmds = append(cmds, CMakeCommand{Name: name, Args: args, Line: line})
	}
}

type cmakeScanner struct {
	src  string
	i    int
	line int
	err  error
}

// bracketOpen returns the number of "=" of a bracket opening "[=*[" at i, or -1.
func (s *cmakeScanner) bracketOpen(i int) int {
	if i >= len(s.src) || s.src[i] != '[' {
		return -1
	}
	j := i + 1
	for j < len(s.src) && s.src[j] == '=' {
		j++
	}
	if j < len(s.src) && s.src[j] == '[' {
		return j - i - 1
	}
	return -1
}

// bracket reads a bracket construct at s.i with level eq; returns its content.
func (s *cmakeScanner) bracket(eq int) (string, bool) {
	open := s.i + eq + 2
	closer := "]" + strings.Repeat("=", eq) + "]"
	end := strings.Index(s.src[open:], closer)
	if end < 0 {
		return "", false
	}
	content := s.src[open : open+end]
	s.line += strings.Count(content, "\n")
	s.i = open + end + len(closer)
	// A newline right after the opening bracket is not part of the content.
	content = strings.TrimPrefix(strings.TrimPrefix(content, "\r"), "\n")
	return content, true
}

// skipSpaceAndComments skips blanks, newlines (when nl), line and bracket comments.
func (s *cmakeScanner) skipSpaceAndComments(nl bool) {
	for s.i < len(s.src) {
		c := s.src[s.i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			s.i++
		case c == '\n':
			if !nl {
				return
			}
			s.line++
			s.i++
		case c == '#':
			if eq := s.bracketOpen(s.i + 1); eq >= 0 {
				s.i++
				startLine := s.line
				if _, ok := s.bracket(eq); !ok {
					s.err = fmt.Errorf("line %d: unterminated bracket comment", startLine)
					s.i = len(s.src)
				}
				continue
			}
			for s.i < len(s.src) && s.src[s.i] != '\n' {
				s.i++
			}
		default:
			return
		}
	}
}

// arguments reads arguments up to the ")" closing the invocation.
func (s *cmakeScanner) arguments() ([]CMakeArg, error) {
	var args []CMakeArg
	depth := 0
	startLine := s.line
	for {
		s.skipSpaceAndComments(true)
		if s.err != nil {
			return nil, s.err
		}
		if s.i >= len(s.src) {
			return nil, fmt.Errorf("line %d: unterminated command invocation (missing \")\")", startLine)
		}
		c := s.src[s.i]
		switch {
		case c == ')':
			s.i++
			if depth == 0 {
				return args, nil
			}
			depth--
			args = append(args, CMakeArg{Value: ")"})
		case c == '(':
			s.i++
			depth++
			args = append(args, CMakeArg{Value: "("})
		case c == '"':
			v, err := s.quoted()
			if err != nil {
				return nil, err
			}
			args = append(args, CMakeArg{Value: v, Quoted: true})
		case s.bracketOpen(s.i) >= 0:
			line := s.line
			v, ok := s.bracket(s.bracketOpen(s.i))
			if !ok {
				return nil, fmt.Errorf("line %d: unterminated bracket argument", line)
			}
			args = append(args, CMakeArg{Value: v, Bracket: true})
		default:
			v := s.unquoted()
			for _, part := range splitCMakeList(v) {
				args = append(args, CMakeArg{Value: part})
			}
		}
	}
}

// quoted reads a quoted argument at s.i.
func (s *cmakeScanner) quoted() (string, error) {
	line := s.line
	s.i++
	var b strings.Builder
	for s.i < len(s.src) {
		c := s.src[s.i]
		switch c {
		case '"':
			s.i++
			return b.String(), nil
		case '\\':
			if s.i+1 >= len(s.src) {
				s.i++
				continue
			}
			n := s.src[s.i+1]
			s.i += 2
			switch n {
			case '\n':
				s.line++ // continuation
			case '\r':
				if s.i < len(s.src) && s.src[s.i] == '\n' {
					s.i++
					s.line++
				}
			default:
				writeCMakeEscape(&b, n)
			}
		default:
			if c == '\n' {
				s.line++
			}
			b.WriteByte(c)
			s.i++
		}
	}
	return "", fmt.Errorf("line %d: unterminated quoted argument", line)
}

func writeCMakeEscape(b *strings.Builder, n byte) {
	switch n {
	case 'n':
		b.WriteByte('\n')
	case 't':
		b.WriteByte('\t')
	case 'r':
		b.WriteByte('\r')
	case ';':
		b.WriteString(`\;`) // stays a literal ";" when the list is split
	case '0':
		// "\0" is an encoded nothing.
	default:
		b.WriteByte(n)
	}
}

// unquoted reads an unquoted argument at s.i, including legacy embedded quotes
// (-Da="b c").
func (s *cmakeScanner) unquoted() string {
	var b strings.Builder
	for s.i < len(s.src) {
		c := s.src[s.i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '(' || c == ')' || c == '#':
			return b.String()
		case c == '\\' && s.i+1 < len(s.src):
			writeCMakeEscape(&b, s.src[s.i+1])
			s.i += 2
		case c == '"':
			if b.Len() == 0 {
				return b.String()
			}
			// Legacy: a quoted part inside an unquoted argument, kept as written.
			j := strings.IndexByte(s.src[s.i+1:], '"')
			if j < 0 {
				b.WriteString(s.src[s.i:])
				s.i = len(s.src)
				return b.String()
			}
			part := s.src[s.i : s.i+j+2]
			s.line += strings.Count(part, "\n")
			b.WriteString(part)
			s.i += j + 2
		default:
			b.WriteByte(c)
			s.i++
		}
	}
	return b.String()
}

// splitCMakeList splits an unquoted argument at unescaped ";", dropping empty elements.
func splitCMakeList(v string) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) && v[i+1] == ';' {
			cur.WriteByte(';')
			i++
			continue
		}
		if v[i] == ';' {
			if cur.Len() > 0 {
				out = append(out, cur.String())
			}
			cur.Reset()
			continue
		}
		cur.WriteByte(v[i])
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

var (
	cmakeVersionRe  = regexp.MustCompile(`^\d+(?:\.\d+){0,3}(?:\.\.\.<?\d+(?:\.\d+){0,3})?$`)
	cmakeVarRe      = regexp.MustCompile(`\$\{([A-Za-z0-9_.+-]+)\}`)
	pkgModuleRe     = regexp.MustCompile(`^([^<>=\s]+)\s*(?:(<=|>=|=|<|>)\s*(\S+))?$`)
	pkgCheckKeyword = map[string]bool{"REQUIRED": true, "QUIET": true, "NO_CMAKE_PATH": true, "NO_CMAKE_ENVIRONMENT_PATH": true, "IMPORTED_TARGET": true, "GLOBAL": true}
	fetchKeywords   = map[string]bool{"GIT_REPOSITORY": true, "GIT_TAG": true, "GIT_SHALLOW": true, "GIT_PROGRESS": true, "GIT_SUBMODULES": true, "URL": true, "URL_HASH": true, "URL_MD5": true, "SOURCE_DIR": true, "BINARY_DIR": true, "SOURCE_SUBDIR": true, "FIND_PACKAGE_ARGS": true, "OVERRIDE_FIND_PACKAGE": true, "SYSTEM": true, "EXCLUDE_FROM_ALL": true, "DOWNLOAD_EXTRACT_TIMESTAMP": true, "PATCH_COMMAND": true, "UPDATE_COMMAND": true, "SVN_REPOSITORY": true, "SVN_REVISION": true, "HG_REPOSITORY": true, "HG_TAG": true, "DOWNLOAD_NO_EXTRACT": true, "TLS_VERIFY": true, "GIT_REMOTE_UPDATE_STRATEGY": true}
	hashRe          = regexp.MustCompile(`^(?:[0-9a-fA-F]{40}|[0-9a-fA-F]{64})$`)
)

// cmakeState is what the CMake reading carries from file to file.
type cmakeState struct {
	vars map[string]string
}

// cmake reads a CMakeLists.txt: find_package and FetchContent_Declare names (the paper),
// pkg_check_modules and pkg_search_module modules (an extension: they declare system
// libraries the same way), following add_subdirectory and include(<file>.cmake) inside
// the project. set(VAR value) with one literal value is substituted; other variables
// stay unresolved, and a name that is one is skipped with a note. Calls inside if()
// blocks count like any other: CMake conditions are not evaluated.
func (c *collector) cmake(p string) error {
	return c.cmakeFile(p, &cmakeState{vars: map[string]string{"CMAKE_SOURCE_DIR": "<root>", "PROJECT_SOURCE_DIR": "<root>", "CMAKE_CURRENT_SOURCE_DIR": ".", "CMAKE_CURRENT_LIST_DIR": "."}})
}

func (c *collector) cmakeFile(p string, st *cmakeState) error {
	if !c.markRead(p) {
		return nil
	}
	data, err := fs.ReadFile(c.files, p)
	if err != nil {
		return err
	}
	cmds, err := ParseCMake(string(data))
	if err != nil {
		c.unread("%s cannot be parsed: %v", p, err)
		return nil
	}
	subst := func(s string) string {
		for n := 0; n < 5 && strings.Contains(s, "${"); n++ {
			s = cmakeVarRe.ReplaceAllStringFunc(s, func(m string) string {
				if v, ok := st.vars[m[2:len(m)-1]]; ok {
					return v
				}
				return m
			})
		}
		return s
	}
	for _, cmd := range cmds {
		args := make([]string, len(cmd.Args))
		for i, a := range cmd.Args {
			args[i] = subst(a.Value)
		}
		where := fmt.Sprintf("%s:%d", p, cmd.Line)
		switch cmd.Name {
		case "set":
			if len(args) >= 2 && (len(args) == 2 || args[2] == "CACHE" || args[2] == "PARENT_SCOPE") && !strings.Contains(args[1], "${") {
				st.vars[args[0]] = args[1]
			}
		case "project":
			if len(args) > 0 {
				c.self = append(c.self, args[0])
			}
		case "find_package":
			if len(args) == 0 {
				continue
			}
			if strings.Contains(args[0], "${") {
				c.note("%s: find_package(%s) names a variable, not followed", where, args[0])
				continue
			}
			d := schemas.Dependency{Name: args[0], From: p}
			if len(args) > 1 && cmakeVersionRe.MatchString(args[1]) {
				d.Spec = args[1]
				for _, a := range args[2:] {
					if a == "EXACT" {
						d.Spec = "EXACT " + d.Spec
						d.Pinned = !strings.Contains(args[1], "...")
					}
				}
			}
			c.add(d)
		case "fetchcontent_declare":
			if len(args) == 0 || strings.Contains(args[0], "${") {
				continue
			}
			kv := cmakeKeywords(args[1:], fetchKeywords)
			d := schemas.Dependency{Name: args[0], From: p}
			switch {
			case kv["GIT_TAG"] != "":
				d.Spec = kv["GIT_TAG"]
				d.Pinned = hashRe.MatchString(d.Spec)
			case kv["URL"] != "":
				d.Spec = kv["URL"]
				d.Pinned = kv["URL_HASH"] != "" || kv["URL_MD5"] != ""
			case kv["GIT_REPOSITORY"] != "":
				d.Spec = kv["GIT_REPOSITORY"]
			}
			c.add(d)
		case "pkg_check_modules", "pkg_search_module":
			if len(args) < 2 {
				continue
			}
			rest := args[1:]
			for i := 0; i < len(rest); i++ {
				a := rest[i]
				if pkgCheckKeyword[a] {
					continue
				}
				// "foo >= 1.0" may come as three arguments.
				if i+2 < len(rest) && (rest[i+1] == ">=" || rest[i+1] == "<=" || rest[i+1] == "=" || rest[i+1] == "<" || rest[i+1] == ">") {
					a = a + rest[i+1] + rest[i+2]
					i += 2
				}
				m := pkgModuleRe.FindStringSubmatch(a)
				if m == nil || strings.Contains(m[1], "${") {
					continue
				}
				d := schemas.Dependency{Name: m[1], From: p}
				if m[2] != "" {
					d.Spec = m[2] + m[3]
					d.Pinned = m[2] == "="
				}
				c.add(d)
			}
		case "add_subdirectory":
			if len(args) == 0 {
				continue
			}
			dir, ok := c.cmakePath(p, args[0])
			if !ok {
				c.note("%s: add_subdirectory(%s) is outside the project or a variable, not followed", where, args[0])
				continue
			}
			sub := path.Join(dir, "CMakeLists.txt")
			exists, err := IsFile(c.files, sub)
			if err != nil {
				return err
			}
			if !exists {
				c.note("%s: add_subdirectory(%s) has no CMakeLists.txt in the project", where, args[0])
				continue
			}
			if err := c.cmakeFile(sub, st); err != nil {
				return err
			}
		case "include":
			if len(args) == 0 || !strings.HasSuffix(args[0], ".cmake") {
				continue
			}
			f, ok := c.cmakePath(p, args[0])
			if !ok {
				continue
			}
			if exists, err := IsFile(c.files, f); err != nil {
				return err
			} else if exists {
				if err := c.cmakeFile(f, st); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// cmakePath resolves a path argument relative to the CMake file's directory.
func (c *collector) cmakePath(file, arg string) (string, bool) {
	if strings.Contains(arg, "${") {
		return "", false
	}
	if strings.HasPrefix(arg, "<root>") {
		p := path.Clean(strings.TrimPrefix(strings.TrimPrefix(arg, "<root>"), "/"))
		if p == "" {
			p = "."
		}
		return p, fs.ValidPath(p)
	}
	return inside(file, arg)
}

// cmakeKeywords reads KEYWORD value pairs; a keyword's value is the first argument after
// it (values of multi-value keywords after the first are ignored).
func cmakeKeywords(args []string, keywords map[string]bool) map[string]string {
	kv := map[string]string{}
	for i := 0; i < len(args); i++ {
		if keywords[args[i]] && i+1 < len(args) && !keywords[args[i+1]] {
			if _, set := kv[args[i]]; !set {
				kv[args[i]] = args[i+1]
			}
			i++
		}
	}
	return kv
}
