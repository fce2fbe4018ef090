package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

func newStoreCommand(f *factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "store",
		Short: "Inspect and check the store",
	}
	c.AddCommand(&cobra.Command{
		Use:   "fsck",
		Short: "Re-hash every object and follow every ref and memo entry to what it reaches",
		Long: `Re-hash every object of the store, check every ref and memo entry, and follow each to
every object it reaches (candidate sets to candidate records, verdicts to runs, runs to
step outputs and registry logs). Lists every damaged, truncated or stray object, every
dangling ref, every lost object (missing, with the stage that writes it again) and every
pair of candidate sets holding one instance id with different content (conflict), and
exits 5 when it finds any. It never changes the store. Temp files left by an interrupted
write are listed as removable; they are not damage.`,
		Example: "  envgap store fsck\n  envgap --store /srv/envgap store fsck --json",
		Args:    exactArgs(0),
		RunE:    func(c *cobra.Command, args []string) error { return runFsck(c, f) },
	})
	return c
}

func runFsck(c *cobra.Command, f *factory) error {
	st, err := f.OpenStore()
	if err != nil {
		return err
	}
	rep, err := st.Fsck(c.Context())
	if err != nil {
		return err
	}
	if err := f.output(rep, func(w io.Writer) {
		fmt.Fprintf(w, "checked %d objects (%d bytes), %d refs, %d memo entries\n", rep.Objects, rep.Bytes, rep.Refs, rep.Memos)
		for _, d := range rep.Damage {
			fmt.Fprintln(w, d.String())
		}
		if len(rep.TempFiles) > 0 {
			fmt.Fprintf(w, "%d temp file(s) left by interrupted writes under %s/tmp (safe to remove)\n", len(rep.TempFiles), st.Dir())
		}
	}); err != nil {
		return err
	}
	if !rep.Clean() {
		return damageError{fmt.Errorf("store %s: %d problem(s) found", st.Dir(), len(rep.Damage))}
	}
	if !f.Global.JSON {
		fmt.Fprintln(f.Out, "clean")
	}
	return nil
}
