package schemas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
)

// ReadEvalFolder reads a result folder written by envgap eval or envgap run: its
// summary, and each line of results.jsonl decoded into a T (EvalResult, or a type with
// only the fields a reader needs). Lines are decoded on every core.
func ReadEvalFolder[T any](dir string) (EvalSummary, []T, error) {
	var sum EvalSummary
	b, err := os.ReadFile(filepath.Join(dir, EvalSummaryFile))
	if err != nil {
		return sum, nil, fmt.Errorf("result folder %s: %w (give a folder envgap eval or envgap run wrote)", dir, err)
	}
	if err := json.Unmarshal(b, &sum); err != nil || sum.Kind != KindEvalSummary {
		return sum, nil, fmt.Errorf("result folder %s: %s is not an eval summary", dir, EvalSummaryFile)
	}
	if sum.SchemaVersion != EvalSchemaVersion {
		return sum, nil, fmt.Errorf("result folder %s: schema version %d, this envgap reads %d", dir, sum.SchemaVersion, EvalSchemaVersion)
	}
	all, err := os.ReadFile(filepath.Join(dir, EvalResultsFile))
	if err != nil {
		return sum, nil, fmt.Errorf("result folder %s: %w", dir, err)
	}
	lines := bytes.Split(all, []byte("\n"))
	out := make([]T, len(lines))
	bad := make([]bool, len(lines))
	empty := make([]bool, len(lines))
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(lines); i += workers {
				if len(bytes.TrimSpace(lines[i])) == 0 {
					empty[i] = true
					continue
				}
				// Results are canonical JSON: the kind is spelled exactly so.
				bad[i] = !bytes.Contains(lines[i], []byte(`"kind":"eval_result"`)) || json.Unmarshal(lines[i], &out[i]) != nil
			}
		}(w)
	}
	wg.Wait()
	res := make([]T, 0, len(lines))
	for i := range lines {
		if bad[i] {
			return sum, nil, fmt.Errorf("result folder %s: %s:%d: not an eval result", dir, EvalResultsFile, i+1)
		}
		if !empty[i] {
			res = append(res, out[i])
		}
	}
	return sum, res, nil
}
