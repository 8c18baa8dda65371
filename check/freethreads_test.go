package check

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/replayspec/replayspec/trace"
)

// Under free threads (docs/decisions.md, "Found under free threads") the
// trace is one order in which things could have happened, and a call is
// recorded when it returns: its effect lies somewhere after its thread's
// previous event. An oracle fails only when every such reading breaks the
// rule. Each case below is a pair: the trace another thread's timing
// allows, which must pass, and the same events placed so that the trace
// proves the violation, which must still be caught.

// otherThread is thread 2's plain dispatch on agent 2, whose last event
// (its read-back) bounds when thread 2's next call began.
func otherThread(clock, id uint64) []trace.Event {
	b := &builder{clock: clock, allocated: map[uint64]bool{2: id > 2}}
	return b.dispatch(loop{label: fmt.Sprintf("p%d", id), dispatch: id, thread: 2, agent: 2, count: -1}).ev
}

func isApp(label string) match {
	return func(e trace.Event) bool { return e.Type == trace.AppDispatch && e.Label == label }
}

func stopBy2(ctx uint64) trace.Event {
	return trace.Event{Type: trace.API, Call: trace.CallStopContext, Thread: 2, Context: ctx, Status: "SUCCESS"}
}

func TestFreeThreadReadings(t *testing.T) {
	// k replays on thread 1; thread 2 ran p before k was written.
	withOther := func(l loop) trace.Trace {
		tr := new(builder).prelude().dispatch(l).trace()
		return insertBefore(tr, isApp(l.label), otherThread(5000, 2)...)
	}
	fixed3 := func() trace.Trace { return withOther(loop{label: "k", dispatch: 1, count: 3}) }
	pcs := func() trace.Trace {
		return withOther(loop{label: "k", dispatch: 1, count: 3, agentPCS: true, locals: map[int][]trace.Event{1: {ctxStop(11)}}})
	}
	// plainRun: a context subscribed to every operation is started, yet k
	// gets no CONFIG (the tool's callbacks dropped).
	plainRun := func() trace.Trace {
		tr := withOther(loop{label: "k", dispatch: 1, count: -1})
		return drop(tr, func(e trace.Event) bool {
			return (e.Type == trace.Callback || e.Type == trace.Returned) && e.Dispatch == 1
		})
	}
	// peerKernel puts thread 2's dispatch on agent between k's snapshot
	// and its first pass, and makes that pass start from other memory.
	peerKernel := func(agent uint64) trace.Trace {
		tr := fixed3()
		other := &builder{clock: 8000, allocated: map[uint64]bool{1: true, 2: true}}
		other.dispatch(loop{label: "q", dispatch: 3, thread: 2, agent: agent, count: -1})
		tr = insertAfter(tr, typ(trace.Snapshot), other.ev...)
		return edit(tr, and(typ(trace.Kernel), dispatchIs(1), nth(and(typ(trace.Kernel), dispatchIs(1)), 1)), func(e *trace.Event) {
			e.MemIn = trace.Digest([]byte{7, 0, 0, 0, 7, 0, 0, 0, 7, 0, 0, 0, 7, 0, 0, 0})
		})
	}
	late := trace.Event{Type: trace.AppAlloc, Thread: 2, Buffer: "late", Agent: 1, MemKind: trace.MemDevice, Addr: 1<<32 + 9<<16, Bytes: 16}
	cases := []struct {
		reason         string
		allowed, proof trace.Trace
		want           string
	}{
		{"thread 2 stops the replay context while k's write is taken: k may have been activated before the stop (ACT-3)",
			insertAfter(fixed3(), and(typ(trace.DispatchID), dispatchIs(1)), stopBy2(1)),
			insertBefore(fixed3(), isApp("k"), stopBy2(1)), "ACT-3"},
		{"thread 2 stops context 11 while k's write is taken: k's loop may have begun with it active, so its local stop may succeed (LCX-7)",
			insertAfter(pcs(), and(typ(trace.DispatchID), dispatchIs(1)), stopBy2(11)),
			insertBefore(pcs(), isApp("k"), stopBy2(11)), "LCX-7"},
		{"thread 2 stops the all-operations subscriber around k's write: k may have been taken after the stop, so no CONFIG is owed (ACT-2)",
			insertAfter(plainRun(), and(typ(trace.Kernel), dispatchIs(1)), stopBy2(1)),
			insertAfter(plainRun(), and(typ(trace.Kernel), dispatchIs(1)), append(otherThread(9000, 3), stopBy2(1))...), "ACT-2"},
		{"another agent's kernel runs between k's snapshot and its first pass: it may have written k's buffer (peer access), so pass 0's input proves nothing (MEM-2)",
			peerKernel(2), peerKernel(1), "MEM-2"},
		{"thread 2 allocates a buffer on k's agent while k's snapshot is prepared: it may have come after the SDK listed its buffers (MEM-4)",
			insertAfter(fixed3(), and(typ(trace.DispatchID), dispatchIs(1)), late),
			insertBefore(fixed3(), isApp("k"), late), "MEM-4"},
	}
	for _, c := range cases {
		allowed, proof := renumber(c.allowed), renumber(c.proof)
		for _, v := range Judge(allowed).Violations {
			t.Errorf("%s\n  a consistent reading keeps the rules, yet: %s", c.reason, v)
		}
		got := map[string]bool{}
		for _, v := range Judge(proof).Violations {
			got[v.Rule] = true
		}
		if !got[c.want] {
			t.Errorf("%s\n  placed so that the trace proves it, %s is not reported (got %v)", c.reason, c.want, slices.Sorted(maps.Keys(got)))
		}
	}
}
