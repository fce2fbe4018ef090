package deps

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/envgap/envgap/schemas"
)

func TestSetupPyStatic(t *testing.T) {
	tests := []struct {
		name, src  string
		want       []dep
		unreadable string
	}{
		{"literal list", `from setuptools import setup
setup(name="a", install_requires=["x>=1", 'y==2'])`, []dep{{"x", ">=1", false}, {"y", "==2", true}}, ""},
		{"tuple and trailing comma", `setup(install_requires=("x",), setup_requires=("cython<3.0.0",))`, []dep{{"x", "", false}, {"cython", "<3.0.0", false}}, ""},
		{"multi-line string", "setup(install_requires='''\n  x>=1\n  # comment\n  y\n''')", []dep{{"x", ">=1", false}, {"y", "", false}}, ""},
		{"name bound once", "REQS = ['x']\nsetup(install_requires=REQS)", []dep{{"x", "", false}}, ""},
		{"annotated binding", "REQS: list = ['x']\nsetup(install_requires=REQS)", []dep{{"x", "", false}}, ""},
		{"sum of names", "A = ['x']\nB = ['y']\nsetup(install_requires=A + B + ['z'])", []dep{{"x", "", false}, {"y", "", false}, {"z", "", false}}, ""},
		{"string built from constants", "V = '1.2'\nsetup(install_requires=['x==' + V])", []dep{{"x", "==1.2", true}}, ""},
		{"binding inside main", "def main():\n    reqs = ['x']\n    setup(install_requires=reqs)\n\nif __name__ == '__main__':\n    main()\n", []dep{{"x", "", false}}, ""},
		{"setuptools.setup", "import setuptools\nsetuptools.setup(install_requires=['x'])", []dep{{"x", "", false}}, ""},
		{"kwargs dict", "kw = dict(install_requires=['x'])\nsetup(**kw)", []dep{}, "**kw"},
		{"no deps at all", "setup(name='x')", []dep{}, ""},
		{"strings and comments mention setup", "'''setup(install_requires=[\"no\"])'''\n# setup(install_requires=['no'])\nsetup(install_requires=['x'])", []dep{{"x", "", false}}, ""},
		{"escaped quote in string", `setup(install_requires=["x ; python_version > \"3\""])`, []dep{{"x", "", false}}, ""},
		{"appended", "R = ['x']\nR.append('y')\nsetup(install_requires=R)", []dep{}, "R.append(...)"},
		{"augmented", "R = ['x']\nR += ['y']\nsetup(install_requires=R)", []dep{}, "R += ..."},
		{"item assigned", "R = ['x']\nR[0] = 'y'\nsetup(install_requires=R)", []dep{}, "R[...] = ..."},
		{"assigned twice", "R = ['x']\nif cond:\n    R = ['y']\nsetup(install_requires=R)", []dep{}, "assigned 2 times"},
		{"call", "setup(install_requires=read_requirements('requirements.txt'))", []dep{}, "a call read_requirements"},
		{"file read", "with open('r.txt') as f:\n    R = f.read().splitlines()\nsetup(install_requires=R)", []dep{}, "R"},
		{"comprehension", "setup(install_requires=[l.strip() for l in open('r.txt')])", []dep{}, "comprehension"},
		{"f-string element", "V='1'\nsetup(install_requires=[f'x=={V}'])", []dep{}, "f-string"},
		{"imported name", "from deps import REQS\nsetup(install_requires=REQS)", []dep{}, "REQS"},
		{"loop variable", "for R in [['a']]:\n    pass\nsetup(install_requires=R)", []dep{}, "R"},
		{"conditional expression", "setup(install_requires=['x'] if PY3 else ['y'])", []dep{}, "built at run time"},
		{"star in list", "A=['x']\nsetup(install_requires=[*A, 'y'])", []dep{}, "built at run time"},
		{"two different setup calls", "try:\n    setup(install_requires=['x'])\nexcept Exception:\n    setup(install_requires=['y'])", []dep{}, "2 times with different"},
		{"no setup call", "print('hello')", []dep{}, "no setup() call"},
		{"def setup is not a call", "def setup(**kw):\n    pass\nsetup(install_requires=['x'])", []dep{{"x", "", false}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := fstest.MapFS{"setup.py": {Data: []byte(tt.src)}}
			d, err := ParseManifestPaths(schemas.EcosystemPython, files, []string{"setup.py"})
			if err != nil {
				t.Fatal(err)
			}
			checkDeps(t, d.Deps, tt.want)
			if (tt.unreadable == "") != (d.Unreadable == "") || !strings.Contains(d.Unreadable, tt.unreadable) {
				t.Errorf("unreadable %q, want it to contain %q", d.Unreadable, tt.unreadable)
			}
		})
	}
}

func TestTokenizePythonStrings(t *testing.T) {
	src := "a = r'x\\d' + b\"y\" + '''multi\nline''' + \"tab\\t\\x41\\u00e9\" # c 'q'\nb = 1\n"
	toks := tokenizePython(src)
	var strs []string
	lines := 0
	for _, tk := range toks {
		if tk.kind == pyString {
			strs = append(strs, tk.text)
		}
		if tk.kind == pyNewline {
			lines++
		}
	}
	want := []string{`x\d`, "y", "multi\nline", "tab\tAé"}
	if strings.Join(strs, "|") != strings.Join(want, "|") {
		t.Errorf("strings %q, want %q", strs, want)
	}
	if lines != 2 {
		t.Errorf("%d logical lines, want 2", lines)
	}
	if last := toks[len(toks)-2]; last.line != 3 || last.text != "1" {
		t.Errorf("last token %+v, want 1 on line 3", last)
	}
}
