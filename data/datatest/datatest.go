// Package datatest runs many copies of a test binary at once, released together, for
// tests of concurrent writers to one store (several processes, as several commands or
// machines would be).
package datatest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// goEnv names the file whose appearance releases the children.
const goEnv = "ENVGAP_TEST_CHILDREN_GO"

// Children runs n copies of the running test binary (running no test: its TestMain
// recognises the child by the environment env(i) adds) and releases them together once
// all have started. It returns what each printed on stdout, trimmed, followed by its
// error when it failed.
func Children(t testing.TB, n int, env func(i int) []string) []string {
	t.Helper()
	goFile := filepath.Join(t.TempDir(), "go")
	outs := make([]string, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(append(os.Environ(), goEnv+"="+goFile), env(i)...)
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			out, err := cmd.Output()
			outs[i] = strings.TrimSpace(string(out))
			if err != nil {
				outs[i] += " " + err.Error()
				if ee, ok := err.(*exec.ExitError); ok {
					outs[i] += ": " + strings.TrimSpace(string(ee.Stderr))
				}
			}
		}(i)
	}
	time.Sleep(50 * time.Millisecond)
	if err := os.WriteFile(goFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	return outs
}

// Wait holds a child until Children releases it; it returns at once in a process that
// Children did not start.
func Wait() {
	p := os.Getenv(goEnv)
	for p != "" {
		if _, err := os.Stat(p); err == nil {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
