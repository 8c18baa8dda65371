package spec

import (
	"fmt"
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

// Estimate is what running a spec is expected to need, in bytes.
type Estimate struct {
	Bytes, Buffers, Passes uint64
	// The largest buffer and the longest loop, to say what to change.
	LargestBuffer      int // index into application.buffers, -1 for none
	LargestBufferBytes uint64
	LongestLoop        int // index into application.dispatches, -1 for none
	LongestLoopPasses  uint64
}

// EstimateOf says how much memory running s needs, before it runs.
func EstimateOf(s Spec) Estimate {
	e := Estimate{Bytes: bytesBase, LargestBuffer: -1, LongestLoop: -1}
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
		e.Passes += passes*bytesPerPass + bytesPerDispatch
		if e.LongestLoop < 0 || passes > e.LongestLoopPasses {
			e.LongestLoop, e.LongestLoopPasses = i, passes
		}
	}
	e.Bytes += e.Buffers + e.Passes
	return e
}

// memory refuses a spec whose estimate is over MemoryBudget, pointing at
// what takes the memory.
func (v *validator) memory(s Spec) {
	e := EstimateOf(s)
	if e.Bytes <= MemoryBudget() {
		return
	}
	var path, what string
	if e.Buffers >= e.Passes && e.LargestBuffer >= 0 {
		path = fmt.Sprintf("application.buffers[%d].elements", e.LargestBuffer)
		what = fmt.Sprintf("the largest buffer, %s, takes %s", s.Application.Buffers[e.LargestBuffer].Name, mib(e.LargestBufferBytes))
	} else if e.LongestLoop >= 0 {
		path = fmt.Sprintf("application.dispatches[%d]", e.LongestLoop)
		what = fmt.Sprintf("dispatch %s may run %d passes (%s of trace)", s.Application.Dispatches[e.LongestLoop].Name, e.LongestLoopPasses, mib(e.LongestLoopPasses*bytesPerPass))
	}
	v.fail(path, fmt.Sprintf("running this spec needs about %s of memory (buffers %s, passes %s), over the budget of %s: %s; make it smaller, or raise --memory-budget",
		mib(e.Bytes), mib(e.Buffers), mib(e.Passes), mib(MemoryBudget()), what))
}

func mib(b uint64) string {
	if b >= 10<<30 {
		return fmt.Sprintf("%d GiB", b>>30)
	}
	return fmt.Sprintf("%d MiB", (b+(1<<20)-1)>>20)
}
