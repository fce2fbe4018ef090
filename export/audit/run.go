package audit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/lib/safeinstall"
	"github.com/envgap/envgap/schemas"
)

// maxOutputBytes is how much of each before-fix step's output is read for the conflict rule.
const maxOutputBytes = 4 << 20

// Result says what a store audit did.
type Result struct {
	Audited []Summary `json:"audited"`
	// Kept are the instances whose stored audit was kept (RunOptions.MaxAge).
	Kept   []Summary `json:"kept"`
	Failed []Failure `json:"failed"`
}

// RunOptions say which stored audits Run keeps.
type RunOptions struct {
	// MaxAge: an instance whose stored audit read the same verdict, asked the same
	// upstreams and is younger than MaxAge is not audited again (its registries are
	// not asked). Zero audits every instance again.
	MaxAge time.Duration
	// Now is the clock for MaxAge (default time.Now).
	Now func() time.Time
}

// DefaultMaxAge is how long envgap audit keeps an audit of unchanged inputs.
const DefaultMaxAge = 7 * 24 * time.Hour

// Summary is one stored audit.
type Summary struct {
	InstanceID    string                 `json:"instance_id"`
	Record        schemas.Digest         `json:"record"`
	SecurityFlags []schemas.SecurityFlag `json:"security_flags"`
	Categories    []schemas.Category     `json:"categories"`
	SafeInstall   safeinstall.Safety     `json:"safe_install"`
}

// Failure is an instance whose audit could not be made (a registry or advisory error).
type Failure struct {
	InstanceID string `json:"instance_id"`
	Error      string `json:"error"`
}

// Run audits every instance with a verdict (or only ids, when given), stores each Record
// and points audits/<instance_id> at it. An instance whose stored audit is recent and
// read the same inputs is kept (see RunOptions). An instance whose upstream fails is
// listed in Failed and keeps its previous audit; the others are done.
func Run(ctx context.Context, st catalog.Store, a *Auditor, ids []string, opts RunOptions) (*Result, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	if len(ids) == 0 {
		refs, err := st.Refs(data.RefVerdicts)
		if err != nil {
			return nil, err
		}
		for _, r := range refs {
			ids = append(ids, strings.TrimPrefix(r.Name, data.RefVerdicts))
		}
	}
	res := &Result{Audited: []Summary{}, Kept: []Summary{}, Failed: []Failure{}}
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		in, vd, err := LoadInput(st, id)
		if err != nil {
			return res, err
		}
		if opts.MaxAge > 0 {
			if old, d, ok := a.reusable(st, id, vd, in.Ecosystem, now(), opts.MaxAge); ok {
				res.Kept = append(res.Kept, Summary{id, d, old.SecurityFlags, old.Categories, old.SafeInstall})
				continue
			}
		}
		rec, err := a.Audit(ctx, *in)
		if err != nil {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			res.Failed = append(res.Failed, Failure{id, err.Error()})
			continue
		}
		rec.Verdict = vd
		v, _, _ := st.Verdict(id)
		if len(v.Before) > 0 {
			rec.BeforeRun = v.Before[0]
		}
		if len(v.After) > 0 {
			rec.AfterRun = v.After[0]
		}
		d, err := st.PutJSON(rec)
		if err != nil {
			return res, err
		}
		if err := st.SetRef(data.AuditRef(id), d); err != nil {
			return res, err
		}
		res.Audited = append(res.Audited, Summary{id, d, rec.SecurityFlags, rec.Categories, rec.SafeInstall})
	}
	return res, nil
}

// reusable returns the stored audit of id when it read verdict vd, asked the upstreams a
// would ask, and is younger than maxAge.
func (a *Auditor) reusable(st catalog.Store, id string, vd schemas.Digest, eco schemas.Ecosystem, now time.Time, maxAge time.Duration) (*Record, schemas.Digest, bool) {
	d, err := st.Ref(data.AuditRef(id))
	if err != nil {
		return nil, d, false
	}
	var r Record
	if err := st.GetJSON(d, &r); err != nil || r.Kind != schemas.KindAudit || r.Verdict != vd || r.Rules != RulesVersion {
		return nil, d, false
	}
	reg, _ := a.RegistryFor(eco)
	regURL, osvSrc := "", ""
	if reg != nil {
		regURL = reg.URL()
	}
	if a.OSV != nil {
		osvSrc = a.OSV.Source()
	}
	at, err := time.Parse(time.RFC3339, r.AuditedAt)
	if err != nil || r.Registry != regURL || r.Advisories != osvSrc || now.Sub(at) >= maxAge || at.After(now) {
		return nil, d, false
	}
	return &r, d, true
}

// LoadInput gathers an instance's audit input from the store: its verdict's first before-
// and after-fix runs, the before-fix output, and the task row (or candidate) fields.
func LoadInput(st catalog.Store, id string) (*Input, schemas.Digest, error) {
	v, vd, err := st.Verdict(id)
	if err != nil {
		return nil, vd, fmt.Errorf("audit %s: verdict: %w", id, err)
	}
	in := &Input{InstanceID: id}
	var t schemas.Task
	if d, err := st.Ref(data.TaskRef(id)); err == nil {
		if err := st.GetJSON(d, &t); err != nil {
			return nil, vd, fmt.Errorf("audit %s: task: %w", id, err)
		}
		in.Ecosystem, in.RegistryDate, in.FailureSignature, in.GoldFiles = t.Ecosystem, t.RegistryDate, t.FailureSignature, t.GoldFiles
	} else if errors.Is(err, data.ErrNotFound) {
		c, err := st.CandidateByID(id)
		if err != nil {
			return nil, vd, fmt.Errorf("audit %s: %w", id, err)
		}
		in.Ecosystem, in.RegistryDate, in.FailureSignature, in.GoldFiles = c.Ecosystem, c.RegistryDate, c.FailureSignature, c.GoldFiles
		if in.FailureSignature == "" {
			in.FailureSignature = v.FailureSignature
		}
	} else {
		return nil, vd, err
	}
	load := func(ds []schemas.Digest) (*schemas.Run, error) {
		if len(ds) == 0 {
			return nil, nil
		}
		var r schemas.Run
		if err := st.GetJSON(ds[0], &r); err != nil {
			return nil, fmt.Errorf("audit %s: run %s: %w", id, ds[0].Short(), err)
		}
		return &r, nil
	}
	if in.Before, err = load(v.Before); err != nil {
		return nil, vd, err
	}
	if in.After, err = load(v.After); err != nil {
		return nil, vd, err
	}
	if in.Before != nil {
		var b strings.Builder
		for _, s := range in.Before.Steps {
			if s.Output.IsZero() {
				continue
			}
			rc, err := st.OpenObject(s.Output)
			if err != nil {
				continue // a missing log only weakens the conflict rule
			}
			out, _ := io.ReadAll(io.LimitReader(rc, maxOutputBytes))
			rc.Close()
			b.Write(out)
			b.WriteByte('\n')
		}
		in.BeforeOutput = b.String()
	}
	return in, vd, nil
}
