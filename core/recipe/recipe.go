package recipe

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/envgap/envgap/core/deps"
	"github.com/envgap/envgap/core/shell"
	"github.com/envgap/envgap/schemas"
)

// Options tunes Default.
type Options struct {
	// Workdir is where the project sits in the container (default /work); the Python
	// run command recognises the project's own installed distribution by it.
	Workdir string
	// RunCommand, when set, is the run command (a study's project that says how it runs):
	// no entry point is looked for.
	RunCommand string
}

// ErrNoManifest is returned when a project has no manifest of its ecosystem.
var ErrNoManifest = errors.New("no manifest")

// ErrNoEntryPoint is returned when no run command can be derived from the project.
var ErrNoEntryPoint = errors.New("no entry point")

// Default writes the recipe of a candidate that comes without commands, from its
// ecosystem and manifests. Every command runs in the project directory. A project's
// setup.sh (how a repair installs system packages) runs first in resolve. The commands
// per ecosystem:
//
//   - python: bootstrap only reports the toolchain (no pip upgrade, see doc.go); resolve
//     installs requirements.txt with -r and the project itself with "pip install ." when
//     it has setup.py, setup.cfg or a pyproject.toml with [build-system], [project] or
//     Poetry; run imports the project's top-level modules when it is installable, or runs
//     the script the README names ("python3 X.py"), else main.py, app.py, run.py or the
//     only .py file at the top.
//   - javascript: resolve is "npm ci" with a lockfile, else "npm install"; run is
//     "npm start" when package.json defines it, else "node <main>".
//   - java: resolve is "mvn -B -q package -DskipTests" then
//     "mvn -B -q dependency:copy-dependencies -DincludeScope=runtime"; run is java -cp
//     with target/classes and target/dependency/* and the main class (the pom's
//     <mainClass>, else the class with a main method, preferring Main, App, Application),
//     the paper's classpath execution (no fat jar).
//   - cpp: resolve is "cmake -S . -B build && cmake --build build -j2"; run is the first
//     add_executable target.
//
// repro_command is resolve then run. The recipe has Generated set, Image from the
// ecosystem, no d2_command and no expected_failure_regex (see Signature).
func Default(eco schemas.Ecosystem, files fs.FS, opts Options) (schemas.Recipe, error) {
	if err := eco.Valid(); err != nil {
		return schemas.Recipe{}, fmt.Errorf("default recipe: ecosystem %q: %w", eco, err)
	}
	if opts.Workdir == "" {
		opts.Workdir = "/work"
	}
	manifests, err := deps.FindManifests(eco, files)
	if err != nil {
		return schemas.Recipe{}, fmt.Errorf("default recipe: %w", err)
	}
	if len(manifests) == 0 {
		return schemas.Recipe{}, fmt.Errorf("default recipe: %w for %s (want %s): write the commands by hand", ErrNoManifest, eco, manifestNames(eco))
	}
	r := schemas.Recipe{Ecosystem: eco, Image: eco.Image(), Generated: true}
	var resolve []string
	if ok, err := deps.IsFile(files, "setup.sh"); err != nil {
		return schemas.Recipe{}, fmt.Errorf("default recipe: %w", err)
	} else if ok {
		resolve = append(resolve, "bash setup.sh")
	}
	var run string
	switch eco {
	case schemas.EcosystemPython:
		r.BootstrapCommand = "python3 --version && python3 -m pip --version"
		var steps []string
		steps, run, err = python(files, manifests, opts)
		resolve = append(resolve, steps...)
	case schemas.EcosystemJavaScript:
		r.BootstrapCommand = "node --version && npm --version"
		var step string
		step, run, err = javascript(files)
		resolve = append(resolve, step)
	case schemas.EcosystemJava:
		r.BootstrapCommand = "java -version && mvn -B -version"
		resolve = append(resolve, "mvn -B -q package -DskipTests", "mvn -B -q dependency:copy-dependencies -DincludeScope=runtime")
		run, err = java(files)
	case schemas.EcosystemCPP:
		r.BootstrapCommand = "cmake --version && g++ --version"
		resolve = append(resolve, "cmake -S . -B build && cmake --build build -j2")
		run, err = cpp(files)
	}
	if opts.RunCommand != "" && (err == nil || errors.Is(err, ErrNoEntryPoint)) {
		run, err = opts.RunCommand, nil
	}
	if err != nil {
		return schemas.Recipe{}, fmt.Errorf("default recipe: %w", err)
	}
	r.ResolveCommand = strings.Join(resolve, " && ")
	r.RunCommand = run
	r.ReproCommand = r.ResolveCommand + " && " + run
	return r, nil
}

