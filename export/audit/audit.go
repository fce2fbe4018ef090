package audit

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
)

// Roles of a package in the fix.
const (
	RoleAdded     = "added"     // in the after-fix D1 only
	RoleChanged   = "changed"   // in both, with another constraint
	RoleDropped   = "dropped"   // in the before-fix D1 only
	RoleUnchanged = "unchanged" // in both, same constraint
)

// PackageResult is the audit of one declared package.
type PackageResult struct {
	Name string `json:"name"`
	Spec string `json:"spec,omitempty"`
	// PreviousSpec is the before-fix constraint of a changed package.
	PreviousSpec string `json:"previous_spec,omitempty"`
	Role         string `json:"role"`
	Involved     bool   `json:"involved"`
	Pinned       bool   `json:"pinned"`
	// Checked is false for packages without a registry here (C++ and system packages).
	Checked bool `json:"checked"`
	// Exists today; ExistedAtDate at registry_date (yes, no, unknown).
	Exists        bool `json:"exists"`
	ExistedAtDate Tri  `json:"existed_at_date"`
	// Version is the version checked for advisories, VersionFrom where it came from
	// ("pinned" or "installed").
	Version     string `json:"version,omitempty"`
	VersionFrom string `json:"version_from,omitempty"`
	// VersionRemoved: the registry lists Version as removed (a yanked or deleted PyPI
	// release, an unpublished npm version). VersionUnlisted: the registry lists the
	// package's versions and Version is not among them (it was never published there).
	// VersionNote says why.
	VersionRemoved  bool                   `json:"version_removed,omitempty"`
	VersionUnlisted bool                   `json:"version_unlisted,omitempty"`
	VersionNote     string                 `json:"version_note,omitempty"`
	Advisories      []string               `json:"advisories"`
	Flags           []schemas.SecurityFlag `json:"flags"`
	Note            string                 `json:"note,omitempty"`
}

// Safe reports whether the package counts as a safe install: it exists (the registry
// knows the package, and the version checked is one it published and did not remove),
// is pinned and has no known advisory. A pin of a version the registry never published
// (tabulate==0.9.1) names nothing that exists: not safe.
func (p PackageResult) Safe() bool {
	return p.Checked && p.Exists && !p.VersionRemoved && !p.VersionUnlisted && p.Pinned && len(p.Advisories) == 0
}

// CategoryRule is one category assignment and the rule that made it.
type CategoryRule struct {
	Category schemas.Category `json:"category"`
	Rule     string           `json:"rule"`
	Evidence string           `json:"evidence"`
}

// Safety is the safe-install share of a set of declared packages.
type Safety struct {
	Safe  int     `json:"safe"`
	Total int     `json:"total"`
	Share float64 `json:"share"`
	// Unchecked counts packages without a registry here (C++, system packages); they are
	// not part of Total.
	Unchecked int `json:"unchecked"`
}

// Record is the stored audit of one instance (ref audits/<instance_id>).
type Record struct {
	Kind         string            `json:"kind"` // "audit"
	InstanceID   string            `json:"instance_id"`
	Ecosystem    schemas.Ecosystem `json:"ecosystem"`
	RegistryDate string            `json:"registry_date"`
	AuditedAt    string            `json:"audited_at"`
	Verdict      schemas.Digest    `json:"verdict"`
	BeforeRun    schemas.Digest    `json:"before_run"`
	AfterRun     schemas.Digest    `json:"after_run"`
	Registry     string            `json:"registry"`
	Advisories   string            `json:"advisories"`
	// Rules is the RulesVersion the flags were decided by.
	Rules    string          `json:"rules,omitempty"`
	Packages []PackageResult `json:"packages"`
	// SecurityFlags and Categories are plain lists in the card's order (export reads them).
	SecurityFlags []schemas.SecurityFlag `json:"security_flags"`
	Categories    []schemas.Category     `json:"categories"`
	CategoryRules []CategoryRule         `json:"category_rules"`
	SafeInstall   Safety                 `json:"safe_install"`
	Note          string                 `json:"note,omitempty"`
}

