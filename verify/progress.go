package verify

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// ProgressPrinter returns a progress callback. On a terminal it redraws one status line
// (a bar with counts and an ETA); otherwise it prints one plain line per candidate.
func ProgressPrinter(w io.Writer, terminal bool) func(Event) {
	var mu sync.Mutex
	counts := map[string]int{}
	return func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		state := string(e.Outcome)
		switch {
		case e.Err != nil:
			state = "error"
		case e.Cached:
			state += " (unchanged, not run)"
		}
		counts[strings.Fields(state)[0]]++
		if !terminal {
			line := fmt.Sprintf("[%d/%d] %s: %s", e.Done, e.Total, e.InstanceID, state)
			if e.Err != nil {
				line += ": " + e.Err.Error()
			}
			fmt.Fprintln(w, line)
			return
		}
		const width = 30
		filled := width * e.Done / max(e.Total, 1)
		eta := ""
		if e.Done > 0 && e.Done < e.Total {
			left := time.Duration(float64(e.Elapsed) / float64(e.Done) * float64(e.Total-e.Done))
			eta = " ETA " + left.Round(time.Second).String()
		}
		var parts []string
		for _, k := range []string{"verified", "already_works", "not_reproduced", "not_checked", "error"} {
			if counts[k] > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", k, counts[k]))
			}
		}
		fmt.Fprintf(w, "\r\033[K[%s%s] %d/%d %s%s", strings.Repeat("#", filled), strings.Repeat(".", width-filled), e.Done, e.Total, strings.Join(parts, ", "), eta)
		if e.Err != nil {
			fmt.Fprintf(w, "\n%s: %v\n", e.InstanceID, e.Err)
		}
		if e.Done == e.Total {
			fmt.Fprintln(w)
		}
	}
}
