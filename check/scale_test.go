package check

import (
	"fmt"
	"os"
	"syscall"
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

// A large valid trace holds every rule. How fast it is checked is
// BenchmarkTrace100k's business (docs/benchmarks.md), not a test's: a
// wall-clock limit fails on a loaded machine and passes a slow oracle on a
// fast one.
func TestLargeTraceHolds(t *testing.T) {
	n := 100_000
	if testing.Short() {
		n = 25_000 // several seconds under -race; the whole size in make test-heavy
	}
	tr := bigTrace(n)
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

// firstFrom finds, by binary search over the running maximum, the same
// record a walk in trace order would: the first of pass p or later, passes
// out of order included.
func TestFirstRecordFromPass(t *testing.T) {
	c := &passedRecords{}
	for i, q := range []uint64{0, 2, 1, 1, 3, 0, 5} {
		top := q
		if n := len(c.maxPass); n > 0 {
			top = max(top, c.maxPass[n-1])
		}
		c.at, c.pass, c.maxPass = append(c.at, 10+i), append(c.pass, q), append(c.maxPass, top)
	}
	for p := uint64(0); p <= 6; p++ {
		wantAt, wantFound := 0, false
		for j, q := range c.pass {
			if q >= p {
				wantAt, wantFound = c.at[j], true
				break
			}
		}
		at, q, found := c.firstFrom(p)
		if at != wantAt || found != wantFound || (found && q < p) {
			t.Errorf("pass %d: record %d (pass %d, %v), a walk finds %d (%v)", p, at, q, found, wantAt, wantFound)
		}
	}
	if _, _, found := (*passedRecords)(nil).firstFrom(0); found {
		t.Error("no records, yet one found")
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

// BenchmarkRecordedTrace: the oracles alone over the NDJSON trace named by
// $REPLAYSPEC_BENCH_TRACE (decoded once, outside the timing), judged whole
// and as a stream (check's work in `replayspec check`, without the
// decoding). docs/benchmarks.md makes its large trace with
// scripts/bigspec.sh 10000. Skipped without the variable.
func BenchmarkRecordedTrace(b *testing.B) {
	path := os.Getenv("REPLAYSPEC_BENCH_TRACE")
	if path == "" {
		b.Skip("REPLAYSPEC_BENCH_TRACE names no trace")
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	st, _ := f.Stat()
	tr, err := trace.Read(f)
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	perEvent := func(b *testing.B, cpu time.Duration) {
		b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N*len(tr.Events)), "cpu-ns/event")
		b.ReportMetric(float64(st.Size())*float64(b.N)/1e6/(cpuTime()-cpu).Seconds(), "MB/cpu-s")
	}
	b.Run("whole", func(b *testing.B) {
		cpu := cpuTime()
		for b.Loop() {
			Judge(tr)
		}
		perEvent(b, cpu)
	})
	b.Run("stream", func(b *testing.B) {
		cpu := cpuTime()
		for b.Loop() {
			s := NewStream(tr.Header)
			for i := range tr.Events {
				s.Add(tr.Events[i])
			}
			if _, ok := s.Finish(); !ok {
				b.Fatal("not judged as a stream")
			}
		}
		perEvent(b, cpu)
	})
}

// cpuTime is the process's CPU time so far (user and system, every
// thread): on a shared machine it moves less with the load than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// returnAt finds what a walk over the dispatch's returns in trace order
// finds first, for returns kept by pass and the rest alike: duplicates,
// passes out of order, a pass far past the loop's, CONFIG's, a phase
// outside the set.
func TestReturnAtAsAWalk(t *testing.T) {
	ret := func(op trace.Op, ph trace.Phase, pass uint64) trace.Event {
		return trace.Event{Type: trace.Returned, Op: op, Phase: ph, Pass: trace.U64(pass), Dispatch: 1}
	}
	ev := []trace.Event{
		ret(trace.OpConfig, trace.PhaseEnter, 0), ret(trace.OpPass, trace.PhaseEnter, 0), ret(trace.OpPass, trace.PhaseExit, 0),
		ret(trace.OpPass, trace.PhaseEnter, 2), ret(trace.OpPass, trace.PhaseEnter, 1), ret(trace.OpPass, trace.PhaseEnter, 1),
		ret(trace.OpPass, trace.PhaseExit, 1<<40), ret(trace.OpPass, "middle", 1), ret(trace.OpConfig, trace.PhaseExit, 7),
		ret(trace.OpPass, trace.PhaseExit, 2), ret(trace.OpPass, trace.PhaseExit, 0),
	}
	// An index made by hand reads the events; one made by newIndex its
	// columns (opPhase, pass).
	for _, x := range []*index{{ev: ev}, newIndex(trace.Trace{Events: ev})} {
		returnAtAsAWalk(t, x, ev)
	}
}

func returnAtAsAWalk(t *testing.T, x *index, ev []trace.Event) {
	d := &dispatchView{id: 1}
	for i := range ev {
		d.returns = append(d.returns, i)
	}
	for _, op := range []trace.Op{trace.OpConfig, trace.OpPass} {
		for _, ph := range []trace.Phase{trace.PhaseEnter, trace.PhaseExit, "middle"} {
			for _, p := range []uint64{0, 1, 2, 3, 7, 1 << 40} {
				k := returnKey{op, ph, p}
				want, wantOK := 0, false
				for _, i := range d.returns {
					e := ev[i]
					q := *e.Pass
					if e.Op == trace.OpConfig {
						q = 0
					}
					if (returnKey{e.Op, e.Phase, q}) == k {
						want, wantOK = i, true
						break
					}
				}
				if got, ok := x.returnAt(d, k); got != want || ok != wantOK {
					t.Errorf("%v: return %d (%v), a walk finds %d (%v)", k, got, ok, want, wantOK)
				}
			}
		}
	}
}
