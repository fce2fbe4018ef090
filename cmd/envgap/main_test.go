package main

import (
	"os"
	"testing"
)

// TestMain lets the test binary stand in for envgap when a test starts it as
// "TESTBINARY agent-repro" (the command envgap run gives agents as ENVGAP_REPRO is its
// own executable, which is the test binary under go test), or with
// ENVGAP_TEST_AS_ENVGAP=1 (the workers of a --slurm run exec the submitting binary, which
// is this one in a test).
func TestMain(m *testing.M) {
	if (len(os.Args) > 1 && os.Args[1] == "agent-repro") || os.Getenv("ENVGAP_TEST_AS_ENVGAP") == "1" {
		main()
	}
	os.Exit(m.Run())
}
