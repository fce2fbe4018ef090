package core

import (
	"regexp"
	"sort"

	"github.com/envgap/envgap/core/deps"
	"github.com/envgap/envgap/schemas"
)

// evidence gathers D1, D2 and D3 for one ecosystem (package core/deps does the reading).
type evidence struct {
	eco  schemas.Ecosystem
	self []string // the project's own package names
	// pipBefore are the packages the image had before resolve (Python): never D3.
}

func evidenceFor(eco schemas.Ecosystem) *evidence { return &evidence{eco: eco} }

func unreadable(why string) schemas.DepSet {
	return schemas.DepSet{Deps: []schemas.Dependency{}, Unreadable: why}
}

// declared reads D1 from the project's manifests on the host.
func (e *evidence) declared(files []File, manifestPaths []string) (schemas.DepSet, []string) {
	fsys := FS(files)
	var (
		d   deps.Declared
		err error
	)
	if len(manifestPaths) > 0 {
		d, err = deps.ParseManifestPaths(e.eco, fsys, manifestPaths)
	} else {
		d, err = deps.ParseManifests(e.eco, fsys)
	}
	if err != nil {
		return unreadable("the manifests could not be read: " + err.Error()), nil
	}
	e.self = d.Self
	if d.Deps == nil {
		d.Deps = []schemas.Dependency{}
	}
	return d.DepSet, d.ManifestPaths
}

// d2Commands are the evidence steps around resolve: before lists what the image has,
// after what resolve installed (and, for Python, which distribution each module is).
func (e *evidence) d2Commands(r schemas.Recipe) (before, after string) {
	before, after = deps.D2Commands(e.eco, r.D2Command)
	if e.eco == schemas.EcosystemPython {
		if after != "" {
			after += "; "
		}
		after += deps.PyModuleMapCommand
	}
	return before, after
}

func (e *evidence) installed(collected map[string][]byte, d1 schemas.DepSet) schemas.DepSet {
	bp, ap := deps.D2Paths(e.eco)
	ds, err := deps.Installed(e.eco, collected[bp], collected[ap], d1, e.self)
	if err != nil {
		return unreadable("the installed packages could not be listed: " + err.Error())
	}
	if ds.Deps == nil {
		ds.Deps = []schemas.Dependency{}
	}
	return ds
}

func (e *evidence) traceCommand(run string) string { return deps.TraceCommand(run) }

func (e *evidence) traced(collected map[string][]byte, d2 schemas.DepSet) schemas.DepSet {
	log, ok := collected[deps.TracePath]
	if !ok {
		return unreadable("no system-call trace was recorded (strace missing from the image?)")
	}
	opts := deps.TraceOptions{Workdir: "/work", Known: d2.Deps, Exclude: append([]string(nil), e.self...)}
	if e.eco == schemas.EcosystemPython {
		if m, err := deps.ParsePyModuleMap(collected[deps.PyModulesPath]); err == nil {
			opts.PyModules = m
		}
		bp, _ := deps.D2Paths(e.eco)
		if base, err := deps.PipListDiff(nil, collected[bp]); err == nil {
			for _, d := range base.Deps {
				opts.Exclude = append(opts.Exclude, d.Name)
			}
		}
	}
	ds, err := deps.TraceDeps(e.eco, log, opts)
	if err != nil {
		return unreadable("the trace could not be read: " + err.Error())
	}
	if ds.Deps == nil {
		ds.Deps = []schemas.Dependency{}
	}
	sort.Slice(ds.Deps, func(i, j int) bool { return ds.Deps[i].Name < ds.Deps[j].Name })
	return ds
}

var ansiRe = regexp.MustCompile("\x1b\\[[0-9;?]*[ -/]*[@-~]")

// StripANSI removes terminal colour and cursor codes, so failure patterns match output
// that tools coloured.
func StripANSI(b []byte) []byte { return ansiRe.ReplaceAll(b, nil) }
