// Package deps measures the three dependency layers of the paper behind EnvGap's Lite
// set and manifest F1: D1, what a project's manifests declare; D2, what the package
// manager installed; D3, what a traced run of the program actually loaded. All of it is
// pure parsing: the commands that produce D2 and D3 inside a container are returned as
// strings for the evaluation core to run.
//
// # D1: declared (ParseManifests, FindManifests)
//
// Manifests are read from an fs.FS of the project, never executed. Names:
//
//   - python: PEP 503 normalised distribution names. requirements files: comments,
//     backslash continuations, -r/-c includes followed inside the project only (one
//     outside or a URL is noted in Notes, not read), option lines, per-requirement
//     options (--hash ...), environment markers, extras, name @ URL, VCS and archive URLs
//     (named by #egg= or the file name), and local paths ("-e .", "./lib": the project,
//     not a dependency). A -c constraints file declares nothing; its version fills the
//     spec of a declared package that has none. setup.py is tokenised and read
//     statically: install_requires and setup_requires count when they are literals (see
//     pysetup.go); a list built at run time sets Unreadable, in words, and is never
//     guessed. setup.cfg [options] install_requires and setup_requires ("file:" is
//     followed). pyproject.toml: [project] dependencies, [build-system] requires, files
//     of [tool.setuptools.dynamic] dependencies, Poetry's [tool.poetry.dependencies]
//     without python. Optional dependencies (extras, optional-dependencies,
//     extras_require, Poetry optional = true) and development groups are not declared
//     runtime dependencies and are left out. Markers are not evaluated: a package
//     declared for Windows only still counts. Extras of a requirement are dropped.
//     Pinned: an "==V" clause without a wildcard, "===V", a Poetry bare version, or a VCS
//     URL at a full commit hash.
//   - javascript: the keys of package.json "dependencies"; devDependencies (and peer and
//     optional ones) are left out, as the paper does. Pinned: an exact semver, also
//     behind an npm: alias; not a range, tag, URL, file: or "*". Workspaces are not
//     followed.
//   - java: pom.xml <dependencies> (not dependencyManagement, not plugin dependencies,
//     not profiles), following <modules> inside the project; test scope is left out
//     (the classpath run loads runtime jars only). Name is groupId:artifactId, Maven's
//     identity and what a registry audit needs; Key and Compare use the artifactId, as
//     the paper does. Versions resolve ${properties} (the parent's too) and project.*,
//     and a missing version comes from dependencyManagement. Pinned: one concrete
//     release (not missing, not a range, not LATEST/RELEASE, not -SNAPSHOT, no
//     unresolved property). Dependencies between the project's own modules are dropped.
//   - cpp: CMakeLists.txt find_package and FetchContent_Declare names (the paper), plus
//     pkg_check_modules/pkg_search_module modules, IMPORTED_TARGET or not (an extension:
//     they declare system libraries the same way). The file is read with a real CMake
//     tokenizer (ParseCMake): quoted arguments with escapes, bracket arguments and
//     comments of any level, line comments, unquoted arguments, nested parentheses,
//     case-insensitive command names. add_subdirectory and include(<file>.cmake) are
//     followed inside the project; set(VAR value) literals are substituted; if()
//     conditions are not evaluated. Pinned: find_package with EXACT and a version;
//     FetchContent with a full commit hash as GIT_TAG, or URL_HASH.
//
// The main manifest (ManifestPath, the card's manifest_path) is the first one found:
// requirements.txt, pyproject.toml, setup.py, setup.cfg; package.json; pom.xml;
// CMakeLists.txt. ManifestPaths is every file read.
//
// # D2: installed (D2Commands, Installed)
//
// python: the difference of pip list --format=json before and after resolve
// (PipListDiff); javascript: the whole tree of npm ls --all --json, each package once
// (NpmLs); java: mvn dependency:list (MvnDependencyList); cpp: what the CMake configure
// found and fetched, read from the build trees' CMakeCache.txt (CMakeInstalled: module-
// and config-mode find_package, pkg-config modules, every FetchContent populated,
// including those a fetched project fetches; Threads, PkgConfig and Git left out as the
// toolchain), the paper's "CMake configure log"; D1, marked Unreadable, when no cache is
// found. The listings are written under /evidence (D2Paths). A task's d2_command
// replaces the "after" listing.
//
// # D3: traced (TraceCommand, TraceDeps)
//
// The run command runs under strace (see TraceCommand for the flags and why); the log
// is mapped to packages by each ecosystem's path rules (see TraceDeps). A file opened is
// a file used: a JVM searching the classpath opens jars it then finds nothing in, so a
// jar listed before the one that holds a class may count. For Python,
// PyModuleMapCommand's output names modules by their distribution (yaml → PyYAML).
//
// # Comparing (Key, Compare)
//
// Compare gives the paper's manifest precision, recall and F1 of D1 against D3, with
// phantom (declared, not loaded) and hidden (loaded, not declared) packages. For C++,
// Key maps common CMake package names to the libraries a trace sees (OpenSSL to ssl and
// crypto, ZLIB to z): the paper compared raw names, which is why its most frequent
// phantom was openssl and its most frequent hidden crypto.
package deps