// Signature returns the failure signature of a failing output and the pattern that
// finds it (schemas.FailureSignature and schemas.FailureRegex), for candidates without
// an expected_failure_regex; both are empty when no environment failure is recognised.
func Signature(eco schemas.Ecosystem, output string) (signature, regex string) {
	line, ok := schemas.FailureSignature(eco, output)
	if !ok {
		return "", ""
	}
	return line, schemas.FailureRegex(line)
}

func manifestNames(eco schemas.Ecosystem) string {
	switch eco {
	case schemas.EcosystemPython:
		return "requirements.txt, pyproject.toml, setup.py or setup.cfg"
	case schemas.EcosystemJavaScript:
		return "package.json"
	case schemas.EcosystemJava:
		return "pom.xml"
	}
	return "CMakeLists.txt"
}

// pyImportRun imports the top-level modules of the distribution installed from the
// project directory (its direct_url.json points there), as the card's example does.
const pyImportRun = `python3 -c "
import importlib, importlib.metadata as md
mods = set()
for dist in md.distributions():
    if 'file://WORKDIR' not in (dist.read_text('direct_url.json') or ''):
        continue
    top = (dist.read_text('top_level.txt') or '').split()
    if not top:
        top = [str(f).split('/')[0] for f in (dist.files or [])]
        top = [t[:-3] if t.endswith('.py') else t for t in top if '.' not in t[:-3] and not t.endswith(('-info', '.pth'))]
    mods.update(t for t in top if t and not t.startswith('_') and t not in ('test', 'tests', 'docs', 'examples', 'bin'))
if not mods:
    raise SystemExit('no module of the project is installed')
for m in sorted(mods):
    importlib.import_module(m)
    print('imported', m)
"`

var readmeRunRe = regexp.MustCompile(`(?m)\bpython3?\s+([A-Za-z0-9_./-]+\.py)\b`)

func python(files fs.FS, manifests []string, opts Options) ([]string, string, error) {
	var steps []string
	installable := false
	reqs := ""
	for _, m := range manifests {
		switch m {
		case "setup.py", "setup.cfg":
			installable = true
		case "pyproject.toml":
			ok, err := pyprojectInstallable(files)
			if err != nil {
				return nil, "", err
			}
			installable = installable || ok
		default:
			if reqs == "" {
				reqs = m
			}
		}
	}
	if reqs != "" {
		steps = append(steps, "python3 -m pip install -r "+shell.Quote(reqs))
	}
	if installable {
		steps = append(steps, "python3 -m pip install .")
		return steps, strings.ReplaceAll(pyImportRun, "WORKDIR", opts.Workdir), nil
	}
	script, err := pythonScript(files)
	if err != nil {
		return steps, "", err
	}
	return steps, "python3 " + shell.Quote(script), nil
}

func pyprojectInstallable(files fs.FS) (bool, error) {
	b, err := fs.ReadFile(files, "pyproject.toml")
	if err != nil {
		return false, err
	}
	s := string(b)
	return strings.Contains(s, "[build-system]") || strings.Contains(s, "[project]") || strings.Contains(s, "[tool.poetry]"), nil
}

