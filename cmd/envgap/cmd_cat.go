package main

import (
	"fmt"
	"strings"

	"github.com/envgap/envgap/schemas"
	"github.com/spf13/cobra"
)

func newCatCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "cat REF|DIGEST",
		Short: "Print a stored object by ref name or digest",
		Long: `Print the bytes of a stored object, named by a ref (e.g. verdicts/<instance_id>,
candidates/add-1a2b3c4d5e6f) or a digest (sha256:<hex>). The content is checked against
its digest before it is printed.`,
		Example: "  envgap cat verdicts/envgap__owner__repo-12\n  envgap cat sha256:0123...",
		Args:    exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return f.run(c, args, func() error { return runCat(f, args[0]) })
		},
	}
}

func runCat(f *factory, name string) error {
	st, err := f.OpenStore()
	if err != nil {
		return err
	}
	var d schemas.Digest
	if strings.HasPrefix(name, schemas.DigestPrefix) {
		if d, err = schemas.ParseDigest(name); err != nil {
			return usageError{err}
		}
	} else if d, err = st.Ref(name); err != nil {
		return err
	}
	b, err := st.Get(d)
	if err != nil {
		return err
	}
	if _, err := f.Out.Write(b); err != nil {
		return err
	}
	if len(b) > 0 && b[len(b)-1] != '\n' && !f.Global.JSON {
		fmt.Fprintln(f.Out)
	}
	return nil
}
