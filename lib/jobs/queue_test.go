package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/envgap/envgap/data"
)

func items(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("item-%02d", i)
	}
	return out
}

func newQueue(t *testing.T, n int) *Queue {
	t.Helper()
	q, err := Create(filepath.Join(t.TempDir(), "work", "run"), Plan{Command: "test", Items: items(n)})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// otherOwner is a worker on another machine (its death cannot be seen from here).
func otherOwner(label string) Owner {
	return Owner{Owner: data.Owner{Host: "elsewhere", PID: 1, Start: "other-boot/1"}, Label: label}
}

func TestQueueEveryItemOnceUnderManyWorkers(t *testing.T) {
	q := newQueue(t, 40)
	var mu sync.Mutex
	count := map[string]int{}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &Worker{Claims: q, Owner: NewOwner(fmt.Sprint("w", i)), Jobs: 2, Poll: 10 * time.Millisecond}
			err := w.Serve(context.Background(), func(ctx context.Context, item string) (json.RawMessage, string) {
				mu.Lock()
				count[item]++
				mu.Unlock()
				return json.RawMessage(`"ok ` + item + `"`), ""
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	res, _, err := q.Results(nil)
	if err != nil {
		t.Fatal(err)
	}
	for n, d := range res {
		item := q.Plan().Items[n]
		if d == nil || d.Item != item || string(d.Result) != `"ok `+item+`"` || count[item] != 1 {
			t.Errorf("item %s: result %+v, done %d times", item, d, count[item])
		}
	}
}

func TestQueueLeaseExpiryRedoesOnceThenGivesUp(t *testing.T) {
	q := newQueue(t, 1)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	q.Now = func() time.Time { return now }
	a, b, c := otherOwner("a"), otherOwner("b"), otherOwner("c")
	ca, err := q.Claim(a)
	if err != nil || ca.Attempt != 1 {
		t.Fatalf("first claim: %+v %v", ca, err)
	}
	if _, err := q.Claim(b); !errors.Is(err, ErrWait) {
		t.Fatalf("claim of a held item: %v, want ErrWait", err)
	}
	// a renews in time: still held.
	now = now.Add(50 * time.Second)
	if err := q.Renew(ca); err != nil {
		t.Fatal(err)
	}
	now = now.Add(50 * time.Second)
	if _, err := q.Claim(b); !errors.Is(err, ErrWait) {
		t.Fatalf("claim of a renewed item: %v, want ErrWait", err)
	}
	// a stops renewing: b takes it over (attempt 2); a's result is refused.
	now = now.Add(61 * time.Second)
	cb, err := q.Claim(b)
	if err != nil || cb.Attempt != 2 || cb.Item != "item-00" {
		t.Fatalf("take-over: %+v %v", cb, err)
	}
	if err := q.Finish(ca, json.RawMessage(`1`), ""); !errors.Is(err, ErrLost) {
		t.Fatalf("finish by the lapsed owner: %v, want ErrLost", err)
	}
	if err := q.Renew(ca); !errors.Is(err, ErrLost) {
		t.Fatalf("renew by the lapsed owner: %v, want ErrLost", err)
	}
	// b dies too: the item is not tried a third time; it ends with an error.
	now = now.Add(2 * time.Minute)
	if _, err := q.Claim(c); !errors.Is(err, ErrNoWork) {
		t.Fatalf("claim after two lost attempts: %v, want ErrNoWork", err)
	}
	res, _, _ := q.Results(nil)
	if res[0] == nil || res[0].Result != nil || !strings.Contains(res[0].Error, "not done after 2 attempts") || !strings.Contains(res[0].Error, "stopped while holding it") {
		t.Fatalf("result %+v", res[0])
	}
}

func TestQueueDeadOwnerOnThisMachineIsTakenOverAtOnce(t *testing.T) {
	q := newQueue(t, 1)
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := NewOwner("dead")
	dead.PID = cmd.Process.Pid // exited and reaped
	if _, err := q.Claim(dead); err != nil {
		t.Fatal(err)
	}
	c, err := q.Claim(NewOwner("live"))
	if err != nil || c.Attempt != 2 {
		t.Fatalf("claim of a dead owner's item: %+v %v", c, err)
	}
	// A live owner on this machine (this process) keeps its item.
	q2 := newQueue(t, 1)
	if _, err := q2.Claim(NewOwner("me")); err != nil {
		t.Fatal(err)
	}
	if _, err := q2.Claim(NewOwner("other")); !errors.Is(err, ErrWait) {
		t.Fatalf("claim of a live owner's item: %v, want ErrWait", err)
	}
}

func TestQueueRetryGoesToAnotherWorkerThenIsRecorded(t *testing.T) {
	q := newQueue(t, 1)
	c1, _ := q.Claim(otherOwner("a"))
	if err := q.Finish(c1, json.RawMessage(`"engine gone"`), "engine gone"); err != nil {
		t.Fatal(err)
	}
	if res, _, _ := q.Results(nil); res[0] != nil {
		t.Fatalf("a retried item has a result: %+v", res[0])
	}
	c2, err := q.Claim(otherOwner("b"))
	if err != nil || c2.Attempt != 2 {
		t.Fatalf("second claim: %+v %v", c2, err)
	}
	if err := q.Finish(c2, json.RawMessage(`"engine gone again"`), "engine gone again"); err != nil {
		t.Fatal(err)
	}
	res, _, _ := q.Results(nil)
	if res[0] == nil || string(res[0].Result) != `"engine gone again"` || res[0].Attempt != 2 {
		t.Fatalf("the last attempt's result is not recorded: %+v", res[0])
	}
}

func TestWorkerInterruptedGivesItsItemBack(t *testing.T) {
	q := newQueue(t, 2)
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	w := &Worker{Claims: q, Owner: NewOwner("w")}
	errc := make(chan error)
	go func() {
		errc <- w.Serve(ctx, func(ctx context.Context, item string) (json.RawMessage, string) {
			close(started)
			<-ctx.Done()
			return json.RawMessage(`"interrupted"`), ""
		})
	}()
	<-started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Serve: %v", err)
	}
	leases, _ := q.Leases()
	if l := leases[0]; !l.Released || l.Attempt != 1 {
		t.Fatalf("lease after interruption: %+v", l)
	}
	c, err := q.Claim(NewOwner("next"))
	if err != nil || c.Index != 0 || c.Attempt != 2 {
		t.Fatalf("the given-back item: %+v %v", c, err)
	}
}

func TestWorkerStopsAfterFaultsInARow(t *testing.T) {
	q := newQueue(t, 5)
	w := &Worker{Claims: q, Owner: NewOwner("w"), MaxFaults: 2}
	err := w.Serve(context.Background(), func(ctx context.Context, item string) (json.RawMessage, string) {
		return json.RawMessage(`null`), "engine gone"
	})
	if err == nil || !strings.Contains(err.Error(), "2 infrastructure faults in a row") {
		t.Fatalf("Serve: %v", err)
	}
}

// TestQueueManyProcesses runs workers as separate processes on one queue (flock, not a
// mutex, keeps them apart).
func TestQueueManyProcesses(t *testing.T) {
	if dir := os.Getenv("ENVGAP_QUEUE_TEST_WORKER"); dir != "" {
		q, err := OpenQueue(dir)
		if err != nil {
			t.Fatal(err)
		}
		w := &Worker{Claims: q, Owner: NewOwner(fmt.Sprint(os.Getpid())), Poll: 10 * time.Millisecond}
		err = w.Serve(context.Background(), func(ctx context.Context, item string) (json.RawMessage, string) {
			f, err := os.OpenFile(filepath.Join(dir, "log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err == nil {
				fmt.Fprintln(f, item)
				f.Close()
			}
			return json.RawMessage(fmt.Sprintf("%d", os.Getpid())), ""
		})
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	q := newQueue(t, 60)
	var cmds []*exec.Cmd
	for range 6 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestQueueManyProcesses$")
		cmd.Env = append(os.Environ(), "ENVGAP_QUEUE_TEST_WORKER="+q.Dir())
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("worker process: %v", err)
		}
	}
	log, _ := os.ReadFile(filepath.Join(q.Dir(), "log"))
	got := strings.Fields(string(log))
	sort.Strings(got)
	if want := q.Plan().Items; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("items done: %v\nwant each once: %v", got, want)
	}
	res, _, _ := q.Results(nil)
	pids := map[string]bool{}
	for _, d := range res {
		if d == nil {
			t.Fatal("an item has no result")
		}
		pids[string(d.Result)] = true
	}
	t.Logf("%d items done by %d processes", len(res), len(pids))
}

// An item finished with an error (its worker's lease lapsed on the last attempt) keeps
// that result: the lapsed worker's late renewal and result are refused.
func TestQueueResultWrittenOnce(t *testing.T) {
	q, err := Create(filepath.Join(t.TempDir(), "work", "run"), Plan{Command: "test", Items: items(1), MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	q.Now = func() time.Time { return now }
	ca, err := q.Claim(otherOwner("a"))
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute)
	if _, err := q.Claim(otherOwner("b")); !errors.Is(err, ErrNoWork) {
		t.Fatalf("claim after the only attempt lapsed: %v, want ErrNoWork", err)
	}
	if err := q.Renew(ca); !errors.Is(err, ErrLost) {
		t.Fatalf("renew of a finished item: %v, want ErrLost", err)
	}
	if err := q.Finish(ca, json.RawMessage(`"late"`), ""); !errors.Is(err, ErrLost) {
		t.Fatalf("finish of a finished item: %v, want ErrLost", err)
	}
	res, _, _ := q.Results(nil)
	if res[0] == nil || res[0].Result != nil || !strings.Contains(res[0].Error, "not done after 1 attempts") || res[0].Owner.Label != "a" {
		t.Fatalf("result %+v", res[0])
	}
}

// A worker whose lease is lost while it works (here: another worker recorded the item)
// sees it through the lease's own renewal: its item is cancelled and its result dropped.
func TestWorkerLostLeaseCancelsItsItem(t *testing.T) {
	q, err := Create(filepath.Join(t.TempDir(), "work", "run"), Plan{Command: "test", Items: items(1), LeaseSeconds: 1})
	if err != nil {
		t.Fatal(err)
	}
	w := &Worker{Claims: q, Owner: NewOwner("w"), Poll: 10 * time.Millisecond}
	err = w.Serve(context.Background(), func(ctx context.Context, item string) (json.RawMessage, string) {
		if err := q.writeDone(Done{Index: 0, Item: item, Result: json.RawMessage(`"by another"`)}); err != nil {
			t.Error(err)
		}
		select {
		case <-ctx.Done():
			return json.RawMessage(`"cancelled"`), ""
		case <-time.After(10 * time.Second):
			t.Error("the item was not cancelled when its lease was lost")
			return json.RawMessage(`"not cancelled"`), ""
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	res, _, _ := q.Results(nil)
	if res[0] == nil || string(res[0].Result) != `"by another"` {
		t.Fatalf("result %+v", res[0])
	}
}