// Auditor holds the upstreams. Any of the registries may be nil (that ecosystem's packages
// are then recorded as not checked).
type Auditor struct {
	PyPI, NPM, Maven Registry
	OSV              Advisories
	Now              func() time.Time
}

func (a *Auditor) registryFor(eco schemas.Ecosystem) (Registry, string) {
	switch eco {
	case schemas.EcosystemPython:
		return a.PyPI, "PyPI"
	case schemas.EcosystemJavaScript:
		return a.NPM, "npm"
	case schemas.EcosystemJava:
		return a.Maven, "Maven"
	}
	return nil, ""
}

// Input is what one instance's audit reads.
type Input struct {
	InstanceID   string
	Ecosystem    schemas.Ecosystem
	RegistryDate string
	Before       *schemas.Run // may be nil
	After        *schemas.Run // may be nil
	// BeforeOutput is the captured output of the before-fix run's steps (for conflicts).
	BeforeOutput string
	// FailureSignature of the task or candidate.
	FailureSignature string
	// GoldFiles of the fix (for a Lite setup.sh).
	GoldFiles []schemas.File
}

// Audit audits one instance. It does not store anything.
func (a *Auditor) Audit(ctx context.Context, in Input) (*Record, error) {
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	rec := &Record{Kind: "audit", Rules: RulesVersion, InstanceID: in.InstanceID, Ecosystem: in.Ecosystem, RegistryDate: in.RegistryDate,
		AuditedAt: now().UTC().Format(time.RFC3339), Packages: []PackageResult{}, SecurityFlags: []schemas.SecurityFlag{},
		Categories: []schemas.Category{}, CategoryRules: []CategoryRule{}}
	reg, osvEco := a.registryFor(in.Ecosystem)
	if reg != nil {
		rec.Registry = reg.URL()
	}
	if a.OSV != nil {
		rec.Advisories = a.OSV.Source()
	}
	if in.After == nil {
		rec.Note = "no after-fix run: nothing to audit"
		return rec, nil
	}
	cutoff, err := schemas.ParseCutoff(in.RegistryDate)
	if err != nil {
		return nil, fmt.Errorf("audit %s: registry_date: %w", in.InstanceID, err)
	}
	var before []schemas.Dependency
	if in.Before != nil {
		before = in.Before.D1.Deps
	}
	pkgs := comparePackages(in.Ecosystem, before, in.After.D1.Deps)
	installed := map[string]string{}
	for _, run := range []*schemas.Run{in.Before, in.After} {
		if run == nil {
			continue
		}
		for _, d := range run.D2.Deps {
			installed[key(in.Ecosystem, d.Name)] = d.Spec
		}
	}
	if err := a.check(ctx, in.Ecosystem, osvEco, reg, cutoff, installed, pkgs); err != nil {
		return nil, fmt.Errorf("audit %s: %w", in.InstanceID, err)
	}
	rec.Packages = pkgs
	flags := map[schemas.SecurityFlag][]string{}
	var safeSet []PackageResult
	for _, p := range pkgs {
		if p.Involved {
			for _, f := range p.Flags {
				flags[f] = append(flags[f], p.Name)
			}
		}
		if p.Role != RoleDropped {
			safeSet = append(safeSet, p)
		}
	}
	rec.SafeInstall = share(safeSet)
	for _, f := range schemas.SecurityFlags {
		if len(flags[f]) > 0 {
			rec.SecurityFlags = append(rec.SecurityFlags, f)
		}
	}
	rec.CategoryRules = categorize(in, pkgs, flags)
	seen := map[schemas.Category]bool{}
	for _, c := range rec.CategoryRules {
		seen[c.Category] = true
	}
	for _, c := range schemas.Categories {
		if seen[c] {
			rec.Categories = append(rec.Categories, c)
		}
	}
	return rec, nil
}

