package main

import (
	"fmt"
	"strings"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/lib/jobs"

	"github.com/envgap/envgap/verify"
	"github.com/spf13/cobra"
)

type recheckOptions struct {
	engineOptions
	Slurm slurmOptions
	Date  string
}

func newRecheckCommand(f *factory) *cobra.Command {
	opts := &recheckOptions{}
	c := &cobra.Command{
		Use:   "recheck --date DATE",
		Short: "Rerun every task; mark broken ones excluded_from_scoring",
		Long: `Run every task again through the evaluation core, unchanged and with its fix, and apply
the card's rules: a repair task that passes with no change at all, or whose reference fix no
longer makes the project run, is excluded; a control that no longer works is excluded. The
exclusion is dated DATE (a bare date means its start, UTC) and carries the card's wording.
No task is ever deleted; every recheck is kept (ref rechecks/<date>); running the same
recheck twice changes nothing.`,
		Example: "  envgap recheck --date 2026-09-29\n  envgap recheck --date 2026-09-29 --json\n  envgap --store /shared/envgap/store recheck --date 2026-09-29 --slurm --workers 8",
		Args:    func(c *cobra.Command, args []string) error { return opts.Slurm.args(c, args) },
		RunE: func(c *cobra.Command, args []string) error {
			if opts.Date == "" {
				return usageError{fmt.Errorf("--date is required (YYYY-MM-DD)")}
			}
			if err := opts.Slurm.check(c, f, &opts.engineOptions); err != nil {
				return err
			}
			return f.run(c, opts, func() error {
				if opts.Slurm.Slurm {
					return runRecheckSlurm(c, f, opts)
				}
				return runRecheck(c, f, opts)
			})
		},
	}
	c.Flags().StringVar(&opts.Date, "date", "", "the recheck's date (YYYY-MM-DD or RFC 3339)")
	opts.addFlags(c)
	opts.Slurm.addFlags(c)
	return c
}

func runRecheck(c *cobra.Command, f *factory, opts *recheckOptions) error {
	if _, _, err := verify.RecheckDate(opts.Date); err != nil {
		return usageError{err}
	}
	sess, vo, err := opts.open(c, f)
	if err != nil {
		return err
	}
	defer sess.Close()
	rec, err := sess.Stage.Recheck(c.Context(), opts.Date, vo)
	if err != nil {
		return err
	}
	return f.recheckReport(rec)
}

// recheckReport prints a recheck and returns its error (exit code).
func (f *factory) recheckReport(rec *verify.Recheck) error {
	if f.Global.JSON {
		return f.printJSON(rec)
	}
	failed, excluded := 0, 0
	for _, r := range rec.Results {
		switch {
		case r.Error != "":
			failed++
			fmt.Fprintf(f.Out, "  %s: not rechecked: %s\n", r.InstanceID, r.Error)
		case r.Excluded && !r.AlreadyExcl:
			excluded++
			fmt.Fprintf(f.Out, "  %s (%s): excluded: %s\n", r.InstanceID, r.Kind, r.Reason)
		}
	}
	fmt.Fprintf(f.Out, "recheck %s: %d tasks, %d excluded, %d not rechecked (faults)\n", rec.Date, len(rec.Results), excluded, failed)
	if failed > 0 {
		return partialError{fmt.Errorf("%d task(s) could not be rechecked because of faults; run the same recheck again", failed)}
	}
	return nil
}

// runRecheckSlurm rechecks the same tasks as runRecheck, as a Slurm job array, and
// records and reports the recheck as runRecheck does.
func runRecheckSlurm(c *cobra.Command, f *factory, opts *recheckOptions) error {
	if _, _, err := verify.RecheckDate(opts.Date); err != nil {
		return usageError{err}
	}
	st, err := f.OpenStore()
	if err != nil {
		return err
	}
	stage := &verify.Stage{Store: st}
	refs, err := stage.RecheckTasks()
	if err != nil {
		return err
	}
	results := make([]verify.RecheckResult, len(refs))
	if len(refs) > 0 {
		items := make([]string, len(refs))
		for i, r := range refs {
			items[i] = strings.TrimPrefix(r.Name, data.RefTasks)
		}
		work := &recheckWork{workerEngine: opts.workerEngine(1), Date: opts.Date}
		progress := f.progress()
		out, err := opts.Slurm.run(c, f, work, items, nil, func(d *jobs.Done, done, total int) {
			progress(verify.RecheckEvent(recheckResultOf(d), done, total))
		})
		if out == nil || err != nil {
			return err
		}
		for i, d := range out.Results {
			if d == nil {
				results[i] = verify.RecheckResult{InstanceID: items[i], Error: out.NotDone(i, items[i]).Error}
				continue
			}
			results[i] = recheckResultOf(d)
		}
	}
	rec, err := stage.SaveRecheck(opts.Date, results)
	if err != nil {
		return err
	}
	return f.recheckReport(rec)
}

// recheckResultOf reads a worker's result of one task.
func recheckResultOf(d *jobs.Done) verify.RecheckResult {
	var r verify.RecheckResult
	if msg := d.Decode(&r, &r.InstanceID); msg != "" {
		return verify.RecheckResult{InstanceID: d.Item, Error: msg}
	}
	return r
}
