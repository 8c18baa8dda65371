package spec

import (
	"fmt"
	"math"
	"sync/atomic"
)

// Memory a run needs, as measured on the simulator (docs/cli.md, "Memory"):
// each buffer is held about five times over (the device copy, its
// snapshot, the initial contents, the application's read-backs), and
// every pass leaves some 30 KiB of events in the trace.
const (
	bytesPerBufferByte = 5
	bytesPerPass       = 32 << 10
	bytesPerDispatch   = 16 << 10
	bytesBase          = 32 << 20
)

// DefaultMemoryBudget is the memory a spec may be expected to need before
// the loader refuses it: a spec must not take its runner down.
const DefaultMemoryBudget = 2 << 30

var memoryBudget atomic.Uint64

// MemoryBudget is the budget in force (the CLI's --memory-budget sets it).
func MemoryBudget() uint64 {
	if b := memoryBudget.Load(); b > 0 {
		return b
	}
	return DefaultMemoryBudget
}

// SetMemoryBudget sets the budget in bytes; 0 restores the default.
func SetMemoryBudget(b uint64) { memoryBudget.Store(b) }

var traceStreamed atomic.Bool

// SetTraceStreamed says whether the runs this process makes hand each
// event on as it is recorded and hold none (`replayspec driver`): the
// estimate then charges the trace of one dispatch, the longest, not of
// them all. It returns what undoes it.
func SetTraceStreamed(streamed bool) (restore func()) {
	old := traceStreamed.Swap(streamed)
	return func() { traceStreamed.Store(old) }
}

// Estimate is what running a spec is expected to need, in bytes.
type Estimate struct {
	Bytes, Buffers, Passes uint64
	// The largest buffer and the longest loop, to say what to change.
	LargestBuffer      int // index into application.buffers, -1 for none
	LargestBufferBytes uint64
	LongestLoop        int // index into application.dispatches, -1 for none
	LongestLoopPasses  uint64
	// The repeated dispatch whose repetitions leave the most trace (-1
	// for none).
	MostRepeated      int
	MostRepeatedBytes uint64
}

// EstimateOf says how much memory running s needs, before it runs.
func EstimateOf(s Spec) Estimate {
	e := Estimate{Bytes: bytesBase, LargestBuffer: -1, LongestLoop: -1, MostRepeated: -1}
	for i, b := range s.Application.Buffers {
		n := b.Elements * 4 * bytesPerBufferByte
		e.Buffers += n
		if e.LargestBuffer < 0 || n > e.LargestBufferBytes {
			e.LargestBuffer, e.LargestBufferBytes = i, n
		}
	}
	for i, d := range s.Application.Dispatches {
		passes, _ := PassBound(s, d)
		passes = max(passes, 1)
		// A repeated dispatch counts as its repetitions (each leaves its
		// trace as a listed one does), worked out from repeat alone:
		// nothing is expanded to count it.
		one := addSat(mulSat(passes, bytesPerPass), bytesPerDispatch)
		trace := mulSat(one, d.Repetitions())
		if traceStreamed.Load() {
			// Events are handed on as they come: what is held is what
			// is in flight, at most the longest dispatch's.
			e.Passes = max(e.Passes, one)
			trace = one
		} else {
			e.Passes = addSat(e.Passes, trace)
		}
		if e.LongestLoop < 0 || passes > e.LongestLoopPasses {
			e.LongestLoop, e.LongestLoopPasses = i, passes
		}
		if d.Repeat > 0 && (e.MostRepeated < 0 || trace > e.MostRepeatedBytes) {
			e.MostRepeated, e.MostRepeatedBytes = i, trace
		}
	}
	e.Bytes = addSat(e.Bytes, addSat(e.Buffers, e.Passes))
	return e
}

// Dispatches is how many dispatches s's application runs: its listed
// ones, a repeated one counting its repetitions (at most MaxUint64).
func Dispatches(s Spec) uint64 {
	var n uint64
	for _, d := range s.Application.Dispatches {
		n = addSat(n, d.Repetitions())
	}
	return n
}

// addSat and mulSat are + and * that stop at the largest uint64: an
// estimate too large to hold is over any budget, never wrapped to a small
// one.
func addSat(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}

func mulSat(a, b uint64) uint64 {
	if a != 0 && b > math.MaxUint64/a {
		return math.MaxUint64
	}
	return a * b
}

