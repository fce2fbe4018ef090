package main

import (
	"errors"
	"fmt"
	"os"

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
			return runCorpusID(f, opts)
		},
	}
}

func runCorpusID(f *factory, opts *corpusIDOptions) error {
	var (
		tasks []schemas.Task
		err   error
	)
	if opts.Path == "" {
		st, err := f.OpenStore()
		if err != nil {
			return err
		}
		if tasks, err = st.Tasks(); err != nil {
			return err
		}
	} else if tasks, err = readTaskRows(opts.Path); err != nil {
		return err
	}
	if len(tasks) == 0 {
		return errors.New("corpus id: the task set is empty (no tasks admitted yet: run envgap admit)")
	}
	id, err := schemas.CorpusID(tasks)
	if err != nil {
		return err
	}
	if f.Global.JSON {
		return f.printJSON(map[string]any{"corpus_id": id, "tasks": len(tasks)})
	}
	fmt.Fprintln(f.Out, id)
	return nil
}

// readTaskRows reads task rows from a JSON Lines file or an exported Hub folder.
func readTaskRows(path string) ([]schemas.Task, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("corpus id: %w", err)
	}
	if fi.IsDir() {
		return readExportedTasks(path)
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	tasks, problems, err := schemas.ReadTasks(path, fh)
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return tasks, nil
}
