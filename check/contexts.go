package check

import (
	"strings"

	"github.com/replayspec/replayspec/trace"
)

// contextActive says whether context ctx was globally started at position
// pos, from the tool's successful start_context/stop_context api events.
// known is false when the trace records no start_context at all: then
// nothing can be said and callers judge nothing.
func (x *index) contextActive(ctx uint64, pos int) (active, known bool) {
	for _, i := range x.byType[trace.API] {
		e := x.ev[i]
		if e.Call == callStartContext {
			known = true
		}
		if i >= pos || e.Context != ctx || !statusIs(e.Status, statusSuccess) {
			continue
		}
		switch e.Call {
		case callStartContext:
			active = true
		case callStopContext:
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
		if e.Call == callConfigure && strings.Contains(e.Message, domainReplay) {
			out = append(out, i)
		}
	}
	return out
}

// coversConfig reads the operations of a configure message: absent, empty
// or "all" subscribes to everything (ACT-2); else CONFIG must be listed.
func coversConfig(msg string) bool {
	_, rest, ok := strings.Cut(msg, "operations=")
	if !ok {
		return true
	}
	list, _, _ := strings.Cut(rest, " ")
	if list == "" || strings.EqualFold(list, "all") || list == "*" {
		return true
	}
	for _, op := range strings.Split(list, ",") {
		if strings.EqualFold(strings.TrimPrefix(op, "ROCPROFILER_KERNEL_REPLAY_"), opConfig) {
			return true
		}
	}
	return false
}
