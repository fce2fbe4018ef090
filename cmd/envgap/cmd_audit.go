package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/envgap/envgap/export/audit"
	"github.com/envgap/envgap/lib/safeinstall"
	"github.com/spf13/cobra"
)

// auditUpstreams are the registries and the advisory source a registry audit asks
// (envgap audit; envgap eval and run for the safe-install share).
type auditUpstreams struct {
	PyPI        string
	NPMRegistry string
	Maven       string
	OSVURL      string
	OSVFile     string
	Timeout     time.Duration
}

func (o *auditUpstreams) addFlags(c *cobra.Command) {
	c.Flags().StringVar(&o.PyPI, "pypi", safeinstall.DefaultPyPIURL, "PyPI base URL (JSON API)")
	c.Flags().StringVar(&o.NPMRegistry, "npm-registry", "", "npm registry URL (default: npm config get registry)")
	c.Flags().StringVar(&o.Maven, "maven", safeinstall.DefaultMavenURL, "Maven Central search base URL")
	c.Flags().StringVar(&o.OSVURL, "osv-url", safeinstall.DefaultOSVURL, "OSV API base URL")
	c.Flags().StringVar(&o.OSVFile, "osv", "", "local OSV records file (JSON array or JSON Lines) instead of the OSV API")
	c.Flags().DurationVar(&o.Timeout, "timeout", 30*time.Second, "timeout of each registry request")
}

type auditOptions struct {
	auditUpstreams
	IDs     []string
	MaxAge  time.Duration
	Refresh bool
}

func newAuditCommand(f *factory) *cobra.Command {
	o := &auditOptions{}
	c := &cobra.Command{
		Use:   "audit",
		Short: "Registry audit of declared packages: security flags and categories",
		Long: `For every instance with a verdict (or --ids), check the packages its after-fix run
declares (D1) and those its fix adds, changes or drops: do they exist in their registry
today and at registry_date, are they pinned, does an advisory (OSV) affect the pinned or
installed version. Store the flags (removed, nonexistent, vulnerable, unpinned), the
categories with the rule behind each, and the safe-install share under audits/<id>.

The npm registry is the npm client's (npm config get registry) unless --npm-registry is
given. --osv FILE uses local OSV records (JSON array or JSON Lines) instead of the OSV API.
An instance whose stored audit read the same verdict, asked the same upstreams (and the
same OSV file content) and is younger than --max-age is kept without asking anything;
--refresh audits every instance again (advisories change: refresh before a release).
A registry or advisory error leaves that instance's previous audit in place and makes the
command exit with status 4.`,
		Example: "  envgap audit\n  envgap audit --ids envgap__owner__repo-12 --osv osv-records.jsonl",
		Args:    exactArgs(0),
		RunE: func(c *cobra.Command, args []string) error {
			return f.run(c, o, func() error { return runAudit(c.Context(), f, o) })
		},
	}
	c.Flags().StringSliceVar(&o.IDs, "ids", nil, "instance ids to audit (default: every instance with a verdict)")
	o.auditUpstreams.addFlags(c)
	c.Flags().DurationVar(&o.MaxAge, "max-age", audit.DefaultMaxAge, "keep stored audits of unchanged inputs younger than this")
	c.Flags().BoolVar(&o.Refresh, "refresh", false, "audit every instance again, whatever its stored audit")
	return c
}

func runAudit(ctx context.Context, f *factory, o *auditOptions) error {
	st, err := f.OpenStore()
	if err != nil {
		return err
	}
	c, _, err := o.checker(ctx)
	if err != nil {
		return err
	}
	a := &audit.Auditor{Checker: *c}
	opts := audit.RunOptions{MaxAge: o.MaxAge}
	if o.Refresh {
		opts.MaxAge = 0
	}
	res, err := audit.Run(ctx, st, a, o.IDs, opts)
	if err != nil {
		return err
	}
	if f.Global.JSON {
		if err := f.printJSON(res); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(f.Out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "instance\tsecurity flags\tcategories\tsafe install\taudit\t")
		for i, s := range append(append([]audit.Summary{}, res.Audited...), res.Kept...) {
			which := "new"
			if i >= len(res.Audited) {
				which = "kept"
			}
			var flags, cats []string
			for _, x := range s.SecurityFlags {
				flags = append(flags, string(x))
			}
			for _, x := range s.Categories {
				cats = append(cats, string(x))
			}
			safe := "-"
			if s.SafeInstall.Total > 0 {
				safe = fmt.Sprintf("%d/%d", s.SafeInstall.Safe, s.SafeInstall.Total)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", s.InstanceID, auditOrDash(strings.Join(flags, ",")), auditOrDash(strings.Join(cats, ",")), safe, which)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, x := range res.Failed {
			fmt.Fprintf(f.Err, "audit of %s failed: %s\n", x.InstanceID, x.Error)
		}
		if len(res.Kept) > 0 {
			fmt.Fprintf(f.Err, "kept %d audits of unchanged inputs younger than %s (--refresh audits them again)\n", len(res.Kept), ageText(o.MaxAge))
		}
	}
	if len(res.Failed) > 0 {
		return partialError{fmt.Errorf("%d of %d audits failed (registry or advisory errors above); their previous audits stay; run envgap audit again", len(res.Failed), len(res.Failed)+len(res.Audited)+len(res.Kept))}
	}
	return nil
}

// ageText writes a whole number of days as days, anything else as a duration.
func ageText(d time.Duration) string {
	if day := 24 * time.Hour; d >= day && d%day == 0 {
		return fmt.Sprintf("%d days", d/day)
	}
	return d.String()
}

func auditOrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
