package data

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/envgap/envgap/data/datatest"
	"github.com/envgap/envgap/schemas"
)

// Child modes of the test binary, run by the tests below as separate processes.
// childClaimEnv names a store: claim "w", print "won" or "lost", hold 300 ms, exit
// without releasing.
const childClaimEnv = "ENVGAP_TEST_CLAIM_CHILD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(childClaimEnv); dir != "" {
		datatest.Wait()
		s, err := Open(dir)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		if _, err := s.TryClaim("w", time.Hour); errors.Is(err, ErrClaimed) {
			fmt.Println("lost")
		} else if err != nil {
			fmt.Println(err)
			os.Exit(1)
		} else {
			fmt.Println("won")
			time.Sleep(300 * time.Millisecond)
		}
		os.Exit(0) // dies holding the claim when it won
	}
	os.Exit(m.Run())
}

func TestClaimInProcess(t *testing.T) {
	s := newStore(t)
	c, err := s.TryClaim("verify/x", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var held *ClaimedError
	if _, err := s.TryClaim("verify/x", time.Minute); !errors.As(err, &held) || !errors.Is(err, ErrClaimed) || held.Held.Owner != Self() {
		t.Fatalf("second claim: %v", err)
	}
	if _, err := s.TryClaim("verify/y", time.Minute); err != nil {
		t.Fatalf("another name: %v", err)
	}
	if cl, _ := s.Claims("verify/"); len(cl) != 2 {
		t.Errorf("claims: %+v", cl)
	}
	if err := c.Renew(); err != nil {
		t.Fatal(err)
	}
	if err := c.Release(); err != nil {
		t.Fatal(err)
	}
	c2, err := s.TryClaim("verify/x", time.Minute)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	if err := c.Renew(); err == nil {
		t.Error("a released claim renewed")
	}
	// The lease runs out (this process froze past it): another worker takes the claim
	// and the first finds it lost.
	s.now = func() time.Time { return time.Now().Add(2 * time.Minute) }
	c3, err := s.TryClaim("verify/x", time.Minute)
	if err != nil {
		t.Fatalf("expired claim not taken: %v", err)
	}
	if err := c2.Renew(); !errors.Is(err, ErrClaimLost) {
		t.Errorf("renewal of a lost claim: %v", err)
	}
	select {
	case <-c2.Lost():
	default:
		t.Error("Lost not closed")
	}
	if err := c2.Release(); !errors.Is(err, ErrClaimLost) {
		t.Errorf("release of a lost claim: %v", err)
	}
	if _, err := s.TryClaim("verify/x", time.Minute); !errors.Is(err, ErrClaimed) {
		t.Errorf("the taker's claim was released by the loser: %v", err)
	}
	c3.Release()
	if _, err := s.TryClaim("../x", time.Minute); err == nil {
		t.Error("bad claim name accepted")
	}
}

// A claim renews itself while held.
func TestClaimRenewsItself(t *testing.T) {
	s := newStore(t)
	c, err := s.TryClaim("w", 150*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	first := c.Record().Expires
	time.Sleep(400 * time.Millisecond)
	if !c.Record().Expires.After(first) {
		t.Error("not renewed")
	}
	if _, err := s.TryClaim("w", time.Minute); !errors.Is(err, ErrClaimed) {
		t.Errorf("a renewed claim was taken: %v", err)
	}
	c.Release()
}

// A claim of another host binds until its lease runs out; one of a dead local process
// not at all.
func TestClaimOwners(t *testing.T) {
	s := newStore(t)
	p := filepath.Join(s.root, "claims", "w")
	write := func(o Owner, expires time.Time) {
		t.Helper()
		if err := s.claims().write(p, ClaimRecord{Name: "w", Owner: o, Token: "t", Expires: expires}); err != nil {
			t.Fatal(err)
		}
	}
	future, past := time.Now().Add(time.Hour), time.Now().Add(-time.Second)
	write(Owner{Host: "elsewhere.invalid", PID: 1, Start: "x"}, future)
	if _, err := s.TryClaim("w", time.Minute); !errors.Is(err, ErrClaimed) {
		t.Fatalf("live remote claim taken: %v", err)
	}
	write(Owner{Host: "elsewhere.invalid", PID: 1, Start: "x"}, past)
	c, err := s.TryClaim("w", time.Minute)
	if err != nil {
		t.Fatalf("expired remote claim kept: %v", err)
	}
	c.Release()
	if Self().Start == "" {
		t.Skip("no /proc: local owners are judged by their lease only")
	}
	dead := Self()
	dead.Start = dead.Start + "0" // this pid, another start: a process that is gone
	write(dead, future)
	c, err = s.TryClaim("w", time.Minute)
	if err != nil {
		t.Fatalf("claim of a dead local process kept: %v", err)
	}
	c.Release()
}

// Many processes claim one name at once: exactly one wins; when it dies holding the
// claim, the next claim succeeds at once.
func TestClaimManyProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	if _, err := Open(dir); err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 5; round++ {
		outs := datatest.Children(t, 8, func(int) []string { return []string{childClaimEnv + "=" + dir} })
		won := 0
		for _, o := range outs {
			switch o {
			case "won":
				won++
			case "lost":
			default:
				t.Fatalf("child: %q", o)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d processes won one claim: %v", round, won, outs)
		}
	}
	// Every winner died holding its (hour-long) claim: it is free at once.
	s, _ := Open(dir)
	c, err := s.TryClaim("w", time.Minute)
	if err != nil {
		t.Fatalf("claim of a dead process kept: %v", err)
	}
	c.Release()
}

// Concurrent ref writers are serialised: every change is logged once, in order.
func TestCompareAndSetRef(t *testing.T) {
	s := newStore(t)
	a, _ := s.Put([]byte("a"))
	b, _ := s.Put([]byte("b"))
	if err := s.CompareAndSetRef("x", schemas.Digest{}, a); err != nil {
		t.Fatal(err)
	}
	if err := s.CompareAndSetRef("x", schemas.Digest{}, b); !errors.Is(err, ErrRefMoved) {
		t.Fatalf("create over an existing ref: %v", err)
	}
	var wg sync.WaitGroup
	wins := make(chan bool, 20)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wins <- s.CompareAndSetRef("x", a, b) == nil
		}()
	}
	wg.Wait()
	close(wins)
	n := 0
	for w := range wins {
		if w {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d compare-and-sets from one old value won", n)
	}
	log, _ := os.ReadFile(filepath.Join(s.root, "logs", "refs.jsonl"))
	if lines := strings.Count(string(log), "\n"); lines != 2 {
		t.Errorf("ref log has %d lines, want 2:\n%s", lines, log)
	}
}

// A ClaimDir in a caller's folder, under the caller's lock: a claim given back keeps its
// record (released, why, attempt) and binds no one; once the caller's work is over (Over)
// the holder's renewal and end find the claim lost.
func TestClaimDirGiveBackAndOver(t *testing.T) {
	dir := t.TempDir()
	over := false
	d := &ClaimDir{Dir: filepath.Join(dir, "items"), Lock: func() (func(), error) { return LockFile(filepath.Join(dir, "lock")) },
		Over: func(string) (bool, error) { return over, nil }}
	c, err := d.TryClaim(ClaimRecord{Name: "0.claim", Owner: Self(), Label: "w1", Attempt: 1}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.TryClaim(ClaimRecord{Name: "0.claim", Owner: Self(), Attempt: 2}, time.Minute); !errors.Is(err, ErrClaimed) {
		t.Fatalf("a held claim taken: %v", err)
	}
	if err := c.GiveBack("engine gone"); err != nil {
		t.Fatal(err)
	}
	rec, ok := d.Read("0.claim")
	if !ok || !rec.Released || rec.LastError != "engine gone" || rec.Attempt != 1 || rec.Label != "w1" || rec.Binds(time.Now()) {
		t.Fatalf("given-back record: %+v %v", rec, ok)
	}
	if held, _ := d.Held(""); len(held) != 0 {
		t.Errorf("a given-back claim binds: %+v", held)
	}
	c2, err := d.TryClaim(ClaimRecord{Name: "0.claim", Owner: Self(), Attempt: rec.Attempt + 1}, time.Minute)
	if err != nil {
		t.Fatalf("a given-back claim not taken: %v", err)
	}
	if rec := c2.Record(); rec.Released || rec.LastError != "" || rec.Attempt != 2 || rec.Token == c.Record().Token {
		t.Fatalf("the second claim's record: %+v", rec)
	}
	over = true
	if err := c2.Renew(); !errors.Is(err, ErrClaimLost) {
		t.Fatalf("renewal of a claim whose work is over: %v", err)
	}
	ran := false
	if err := c2.Finish(func() error { ran = true; return nil }); !errors.Is(err, ErrClaimLost) || ran {
		t.Fatalf("finish of a claim whose work is over: %v, ran %v", err, ran)
	}
	over = false
	c3, err := d.TryClaim(ClaimRecord{Name: "1.claim", Owner: Self()}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := c3.Finish(func() error { ran = true; return nil }); err != nil || !ran {
		t.Fatalf("finish: %v, ran %v", err, ran)
	}
	if err := c3.Renew(); err == nil {
		t.Error("a finished claim renewed")
	}
}