func key(eco schemas.Ecosystem, name string) string {
	if eco == schemas.EcosystemPython {
		return normalizePython(stripExtras(name))
	}
	return name
}

func stripExtras(name string) string {
	if i := strings.IndexAny(name, "[;"); i >= 0 {
		name = name[:i]
	}
	return strings.TrimSpace(name)
}

// comparePackages lists the after-fix packages and the before-fix ones the fix changed or
// dropped, with their role.
func comparePackages(eco schemas.Ecosystem, before, after []schemas.Dependency) []PackageResult {
	prev := map[string]schemas.Dependency{}
	for _, d := range before {
		prev[key(eco, d.Name)] = d
	}
	seen := map[string]bool{}
	var out []PackageResult
	for _, d := range after {
		k := key(eco, d.Name)
		if seen[k] {
			continue
		}
		seen[k] = true
		p := PackageResult{Name: d.Name, Spec: d.Spec, Pinned: d.Pinned || exactVersion(eco, d.Spec) != "", Role: RoleAdded, Involved: true}
		if b, ok := prev[k]; ok {
			p.Role, p.Involved = RoleUnchanged, false
			if strings.TrimSpace(b.Spec) != strings.TrimSpace(d.Spec) {
				p.Role, p.Involved, p.PreviousSpec = RoleChanged, true, b.Spec
			}
		}
		out = append(out, p)
	}
	for _, d := range before {
		k := key(eco, d.Name)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, PackageResult{Name: d.Name, Spec: d.Spec, Pinned: d.Pinned || exactVersion(eco, d.Spec) != "", Role: RoleDropped, Involved: true})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

var (
	pyExactRe    = regexp.MustCompile(`^\s*===?\s*([A-Za-z0-9][A-Za-z0-9._+!-]*)\s*$`)
	plainExactRe = regexp.MustCompile(`^\s*[=v]?\s*([0-9][A-Za-z0-9._+-]*)\s*$`)
)

// exactVersion returns the one version a spec names, or "".
func exactVersion(eco schemas.Ecosystem, spec string) string {
	switch eco {
	case schemas.EcosystemPython:
		if m := pyExactRe.FindStringSubmatch(spec); m != nil && !strings.Contains(m[1], "*") {
			return m[1]
		}
	case schemas.EcosystemJavaScript, schemas.EcosystemJava:
		if m := plainExactRe.FindStringSubmatch(spec); m != nil && !strings.ContainsAny(m[1], "*xX") {
			return m[1]
		}
	}
	return ""
}

// RulesVersion names the flag, category and safe-install rules; a stored audit decided by
// other rules is not reused, and envgap eval's memo key carries it. "2": unpinned means no
// version constraint at all. "3": a pinned version the registry never published is not a
// safe install.
const RulesVersion = "3"

// Unconstrained reports whether a declared spec puts no version constraint at all on its
// package: the unpinned flag. Any constraint counts ("cython<3.0.0", "^2.0.0", a Maven
// range): the card's example fix setup_requires=['cython<3.0.0'] is not unpinned. An
// empty spec is unconstrained for Python and npm; a Maven dependency without a version
// takes it from dependency management, so only Maven's LATEST and RELEASE are. (Safe
// install, the agent score, asks more: an exact pin; see PackageResult.Safe.)
func Unconstrained(eco schemas.Ecosystem, spec string) bool {
	s := strings.TrimSpace(spec)
	switch eco {
	case schemas.EcosystemJava:
		return s == "LATEST" || s == "RELEASE"
	case schemas.EcosystemJavaScript:
		switch s {
		case "", "*", "x", "X", "latest", ">=0", ">=0.0.0", "*.*.*", "x.x.x":
			return true
		}
		return false
	case schemas.EcosystemPython:
		// A bare name, or pipenv's "*"; extras and markers are not constraints.
		s = strings.TrimSpace(strings.SplitN(s, ";", 2)[0])
		return s == "" || s == "*" || s == "==*" || s == ">=0"
	}
	return s == "" || s == "*"
}

// check fills registry and advisory results for pkgs. It asks the registry with up to 8
// requests at a time.
func (a *Auditor) check(ctx context.Context, eco schemas.Ecosystem, osvEco string, reg Registry, cutoff schemas.Cutoff, installed map[string]string, pkgs []PackageResult) error {
	if reg == nil {
		for i := range pkgs {
			pkgs[i].ExistedAtDate = Unknown
			pkgs[i].Advisories = []string{}
			pkgs[i].Flags = []schemas.SecurityFlag{}
			pkgs[i].Note = "not checked: no package registry is audited for " + string(eco) + " packages"
		}
		return nil
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		sem  = make(chan struct{}, 8)
	)
	for i := range pkgs {
		wg.Add(1)
		go func(p *PackageResult) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			name := p.Name
			if eco == schemas.EcosystemPython {
				name = stripExtras(name)
			}
			e, err := reg.Lookup(ctx, name, cutoff)
			if err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("package %s: %w", p.Name, err))
				mu.Unlock()
				return
			}
			p.Checked, p.Exists, p.ExistedAtDate = true, e.Now, e.AtDate
			if _, ok := installed[key(eco, p.Name)]; ok && !e.Now {
				p.ExistedAtDate = Yes // the date-limited run installed it
			}
			if v := exactVersion(eco, p.Spec); v != "" {
				p.Version, p.VersionFrom = v, "pinned"
			} else if v := installed[key(eco, p.Name)]; v != "" && p.Role != RoleDropped {
				p.Version, p.VersionFrom = v, "installed"
			}
			if e.Now && p.Version != "" && e.KnowsVersions() {
				switch listed, removed, why := e.VersionState(p.Version); {
				case removed:
					p.VersionRemoved, p.VersionNote = true, "version "+p.Version+": "+why
				case !listed:
					// Not a safe install, but not a security flag either: only the
					// package's owner could publish it.
					p.VersionUnlisted = true
					p.VersionNote = "version " + p.Version + " is not in the registry (never published there)"
				}
			}
		}(&pkgs[i])
	}
	wg.Wait()
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	var qs []Query
	var idx []int
	for i, p := range pkgs {
		if p.Version != "" && p.Exists {
			qs = append(qs, Query{Ecosystem: osvEco, Name: stripExtras(p.Name), Version: p.Version})
			idx = append(idx, i)
		}
	}
	if len(qs) > 0 && a.OSV != nil {
		res, err := a.OSV.Query(ctx, qs)
		if err != nil {
			return err
		}
		for k, i := range idx {
			pkgs[i].Advisories = res[k]
		}
	}
	for i := range pkgs {
		p := &pkgs[i]
		if p.Advisories == nil {
			p.Advisories = []string{}
		}
		p.Flags = []schemas.SecurityFlag{}
		switch {
		case !p.Exists && p.ExistedAtDate == Yes, p.VersionRemoved:
			p.Flags = append(p.Flags, schemas.FlagRemoved)
		case !p.Exists:
			p.Flags = append(p.Flags, schemas.FlagNonexistent)
		}
		if len(p.Advisories) > 0 {
			p.Flags = append(p.Flags, schemas.FlagVulnerable)
		}
		if p.Role != RoleDropped && Unconstrained(eco, p.Spec) {
			p.Flags = append(p.Flags, schemas.FlagUnpinned)
		}
		if a.OSV == nil && p.Version != "" {
			p.Note = "no advisory database was given"
		}
	}
	return nil
}

