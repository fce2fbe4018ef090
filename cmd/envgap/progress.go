package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// progress shows how far a long command is (verify, recheck, eval, run, propose), the same
// way for all of them, on the factory's error stream: on a terminal it redraws one status
// line (a bar when the total is known, counts by state, an ETA) and prints errors above
// it; otherwise it prints one line per item. Under --json it prints nothing: the report
// on stdout says it all. It is safe for concurrent use.
type progress struct {
	w        io.Writer
	terminal bool
	quiet    bool
	now      func() time.Time
	start    time.Time

	mu     sync.Mutex
	done   int
	counts map[string]int
	order  []string // states in the order first seen
	drawn  bool     // a status line is on the screen
}

// newProgress returns the progress display of a command of f.
func (f *factory) newProgress() *progress {
	return &progress{w: f.Err, terminal: f.errTerminal(), quiet: f.Global.JSON, now: time.Now, start: time.Now(), counts: map[string]int{}}
}

// errTerminal reports whether the factory's error stream is a terminal.
func (f *factory) errTerminal() bool {
	fd, ok := f.Err.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(fd.Fd()))
}

// step reports one item finished: what (an instance id, "id run 1 attempt 2"), its state
// (an outcome or status; its first word is counted), and an error text or "". done and
// total count the items (total 0: unknown; done 0: count them here).
func (p *progress) step(done, total int, what, state, errText string) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if done <= 0 {
		p.done++
		done = p.done
	}
	key := "error"
	if errText == "" {
		key, _, _ = strings.Cut(state, " ")
	}
	if _, ok := p.counts[key]; !ok {
		p.order = append(p.order, key)
	}
	p.counts[key]++
	if !p.terminal {
		line := what + ": " + state
		if total > 0 {
			line = fmt.Sprintf("[%d/%d] %s", done, total, line)
		}
		if errText != "" {
			line += ": " + errText
		}
		fmt.Fprintln(p.w, line)
		return
	}
	if errText != "" {
		fmt.Fprintf(p.w, "\r\033[K%s: %s: %s\n", what, state, errText)
	}
	var parts []string
	for _, k := range p.order {
		parts = append(parts, fmt.Sprintf("%s %d", k, p.counts[k]))
	}
	if total <= 0 {
		fmt.Fprintf(p.w, "\r\033[K%d done: %s", done, strings.Join(parts, ", "))
		p.drawn = true
		return
	}
	const width = 30
	filled := width * min(done, total) / total
	eta := ""
	if done > 0 && done < total {
		left := time.Duration(float64(p.now().Sub(p.start)) / float64(done) * float64(total-done))
		eta = " ETA " + left.Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "\r\033[K[%s%s] %d/%d %s%s", strings.Repeat("#", filled), strings.Repeat(".", width-filled), done, total, strings.Join(parts, ", "), eta)
	p.drawn = done < total
	if !p.drawn {
		fmt.Fprintln(p.w)
	}
}

// finish ends the status line on a terminal, so that what follows starts on a new line.
func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn && !p.quiet {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}
