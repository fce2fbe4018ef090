package audit

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/lib/safeinstall"
	"github.com/envgap/envgap/schemas"
)

// CategoryRule is one category assignment and the rule that made it.
type CategoryRule struct {
	Category schemas.Category `json:"category"`
	Rule     string           `json:"rule"`
	Evidence string           `json:"evidence"`
}

// Record is the stored audit of one instance (ref audits/<instance_id>).
type Record struct {
	Kind         schemas.RecordKind `json:"kind"`
	InstanceID   string             `json:"instance_id"`
	Ecosystem    schemas.Ecosystem  `json:"ecosystem"`
	RegistryDate string             `json:"registry_date"`
	AuditedAt    string             `json:"audited_at"`
	Verdict      schemas.Digest     `json:"verdict"`
	BeforeRun    schemas.Digest     `json:"before_run"`
	AfterRun     schemas.Digest     `json:"after_run"`
	Registry     string             `json:"registry"`
	Advisories   string             `json:"advisories"`
	// Rules is the RulesVersion the flags were decided by.
	Rules    string                      `json:"rules,omitempty"`
	Packages []safeinstall.PackageResult `json:"packages"`
	// SecurityFlags and Categories are plain lists in the card's order (export reads them).
	SecurityFlags []schemas.SecurityFlag `json:"security_flags"`
	Categories    []schemas.Category     `json:"categories"`
	CategoryRules []CategoryRule         `json:"category_rules"`
	SafeInstall   safeinstall.Safety     `json:"safe_install"`
	Note          string                 `json:"note,omitempty"`
}

// Auditor audits instances with the safe-install check's upstreams.
type Auditor struct {
	safeinstall.Checker
	Now func() time.Time
}

// RulesVersion names the flag, category and safe-install rules (safeinstall.RulesVersion);
// a stored audit decided by other rules is not reused.
const RulesVersion = safeinstall.RulesVersion

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
	rec := &Record{Kind: schemas.KindAudit, Rules: RulesVersion, InstanceID: in.InstanceID, Ecosystem: in.Ecosystem, RegistryDate: in.RegistryDate,
		AuditedAt: now().UTC().Format(time.RFC3339), Packages: []safeinstall.PackageResult{}, SecurityFlags: []schemas.SecurityFlag{},
		Categories: []schemas.Category{}, CategoryRules: []CategoryRule{}}
	reg, _ := a.RegistryFor(in.Ecosystem)
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
	pkgs := safeinstall.Compare(in.Ecosystem, before, in.After.D1.Deps)
	installed := map[string]string{}
	for _, run := range []*schemas.Run{in.Before, in.After} {
		if run == nil {
			continue
		}
		for _, d := range run.D2.Deps {
			installed[safeinstall.Key(in.Ecosystem, d.Name)] = d.Spec
		}
	}
	if err := a.Check(ctx, in.Ecosystem, cutoff, installed, pkgs); err != nil {
		return nil, fmt.Errorf("audit %s: %w", in.InstanceID, err)
	}
	rec.Packages = pkgs
	flags := map[schemas.SecurityFlag][]string{}
	var safeSet []safeinstall.PackageResult
	for _, p := range pkgs {
		if p.Involved {
			for _, f := range p.Flags {
				flags[f] = append(flags[f], p.Name)
			}
		}
		if p.Role != safeinstall.RoleDropped {
			safeSet = append(safeSet, p)
		}
	}
	rec.SafeInstall = safeinstall.Share(safeSet)
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

var (
	conflictRe = regexp.MustCompile(`(?i)ResolutionImpossible|\bERESOLVE\b|conflicting dependencies|version conflict|dependency conflict|incompatible versions? (?:of|for)`)
	aptRe      = regexp.MustCompile(`(?m)\bapt(?:-get)?\s+(?:-\S+\s+)*install\s+((?:-\S+\s+)*[A-Za-z0-9][^\n;&|]*)`)
)

// categorize applies the category rules.
func categorize(in Input, pkgs []safeinstall.PackageResult, flags map[schemas.SecurityFlag][]string) []CategoryRule {
	var out []CategoryRule
	for _, p := range pkgs {
		switch p.Role {
		case safeinstall.RoleAdded:
			out = append(out, CategoryRule{schemas.CategoryUnderspecification, "the fix adds a package D1 lacked",
				fmt.Sprintf("%s %s", p.Name, p.Spec)})
		case safeinstall.RoleChanged:
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

// Read returns the audit Record of an instance, or an error wrapping data.ErrNotFound
// when it has not been audited.
func Read(st catalog.Store, id string) (*Record, error) {
	d, err := st.Ref(data.AuditRef(id))
	if err != nil {
		return nil, fmt.Errorf("audit of %s: %w (run envgap audit)", id, err)
	}
	var r Record
	if err := st.GetJSON(d, &r); err != nil {
		return nil, fmt.Errorf("audit of %s: %w", id, err)
	}
	if r.Kind != schemas.KindAudit {
		return nil, fmt.Errorf("audit of %s: object %s is a %q record, not an audit", id, d.Short(), r.Kind)
	}
	return &r, nil
}
