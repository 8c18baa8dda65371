package sim

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/trace"
)

// waitOrFail fails the test instead of hanging when Wait does not return.
func waitOrFail(t *testing.T, rt *Runtime) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- rt.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("Wait hung")
		return nil
	}
}

func TestRoundRobinInThreadIDOrder(t *testing.T) {
	rt, _ := newTestRuntime(t, Config{Scheduled: true}, "MI300")
	var order []hsa.ThreadID
	for _, id := range []hsa.ThreadID{3, 1, 2} { // registration order does not matter
		if err := rt.Go(id, func() {
			for range 3 {
				order = append(order, id)
				rt.Yield(id)
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := waitOrFail(t, rt); err != nil {
		t.Fatal(err)
	}
	want := []hsa.ThreadID{1, 2, 3, 1, 2, 3, 1, 2, 3}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestGoRejects(t *testing.T) {
	for _, scheduled := range []bool{true, false} {
		rt, _ := newTestRuntime(t, Config{Scheduled: scheduled}, "MI300")
		if err := rt.Go(0, func() {}); err == nil {
			t.Errorf("scheduled=%v: thread 0 accepted", scheduled)
		}
		block := make(chan struct{})
		if err := rt.Go(1, func() { <-block }); err != nil {
			t.Fatal(err)
		}
		if err := rt.Go(1, func() {}); err == nil {
			t.Errorf("scheduled=%v: duplicate thread accepted", scheduled)
		}
		close(block)
		if err := waitOrFail(t, rt); err != nil {
			t.Fatal(err)
		}
	}
}

// workload is three application threads that dispatch, wait for their
// completions and share an agent lock, as a replay engine's users would.
func workload(t testing.TB, rt *Runtime) {
	q, err := rt.CreateQueue(1)
	if err != nil {
		t.Fatal(err)
	}
	lock := rt.NewLock()
	shared := buffer(t, rt, 0)
	for id := hsa.ThreadID(1); id <= 3; id++ {
		if err := rt.Go(id, func() {
			x, err := rt.Allocate(1, hsa.DeviceCoarse, 64*4)
			if err != nil {
				t.Error(err)
				return
			}
			for i := range 4 {
				sig := rt.CreateSignal(1)
				p := dispatch("increment", uint32(16*int(id)), buf(x))
				p.Completion, p.Tag = sig, uint64(id)*100+uint64(i)
				if id == 2 && i == 1 {
					lock.Lock(id) // a writer holds the agent across two kernels (MEM-6)
					_ = q.Submit(id, p)
					_ = q.Submit(id, dispatch("atomic_counter", 5, buf(shared)))
					lock.Unlock(id)
				} else {
					lock.RLock(id)
					_ = q.Submit(id, p)
					lock.RUnlock(id)
				}
				if !sig.WaitBelow(1) {
					t.Errorf("thread %d: wait failed", id)
				}
				rt.Yield(id)
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := waitOrFail(t.(*testing.T), rt); err != nil {
		t.Fatal(err)
	}
}

func TestScheduledRunsRepeatByteForByte(t *testing.T) {
	var first []byte
	for run := range 20 {
		rt, rec := newTestRuntime(t, Config{Scheduled: true}, "MI300")
		workload(t, rt)
		got := trace.Marshal(trace.Trace{Events: rec.Events()})
		if run == 0 {
			first = got
			var threads []uint64
			for _, e := range eventsOf(rec, trace.Kernel) {
				threads = append(threads, e.Thread)
			}
			t.Logf("kernel threads %v", threads)
			if !strings.HasPrefix(fmt.Sprint(threads), "[1 2 3 1 2") {
				t.Errorf("kernels ran on threads %v; want them interleaved round robin", threads)
			}
			continue
		}
		if !bytes.Equal(first, got) {
			t.Fatalf("run %d differs from run 0:\n%s\n---\n%s", run, first, got)
		}
	}
}

func TestUnscheduledThreadsRunInParallel(t *testing.T) {
	rt, rec := newTestRuntime(t, Config{}, "MI300")
	workload(t, rt)
	if n := len(eventsOf(rec, trace.Kernel)); n != 13 {
		t.Errorf("%d kernel events, want 13", n)
	}
}

// MEM-6: a thread blocked on a lock is not runnable; the baton moves on
// and comes back when the lock is free.
func TestBlockedLockPassesTheBaton(t *testing.T) {
	rt, _ := newTestRuntime(t, Config{Scheduled: true}, "MI300")
	lock := rt.NewLock()
	var log []string
	_ = rt.Go(1, func() {
		lock.Lock(1)
		log = append(log, "1 locked")
		rt.Yield(1)
		log = append(log, "1 unlocks")
		lock.Unlock(1)
		rt.Yield(1)
		log = append(log, "1 done")
	})
	_ = rt.Go(2, func() {
		log = append(log, "2 wants")
		lock.RLock(2)
		log = append(log, "2 got")
		lock.RUnlock(2)
	})
	if err := waitOrFail(t, rt); err != nil {
		t.Fatal(err)
	}
	want := []string{"1 locked", "2 wants", "1 unlocks", "2 got", "1 done"}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestWaitBelowPassesTheBaton(t *testing.T) {
	rt, _ := newTestRuntime(t, Config{Scheduled: true}, "MI300")
	q, _ := rt.CreateQueue(1)
	x := buffer(t, rt, 0)
	sig := rt.CreateSignal(1)
	var log []string
	_ = rt.Go(1, func() {
		log = append(log, "1 waits")
		ok := sig.WaitBelow(1)
		log = append(log, fmt.Sprintf("1 woke %v", ok))
	})
	_ = rt.Go(2, func() {
		p := dispatch("increment", 1, buf(x))
		p.Completion = sig
		log = append(log, "2 dispatches")
		_ = q.Submit(2, p)
		log = append(log, "2 done")
	})
	if err := waitOrFail(t, rt); err != nil {
		t.Fatal(err)
	}
	want := []string{"1 waits", "2 dispatches", "1 woke true", "2 done"}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestDeadlockIsReportedNotHung(t *testing.T) {
	tests := []struct {
		name  string
		setup func(rt *Runtime, results map[string]bool)
	}{
		{name: "lock order inversion", setup: func(rt *Runtime, results map[string]bool) {
			a, b := rt.NewLock(), rt.NewLock()
			_ = rt.Go(1, func() { a.Lock(1); rt.Yield(1); b.Lock(1); b.Unlock(1); a.Unlock(1) })
			_ = rt.Go(2, func() { b.Lock(2); rt.Yield(2); a.Lock(2); a.Unlock(2); b.Unlock(2) })
		}},
		{name: "a wait nobody ends", setup: func(rt *Runtime, results map[string]bool) {
			sig := rt.CreateSignal(1)
			_ = rt.Go(1, func() { results["1"] = sig.WaitBelow(1) })
			_ = rt.Go(2, func() { results["2"] = rt.WaitUntil(2, func() bool { return false }) })
		}},
		{name: "a holder that never unlocks", setup: func(rt *Runtime, results map[string]bool) {
			l := rt.NewLock()
			_ = rt.Go(1, func() { l.Lock(1) })
			_ = rt.Go(2, func() { rt.Yield(2); l.RLock(2); results["after"] = rt.WaitUntil(2, func() bool { return false }) })
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt, _ := newTestRuntime(t, Config{Scheduled: true}, "MI300")
			results := map[string]bool{}
			tt.setup(rt, results)
			err := waitOrFail(t, rt)
			if !errors.Is(err, ErrDeadlock) {
				t.Fatalf("Wait = %v, want ErrDeadlock", err)
			}
			for k, ok := range results {
				if ok {
					t.Errorf("wait %s returned true", k)
				}
			}
			if len(rt.Faults()) != 1 {
				t.Errorf("faults %v, want the deadlock only", rt.Faults())
			}
		})
	}
}

// A hung process records nothing more: the events the threads record once
// their waits failed reach no sink, DeadlockedAt counts those before, and
// the recorder still numbers and keeps them (the target cuts them off).
func TestDeadlockCutsTheSink(t *testing.T) {
	rt, rec := newTestRuntime(t, Config{Scheduled: true}, "MI300")
	var sunk []uint64
	rec.SetSink(func(e *trace.Event) { sunk = append(sunk, e.Seq) }, true)
	rec.Emit(trace.Event{Type: trace.AppAlloc})
	for id := hsa.ThreadID(1); id <= 2; id++ {
		_ = rt.Go(id, func() {
			rec.Emit(trace.Event{Type: trace.AppDispatch, Thread: uint64(id)})
			rt.WaitUntil(id, func() bool { return false })
			rec.Emit(trace.Event{Type: trace.AppTimeout, Thread: uint64(id)}) // after the hang
		})
	}
	if err := waitOrFail(t, rt); !errors.Is(err, ErrDeadlock) {
		t.Fatalf("Wait = %v, want ErrDeadlock", err)
	}
	n, ok := rt.DeadlockedAt()
	if !ok || n != 3 {
		t.Fatalf("DeadlockedAt = %d, %v; want 3 (the allocation and two dispatches)", n, ok)
	}
	if want := []uint64{1, 2, 3}; !slices.Equal(sunk, want) {
		t.Errorf("the sink saw events %v, want %v: nothing after the hang", sunk, want)
	}
	if got := len(rec.Take()); got != 5 {
		t.Errorf("the recorder kept %d events, want 5", got)
	}
}

// CMP-4: Cancel ends a wait that would never end.
func TestCancelEndsWaits(t *testing.T) {
	for _, scheduled := range []bool{true, false} {
		t.Run(fmt.Sprint("scheduled=", scheduled), func(t *testing.T) {
			rt, _ := newTestRuntime(t, Config{Scheduled: scheduled}, "MI300")
			sig := rt.CreateSignal(1)
			var ok = true
			_ = rt.Go(1, func() { ok = sig.WaitBelow(1) })
			_ = rt.Go(2, func() {
				for range 10 {
					rt.Yield(2) // the other thread stays blocked meanwhile
				}
				rt.Cancel()
			})
			if err := waitOrFail(t, rt); err != nil {
				t.Fatal(err)
			}
			if ok {
				t.Error("the cancelled wait returned true")
			}
			if rt.WaitUntil(1, func() bool { return false }) {
				t.Error("a wait after Cancel returned true")
			}
		})
	}
}

func TestPanicInAThreadIsAFault(t *testing.T) {
	rt, _ := newTestRuntime(t, Config{Scheduled: true}, "MI300")
	ran := false
	_ = rt.Go(1, func() { panic("boom") })
	_ = rt.Go(2, func() { ran = true })
	err := waitOrFail(t, rt)
	if err == nil || !strings.Contains(err.Error(), "thread 1 panicked: boom") {
		t.Errorf("Wait = %v", err)
	}
	if !ran {
		t.Error("thread 2 did not run")
	}
}

func TestLockMisuseIsAFault(t *testing.T) {
	rt, _ := newTestRuntime(t, Config{Scheduled: true}, "MI300")
	l := rt.NewLock()
	_ = rt.Go(1, func() { l.Unlock(1); l.RUnlock(1) })
	err := waitOrFail(t, rt)
	if err == nil || strings.Count(err.Error(), "lock misuse") != 2 {
		t.Errorf("Wait = %v, want two misuse faults", err)
	}
}

// A waiting writer keeps new readers out, so a replay is not starved.
func TestWaitingWriterGoesBeforeNewReaders(t *testing.T) {
	rt, _ := newTestRuntime(t, Config{Scheduled: true}, "MI300")
	lock := rt.NewLock()
	var log []string
	_ = rt.Go(1, func() {
		lock.RLock(1)
		rt.Yield(1)
		rt.Yield(1)
		log = append(log, "1 read-unlocks")
		lock.RUnlock(1)
	})
	_ = rt.Go(2, func() {
		lock.Lock(2)
		log = append(log, "2 writes")
		lock.Unlock(2)
	})
	_ = rt.Go(3, func() {
		lock.RLock(3)
		log = append(log, "3 reads")
		lock.RUnlock(3)
	})
	if err := waitOrFail(t, rt); err != nil {
		t.Fatal(err)
	}
	want := []string{"1 read-unlocks", "2 writes", "3 reads"}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}
