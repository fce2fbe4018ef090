package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/envgap/envgap/harness/tasks"
	"github.com/envgap/envgap/schemas"
	"github.com/spf13/cobra"
)

type corpusIDOptions struct {
	Path string
}

func newCorpusIDCommand(f *factory) *cobra.Command {
	opts := &corpusIDOptions{}
	return &cobra.Command{
		Use:   "corpus-id [DIR|FILE.jsonl]",
		Short: "Print the corpus id of the store's task set, an exported folder or a tasks file",
		Long: `Print the 12-hex-digit corpus id of a task set: the first 12 hex digits of the SHA-256
of the task rows' canonical JSON (every column of the card), sorted bytewise, each line
followed by a newline (docs/corpus-id.md spells out every rule).
Record order, JSON formatting and the machine do not change it; any change to any field of
any task does (exclusions included). Without an argument: the store's task set.`,
		Example: "  envgap corpus-id\n  envgap corpus-id release/\n  envgap corpus-id tasks.jsonl",
		Args:    maxArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Path = args[0]
			}
			return f.run(c, opts, func() error { return runCorpusID(f, opts) })
		},
	}
}

func runCorpusID(f *factory, opts *corpusIDOptions) error {
	var (
		rows []schemas.Task
		err  error
	)
	if opts.Path == "" {
		st, err := f.OpenStore()
		if err != nil {
			return err
		}
		if rows, err = st.Tasks(); err != nil {
			return err
		}
	} else if rows, err = tasks.ReadRows(opts.Path); err != nil {
		return err
	}
	if len(rows) == 0 {
		return errors.New("corpus id: the task set is empty (no tasks admitted yet: run envgap admit)")
	}
	id, err := schemas.CorpusID(rows)
	if err != nil {
		return err
	}
	return f.output(map[string]any{"corpus_id": id, "tasks": len(rows)}, func(w io.Writer) {
		fmt.Fprintln(w, id)
	})
}
