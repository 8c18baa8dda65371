package check

import (
	"fmt"
	"testing"

	"github.com/replayspec/replayspec/trace"
)

// bigTrace is a valid trace of about n events: many loops and plain runs
// on four threads, one after the other.
func bigTrace(n int) trace.Trace {
	b := new(builder).prelude()
	for id := uint64(1); len(b.ev) < n; id++ {
		l := loop{label: fmt.Sprintf("d%d", id), dispatch: id, thread: 1 + id%4, count: int64(id % 5), services: []trace.Service{trace.KernelTrace, trace.CounterCollection}}
		if l.count == 0 {
			l.cont = []int64{1, 1, 0}
		}
		if id%7 == 0 {
			l.locals = map[int][]trace.Event{1: {ctxStop(11)}}
		}
		b.dispatch(l)
	}
	return b.trace()
}

// A large valid trace holds every rule. How fast it is checked is
// BenchmarkTrace100k's business (docs/benchmarks.md), not a test's: a
// wall-clock limit fails on a loaded machine and passes a slow oracle on a
// fast one.
func TestLargeTraceHolds(t *testing.T) {
	tr := bigTrace(100_000)
	vs := Trace(tr)
	for _, v := range vs[:min(len(vs), 3)] {
		t.Errorf("unexpected:\n%s", v)
	}
}

// BenchmarkTrace100k: every oracle over a valid trace of 100,000 events
// (per op: one trace).
func BenchmarkTrace100k(b *testing.B) {
	tr := bigTrace(100_000)
	for b.Loop() {
		Trace(tr)
	}
}
