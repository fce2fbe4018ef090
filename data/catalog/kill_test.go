package catalog

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/envgap/envgap/schemas"
)

const childEnv = "ENVGAP_TEST_ADD_CHILD"

func manyCandidates(n int) []schemas.Candidate {
	out := make([]schemas.Candidate, n)
	for i := range out {
		out[i] = testCandidate(int64(i + 1))
	}
	return out
}

func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		s, err := Open(dir)
		if err == nil {
			_, err = s.AddCandidateSet("add", "add big.jsonl", manyCandidates(2000), nil)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestAddKilledHalfway kills an add with SIGKILL at several points: the store must always
// fsck clean, and running the same add again must complete it.
func TestAddKilledHalfway(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	for _, delay := range []time.Duration{5 * time.Millisecond, 50 * time.Millisecond, 200 * time.Millisecond, 600 * time.Millisecond} {
		t.Run(delay.String(), func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), childEnv+"="+dir)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(delay)
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
			s, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := s.Fsck(context.Background())
			if err != nil || !rep.Clean() {
				t.Fatalf("store after kill -9: %v %+v", err, rep.Damage)
			}
			res, err := s.AddCandidateSet("add", "add big.jsonl", manyCandidates(2000), nil)
			if err != nil {
				t.Fatal(err)
			}
			all, err := s.Candidates()
			if err != nil || len(all) != 2000 {
				t.Fatalf("after re-run: %d candidates, %v (result %+v)", len(all), err, res)
			}
			if rep, _ := s.Fsck(context.Background()); !rep.Clean() {
				t.Fatalf("store after re-run: %+v", rep.Damage)
			}
		})
	}
}
