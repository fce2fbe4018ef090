package lite

import (
	"fmt"
	"github.com/envgap/envgap/lib/studylayout"
	"path"
	"sort"
	"strings"

	"github.com/envgap/envgap/schemas"
)

// Extraction is the environment part of one repair, and what was left out.
type Extraction struct {
	// Fix is the environment part: changed environment files (content nil: deleted), the
	// generated setup.sh, unchanged copies of Java sources under src/main/java. Sorted.
	Fix []schemas.File
	// EnvChanged lists the environment files the repair changed, added or deleted.
	EnvChanged []string
	// Copied maps each Java source copied under src/main/java to the path it was written at.
	Copied map[string]string
	// SourceLeftOut lists the other paths the repair changed, added or deleted (source,
	// tests, data): they are not part of the fix.
	SourceLeftOut []string
	// Packages are the system packages setup.sh installs.
	Packages []string
}

// Extract computes the environment part of a repair from the project as written, the
// repaired project and the system packages the repair installed. The source stays as
// written: a Java source the repair moved under src/main/java is copied there unchanged
// (its original stays too), and every other source edit is left out.
func Extract(written, repaired []schemas.File, packages []string) (*Extraction, error) {
	w, r := fileMap(written), fileMap(repaired)
	ex := &Extraction{Copied: map[string]string{}}
	fix := map[string]*string{}
	all := map[string]bool{}
	for p := range w {
		all[p] = true
	}
	for p := range r {
		all[p] = true
	}
	// Java sources the repair moved under src/main/java, matched by file name.
	movedFrom := map[string]bool{}
	for _, p := range sortedKeys(r) {
		if _, was := w[p]; was || !strings.HasSuffix(p, ".java") || !underMavenSources(p) {
			continue
		}
		var cands []string
		for _, q := range sortedKeys(w) {
			if path.Base(q) == path.Base(p) && !underMavenSources(q) && !movedFrom[q] {
				cands = append(cands, q)
			}
		}
		// Prefer the file the repair removed from its old place (a move).
		sort.SliceStable(cands, func(i, j int) bool {
			_, ki := r[cands[i]]
			_, kj := r[cands[j]]
			return !ki && kj
		})
		if len(cands) == 0 {
			continue
		}
		q := cands[0]
		movedFrom[q] = true
		c := w[q]
		fix[p] = &c
		ex.Copied[p] = q
	}
	for _, p := range sortedKeys(all) {
		if _, done := fix[p]; done {
			if r[p] != w[ex.Copied[p]] {
				ex.SourceLeftOut = append(ex.SourceLeftOut, p)
			}
			continue
		}
		wc, inW := w[p]
		rc, inR := r[p]
		if inW == inR && wc == rc {
			continue
		}
		if !IsEnvironmentFile(p) {
			if !(movedFrom[p] && !inR) { // a moved source's old place is not an edit
				ex.SourceLeftOut = append(ex.SourceLeftOut, p)
			}
			continue
		}
		ex.EnvChanged = append(ex.EnvChanged, p)
		if inR {
			c := rc
			fix[p] = &c
		} else {
			fix[p] = nil
		}
	}
	if len(packages) > 0 {
		existing := ""
		if c, ok := fix[studylayout.SetupScriptPath]; ok && c != nil {
			existing = *c
		} else if c, ok := w[studylayout.SetupScriptPath]; ok {
			if _, deleted := fix[studylayout.SetupScriptPath]; !deleted {
				existing = c
			}
		}
		s, err := studylayout.SetupScript(packages, existing)
		if err != nil {
			return nil, err
		}
		fix[studylayout.SetupScriptPath] = &s
		ex.Packages = dedupSorted(packages)
	}
	for _, p := range sortedKeys(fix) {
		ex.Fix = append(ex.Fix, schemas.File{Path: p, Content: fix[p]})
	}
	return ex, nil
}

// Empty reports whether the repair had no environment part.
func (ex *Extraction) Empty() bool { return len(ex.Fix) == 0 }

// Describe says in words what the fix holds and what was left out.
func (ex *Extraction) Describe() string {
	var parts []string
	if len(ex.EnvChanged) > 0 {
		parts = append(parts, "environment files changed by the repair: "+strings.Join(ex.EnvChanged, ", "))
	}
	if len(ex.Packages) > 0 {
		parts = append(parts, fmt.Sprintf("%s installs the system packages the repair installed (%s)", studylayout.SetupScriptPath, strings.Join(ex.Packages, ", ")))
	}
	for _, p := range sortedKeys(ex.Copied) {
		parts = append(parts, fmt.Sprintf("%s copied unchanged to %s, where Maven compiles it", ex.Copied[p], p))
	}
	if len(ex.SourceLeftOut) > 0 {
		parts = append(parts, "source edits of the repair left out: "+strings.Join(ex.SourceLeftOut, ", "))
	}
	return strings.Join(parts, "; ")
}

func dedupSorted(s []string) []string {
	m := map[string]bool{}
	for _, x := range s {
		m[x] = true
	}
	return sortedKeys(m)
}
