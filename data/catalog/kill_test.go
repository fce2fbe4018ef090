package catalog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/envgap/envgap/data/datatest"
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

// Child mode of the add race: add candidate 1 with problem statement $raceVariantEnv once
// released; print "ok" or "conflict".
const (
	raceAddEnv     = "ENVGAP_TEST_RACE_ADD"
	raceVariantEnv = "ENVGAP_TEST_RACE_VARIANT"
)

func raceAddChild(dir string) {
	datatest.Wait()
	s, err := Open(dir)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	c := testCandidate(1)
	c.ProblemStatement = os.Getenv(raceVariantEnv)
	_, err = s.AddCandidateSet("add", "add "+c.ProblemStatement, []schemas.Candidate{c}, nil)
	var conflict *ConflictError
	switch {
	case err == nil:
		fmt.Println("ok")
	case errors.As(err, &conflict):
		fmt.Println("conflict")
	default:
		fmt.Println(err)
		os.Exit(1)
	}
	os.Exit(0)
}

func TestMain(m *testing.M) {
	if dir := os.Getenv(raceAddEnv); dir != "" {
		raceAddChild(dir)
	}
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

// Two adds of one instance id with different content, in two processes at once, 50
// times: exactly one wins every time, and the store stays whole.
func TestAddRace(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	for round := 0; round < 50; round++ {
		dir := t.TempDir()
		outs := datatest.Children(t, 2, func(i int) []string {
			return []string{raceAddEnv + "=" + filepath.Join(dir, "store"), raceVariantEnv + "=" + fmt.Sprint("variant ", i)}
		})
		if !(outs[0] == "ok" && outs[1] == "conflict" || outs[0] == "conflict" && outs[1] == "ok") {
			t.Fatalf("round %d: %q", round, outs)
		}
		s, err := Open(filepath.Join(dir, "store"))
		if err != nil {
			t.Fatal(err)
		}
		if all, err := s.Candidates(); err != nil || len(all) != 1 {
			t.Fatalf("round %d: %d candidates, %v", round, len(all), err)
		}
		if rep, err := s.Fsck(context.Background()); err != nil || !rep.Clean() {
			t.Fatalf("round %d: fsck %v %+v", round, err, rep)
		}
	}
}
