package core

import (
	"github.com/envgap/envgap/schemas"
)

// evidence gathers D1, D2 and D3 for one ecosystem.
type evidence struct {
	eco schemas.Ecosystem
}

func evidenceFor(eco schemas.Ecosystem) evidence { return evidence{eco: eco} }

func (e evidence) declared(files []File) schemas.DepSet {
	return schemas.DepSet{Deps: []schemas.Dependency{}, Unreadable: "manifest parsing not wired yet"}
}

func (e evidence) d2Commands(r schemas.Recipe) (before, after string) { return "", "" }

func (e evidence) installed(collected map[string][]byte, d1 schemas.DepSet) schemas.DepSet {
	return schemas.DepSet{Deps: []schemas.Dependency{}, Unreadable: "not wired yet"}
}

func (e evidence) traceCommand(run string) string { return run }

func (e evidence) traced(collected map[string][]byte) schemas.DepSet {
	return schemas.DepSet{Deps: []schemas.Dependency{}, Unreadable: "not wired yet"}
}
