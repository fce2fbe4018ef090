package deps

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/envgap/envgap/schemas"
)

func TestParseCMake(t *testing.T) {
	tests := []struct {
		name, src string
		want      string // commands as name(arg|arg) joined by ";"
	}{
		{"quoted bracket is text", `message("[[not a bracket")` + "\nfind_package(A)", `message([[not a bracket);find_package(A)`},
		{"hash in quotes is text", `message("# not a comment") find_package(B)`, `message(# not a comment);find_package(B)`},
		{"escapes", `set(X "a\"b\\c\nd\;e")`, "set(X|a\"b\\c\nd\\;e)"},
		{"quoted continuation", "message(\"a\\\nb\")", "message(ab)"},
		{"bracket argument", "message([==[ x ]] ]=] ) \" ]==])", `message( x ]] ]=] ) " )`},
		{"bracket argument newline", "message([[\nline]])", `message(line)`},
		{"line comment", "# find_package(C)\nfind_package(D) # find_package(E)", `find_package(D)`},
		{"bracket comment", "#[[ find_package(C)\n]] find_package(D) #[=[ ]] find_package(E) ]=]", `find_package(D)`},
		{"hash bracket after text is a line comment", "find_package(F) #x[[\nfind_package(G)", `find_package(F);find_package(G)`},
		{"case insensitive", "FIND_PACKAGE(H)\nFind_Package (I)", `find_package(H);find_package(I)`},
		{"nested parens", "if((A AND B) OR C)\nendif()", `if((|A|AND|B|)|OR|C);endif()`},
		{"multi-line call", "find_package(Boost 1.74\n  REQUIRED\n  COMPONENTS system # c\n  filesystem)", `find_package(Boost|1.74|REQUIRED|COMPONENTS|system|filesystem)`},
		{"list splitting", "set(L a;b;;c)\nset(Q \"a;b\")", `set(L|a|b|c);set(Q|a;b)`},
		{"legacy quotes", `add_definitions(-DX="a b")`, `add_definitions(-DX="a b")`},
		{"variables kept", `find_package(${NAME} ${VER})`, `find_package(${NAME}|${VER})`},
		{"crlf", "project(P)\r\nfind_package(Z)\r\n", `project(P);find_package(Z)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmds, err := ParseCMake(tt.src)
			if err != nil {
				t.Fatal(err)
			}
			var parts []string
			for _, c := range cmds {
				var args []string
				for _, a := range c.Args {
					args = append(args, a.Value)
				}
				parts = append(parts, c.Name+"("+strings.Join(args, "|")+")")
			}
			if got := strings.Join(parts, ";"); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestParseCMakeErrors(t *testing.T) {
	tests := []struct{ src, msg string }{
		{`message("unterminated)`, "line 1: unterminated quoted argument"},
		{"message([[ never closed )", "line 1: unterminated bracket argument"},
		{"find_package(A\n", "line 1: unterminated command invocation"},
		{"#[[ open comment\nfind_package(A)", "line 1: unterminated bracket comment"},
		{"find_package A", "not followed by"},
		{"\n\n\"stray\"", "line 3: expected a command name"},
	}
	for _, tt := range tests {
		if _, err := ParseCMake(tt.src); err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%q: err %v, want %q", tt.src, err, tt.msg)
		}
	}
}

func TestParseCMakeLines(t *testing.T) {
	cmds, err := ParseCMake("project(X)\n#[[\n\n]]\nmessage(\"a\nb\")\n\nfind_package(Y)\n")
	if err != nil {
		t.Fatal(err)
	}
	lines := []int{1, 5, 8}
	for i, c := range cmds {
		if c.Line != lines[i] {
			t.Errorf("%s on line %d, want %d", c.Name, c.Line, lines[i])
		}
	}
}

// TestCMakeUnparseableIsUnreadable: a CMake file the tokenizer cannot read makes D1
// unmeasured, never a silently shorter list.
func TestCMakeUnparseableIsUnreadable(t *testing.T) {
	files := fstest.MapFS{"CMakeLists.txt": {Data: []byte("find_package(A)\nmessage(\"oops)\n")}}
	d, err := ParseManifests(schemas.EcosystemCPP, files)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Unreadable, "CMakeLists.txt cannot be parsed: line 2: unterminated quoted argument") {
		t.Errorf("unreadable %q", d.Unreadable)
	}
}
