package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/schemas"
	"github.com/envgap/envgap/verify"
)

func verifyEvent(id string) verify.Event {
	return verify.Event{InstanceID: id, Done: 1, Total: 1, Outcome: schemas.OutcomeVerified}
}

func TestProgress(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	now := t0
	newP := func(terminal, quiet bool) (*progress, *bytes.Buffer) {
		var b bytes.Buffer
		return &progress{w: &b, terminal: terminal, quiet: quiet, now: func() time.Time { return now }, start: t0, counts: map[string]int{}}, &b
	}
	steps := func(p *progress) {
		now = t0
		p.step(1, 3, "a", "verified", "")
		now = t0.Add(10 * time.Second)
		p.step(2, 3, "b", "error", "engine gone")
		p.step(3, 3, "c", "already_works (unchanged, not run)", "")
		p.finish()
	}

	p, b := newP(false, false)
	steps(p)
	if want := "[1/3] a: verified\n[2/3] b: error: engine gone\n[3/3] c: already_works (unchanged, not run)\n"; b.String() != want {
		t.Errorf("lines:\n%s\nwant:\n%s", b.String(), want)
	}

	p, b = newP(true, false)
	steps(p)
	want := "\r\033[K[##########....................] 1/3 verified 1 ETA 0s" +
		"\r\033[Kb: error: engine gone\n" +
		"\r\033[K[####################..........] 2/3 verified 1, error 1 ETA 5s" +
		"\r\033[K[##############################] 3/3 verified 1, error 1, already_works 1\n"
	if b.String() != want {
		t.Errorf("terminal:\n%q\nwant:\n%q", b.String(), want)
	}

	p, b = newP(true, false)
	p.step(0, 0, "t run 1 attempt 1", "failed", "")
	p.step(0, 0, "t run 1 attempt 2", "resolved", "")
	p.finish()
	if want := "\r\033[K1 done: failed 1\r\033[K2 done: failed 1, resolved 1\n"; b.String() != want {
		t.Errorf("no total:\n%q\nwant:\n%q", b.String(), want)
	}

	p, b = newP(false, true)
	steps(p)
	if b.Len() != 0 {
		t.Errorf("quiet progress wrote %q", b.String())
	}

	var errOut bytes.Buffer
	f := &factory{Global: &globalOptions{JSON: true}, Err: &errOut}
	f.progress()(verifyEvent("x"))
	f.Global.JSON = false
	f.progress()(verifyEvent("y"))
	if got := errOut.String(); strings.Contains(got, "x") || got != "[1/1] y: verified\n" {
		t.Errorf("factory progress wrote %q: want nothing under --json, one line otherwise (a buffer is no terminal)", got)
	}
}
