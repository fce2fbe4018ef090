package deps

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/envgap/envgap/core/shell"
	"github.com/envgap/envgap/schemas"
)

// TracePath is where TraceCommand writes the system-call log inside the container.
const TracePath = "/evidence/trace.log"

// TraceSyscalls are the system calls TraceCommand records: the files a process opens
// and executes, and the process tree and working directory needed to tell whose open it
// was (the project's program or a package manager, an interpreter, a shell).
const TraceSyscalls = "execve,openat,open,chdir,clone,clone3,fork,vfork"

// TraceCommand wraps a run command so that it runs under strace and its system calls go
// to TracePath:
//
//	strace -f -qq -s 256 -e trace=execve,openat,open,chdir,clone,clone3,fork,vfork
//	  -e status=successful -e signal=none -o /evidence/trace.log -- bash -c RUN
//
// -f follows children and threads; -e status=successful keeps only calls that succeeded
// (a failed open, say ENOENT while a loader searches, is not a use), which keeps the log
// small; -qq and -e signal=none drop exit and signal lines; -s 256 keeps execve
// arguments readable (paths are always printed whole). trace=%file is not used: it adds
// stat, access and readlink calls, many times the size, and a stat is not a load.
// strace exits with the run's exit code. It needs strace (5.2 or newer) in the image and
// CAP_SYS_PTRACE, which the sandbox grants.
func TraceCommand(run string) string {
	return "mkdir -p " + EvidenceDir + " && strace -f -qq -s 256 -e trace=" + TraceSyscalls +
		" -e status=successful -e signal=none -o " + TracePath + " -- bash -c " + shell.Quote(run)
}

// PyModulesPath is where PyModuleMapCommand writes its map.
const PyModulesPath = "/evidence/D3.pymodules.json"

// PyModuleMapCommand writes, inside a Python container, a JSON object mapping every
// top-level module of the installed distributions to its distribution name (from
// top_level.txt and RECORD), so that TraceDeps can name "yaml" PyYAML and "dateutil"
// python-dateutil. Run it after the resolve step; read the file with ParsePyModuleMap.
const PyModuleMapCommand = `mkdir -p /evidence && python3 -c "
import json, importlib.metadata as md
m = {}
for d in md.distributions():
    name = d.metadata['Name']
    if not name:
        continue
    tops = set((d.read_text('top_level.txt') or '').split())
    for f in (d.files or []):
        p = str(f).split('/')[0]
        if p.endswith(('.dist-info', '.egg-info')) or p.startswith('..') or p == '__pycache__':
            continue
        if p.endswith('.py'):
            p = p[:-3]
        elif p.endswith(('.so', '.pyd')):
            p = p.split('.')[0]
        elif '.' in p:
            continue
        tops.add(p)
    for t in tops:
        m.setdefault(t, name)
print(json.dumps(m, sort_keys=True))
" > ` + PyModulesPath

// ParsePyModuleMap reads the output of PyModuleMapCommand.
func ParsePyModuleMap(b []byte) (map[string]string, error) {
	m := map[string]string{}
	if len(bytes.TrimSpace(b)) == 0 {
		return m, nil
	}
	if err := json.Unmarshal(jsonStart(b, '{'), &m); err != nil {
		return nil, fmt.Errorf("python module map: not a JSON object of module names: %w", err)
	}
	return m, nil
}

// TraceOptions tunes TraceDeps.
type TraceOptions struct {
	// Workdir is the project directory in the container, the run's starting directory
	// (default /work). Relative paths are taken against the process's directory; native
	// libraries under Workdir are the project's own, not dependencies.
	Workdir string
	// PyModules maps Python top-level modules to distribution names (ParsePyModuleMap);
	// without it a module is named by itself, PEP 503 normalised.
	PyModules map[string]string
	// Known are installed packages (D2); Java jars are named exactly from them
	// (groupId:artifactId for artifactId-version[-classifier].jar).
	Known []schemas.Dependency
	// Exclude are names left out of D3 (the image's baseline, the project itself).
	Exclude []string
	// IncludeMetadata counts reads of Python .dist-info/.egg-info files as uses. Off by
	// default: importlib.metadata and pkg_resources read the metadata of every
	// installed distribution, which says nothing about what the program loads.
	IncludeMetadata bool
}

