package deps

import (
	"bufio"
	"bytes"
	"sort"
	"strings"

	"github.com/envgap/envgap/schemas"
)

// D2CMakePath is where the C++ D2 command writes the CMake caches of the project's
// build trees (each after a "#envgap-cache PATH" line).
const D2CMakePath = "/evidence/D2.cmake.txt"

// d2CMakeCommand writes every CMakeCache.txt under /work (not those of fetched
// projects' sub-builds) to D2CMakePath: what CMake configured.
const d2CMakeCommand = "mkdir -p " + EvidenceDir + " && (find /work -name CMakeCache.txt -not -path '*/_deps/*' -exec sh -c 'echo \"#envgap-cache $1\"; cat \"$1\"' _ {} \\; > " + D2CMakePath + " 2>/dev/null || true)"

// cmakeToolchain are packages find_package reports that are the toolchain itself, not a
// dependency of the project (the threads of the C library, pkg-config, git).
var cmakeToolchain = map[string]bool{"threads": true, "pkgconfig": true, "git": true}

// pkg_check_modules keywords, not module names.
var pkgConfigKeywords = map[string]bool{"REQUIRED": true, "QUIET": true, "IMPORTED_TARGET": true, "GLOBAL": true,
	"NO_CMAKE_PATH": true, "NO_CMAKE_ENVIRONMENT_PATH": true}

// CMakeInstalled reads C++ D2 from the CMake caches the D2 command collected: what the
// configure found and fetched (the paper's "CMake configure log"):
//
//   - find_package in module mode: FIND_PACKAGE_MESSAGE_DETAILS_<Name> (written by
//     FindPackageHandleStandardArgs when the package is found);
//   - find_package in config mode: <Name>_DIR set to a folder, the entry CMake documents
//     as "The directory containing a CMake configuration file for <Name>";
//   - pkg_check_modules / pkg_search_module: the modules of a prefix whose <PREFIX>_FOUND
//     is 1 (__pkg_config_arguments_<PREFIX>);
//   - FetchContent: every content populated, the project's own and those its fetched
//     projects fetch in turn (FETCHCONTENT_UPDATES_DISCONNECTED_<NAME>, in lower case
//     as FetchContent names its folders).
//
// Threads, PkgConfig and Git are the toolchain and left out. ok is false when no cache
// was collected (the project was not configured with CMake under /work): D2 is then not
// measured.
func CMakeInstalled(b []byte) (ds schemas.DepSet, ok bool) {
	names := map[string]bool{}
	pkgFound := map[string]bool{}
	pkgArgs := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var comment string
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#envgap-cache ") {
			ok = true
			continue
		}
		if c, isComment := strings.CutPrefix(line, "//"); isComment {
			comment += c
			continue
		}
		doc := comment
		comment = ""
		key, value, found := strings.Cut(line, "=")
		if !found || strings.HasPrefix(line, "#") {
			continue
		}
		name, typ, _ := strings.Cut(key, ":")
		switch {
		case strings.HasPrefix(name, "FIND_PACKAGE_MESSAGE_DETAILS_"):
			names[strings.TrimPrefix(name, "FIND_PACKAGE_MESSAGE_DETAILS_")] = true
		case typ == "PATH" && strings.HasSuffix(name, "_DIR") && strings.HasPrefix(doc, "The directory containing a CMake configuration file for "):
			if value != "" && !strings.HasSuffix(value, "-NOTFOUND") {
				names[strings.TrimSuffix(name, "_DIR")] = true
			}
		case strings.HasPrefix(name, "FETCHCONTENT_UPDATES_DISCONNECTED_"):
			names[strings.ToLower(strings.TrimPrefix(name, "FETCHCONTENT_UPDATES_DISCONNECTED_"))] = true
		case strings.HasPrefix(name, "__pkg_config_arguments_"):
			pkgArgs[strings.TrimPrefix(name, "__pkg_config_arguments_")] = value
		case strings.HasSuffix(name, "_FOUND") && typ == "INTERNAL" && value == "1":
			pkgFound[strings.TrimSuffix(name, "_FOUND")] = true
		}
	}
	for prefix, args := range pkgArgs {
		if !pkgFound[prefix] {
			continue
		}
		for _, a := range strings.Split(args, ";") {
			a = strings.TrimSpace(a)
			if a == "" || pkgConfigKeywords[a] {
				continue
			}
			if i := strings.IndexAny(a, "<>="); i > 0 {
				a = a[:i]
			}
			names[a] = true
		}
	}
	ds.Deps = []schemas.Dependency{}
	for n := range names {
		if n == "" || cmakeToolchain[strings.ToLower(n)] {
			continue
		}
		ds.Deps = append(ds.Deps, schemas.Dependency{Name: n})
	}
	sort.Slice(ds.Deps, func(i, j int) bool { return ds.Deps[i].Name < ds.Deps[j].Name })
	return ds, ok
}
