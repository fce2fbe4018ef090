package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/export"
	"github.com/spf13/cobra"
)

func newAdmitCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "admit",
		Short: "Promote verified candidates and reported controls to tasks",
		Long: `Make a task row (the dataset card's columns) of every candidate whose verdict is verified,
and of every reported candidate whose verdict is already_works (a control: is_control true,
empty patch, gold_files and failure_signature). Commands the candidate lacks come from the
verdict's recipe; categories and security flags from the registry audit when the task has
been audited. Rows are stored as refs tasks/<instance_id>.

Admitting again changes nothing for unchanged rows. A row that would change (the audit
came later, say) is stored and listed as updated with the changed columns; the old row stays
in the store and the ref log keeps the history. A row that breaks the card's rules is
refused and listed with its problems (exit code 4); the others are still admitted.`,
		Example: "  envgap admit\n  envgap admit --json",
		Args:    exactArgs(0),
		RunE:    func(c *cobra.Command, args []string) error { return runAdmit(f) },
	}
}

// auditSource is where admit and export read the registry audit's results.
func auditSource(st catalog.Store) export.AuditSource { return export.StoreAudits(st) }

func runAdmit(f *factory) error {
	st, err := f.OpenStore()
	if err != nil {
		return err
	}
	rep, err := export.Admit(st, export.AdmitOptions{Audits: auditSource(st)})
	if err != nil {
		return err
	}
	if err := f.output(rep, func(w io.Writer) {
		for _, a := range rep.Admissions {
			switch a.Action {
			case export.ActionAdmitted:
				fmt.Fprintf(w, "admitted  %s (%s)\n", a.InstanceID, a.Kind)
			case export.ActionUpdated:
				fmt.Fprintf(w, "updated   %s (%s): changed %s; the previous row %s stays in the store\n", a.InstanceID, a.Kind, strings.Join(a.Changed, ", "), a.Previous.Short())
			case export.ActionRefused:
				fmt.Fprintf(w, "refused   %s (%s):\n", a.InstanceID, a.Kind)
				for _, p := range a.Problems {
					fmt.Fprintf(w, "            %s\n", p)
				}
			default:
				f.logf("unchanged %s", a.InstanceID)
			}
		}
		fmt.Fprintf(w, "%d admitted, %d updated, %d unchanged, %d refused; %d candidates have no verdict that admits them\n",
			rep.Admitted, rep.Updated, rep.Unchanged, rep.Refused, rep.Waiting)
	}); err != nil {
		return err
	}
	if rep.Refused > 0 {
		return partialError{fmt.Errorf("admit: %d candidate(s) refused (listed above); the others were admitted", rep.Refused)}
	}
	return nil
}
