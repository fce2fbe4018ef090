package recipe

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/envgap/envgap/core/deps"
	"github.com/envgap/envgap/schemas"
)

func TestDefault(t *testing.T) {
	tests := []struct {
		dir     string
		eco     schemas.Ecosystem
		opts    Options
		resolve string
		run     string // exact, or a prefix ending in "..."
	}{
		{"py_pkg", schemas.EcosystemPython, Options{}, "bash setup.sh && python3 -m pip install -r 'requirements.txt' && python3 -m pip install .", `python3 -c "...`},
		{"py_script", schemas.EcosystemPython, Options{}, "python3 -m pip install -r 'requirements.txt'", "python3 'src/tool.py'"},
		{"py_main_only", schemas.EcosystemPython, Options{}, "python3 -m pip install -r 'requirements.txt'", "python3 'server.py'"},
		{"js_lock", schemas.EcosystemJavaScript, Options{}, "npm ci --no-audit --no-fund", "npm start"},
		{"js_main", schemas.EcosystemJavaScript, Options{}, "npm install --no-audit --no-fund", "node 'lib/cli.js'"},
		{"java_mod", schemas.EcosystemJava, Options{}, "mvn -B -q package -DskipTests && mvn -B -q dependency:copy-dependencies -DincludeScope=runtime", "java -cp 'app/target/classes:app/target/dependency/*' com.example.App"},
		{"cpp_sub", schemas.EcosystemCPP, Options{}, "cmake -S . -B build && cmake --build build -j2", "./build/tools/demo_cli"},
		{"cpp_bin", schemas.EcosystemCPP, Options{}, "cmake -S . -B build && cmake --build build -j2", "./build/bin/binout"},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			r, err := Default(tt.eco, os.DirFS(filepath.Join("testdata", tt.dir)), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !r.Generated || r.Image != tt.eco.Image() || r.Ecosystem != tt.eco || r.D2Command != nil || r.ExpectedFailureRegex != "" {
				t.Errorf("recipe fields %+v", r)
			}
			if r.ResolveCommand != tt.resolve {
				t.Errorf("resolve %q, want %q", r.ResolveCommand, tt.resolve)
			}
			if p, ok := strings.CutSuffix(tt.run, "..."); ok {
				if !strings.HasPrefix(r.RunCommand, p) {
					t.Errorf("run %q, want prefix %q", r.RunCommand, p)
				}
			} else if r.RunCommand != tt.run {
				t.Errorf("run %q, want %q", r.RunCommand, tt.run)
			}
			if r.ReproCommand != r.ResolveCommand+" && "+r.RunCommand {
				t.Errorf("repro %q", r.ReproCommand)
			}
			if r.BootstrapCommand == "" || strings.Contains(r.BootstrapCommand, "install") {
				t.Errorf("bootstrap %q: want a toolchain report, no install", r.BootstrapCommand)
			}
		})
	}
}

func TestDefaultPythonImportRun(t *testing.T) {
	r, err := Default(schemas.EcosystemPython, os.DirFS("testdata/py_pkg"), Options{Workdir: "/src/proj"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.RunCommand, "'file:///src/proj' not in") || !strings.Contains(r.RunCommand, "importlib.import_module(m)") {
		t.Errorf("run %q", r.RunCommand)
	}
	// The run command must stay one bash word sequence: no single quote escapes the
	// double-quoted program.
	if strings.Count(r.RunCommand, `"`) != 2 {
		t.Errorf("run command quoting: %q", r.RunCommand)
	}
}

func TestDefaultErrors(t *testing.T) {
	tests := []struct {
		dir  string
		eco  schemas.Ecosystem
		want error
		msg  string
	}{
		{"none", schemas.EcosystemPython, ErrNoManifest, "requirements.txt, pyproject.toml, setup.py or setup.cfg"},
		{"py_pkg", schemas.EcosystemCPP, ErrNoManifest, "CMakeLists.txt"},
		{"py_noentry", schemas.EcosystemPython, ErrNoEntryPoint, "write run_command by hand"},
		{"py_pkg", "rust", nil, `ecosystem "rust"`},
	}
	for _, tt := range tests {
		_, err := Default(tt.eco, os.DirFS(filepath.Join("testdata", tt.dir)), Options{})
		if err == nil || tt.want != nil && !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s/%s: err %v, want %v with %q", tt.dir, tt.eco, err, tt.want, tt.msg)
		}
	}
}

func TestSignature(t *testing.T) {
	out := "Collecting foo\nERROR: Could not find a version that satisfies the requirement foo==9.9 (from versions: 1.0)\nERROR: No matching distribution found for foo==9.9\n"
	sig, rx := Signature(schemas.EcosystemPython, out)
	if sig != "ERROR: Could not find a version that satisfies the requirement foo==9.9 (from versions: 1.0)" {
		t.Errorf("signature %q", sig)
	}
	if !regexp.MustCompile(rx).MatchString(strings.ReplaceAll(out, "(from versions: 1.0)", "(from versions: none)")) {
		t.Errorf("pattern %q does not match the output", rx)
	}
	if s, r := Signature(schemas.EcosystemPython, "all good\n"); s != "" || r != "" {
		t.Errorf("no failure: got %q %q", s, r)
	}
}

// TestDefaultMatchesD1: the manifests a recipe installs are the ones D1 reads.
func TestDefaultMatchesD1(t *testing.T) {
	files := os.DirFS("testdata/py_pkg")
	d, err := deps.ParseManifests(schemas.EcosystemPython, files)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Default(schemas.EcosystemPython, files, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range d.ManifestPaths {
		if p == "requirements.txt" && !strings.Contains(r.ResolveCommand, "-r 'requirements.txt'") ||
			p == "setup.py" && !strings.Contains(r.ResolveCommand, "pip install .") {
			t.Errorf("manifest %s read by D1 is not installed by %q", p, r.ResolveCommand)
		}
	}
}