func share(ps []PackageResult) Safety {
	var s Safety
	for _, p := range ps {
		if !p.Checked {
			s.Unchecked++
			continue
		}
		s.Total++
		if p.Safe() {
			s.Safe++
		}
	}
	if s.Total > 0 {
		s.Share = float64(s.Safe) / float64(s.Total)
	}
	return s
}

var (
	conflictRe = regexp.MustCompile(`(?i)ResolutionImpossible|\bERESOLVE\b|conflicting dependencies|version conflict|dependency conflict|incompatible versions? (?:of|for)`)
	aptRe      = regexp.MustCompile(`(?m)\bapt(?:-get)?\s+(?:-\S+\s+)*install\s+((?:-\S+\s+)*[A-Za-z0-9][^\n;&|]*)`)
)

// categorize applies the category rules.
func categorize(in Input, pkgs []PackageResult, flags map[schemas.SecurityFlag][]string) []CategoryRule {
	var out []CategoryRule
	for _, p := range pkgs {
		switch p.Role {
		case RoleAdded:
			out = append(out, CategoryRule{schemas.CategoryUnderspecification, "the fix adds a package D1 lacked",
				fmt.Sprintf("%s %s", p.Name, p.Spec)})
		case RoleChanged:
			out = append(out, CategoryRule{schemas.CategoryMisspecification, "the fix changes the version constraint of a package D1 had",
				fmt.Sprintf("%s: %q -> %q", p.Name, p.PreviousSpec, p.Spec)})
		}
	}
	for _, f := range in.GoldFiles {
		if f.Content == nil || !strings.HasSuffix(f.Path, "setup.sh") {
			continue
		}
		for _, m := range aptRe.FindAllStringSubmatch(*f.Content, -1) {
			var names []string
			for _, w := range strings.Fields(m[1]) {
				if !strings.HasPrefix(w, "-") {
					names = append(names, w)
				}
			}
			if len(names) > 0 {
				out = append(out, CategoryRule{schemas.CategoryUnderspecification, "the fix's setup.sh installs a system package",
					f.Path + ": " + strings.Join(names, " ")})
			}
		}
	}
	for _, text := range []struct{ where, s string }{{"failure_signature", in.FailureSignature}, {"before-fix output", in.BeforeOutput}} {
		if m := conflictRe.FindString(text.s); m != "" {
			out = append(out, CategoryRule{schemas.CategoryConflict, "the failure output reports a dependency conflict",
				text.where + " says " + m})
			break
		}
	}
	for _, f := range schemas.SecurityFlags {
		if names := flags[f]; len(names) > 0 {
			out = append(out, CategoryRule{schemas.CategorySecurity, "a security flag is set",
				string(f) + ": " + strings.Join(names, ", ")})
		}
	}
	return out
}

