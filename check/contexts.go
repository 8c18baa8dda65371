package check

import (
	"strings"

	"github.com/replayspec/replayspec/trace"
)

// contextActive says whether context ctx was globally started at position
// pos, from the tool's successful start_context/stop_context api events.
// known is false when the trace records none of the tool's calls: then
// nothing can be said and callers judge nothing.
func (x *index) contextActive(ctx uint64, pos int) (active, known bool) {
	known = x.has(trace.API)
	for _, i := range x.byType[trace.API] {
		e := x.ev[i]
		if i >= pos || e.Context != ctx || !e.Status.Is(trace.StatusSuccess) {
			continue
		}
		switch e.Call {
		case trace.CallStartContext:
			active = true
		case trace.CallStopContext:
			active = false
		}
	}
	return active, known
}

// replayConfigs returns the api events that configured KERNEL_REPLAY.
func (x *index) replayConfigs() []int {
	var out []int
	for _, i := range x.byType[trace.API] {
		e := x.ev[i]
		if e.Call == trace.CallConfigureCallback && e.Domain == trace.DomainKernelReplay {
			out = append(out, i)
		}
	}
	return out
}

// coversConfig reads a configure call's operations: none subscribes to
// everything (ACT-2); else CONFIG must be listed.
func coversConfig(e trace.Event) bool {
	if len(e.Operations) == 0 {
		return true
	}
	for _, op := range e.Operations {
		if trace.Op(strings.TrimPrefix(strings.ToUpper(string(op)), "ROCPROFILER_KERNEL_REPLAY_")) == trace.OpConfig {
			return true
		}
	}
	return false
}
