package main

import (
	"os"
	"testing"
)

// TestMain lets the test binary stand in for envgap when a test starts it as
// "TESTBINARY agent-repro" (the command envgap run gives agents as ENVGAP_REPRO is its
// own executable, which is the test binary under go test).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "agent-repro" {
		main()
	}
	os.Exit(m.Run())
}