// SafeInstall audits a set of declared packages (e.g. an agent's D1) and returns the share
// that exist (package and pinned version), are pinned and have no known advisory
// (PackageResult.Safe). A registry that fails is an error, never "does not exist".
// registryDate is used for the existence-at-date detail only.
func SafeInstall(ctx context.Context, deps []schemas.Dependency, eco schemas.Ecosystem, registryDate string, a *Auditor) (Safety, []PackageResult, error) {
	cutoff, err := schemas.ParseCutoff(registryDate)
	if err != nil {
		return Safety{}, nil, fmt.Errorf("registry_date: %w", err)
	}
	pkgs := comparePackages(eco, nil, deps)
	reg, osvEco := a.registryFor(eco)
	if err := a.check(ctx, eco, osvEco, reg, cutoff, map[string]string{}, pkgs); err != nil {
		return Safety{}, nil, err
	}
	return share(pkgs), pkgs, nil
}

// Read returns the audit Record of an instance, or an error wrapping data.ErrNotFound
// when it has not been audited.
func Read(st catalog.Store, id string) (*Record, error) {
	d, err := st.Ref(data.RefAudits + id)
	if err != nil {
		return nil, fmt.Errorf("audit of %s: %w (run envgap audit)", id, err)
	}
	var r Record
	if err := st.GetJSON(d, &r); err != nil {
		return nil, fmt.Errorf("audit of %s: %w", id, err)
	}
	if r.Kind != "audit" {
		return nil, fmt.Errorf("audit of %s: object %s is a %q record, not an audit", id, d.Short(), r.Kind)
	}
	return &r, nil
}