// pythonScript finds the script a Python project runs with.
func pythonScript(files fs.FS) (string, error) {
	readmes, err := fs.Glob(files, "[Rr][Ee][Aa][Dd][Mm][Ee]*")
	if err != nil {
		return "", err
	}
	sort.Strings(readmes)
	for _, r := range readmes {
		b, err := fs.ReadFile(files, r)
		if err != nil {
			continue
		}
		for _, m := range readmeRunRe.FindAllStringSubmatch(string(b), -1) {
			p := strings.TrimPrefix(m[1], "./")
			if ok, err := deps.IsFile(files, p); err != nil {
				return "", err
			} else if ok && fs.ValidPath(p) {
				return p, nil
			}
		}
	}
	for _, c := range []string{"main.py", "app.py", "run.py", "__main__.py", "cli.py"} {
		if ok, err := deps.IsFile(files, c); err != nil {
			return "", err
		} else if ok {
			return c, nil
		}
	}
	top, err := fs.Glob(files, "*.py")
	if err != nil {
		return "", err
	}
	var scripts []string
	for _, t := range top {
		if t != "setup.py" && t != "conftest.py" && !strings.HasPrefix(t, "test_") {
			scripts = append(scripts, t)
		}
	}
	if len(scripts) == 1 {
		return scripts[0], nil
	}
	return "", fmt.Errorf("%w: the Python project is not installable and no script was found (README \"python3 X.py\", main.py, app.py, run.py or a single top-level .py file); write run_command by hand", ErrNoEntryPoint)
}

func javascript(files fs.FS) (string, string, error) {
	install := "npm install --no-audit --no-fund"
	for _, lock := range []string{"package-lock.json", "npm-shrinkwrap.json"} {
		if ok, err := deps.IsFile(files, lock); err != nil {
			return "", "", err
		} else if ok {
			install = "npm ci --no-audit --no-fund"
			break
		}
	}
	b, err := fs.ReadFile(files, "package.json")
	if err != nil {
		return "", "", err
	}
	var pj struct {
		Main    string            `json:"main"`
		Scripts map[string]string `json:"scripts"`
	}
	if err := json.Unmarshal(b, &pj); err != nil {
		// npm fails on it as well; the run command still names the conventional entry.
		pj.Main = ""
	}
	if strings.TrimSpace(pj.Scripts["start"]) != "" {
		return install, "npm start", nil
	}
	main := strings.TrimPrefix(pj.Main, "./")
	if main == "" {
		main = "index.js"
	}
	for _, c := range []string{main, main + ".js", path.Join(main, "index.js")} {
		if ok, err := deps.IsFile(files, c); err != nil {
			return "", "", err
		} else if ok {
			return install, "node " + shell.Quote(c), nil
		}
	}
	return install, "", fmt.Errorf("%w: package.json has no start script and its main %s does not exist; write run_command by hand", ErrNoEntryPoint, main)
}

var (
	javaPackageRe = regexp.MustCompile(`(?m)^\s*package\s+([\w.]+)\s*;`)
	javaMainRe    = regexp.MustCompile(`public\s+static\s+void\s+main\s*\(\s*(?:final\s+)?String`)
	pomMainRe     = regexp.MustCompile(`<mainClass>\s*([\w.$]+)\s*</mainClass>`)
)

type javaMain struct {
	class  string // fully qualified
	module string // directory holding src/main/java ("" for the root)
}