// traceProc is what is known about a traced process.
type traceProc struct {
	exe  string
	cwd  string
	tool bool // a package manager or build tool: its opens are not the program's
}

var (
	resumedRe    = regexp.MustCompile(`^<\.\.\. (\w+) resumed>(.*)$`)
	ansiEscapeRe = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")
	soRe         = regexp.MustCompile(`^(.+?)\.so(?:\.\d+)*$`)
)

// traceEvent is one completed system call.
type traceEvent struct {
	pid    string
	call   string
	args   string
	result string // text after "= "
}

// parseTrace reads strace lines (with or without pid prefixes, with unfinished and
// resumed calls) into completed calls, in log order.
func parseTrace(log []byte) []traceEvent {
	var out []traceEvent
	pending := map[string]string{} // pid → "call(args" of an unfinished call
	for _, line := range strings.Split(string(log), "\n") {
		line = strings.TrimRight(line, "\r")
		pid, line := cutPid(line)
		if strings.HasSuffix(line, "<unfinished ...>") {
			pending[pid] = strings.TrimSuffix(line, "<unfinished ...>")
			continue
		}
		if strings.HasPrefix(line, "<... ") {
			m := resumedRe.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			start, ok := pending[pid]
			delete(pending, pid)
			if !ok {
				continue
			}
			line = start + m[2]
		}
		open := strings.IndexByte(line, '(')
		if open <= 0 || !isCallName(line[:open]) {
			continue // exit, signal and strace's own lines
		}
		rest := line[open+1:]
		i := strings.LastIndex(rest, ") = ")
		if i < 0 {
			continue
		}
		out = append(out, traceEvent{pid: pid, call: line[:open], args: rest[:i], result: strings.TrimSpace(rest[i+4:])})
	}
	return out
}

// cutPid splits strace's pid prefix ("123 " with -o and -f, "[pid 123] " on a terminal)
// from a line.
func cutPid(line string) (string, string) {
	if rest, ok := strings.CutPrefix(line, "[pid"); ok {
		rest = strings.TrimLeft(rest, " ")
		if j := strings.IndexByte(rest, ']'); j > 0 {
			return rest[:j], strings.TrimLeft(rest[j+1:], " ")
		}
		return "", line
	}
	j := 0
	for j < len(line) && line[j] >= '0' && line[j] <= '9' {
		j++
	}
	if j > 0 && j < len(line) && line[j] == ' ' {
		return line[:j], strings.TrimLeft(line[j:], " ")
	}
	return "", line
}

func isCallName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isWordByte(s[i]) {
			return false
		}
	}
	return true
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// ok reports whether the call succeeded (a non-negative result).
func (e traceEvent) ok() bool {
	f := strings.Fields(e.result)
	if len(f) == 0 {
		return false
	}
	n, err := strconv.ParseInt(f[0], 10, 64)
	return err == nil && n >= 0
}

