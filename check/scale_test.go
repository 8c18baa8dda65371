package check

import (
	"fmt"
	"testing"
	"time"

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

func TestLargeTraceChecksFast(t *testing.T) {
	tr := bigTrace(100_000)
	start := time.Now()
	vs := Trace(tr)
	took := time.Since(start)
	for _, v := range vs[:min(len(vs), 3)] {
		t.Errorf("unexpected:\n%s", v)
	}
	limit := time.Second
	if testing.CoverMode() != "" || raceEnabled {
		limit = 5 * time.Second
	}
	if took > limit {
		t.Errorf("checking %d events took %v, want under %v", len(tr.Events), took, limit)
	}
	t.Logf("%d events checked in %v", len(tr.Events), took)
}

func BenchmarkTrace100k(b *testing.B) {
	tr := bigTrace(100_000)
	for b.Loop() {
		Trace(tr)
	}
}