func java(files fs.FS) (string, error) {
	var mains []javaMain
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != "." && (strings.HasPrefix(n, ".") || n == "target" || n == "node_modules") {
				return fs.SkipDir
			}
			return nil
		}
		i := strings.Index("/"+p, "/src/main/java/")
		if i < 0 || !strings.HasSuffix(p, ".java") {
			return nil
		}
		b, err := fs.ReadFile(files, p)
		if err != nil {
			return err
		}
		src := string(b)
		if !javaMainRe.MatchString(src) {
			return nil
		}
		cls := strings.TrimSuffix(path.Base(p), ".java")
		if m := javaPackageRe.FindStringSubmatch(src); m != nil {
			cls = m[1] + "." + cls
		}
		mod := ""
		if i > 0 {
			mod = p[:i-1]
		}
		mains = append(mains, javaMain{class: cls, module: mod})
		return nil
	})
	if err != nil {
		return "", err
	}
	if len(mains) == 0 {
		return "", fmt.Errorf("%w: no class under src/main/java has a main method; write run_command by hand", ErrNoEntryPoint)
	}
	pick := mains[0]
	configured := ""
	if b, err := fs.ReadFile(files, "pom.xml"); err == nil {
		if m := pomMainRe.FindStringSubmatch(string(b)); m != nil {
			configured = m[1]
		}
	}
	best := -1
	for _, m := range mains {
		score := 0
		simple := m.class[strings.LastIndexByte(m.class, '.')+1:]
		switch {
		case m.class == configured:
			score = 3
		case simple == "Main" || simple == "App" || simple == "Application":
			score = 2
		case m.module == "":
			score = 1
		}
		if score > best {
			best, pick = score, m
		}
	}
	dir := ""
	if pick.module != "" {
		dir = pick.module + "/"
	}
	cp := dir + "target/classes:" + dir + "target/dependency/*"
	return "java -cp " + shell.Quote(cp) + " " + pick.class, nil
}

func cpp(files fs.FS) (string, error) {
	type target struct{ name, dir, outDir string }
	var first *target
	var walk func(file string, vars map[string]string, depth int) error
	walk = func(file string, vars map[string]string, depth int) error {
		if depth > 20 || first != nil {
			return nil
		}
		b, err := fs.ReadFile(files, file)
		if err != nil {
			return err
		}
		cmds, err := deps.ParseCMake(string(b))
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		dir := path.Dir(file)
		subst := func(s string) string {
			for k, v := range vars {
				s = strings.ReplaceAll(s, "${"+k+"}", v)
			}
			return s
		}
		for _, c := range cmds {
			args := make([]string, len(c.Args))
			for i, a := range c.Args {
				args[i] = subst(a.Value)
			}
			switch c.Name {
			case "project":
				if len(args) > 0 {
					vars["PROJECT_NAME"] = args[0]
					vars["CMAKE_PROJECT_NAME"] = args[0]
				}
			case "set":
				if len(args) >= 2 {
					vars[args[0]] = args[1]
				}
			case "add_executable":
				if len(args) == 0 || strings.Contains(args[0], "${") {
					continue
				}
				if len(args) > 1 && (args[1] == "IMPORTED" || args[1] == "ALIAS") {
					continue
				}
				out := vars["CMAKE_RUNTIME_OUTPUT_DIRECTORY"]
				first = &target{name: args[0], dir: dir, outDir: out}
				return nil
			case "add_subdirectory":
				if len(args) == 0 || strings.Contains(args[0], "${") {
					continue
				}
				sub := path.Clean(path.Join(dir, args[0]))
				if !fs.ValidPath(sub) || strings.HasPrefix(sub, "..") {
					continue
				}
				if ok, err := deps.IsFile(files, path.Join(sub, "CMakeLists.txt")); err != nil {
					return err
				} else if ok {
					if err := walk(path.Join(sub, "CMakeLists.txt"), vars, depth+1); err != nil {
						return err
					}
					if first != nil {
						return nil
					}
				}
			}
		}
		return nil
	}
	if err := walk("CMakeLists.txt", map[string]string{"CMAKE_BINARY_DIR": "build", "PROJECT_BINARY_DIR": "build", "CMAKE_SOURCE_DIR": ".", "PROJECT_SOURCE_DIR": ".", "CMAKE_CURRENT_SOURCE_DIR": "."}, 0); err != nil {
		return "", err
	}
	if first == nil {
		return "", fmt.Errorf("%w: CMakeLists.txt has no add_executable target; write run_command by hand", ErrNoEntryPoint)
	}
	bin := path.Join("build", first.dir, first.name)
	if first.outDir != "" && !strings.Contains(first.outDir, "${") {
		bin = path.Join(strings.TrimPrefix(first.outDir, "./"), first.name)
	}
	return "./" + bin, nil
}
