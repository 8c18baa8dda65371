package sim

import (
	"sync"
	"testing"

	"github.com/replayspec/replayspec/trace"
)

// TestTraceOrderFollowsMemoryUnderFreeThreads: with threads running truly
// in parallel, the trace must still be an order in which things could have
// happened. Kernels of four threads increment one buffer: in trace order,
// each kernel must start from what the kernel recorded before it left
// (mem_in = the previous mem_out), and every decrement of a signal comes
// before the waiter's wakeup. Found under free threads (docs/decisions.md
// 18.4): a kernel was recorded after releasing the memory lock, so another
// thread's later kernel could be recorded first.
func TestTraceOrderFollowsMemoryUnderFreeThreads(t *testing.T) {
	for round := range 200 {
		rt, rec := newTestRuntime(t, Config{}, "MI300")
		a := buffer(t, rt, make([]int32, 64)...)
		var wg sync.WaitGroup
		for th := 1; th <= 4; th++ {
			q, err := rt.CreateQueue(1)
			if err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 50 {
					sig := rt.CreateSignal(1)
					p := dispatch("increment", 64, buf(a))
					p.Completion = sig
					if err := q.Submit(1, p); err != nil {
						t.Error(err)
						return
					}
					if !sig.WaitBelow(1) {
						t.Error("the signal was never decremented")
						return
					}
					rec.Emit(trace.Event{Type: trace.AppComplete, Signal: uint64(sig.ID())})
				}
			}()
		}
		wg.Wait()
		prev := ""
		decremented := map[uint64]bool{}
		for _, e := range rec.Events() {
			switch e.Type {
			case trace.Kernel:
				if prev != "" && e.MemIn != prev {
					t.Fatalf("round %d: kernel seq %d started from %s, but the kernel recorded before it left %s", round, e.Seq, e.MemIn, prev)
				}
				prev = e.MemOut
			case trace.Signal:
				decremented[e.Signal] = true
			case trace.AppComplete:
				if !decremented[e.Signal] {
					t.Fatalf("round %d: the wait on signal %d returned (seq %d) before its decrement was recorded", round, e.Signal, e.Seq)
				}
			}
		}
	}
}
