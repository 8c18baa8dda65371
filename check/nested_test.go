package check

import (
	"maps"
	"os"
	"slices"
	"testing"

	"github.com/replayspec/replayspec/trace"
)

// The tool's own dispatches inside windows (MEM-6, clarified 2026-12-01),
// judged on the reference engine's traces of the library's specs (the
// goldens) and on those traces with one mistake planted.

func golden(t *testing.T, name string) trace.Trace {
	t.Helper()
	f, err := os.Open("../golden/" + name + ".ndjson")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := trace.Read(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return tr
}

func TestNestedWindowsValid(t *testing.T) {
	for _, name := range []string{"tool-dispatch-from-record", "tool-dispatch-nested-other-agent", "tool-dispatch-nested-three-deep",
		"tool-dispatch-waits-for-another-loop", "tool-dispatch-from-callback/target=saved,pass=1", "tool-dispatch-after-global-stop"} {
		t.Run(name, func(t *testing.T) {
			j := Judge(golden(t, name))
			for _, v := range j.Violations {
				t.Errorf("unexpected violation:\n%s", v)
			}
			for _, v := range Judge(blackBox(golden(t, name))).Violations {
				t.Errorf("unexpected violation at black-box:\n%s", v)
			}
			for _, r := range j.Rules {
				if r.Rule == "MEM-6" && r.Verdict != Pass {
					t.Errorf("MEM-6 is %s, want pass", r.Verdict)
				}
			}
		})
	}
}

func TestNestedWindowsBroken(t *testing.T) {
	record := golden(t, "tool-dispatch-from-record")                         // main 1 on gpu0; side 2 declined; peer 3 nested on gpu1
	callback := golden(t, "tool-dispatch-from-callback/target=saved,pass=1") // main 1; side 2 declined from PASS ENTER 1
	other := golden(t, "tool-dispatch-nested-other-agent")                   // main 1 on gpu0; side 2 nested on gpu1
	side := dispatchIs(2)
	cb := func(op trace.Op, ph trace.Phase) match {
		return func(e trace.Event) bool {
			return (e.Type == trace.Callback || e.Type == trace.Returned) && e.Op == op && e.Phase == ph
		}
	}
	cases := []struct {
		reason string
		tr     trace.Trace
	}{
		{"the tool's dispatch gets no CONFIG (the withdrawn decision 11)",
			drop(callback, and(side, func(e trace.Event) bool {
				return e.Type == trace.Callback || e.Type == trace.Returned || e.Type == trace.PassCount || e.Type == trace.Warning
			}))},
		{"CONFIG ENTER of the tool's dispatch fires on another thread",
			edit(callback, and(side, typ(trace.Callback), configCB(trace.PhaseEnter)), func(e *trace.Event) { e.Thread = 9 })},
		{"declined without its reentrant_dispatch diagnostic", drop(record, typ(trace.Warning))},
		{"the diagnostic printed twice (it is once per process)",
			insertAfter(record, typ(trace.Warning), trace.Event{Type: trace.Warning, Code: trace.WarnReentrantDispatch, Dispatch: 2})},
		{"declined without CONFIG EXIT", drop(callback, and(side, cb(trace.OpConfig, trace.PhaseExit)))},
		{"declined, yet it ran twice",
			insertAfter(record, and(side, typ(trace.Kernel)), first(record, and(side, typ(trace.Kernel))))},
		{"declined, and it never ran: the thread waits for its own window (the trace ends there)",
			trace.Trace{Header: record.Header, Events: record.Events[:slices.IndexFunc(record.Events, and(side, cb(trace.OpConfig, trace.PhaseExit), typ(trace.Returned)))+1]}},
		{"the outer loop's next restore did not undo what the declined dispatch wrote",
			edit(record, nth(and(dispatchIs(1), typ(trace.Kernel)), 2), func(e *trace.Event) {
				e.MemIn = first(record, and(side, typ(trace.Kernel))).MemOut
			})},
		{"on another agent, it was declined and ran once instead of opening its own window",
			drop(other, and(side, func(e trace.Event) bool {
				p, _ := e.PassOf()
				return e.Type == trace.Snapshot || e.Type == trace.Restore || (e.Type == trace.Callback || e.Type == trace.Returned || e.Type == trace.Record) && e.Op == trace.OpPass ||
					e.Type == trace.Kernel && p > 0 || e.Type == trace.MemRead && e.Agent == 2 || e.Type == trace.MemWrite && e.Agent == 2
			}))},
		{"the nested window closed after the callback it was written from went on",
			moveBefore(other, and(side, cb(trace.OpConfig, trace.PhaseExit)), and(dispatchIs(1), typ(trace.Kernel), func(e trace.Event) bool { return e.Seq > first(other, typ(trace.ToolComplete)).Seq }))},
		{"the nested window completed twice",
			insertAfter(other, and(typ(trace.Signal), func(e trace.Event) bool { return e.Signal == 2 }), trace.Event{Type: trace.Signal, Thread: 1, Signal: 2})},
	}
	// What a black-box trace (the tool's and the application's events)
	// still shows of it.
	hung := trace.Trace{Header: record.Header, Events: record.Events[:slices.IndexFunc(record.Events, and(side, cb(trace.OpConfig, trace.PhaseExit), typ(trace.Returned)))+1]}
	cases = append(cases,
		struct {
			reason string
			tr     trace.Trace
		}{"at black-box, the tool's dispatch gets no CONFIG", blackBox(cases[0].tr)},
		struct {
			reason string
			tr     trace.Trace
		}{"at black-box, declined, and the tool's wait for it never returned", blackBox(hung)})
	for _, c := range cases {
		got := map[string]bool{}
		for _, v := range Judge(renumber(c.tr)).Violations {
			got[v.Rule] = true
		}
		for _, v := range Judge(renumber(c.tr)).Violations {
			if v.Rule == "MEM-6" && testing.Verbose() {
				t.Logf("%s: %s", c.reason, v.Message)
			}
		}
		if !got["MEM-6"] {
			t.Errorf("%s: MEM-6 not reported (got %v)", c.reason, slices.Sorted(maps.Keys(got)))
		}
	}
}