// Breakdown is the estimate in one unit (MiB, or GiB from 10 GiB), each
// part rounded to the nearest and the total their sum, so that what is
// printed adds up: what any run needs, the buffers, the trace of the
// passes. A part under half a unit is 0 (Part shows it as "<1").
func (e Estimate) Breakdown() (total, base, buffers, passes uint64, unit string) {
	shift, unit := uint(20), "MiB"
	if e.Bytes >= 10<<30 {
		shift, unit = 30, "GiB"
	}
	near := func(b uint64) uint64 { return (b + (1 << (shift - 1))) >> shift }
	base, buffers, passes = near(e.Bytes-e.Buffers-e.Passes), near(e.Buffers), near(e.Passes)
	return base + buffers + passes, base, buffers, passes, unit
}

// Part shows one part of a Breakdown: "<1" for a part that is there but
// rounds to 0.
func Part(rounded, bytes uint64) string {
	if rounded == 0 && bytes > 0 {
		return "<1"
	}
	return fmt.Sprint(rounded)
}

// memory refuses a spec whose estimate is over MemoryBudget, with the
// parts that add up to it and the one that takes the memory.
func (v *validator) memory(s Spec) {
	e := EstimateOf(s)
	budget := MemoryBudget()
	if e.Bytes <= budget {
		return
	}
	total, base, bufs, passes, unit := e.Breakdown()
	var path, what string
	switch {
	case bytesBase >= budget:
		what = fmt.Sprintf("any run needs %s: raise --memory-budget to %d or more", mib(bytesBase), (bytesBase>>20)+1)
	case e.Buffers >= e.Passes && e.LargestBuffer >= 0:
		b := s.Application.Buffers[e.LargestBuffer]
		path = fmt.Sprintf("application.buffers[%d].elements", e.LargestBuffer)
		if 2*e.LargestBufferBytes >= e.Buffers {
			what = fmt.Sprintf("most of it is buffer %s (%d elements, %s); make it smaller, or raise --memory-budget", b.Name, b.Elements, mib(e.LargestBufferBytes))
		} else {
			path = "application.buffers"
			what = fmt.Sprintf("most of it is its %d buffers (the largest, %s, %s); make them smaller, or raise --memory-budget", len(s.Application.Buffers), b.Name, mib(e.LargestBufferBytes))
		}
	case e.MostRepeated >= 0 && e.MostRepeatedBytes >= e.Passes-e.MostRepeatedBytes:
		d := s.Application.Dispatches[e.MostRepeated]
		path = fmt.Sprintf("application.dispatches[%d].repeat", e.MostRepeated)
		what = fmt.Sprintf("most of it is the trace of dispatch %s, repeated %d times; lower its repeat, or raise --memory-budget (a run judged as it goes, docs/cli.md \"Memory\", holds none of it)", d.Name, d.Repeat)
	case e.LongestLoop >= 0:
		d := s.Application.Dispatches[e.LongestLoop]
		loop := e.LongestLoopPasses*bytesPerPass + bytesPerDispatch
		path = fmt.Sprintf("application.dispatches[%d]", e.LongestLoop)
		if 2*loop >= e.Passes {
			what = fmt.Sprintf("most of it is dispatch %s, which may run %d passes (%s of trace); lower its passes or limits.max_passes, or raise --memory-budget", d.Name, e.LongestLoopPasses, mib(loop))
		} else {
			path = "application.dispatches"
			what = fmt.Sprintf("most of it is the trace of its %d dispatches (the longest, %s, may run %d passes); run fewer, or raise --memory-budget", len(s.Application.Dispatches), d.Name, e.LongestLoopPasses)
		}
	}
	v.fail(path, fmt.Sprintf("running this spec needs about %d %s of memory (%s %s any run needs + %s %s for its buffers + %s %s of trace for its passes), over the budget of %s: %s",
		total, unit, Part(base, bytesBase), unit, Part(bufs, e.Buffers), unit, Part(passes, e.Passes), unit, mib(budget), what))
}

// mib shows a size as Breakdown does: to the nearest MiB (GiB from 10
// GiB), "<1" for a size that rounds to 0.
func mib(b uint64) string {
	shift, unit := uint(20), "MiB"
	if b >= 10<<30 {
		shift, unit = 30, "GiB"
	}
	return Part((b+(1<<(shift-1)))>>shift, b) + " " + unit
}