// firstString returns the first C string argument, decoded.
func firstString(args string) (string, bool) {
	i := strings.IndexByte(args, '"')
	if i < 0 {
		return "", false
	}
	var b strings.Builder
	for j := i + 1; j < len(args); j++ {
		c := args[j]
		if c == '"' {
			return b.String(), true
		}
		if c != '\\' || j+1 >= len(args) {
			b.WriteByte(c)
			continue
		}
		j++
		switch n := args[j]; {
		case n == 'n':
			b.WriteByte('\n')
		case n == 't':
			b.WriteByte('\t')
		case n == 'x' && j+2 < len(args):
			if v, err := strconv.ParseUint(args[j+1:j+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				j += 2
			}
		case n >= '0' && n <= '7':
			k := j
			for k < len(args) && k < j+3 && args[k] >= '0' && args[k] <= '7' {
				k++
			}
			v, _ := strconv.ParseUint(args[j:k], 8, 8)
			b.WriteByte(byte(v))
			j = k - 1
		default:
			b.WriteByte(n)
		}
	}
	return "", false
}

// TraceDeps maps the files a traced run opened or executed successfully (failed calls are
// skipped) to packages by the ecosystem's rules, and returns D3, sorted by name, each
// package with the first file that named it:
//
//   - python: files under site-packages/ or dist-packages/, by the first path component
//     (X.py, X.cpython-310-x86_64-linux-gnu.so, __pycache__/X.cpython-310.pyc and X/...
//     give module X; .dist-info and X.egg-info give X when IncludeMetadata), named
//     by PyModules when given, PEP 503 normalised. .pth files and _distutils_hack, which
//     the interpreter loads at every start, are not uses.
//   - javascript: the innermost node_modules/<name> or node_modules/@scope/<name>;
//     npm's and corepack's own global installs are left out.
//   - java: jars under target/dependency/ (artifactId from name-version.jar, or exactly
//     from Known) and under a Maven repository (.m2/repository/<group>/<artifact>/...,
//     named groupId:artifactId).
//   - cpp: shared libraries (lib<name>.so[.N]) loaded by the project's programs, named
//     <name> ("ssl", "crypto", "z"), without the seven base libraries of the paper (libc,
//     libstdc++, libm, libgcc_s, libpthread, libdl, librt), the dynamic loader, glibc's
//     gconv and NSS modules, and libraries built inside Workdir.
//
// Opens by processes of package managers and build tools (pip, npm, Maven, CMake, make,
// compilers) are not the program's and are skipped, as are, for cpp, libraries loaded by
// system programs (the shell, an interpreter). The log is what TraceCommand writes;
// lines it cannot read are skipped. An empty log gives an Unreadable set.
func TraceDeps(eco schemas.Ecosystem, traceLog []byte, opts TraceOptions) (schemas.DepSet, error) {
	if eco.Valid() != nil {
		return schemas.DepSet{}, fmt.Errorf("trace deps: %w %q", ErrUnknownEcosystem, eco)
	}
	if opts.Workdir == "" {
		opts.Workdir = "/work"
	}
	events := parseTrace(traceLog)
	if len(events) == 0 {
		return schemas.DepSet{Deps: []schemas.Dependency{}, Unreadable: "the trace log is empty or unreadable: the run command did not run under strace"}, nil
	}
	parent := map[string]string{}
	for _, e := range events {
		if isCloneCall(e.call) && e.ok() {
			if child := strings.Fields(e.result)[0]; child != "0" {
				parent[child] = e.pid
			}
		}
	}
	procs := map[string]*traceProc{}
	var get func(pid string, depth int) *traceProc
	get = func(pid string, depth int) *traceProc {
		if p, ok := procs[pid]; ok {
			return p
		}
		p := &traceProc{cwd: opts.Workdir}
		if pp, ok := parent[pid]; ok && depth < 1000 {
			*p = *get(pp, depth+1)
		}
		procs[pid] = p
		return p
	}
	known := knownJars(opts.Known)
	drop := map[string]bool{}
	for _, n := range opts.Exclude {
		drop[Key(eco, n)] = true
	}
	ds := schemas.DepSet{Deps: []schemas.Dependency{}}
	seen := map[string]bool{}
	for _, e := range events {
		p := get(e.pid, 0)
		if !e.ok() {
			continue
		}
		switch e.call {
		case "clone", "clone3", "fork", "vfork":
			get(strings.Fields(e.result)[0], 0)
			continue
		case "chdir":
			if dir, ok := firstString(e.args); ok {
				p.cwd = absPath(p.cwd, dir)
			}
			continue
		case "execve":
			file, ok := firstString(e.args)
			if !ok {
				continue
			}
			p.exe = absPath(p.cwd, file)
			p.tool = isToolProcess(p.exe, e.args)
			continue
		case "open", "openat":
		default:
			continue
		}
		if p.tool {
			continue
		}
		file, ok := firstString(e.args)
		if !ok {
			continue
		}
		if e.call == "openat" && !path.IsAbs(file) && !strings.HasPrefix(e.args, "AT_FDCWD") {
			continue // relative to a directory descriptor we do not follow
		}
		file = absPath(p.cwd, file)
		var name string
		switch eco {
		case schemas.EcosystemPython:
			name = pythonTraceName(file, opts)
		case schemas.EcosystemJavaScript:
			name = nodeTraceName(file)
		case schemas.EcosystemJava:
			name = javaTraceName(file, known)
		case schemas.EcosystemCPP:
			if p.exe != "" && isSystemPath(p.exe, opts.Workdir) {
				continue
			}
			name = cppTraceName(file, opts.Workdir)
		}
		if name == "" {
			continue
		}
		if drop[Key(eco, name)] {
			continue
		}
		k := Key(eco, name)
		if eco == schemas.EcosystemCPP {
			k = name // libssl and libcrypto are two libraries of one package: list both
		}
		if seen[k] {
			continue
		}
		seen[k] = true
		ds.Deps = append(ds.Deps, schemas.Dependency{Name: name, From: file})
	}
	sortDeps(ds.Deps)
	return ds, nil
}

func isCloneCall(c string) bool { return c == "clone" || c == "clone3" || c == "fork" || c == "vfork" }

func absPath(cwd, p string) string {
	if path.IsAbs(p) {
		return path.Clean(p)
	}
	return path.Join(cwd, p)
}

// toolNames are executables whose file opens are not the program's.
var toolNames = map[string]bool{"pip": true, "pip3": true, "npm": true, "npx": true, "mvn": true, "mvnw": true,
	"cmake": true, "make": true, "gmake": true, "ninja": true, "gcc": true, "g++": true, "cc": true, "c++": true,
	"cc1": true, "cc1plus": true, "as": true, "ld": true, "collect2": true, "ld.bfd": true, "ld.gold": true,
	"pkg-config": true, "apt-get": true, "dpkg": true, "javac": true, "node-gyp": true, "strace": true}

// isToolProcess reports whether an execve starts a package manager or build tool.
func isToolProcess(exe, args string) bool {
	if toolNames[path.Base(exe)] {
		return true
	}
	// Interpreted tools: python3 -m pip, node .../npm-cli.js, java ... maven's launcher.
	return strings.Contains(args, `"-m", "pip"`) || strings.Contains(args, "npm-cli.js") ||
		strings.Contains(args, "npx-cli.js") || strings.Contains(args, "/bin/npm\"") ||
		strings.Contains(args, "plexus-classworlds") || strings.Contains(args, "-Dmaven.home") ||
		strings.Contains(args, "node-gyp")
}

// isSystemPath reports whether an executable belongs to the system rather than the
// project.
func isSystemPath(p, workdir string) bool {
	if strings.HasPrefix(p, strings.TrimSuffix(workdir, "/")+"/") {
		return false
	}
	for _, pre := range []string{"/usr/", "/bin/", "/sbin/", "/lib", "/etc/", "/snap/", "/opt/"} {
		if strings.HasPrefix(p, pre) {
			return true
		}
	}
	return false
}

func pythonTraceName(file string, opts TraceOptions) string {
	i := strings.LastIndex(file, "/site-packages/")
	n := len("/site-packages/")
	if j := strings.LastIndex(file, "/dist-packages/"); j > i {
		i, n = j, len("/dist-packages/")
	}
	if i < 0 {
		return ""
	}
	comps := strings.Split(file[i+n:], "/")
	c := comps[0]
	if c == "" {
		return ""
	}
	if c == "__pycache__" {
		if len(comps) < 2 {
			return ""
		}
		c = strings.SplitN(comps[1], ".", 2)[0]
	}
	switch {
	case strings.HasSuffix(c, ".pth") || strings.HasSuffix(c, ".egg-link") || strings.HasPrefix(c, "README"):
		return ""
	case strings.HasSuffix(c, ".dist-info") || strings.HasSuffix(c, ".egg-info"):
		if !opts.IncludeMetadata {
			return ""
		}
		c = strings.TrimSuffix(strings.TrimSuffix(c, ".dist-info"), ".egg-info")
		return NormalizePython(strings.SplitN(c, "-", 2)[0])
	case strings.HasSuffix(c, ".egg"):
		return NormalizePython(strings.SplitN(c, "-", 2)[0])
	case strings.HasSuffix(c, ".py"):
		c = strings.TrimSuffix(c, ".py")
	case strings.Contains(c, ".so") || strings.HasSuffix(c, ".pyd"):
		c = strings.SplitN(c, ".", 2)[0]
	case len(comps) == 1 && strings.Contains(c, "."):
		return "" // another file at the top (a .txt, a .json)
	}
	if c == "_distutils_hack" || c == "_virtualenv" || c == "" {
		return ""
	}
	if dist, ok := opts.PyModules[c]; ok {
		return NormalizePython(dist)
	}
	return NormalizePython(c)
}

var globalNodePrefixes = []string{"/usr/lib/node_modules/", "/usr/local/lib/node_modules/"}

func nodeTraceName(file string) string {
	for _, g := range globalNodePrefixes {
		if rest, ok := strings.CutPrefix(file, g); ok {
			top := strings.SplitN(rest, "/", 2)[0]
			if top == "npm" || top == "corepack" {
				return ""
			}
		}
	}
	i := strings.LastIndex(file, "/node_modules/")
	if i < 0 {
		return ""
	}
	comps := strings.Split(file[i+len("/node_modules/"):], "/")
	if len(comps) < 2 || comps[0] == "" || strings.HasPrefix(comps[0], ".") {
		return "" // node_modules/.bin, .package-lock.json, a file directly in node_modules
	}
	if strings.HasPrefix(comps[0], "@") {
		if len(comps) < 3 || comps[1] == "" {
			return ""
		}
		return comps[0] + "/" + comps[1]
	}
	return comps[0]
}

// knownJars maps artifactId-version to groupId:artifactId from D2.
func knownJars(deps []schemas.Dependency) map[string]string {
	m := map[string]string{}
	for _, d := range deps {
		g, a, ok := strings.Cut(d.Name, ":")
		if !ok || d.Spec == "" || g == "" {
			continue
		}
		m[a+"-"+d.Spec] = d.Name
	}
	return m
}

var jarVersionRe = regexp.MustCompile(`-\d`)

func javaTraceName(file string, known map[string]string) string {
	if !strings.HasSuffix(file, ".jar") {
		return ""
	}
	if i := strings.Index(file, "/.m2/repository/"); i >= 0 {
		comps := strings.Split(file[i+len("/.m2/repository/"):], "/")
		if len(comps) < 4 {
			return ""
		}
		n := len(comps)
		return strings.Join(comps[:n-3], ".") + ":" + comps[n-3]
	}
	if !strings.Contains(file, "/target/dependency/") {
		return ""
	}
	base := strings.TrimSuffix(path.Base(file), ".jar")
	for cut := len(base); cut > 0; cut = strings.LastIndexByte(base[:cut], '-') {
		if name, ok := known[base[:cut]]; ok {
			return name
		}
	}
	if loc := jarVersionRe.FindStringIndex(base); loc != nil {
		return base[:loc[0]]
	}
	return base
}

// baseLibs are the libraries every C/C++ program loads (the paper's seven), and glibc's
// loader.
var baseLibs = map[string]bool{"c": true, "stdc++": true, "m": true, "gcc_s": true, "pthread": true, "dl": true, "rt": true}

func cppTraceName(file, workdir string) string {
	if strings.HasPrefix(file, strings.TrimSuffix(workdir, "/")+"/") || strings.Contains(file, "/gconv/") {
		return ""
	}
	m := soRe.FindStringSubmatch(path.Base(file))
	if m == nil {
		return ""
	}
	name := m[1]
	if strings.HasPrefix(name, "ld-linux") || strings.HasPrefix(name, "ld64") || strings.HasPrefix(name, "libnss_") {
		return ""
	}
	name = strings.TrimPrefix(name, "lib")
	if baseLibs[name] || name == "" {
		return ""
	}
	return name
}
