package check

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/replayspec/replayspec/trace"
)

func ctxStop(ctx uint64) trace.Event  { return trace.Event{Call: trace.LocalStop, Context: ctx} }
func ctxStart(ctx uint64) trace.Event { return trace.Event{Call: trace.LocalStart, Context: ctx} }

// Valid traces: every oracle must stay silent on them.
func validTraces() map[string]trace.Trace {
	one := func(l loop) trace.Trace { return new(builder).prelude().dispatch(l).trace() }
	return map[string]trace.Trace{
		"fixed 3":                     one(loop{label: "k", dispatch: 1, count: 3, services: []trace.Service{trace.KernelTrace, trace.CounterCollection}}),
		"fixed 5 stops after 2":       one(loop{label: "k", dispatch: 1, count: 5, cont: []int64{1, 1, 0}}),
		"fixed 3 continue always":     one(loop{label: "k", dispatch: 1, count: 3, cont: []int64{1, 1}}),
		"indefinite":                  one(loop{label: "k", dispatch: 1, count: 0, cont: []int64{1, 1, 0}}),
		"count 1":                     one(loop{label: "k", dispatch: 1, count: 1}),
		"not installed":               one(loop{label: "k", dispatch: 1, count: -1}),
		"zero without continue":       one(loop{label: "k", dispatch: 1, count: 0}),
		"sequence":                    sequence(),
		"pc sampling every pass":      one(loop{label: "k", dispatch: 1, count: 3, agentPCS: true, locals: map[int][]trace.Event{1: {ctxStop(11)}}}),
		"counters stop and start":     one(loop{label: "k", dispatch: 1, count: 4, services: []trace.Service{trace.CounterCollection}}),
		"never ended":                 neverEnded(),
		"api queries":                 apiQueries(),
		"concurrent":                  concurrent(false),
		"application race":            applicationRace(),
		"race on unsaved input":       unsavedInputRace(),
		"subscribed to CONFIG":        configOnly(),
		"CONFIG alone, early exit":    hidden(loop{label: "k", dispatch: 1, count: 5, cont: []int64{1, 1, 0}}),
		"two sampling contexts":       twoSamplers(),
		"CONFIG alone, aborted":       configOnlyAborted(),
		"aborted, another in flight":  abortedWithOtherInFlight(),
		"graph warned after a stop":   graphWarnedAfterStop(true),
		"stopped as the write began":  stoppedAsWritten(true),
		"stopped before interception": stoppedBeforeInterception(),
		"empty":                       new(builder).trace(),
	}
}

// sequence: a loop that stops its timing context in pass 1, then a plain
// dispatch on the same thread that records again (LCX-4).
func sequence() trace.Trace {
	b := new(builder).prelude()
	b.dispatch(loop{label: "a", dispatch: 1, count: 3, locals: map[int][]trace.Event{1: {ctxStop(10)}}})
	t := drop(b.trace(), and(typ(trace.Record), func(e trace.Event) bool { p, _ := e.PassOf(); return p >= 1 }))
	b = &builder{ev: t.Events, clock: 10000}
	b.dispatch(loop{label: "b", dispatch: 2, count: 1})
	return renumber(b.trace())
}

func neverEnded() trace.Trace {
	b := new(builder).prelude()
	b.dispatch(loop{label: "k", dispatch: 1, count: 0, cont: []int64{1, 1, 1}})
	t := drop(b.trace(), func(e trace.Event) bool {
		return configCB(trace.PhaseExit)(e) || e.Type == trace.Signal || e.Type == trace.AppComplete || e.Type == trace.AppReadback
	})
	t = insertAfter(t, typ(trace.Continue),
		trace.Event{Type: trace.NeverEnded, Thread: 1, Dispatch: 1, Pass: trace.U64(3)},
		trace.Event{Type: trace.AppTimeout, Thread: 1, Label: "k", Signal: 501})
	return renumber(t)
}

func apiQueries() trace.Trace {
	b := new(builder).prelude()
	b.add(trace.Event{Type: trace.API, Call: trace.CallConfigureCallback, Context: 2, Status: "ERROR_SERVICE_ALREADY_CONFIGURED", Domain: trace.DomainKernelReplay})
	b.add(trace.Event{Type: trace.API, Call: trace.CallOperationName, Status: "SUCCESS", OpID: trace.U64(1), OpName: trace.OpConfig})
	b.add(trace.Event{Type: trace.API, Call: trace.CallOperationID, Status: "SUCCESS", OpName: trace.OpPass, OpID: trace.U64(2)})
	b.add(trace.Event{Type: trace.API, Call: trace.CallOperationName, Status: "ERROR_OPERATION_NOT_FOUND", OpID: trace.U64(3)})
	b.add(trace.Event{Type: trace.API, Call: trace.CallOperationID, Status: "ERROR_OPERATION_NOT_FOUND", OpName: "SNAPSHOT"})
	b.dispatch(loop{label: "k", dispatch: 1, count: 2})
	return b.trace()
}

// concurrent: thread 2's plain dispatch runs while thread 1's loop has
// context 10 stopped locally; it still gets its record (LCX-6). With
// masked, that record is missing.
func concurrent(masked bool) trace.Trace {
	b := new(builder).prelude()
	b.dispatch(loop{label: "a", dispatch: 1, agent: 1, count: 3, locals: map[int][]trace.Event{0: {ctxStop(10)}}})
	t := drop(b.trace(), and(typ(trace.Record), dispatchIs(1)))
	// An earlier plain run on agent 2 shows what context 10 records there.
	early := new(builder)
	early.clock = 5000
	early.dispatch(loop{label: "p", dispatch: 2, thread: 2, agent: 2, count: 1})
	mid := new(builder)
	mid.clock = 6000
	mid.dispatch(loop{label: "c", dispatch: 3, thread: 2, agent: 2, count: 1})
	es := mid.ev
	if masked {
		es = drop(mid.trace(), typ(trace.Record)).Events
	}
	t = insertAfter(t, passCB(trace.PhaseEnter, 1), es...)
	t = insertAfter(t, typ(trace.API), early.ev...)
	return renumber(t)
}

// applicationRace: after k's loop, before k's application reads its
// buffer back, thread 2's plain dispatch increments the same buffer. The
// application sees 2, not the 1 that k's last pass left, and no restore is
// to blame: the trace does not say what thread 2's kernel wrote (MEM-3
// does not judge that read-back). Found by internal/specgen.
func applicationRace() trace.Trace {
	b := new(builder).prelude()
	b.dispatch(loop{label: "k", dispatch: 1, count: 3})
	other := &builder{clock: 20000, allocated: map[uint64]bool{1: true}}
	other.dispatch(loop{label: "p", dispatch: 2, thread: 2, count: -1})
	t := insertBefore(b.trace(), and(typ(trace.Signal), func(e trace.Event) bool { return e.Thread == 1 }), other.ev...)
	twice := []trace.Run{{Value: 2, Count: 4}}
	t = edit(t, and(typ(trace.AppReadback), func(e trace.Event) bool { return e.Label == "k" }), func(e *trace.Event) {
		e.Runs, e.Digest = twice, trace.Digest([]byte{2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0})
	})
	return renumber(t)
}

// configOnly: the tool subscribed to CONFIG alone, so the SDK runs the
// loop's three passes without a PASS callback: the runtime shows three
// kernels and the restores, the tool nothing of them. The oracles that read
// a loop through its PASS callbacks cannot judge it and must not call it a
// dispatch that was not replayed (found by internal/specgen).
func configOnly() trace.Trace { return hidden(loop{label: "k", dispatch: 1, count: 3}) }

// hidden is l's trace as a tool subscribed to CONFIG alone records it.
func hidden(l loop) trace.Trace { return hide(new(builder).prelude().dispatch(l).trace()) }

// hide is t as a tool subscribed to CONFIG alone records it.
func hide(t trace.Trace) trace.Trace {
	t = edit(t, func(e trace.Event) bool { return e.Call == trace.CallConfigureCallback }, func(e *trace.Event) {
		e.Operations = []trace.Op{trace.OpConfig}
	})
	passOnly := func(e trace.Event) bool {
		return (e.Type == trace.Callback || e.Type == trace.Returned) && e.Op == trace.OpPass
	}
	// Without PASS ENTER the tool publishes no pass for its records.
	t = edit(t, typ(trace.Record), func(e *trace.Event) { e.Pass = nil })
	return renumber(drop(t, passOnly))
}

// configOnlyAborted: a loop no PASS callback shows, whose first restore
// fails part-way: after its first kernel the runtime wrote memory, the SDK
// claims no restore, and the process ends there. No completion is owed
// (MEM-5, decision 13), whatever shows the loop (found by
// internal/specgen).
func configOnlyAborted() trace.Trace {
	t := configOnly()
	var out []trace.Event
	kernels := 0
	for _, e := range t.Events {
		if e.Type == trace.Kernel {
			kernels++
		}
		out = append(out, e)
		if kernels == 1 && e.Type == trace.MemWrite {
			break
		}
	}
	t.Events = out
	return renumber(t)
}

// abortedWithOtherInFlight: while thread 1's restore fails (the process
// ends, MEM-5), thread 2 writes a dispatch of its own, and thread 3 is in
// the first pass of another loop; the process ends before either is done,
// and neither owes the rest: no completion (CMP-1), no CONFIG EXIT (CB-1),
// no further pass (PC-3). Found running generated specs through the C
// port, whose threads are free.
func abortedWithOtherInFlight() trace.Trace {
	t := configOnlyAborted()
	cut := func(l loop, clock uint64, last match) []trace.Event {
		b := &builder{clock: clock, allocated: map[uint64]bool{}}
		b.dispatch(l)
		for i, e := range b.ev {
			if last(e) {
				return b.ev[:i+1]
			}
		}
		return b.ev
	}
	t.Events = append(t.Events, cut(loop{label: "p", dispatch: 2, thread: 2, agent: 2, count: -1}, 90000, typ(trace.DispatchID))...)
	t.Events = append(t.Events, cut(loop{label: "q", dispatch: 3, thread: 3, agent: 3, count: 3}, 95000, passCB(trace.PhaseEnter, 0))...)
	return renumber(t)
}

// graphWarnedAfterStop: thread 2 writes a graph launch while the replay
// context is started; thread 1 stops the context before the SDK, which
// decided on the contexts started at the write, prints graph_launch. With
// began false the launch is written after the stop: ACT-3. Found running
// generated specs through the C port, whose threads are free.
func graphWarnedAfterStop(began bool) trace.Trace {
	b := new(builder).prelude()
	grid, wg := trace.Dim3{64, 1, 1}, trace.Dim3{64, 1, 1}
	launch := trace.Event{Type: trace.AppDispatch, Thread: 2, Label: "g", Kernel: "increment", Agent: 1, Signal: 600, Packets: 1, Graph: true, Grid: &grid, Workgroup: &wg}
	// The stop is the tool's, on the thread of its setup calls (0): in
	// program order after its start, so the trace proves the context was
	// stopped before the launch when the stop comes first (decision 18.1).
	stop := trace.Event{Type: trace.API, Call: trace.CallStopContext, Context: 1, Status: "SUCCESS"}
	if began {
		b.add(launch)
		b.add(stop)
	} else {
		b.add(stop)
		b.add(launch)
	}
	b.add(trace.Event{Type: trace.Warning, Code: trace.WarnGraphLaunch, Message: "graph launches are not replayed"})
	b.add(trace.Event{Type: trace.DispatchID, Thread: 2, Dispatch: 1, Agent: 1, Kernel: "increment"})
	b.add(trace.Event{Type: trace.Kernel, Thread: 2, Dispatch: 1, Agent: 1, Kernel: "increment", Start: 10, End: 20, Signal: 600})
	b.add(trace.Event{Type: trace.Signal, Thread: 2, Signal: 600, Value: trace.I64(0)})
	b.add(trace.Event{Type: trace.AppComplete, Thread: 2, Label: "g", Signal: 600})
	return b.trace()
}

// stoppedAsWritten: the tool stops the replay context just after thread
// 1's application writes a dispatch (after is true) or just before it; the
// SDK took the started contexts as it intercepted the write, so the loop
// with its CONFIG ENTER follows in the first case (decision 12) and is an
// ACT-3 violation in the second.
func stoppedAsWritten(after bool) trace.Trace {
	t := new(builder).prelude().dispatch(loop{label: "k", dispatch: 1, count: 3}).trace()
	// The tool's setup thread (0) stops it, after its start in program
	// order (decision 18.1).
	stop := trace.Event{Type: trace.API, Call: trace.CallStopContext, Context: 1, Status: "SUCCESS"}
	if after {
		return renumber(insertAfter(t, typ(trace.AppDispatch), stop))
	}
	return renumber(insertBefore(t, typ(trace.AppDispatch), stop))
}

// stoppedBeforeInterception: thread 2 stops the replay context (whose
// subscription covers every operation) after thread 1's application wrote
// a dispatch but before the SDK intercepted the write: the dispatch runs
// plain, without CONFIG, and ACT-2 holds.
func stoppedBeforeInterception() trace.Trace {
	t := new(builder).prelude().dispatch(loop{label: "k", dispatch: 1, count: 1}).trace()
	t = drop(t, func(e trace.Event) bool {
		return e.Type == trace.Callback || e.Type == trace.Returned || e.Type == trace.PassCount
	})
	stop := trace.Event{Type: trace.API, Thread: 2, Call: trace.CallStopContext, Context: 1, Status: "SUCCESS"}
	return renumber(insertAfter(t, typ(trace.AppDispatch), stop))
}

// twoSamplers: two counter contexts, each sampling its own one set on
// every pass of a fixed loop (SQ_WAVES in context 10, TCC_HIT in 11). No
// context splits groups, so nothing wrapped (AGT-1); the sets differing
// between contexts is no split either (found by internal/specgen).
func twoSamplers() trace.Trace {
	t := new(builder).prelude().dispatch(loop{label: "k", dispatch: 1, count: 3, services: []trace.Service{trace.CounterCollection}}).trace()
	t = edit(t, typ(trace.Record), func(e *trace.Event) { e.Counters = []trace.Counter{{Name: "SQ_WAVES", Value: 4}} })
	var out []trace.Event
	for _, e := range t.Events {
		out = append(out, e)
		if e.Type == trace.Record {
			e.Context, e.Counters = 11, []trace.Counter{{Name: "TCC_HIT", Value: 2}}
			out = append(out, e)
		}
	}
	t.Events = out
	return renumber(t)
}

// unsavedInputRace: while k replays on agent 1, thread 2's plain dispatch
// on agent 2 writes memory k reads but the SDK does not save (another
// agent's, or host memory); k's last pass computes another result than its
// first, and the application sees the last. No restore is to blame (MEM-3
// does not hold the first pass's output against the read-back then).
// Found by internal/specgen.
func unsavedInputRace() trace.Trace {
	b := new(builder).prelude()
	b.dispatch(loop{label: "k", dispatch: 1, count: 3})
	other := &builder{clock: 20000, allocated: map[uint64]bool{}}
	other.dispatch(loop{label: "p", dispatch: 2, thread: 2, agent: 2, count: -1})
	t := insertAfter(b.trace(), passCB(trace.PhaseExit, 0), other.ev...)
	twice := []byte{2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0}
	t = edit(t, and(typ(trace.Kernel), dispatchIs(1), nth(typ(trace.Kernel), 3)), func(e *trace.Event) { e.MemOut = trace.Digest(twice) })
	t = edit(t, and(typ(trace.AppReadback), func(e trace.Event) bool { return e.Label == "k" }), func(e *trace.Event) {
		e.Runs, e.Digest = []trace.Run{{Value: 2, Count: 4}}, trace.Digest(twice)
	})
	return renumber(t)
}

func TestValidTracesPass(t *testing.T) {
	for name, tr := range validTraces() {
		t.Run(name, func(t *testing.T) {
			for _, v := range Trace(tr) {
				t.Errorf("unexpected violation:\n%s", v)
			}
		})
	}
}

// One mistake can break several rules; the oracles name each of them,
// not the first they find.
func TestEveryBrokenRuleIsNamed(t *testing.T) {
	fixed3 := new(builder).prelude().dispatch(loop{label: "k", dispatch: 1, count: 3}).trace()
	cases := []struct {
		reason string
		tr     trace.Trace
		want   []string
	}{
		{"a fresh dispatch id per pass: too many ids (DID-3), a pass's kernel (DID-1) and callbacks (DID-2) carry another", bumpIDPerPass(fixed3), []string{"DID-1", "DID-2", "DID-3"}},
		{"a pass too few: fewer passes than asked (PC-3) and someone overrode the tool (PC-8)", dropPass(fixed3, 2), []string{"PC-3", "PC-8"}},
	}
	for _, c := range cases {
		got := map[string]bool{}
		for _, v := range Judge(c.tr).Violations {
			got[v.Rule] = true
		}
		for _, r := range c.want {
			if !got[r] {
				t.Errorf("%s: %s not reported (got %v)", c.reason, r, slices.Sorted(maps.Keys(got)))
			}
		}
	}
}

// A planted mistake must be caught with the right rule ID.
func TestBrokenTracesAreCaught(t *testing.T) {
	fixed3 := new(builder).prelude().dispatch(loop{label: "k", dispatch: 1, count: 3, services: []trace.Service{trace.KernelTrace, trace.CounterCollection}}).trace()
	early := new(builder).prelude().dispatch(loop{label: "k", dispatch: 1, count: 5, cont: []int64{1, 1, 0}}).trace()
	indef := new(builder).prelude().dispatch(loop{label: "k", dispatch: 1, count: 0, cont: []int64{1, 1, 0}}).trace()
	plain := new(builder).prelude().dispatch(loop{label: "k", dispatch: 1, count: 1}).trace()
	zero := new(builder).prelude().dispatch(loop{label: "k", dispatch: 1, count: 0}).trace()
	pcs := new(builder).prelude().dispatch(loop{label: "k", dispatch: 1, count: 3, agentPCS: true, locals: map[int][]trace.Event{1: {ctxStop(11)}}}).trace()
	seq := sequence()

	// Each case plants one mistake; its reason says what is broken, and
	// want the rule an oracle must name for it.
	cases := []struct {
		reason string
		tr     trace.Trace
		want   string
	}{
		// API
		{"a callback for SNAPSHOT, which is reserved and not an operation", edit(fixed3, passCB(trace.PhaseEnter, 1), func(e *trace.Event) { e.Op = "SNAPSHOT" }), "API-3"},
		{"a callback phase other than ENTER or EXIT", edit(fixed3, passCB(trace.PhaseExit, 0), func(e *trace.Event) { e.Phase = "MIDDLE" }), "API-2"},
		{"CONFIG carries a pass field", edit(fixed3, configCB(trace.PhaseEnter), func(e *trace.Event) { e.Payload = []string{"current_pass"} }), "API-6"},
		{"total in CONFIG", edit(fixed3, configCB(trace.PhaseExit), func(e *trace.Event) { e.Total = trace.U64(3) }), "API-6"},
		{"tool callback in PASS", edit(fixed3, passCB(trace.PhaseEnter, 2), func(e *trace.Event) { e.Payload = append(e.Payload, "replay_pass_count") }), "API-6"},
		{"no local callbacks in PASS", edit(fixed3, passCB(trace.PhaseEnter, 1), func(e *trace.Event) { e.Payload = []string{"current_pass", "total_passes"} }), "LCX-1"},
		// The same at each op and phase (checkCallbackShape reads the op from the index's column where it can).
		{"no local callbacks in a PASS EXIT", edit(fixed3, passCB(trace.PhaseExit, 1), func(e *trace.Event) { e.Payload = []string{"current_pass", "total_passes"} }), "LCX-1"},
		{"tool callback in a PASS EXIT", edit(fixed3, passCB(trace.PhaseExit, 2), func(e *trace.Event) { e.Payload = append(e.Payload, "replay_continue") }), "API-6"},
		{"tool callback in a PASS of another phase", edit(fixed3, passCB(trace.PhaseExit, 2), func(e *trace.Event) { e.Phase, e.Payload = "MIDDLE", append(e.Payload, "replay_continue") }), "API-6"},
		{"total in a CONFIG of another phase", edit(fixed3, configCB(trace.PhaseExit), func(e *trace.Event) { e.Phase, e.Total = "MIDDLE", trace.U64(3) }), "API-6"},
		{"operation id 3 (LAST) resolves, though only CONFIG and PASS exist", edit(apiQueries(), func(e trace.Event) bool { return e.OpID != nil && *e.OpID == 3 }, func(e *trace.Event) { e.Status, e.OpName = "SUCCESS", trace.OpLast }), "API-3"},
		// API: what the trace v2 records of the payload and the surface.
		{"payload size stops short (the engine's old 104)", edit(fixed3, typ(trace.Callback), func(e *trace.Event) { e.PayloadSize = trace.U64(104) }), "API-5"},
		{"dispatch_info has another grid than the launch", edit(fixed3, passCB(trace.PhaseEnter, 1), func(e *trace.Event) { in := *e.Info; in.Grid = trace.Dim3{512, 1, 1}; e.Info = &in }), "API-5"},
		{"dispatch_info left empty", edit(fixed3, configCB(trace.PhaseEnter), func(e *trace.Event) { in := *e.Info; in.Size = 0; e.Info = &in }), "API-5"},
		{"out of sight, continue said go on and the loop ended", edit(hidden(loop{label: "k", dispatch: 1, count: 5, cont: []int64{1, 1, 0}}),
			nth(typ(trace.Continue), 3), func(e *trace.Event) { e.Result = trace.I64(1) }), "CONT-1"},
		{"PASS callbacks withheld from a subscription that covers them", drop(fixed3, func(e trace.Event) bool {
			return (e.Type == trace.Callback || e.Type == trace.Returned) && e.Op == trace.OpPass
		}), "CB-1"},
		{"replayed without configure_callback_tracing", drop(fixed3, func(e trace.Event) bool { return e.Call == trace.CallConfigureCallback }), "API-1"},
		{"counting refused beside replay", insertAfter(fixed3, func(e trace.Event) bool { return e.Call == trace.CallConfigureCallback }, trace.Event{Type: trace.API, Call: trace.CallConfigureCounters, Context: 10, Status: trace.StatusServiceAlreadyConfigured}), "API-7"},
		{"operation_name answers CONFIG for id 2", edit(apiQueries(), func(e trace.Event) bool { return e.Call == trace.CallOperationName && e.OpName == trace.OpConfig }, func(e *trace.Event) { e.OpID = trace.U64(2) }), "API-4"},
		{"a second configuration of KERNEL_REPLAY succeeds", edit(apiQueries(), func(e trace.Event) bool { return e.Context == 2 }, func(e *trace.Event) { e.Status = "SUCCESS" }), "ACT-5"},
		// ACT
		{"all-operations subscription, yet no CONFIG", drop(plain, and(typ(trace.Callback), func(e trace.Event) bool { return e.Op == trace.OpConfig })), "ACT-2"},
		{"never configured, yet memory saved", insertAfter(drop(drop(plain, func(e trace.Event) bool { return e.Call == trace.CallConfigureCallback }), func(e trace.Event) bool {
			return e.Type == trace.Callback || e.Type == trace.Returned || e.Type == trace.PassCount
		}), typ(trace.DispatchID), trace.Event{Type: trace.Snapshot, Thread: 1, Dispatch: 1, Agent: 1, Bytes: 16}), "ACT-4"},
		{"PASS without CONFIG", drop(fixed3, configCB(trace.PhaseEnter)), "ACT-1"},
		{"replay context never started", drop(fixed3, func(e trace.Event) bool {
			return e.Type == trace.API && e.Context == 1 && e.Call == trace.CallStartContext
		}), "ACT-3"},
		{"PASS-only subscription", edit(fixed3, typ(trace.API), func(e *trace.Event) {
			if e.Call == trace.CallConfigureCallback {
				e.Operations = []trace.Op{trace.OpPass}
			}
		}), "ACT-3"},
		{"graph launch written after the replay context stopped", graphWarnedAfterStop(false), "ACT-3"},
		{"dispatch written after the replay context stopped", stoppedAsWritten(false), "ACT-3"},
		{"graph launch replayed", insertAfter(fixed3, typ(trace.DispatchID), trace.Event{Type: trace.Warning, Code: "graph_launch", Dispatch: 1}), "ACT-6"},
		{"graph warning twice", insertAfter(plain, typ(trace.API), trace.Event{Type: trace.Warning, Code: "graph_launch"}, trace.Event{Type: trace.Warning, Code: "graph_launch"}), "ACT-6"},
		// CB
		{"CONFIG EXIT missing", drop(fixed3, configCB(trace.PhaseExit)), "CB-1"},
		{"CONFIG EXIT twice", insertAfter(fixed3, configCB(trace.PhaseExit), first(fixed3, configCB(trace.PhaseExit))), "CB-1"},
		{"plain run before CONFIG EXIT", moveBefore(plain, typ(trace.Kernel), configCB(trace.PhaseExit)), "CB-1"},
		{"passes overlap", moveBefore(fixed3, passCB(trace.PhaseExit, 0), passCB(trace.PhaseExit, 1)), "CB-2"},
		{"pass_count installed, never called", drop(fixed3, typ(trace.PassCount)), "CB-3"},
		{"pass_count called before CONFIG ENTER returned", moveBefore(fixed3, typ(trace.PassCount), and(typ(trace.Returned), func(e trace.Event) bool { return e.Op == trace.OpConfig })), "CB-3"},
		{"pass_count twice", insertAfter(fixed3, typ(trace.PassCount), first(fixed3, typ(trace.PassCount))), "CB-3"},
		{"pass_count after first pass", moveBefore(fixed3, typ(trace.PassCount), passCB(trace.PhaseExit, 0)), "CB-3"},
		{"PASS on another thread", edit(fixed3, passCB(trace.PhaseEnter, 1), func(e *trace.Event) { e.Thread = 9 }), "CB-4"},
		{"stale pass on plain record", edit(plain, typ(trace.Record), func(e *trace.Event) { e.Pass = trace.U64(2) }), "CB-4"},
		{"record with wrong pass", edit(fixed3, and(typ(trace.Record), withPass(trace.Record, 1)), func(e *trace.Event) { e.Pass = trace.U64(0) }), "CB-4"},
		// UD
		{"user data not re-seeded", edit(edit(fixed3, passCB(trace.PhaseExit, 0), func(e *trace.Event) { e.UserData = trace.U64(1000) }), passCB(trace.PhaseEnter, 1), func(e *trace.Event) { e.UserData = trace.U64(1000) }), "UD-2"},
		{"user data wrong in pass", edit(fixed3, passCB(trace.PhaseEnter, 2), func(e *trace.Event) { e.UserData = trace.U64(7) }), "UD-1"},
		{"a PASS ENTER write is not seen by its EXIT", edit(fixed3, and(typ(trace.Returned), func(e trace.Event) bool {
			p, _ := e.PassOf()
			return e.Op == trace.OpPass && e.Phase == trace.PhaseEnter && p == 1
		}), func(e *trace.Event) { e.UserData = trace.U64(1001) }), "UD-2"},
		{"replay_pass_count does not get what the tool wrote", edit(fixed3, typ(trace.PassCount), func(e *trace.Event) { e.UserData = trace.U64(7) }), "UD-1"},
		{"continue sees stale value", edit(early, withPass(trace.Continue, 1), func(e *trace.Event) { e.UserData = trace.U64(99) }), "UD-2"},
		{"user data leaks to next dispatch", edit(seq, and(configCB(trace.PhaseEnter), dispatchIs(2)), func(e *trace.Event) { e.UserData = trace.U64(41) }), "UD-1"},
		// PC
		{"count 1 replayed", edit(fixed3, typ(trace.PassCount), func(e *trace.Event) { e.Result = trace.I64(1) }), "PC-2"},
		{"not installed replayed", drop(fixed3, typ(trace.PassCount)), "PC-1"},
		{"count 1 runs twice", insertAfter(plain, typ(trace.Kernel), first(plain, typ(trace.Kernel))), "PC-2"},
		{"fixed 3 runs 2", dropPass(fixed3, 2), "PC-3"},
		{"fixed 3 runs 2: the count was overridden", dropPass(fixed3, 2), "PC-8"},
		{"total_passes says another count than the tool's", edit(fixed3, typ(trace.Callback), func(e *trace.Event) {
			if e.Op == trace.OpPass {
				e.Total = trace.U64(5)
			}
		}), "PC-8"},

		{"early stop ignored", edit(fixed3, typ(trace.PassCount), func(e *trace.Event) { e.Result = trace.I64(2) }), "PC-4"},
		{"wrong total", edit(fixed3, passCB(trace.PhaseEnter, 1), func(e *trace.Event) { e.Total = trace.U64(4) }), "PC-7"},
		{"pass index skips", edit(edit(fixed3, passCB(trace.PhaseEnter, 2), func(e *trace.Event) { e.Pass = trace.U64(3) }), passCB(trace.PhaseExit, 2), func(e *trace.Event) { e.Pass = trace.U64(3) }), "PC-7"},
		{"indefinite total", edit(indef, passCB(trace.PhaseEnter, 1), func(e *trace.Event) { e.Total = trace.U64(3) }), "PC-5"},
		{"zero without warning", drop(zero, typ(trace.Warning)), "PC-6"},
		{"zero warning twice", insertAfter(zero, typ(trace.Warning), first(zero, typ(trace.Warning))), "PC-6"},
		// CONT
		{"continue after last fixed pass", insertAfter(fixed3, passCB(trace.PhaseExit, 2), trace.Event{Type: trace.Continue, Thread: 1, Dispatch: 1, Pass: trace.U64(2), Total: trace.U64(3), UserData: trace.U64(41), Result: trace.I64(1)}), "CONT-2"},
		{"continue before EXIT", moveBefore(early, withPass(trace.Continue, 0), passCB(trace.PhaseExit, 0)), "CONT-1"},
		{"zero continue ignored", edit(early, withPass(trace.Continue, 0), func(e *trace.Event) { e.Result = trace.I64(0) }), "CONT-1"},
		{"continue skipped mid loop", drop(early, withPass(trace.Continue, 1)), "CONT-1"},
		{"indefinite last not consulted", drop(indef, withPass(trace.Continue, 2)), "CONT-3"},
		{"indefinite ends on non-zero", edit(indef, withPass(trace.Continue, 2), func(e *trace.Event) { e.Result = trace.I64(1) }), "CONT-3"},
		{"last PASS EXIT missing", drop(fixed3, passCB(trace.PhaseExit, 2)), "CONT-4"},
		// MEM
		{"snapshot missing", drop(fixed3, typ(trace.Snapshot)), "MEM-1"},
		{"snapshot on plain run", insertAfter(plain, configCB(trace.PhaseEnter), trace.Event{Type: trace.Snapshot, Thread: 1, Dispatch: 1}), "MEM-1"},
		{"restore skipped", drop(fixed3, withPass(trace.Restore, 1)), "MEM-2"},
		{"restore after last pass", insertAfter(fixed3, passCB(trace.PhaseExit, 2), trace.Event{Type: trace.Restore, Thread: 1, Dispatch: 1, Pass: trace.U64(3)}), "MEM-3"},
		{"silent snapshot of a dispatch not replayed", insertAfter(plain, configCB(trace.PhaseEnter), trace.Event{Type: trace.MemRead, Thread: 1, Agent: 1, Bytes: 16, Regions: []trace.Region{{Addr: 1<<32 + 1<<16, Bytes: 16}}}), "MEM-1"},
		{"snapshot claims other bytes than were read", edit(fixed3, typ(trace.Snapshot), func(e *trace.Event) { e.Bytes = 4096 }), "MEM-1"},
		{"restore claims other bytes than were written", edit(fixed3, withPass(trace.Restore, 2), func(e *trace.Event) { e.Bytes = 1 }), "MEM-2"},
		{"snapshot reads fine-grained memory", insertAfter(edit(fixed3, typ(trace.MemRead), func(e *trace.Event) {
			e.Regions = append(e.Regions, trace.Region{Addr: 1 << 40, Bytes: 64})
			e.Bytes += 64
		}), typ(trace.AppAlloc), trace.Event{Type: trace.AppAlloc, Thread: 1, Buffer: "fine", Agent: 1, MemKind: trace.MemFine, Addr: 1 << 40, Bytes: 64}), "MEM-4"},
		{"snapshot leaves a device buffer out", edit(fixed3, typ(trace.MemRead), func(e *trace.Event) { e.Regions, e.Bytes = nil, 0 }), "MEM-4"},
		{"restore writes a freed buffer", insertBefore(fixed3, nth(typ(trace.MemWrite), 2), trace.Event{Type: trace.AppFree, Thread: 2, Buffer: "buf-1", Addr: 1<<32 + 1<<16}), "MEM-4"},
		{"pass starts from other memory", edit(fixed3, inPass(fixed3, trace.Kernel, 2), func(e *trace.Event) { e.MemIn = "dirty" }), "MEM-2"},
		{"readback is not one run", edit(fixed3, typ(trace.AppReadback), func(e *trace.Event) {
			e.Runs, e.Digest = []trace.Run{{Value: 2, Count: 4}}, trace.DigestRuns([]trace.Run{{Value: 2, Count: 4}})
		}), "MEM-3"},
		{"other kernel during loop", insertAfter(fixed3, passCB(trace.PhaseEnter, 1), trace.Event{Type: trace.Kernel, Thread: 2, Agent: 1, Dispatch: 7}), "MEM-6"},
		{"incomplete snapshot replayed", insertAfter(fixed3, typ(trace.DispatchID), trace.Event{Type: trace.Warning, Code: "snapshot_incomplete", Dispatch: 1}), "MEM-5"},
		// DID
		{"id bumped per pass", bumpIDPerPass(fixed3), "DID-3"},
		{"kernel of pass carries other id", edit(fixed3, inPass(fixed3, trace.Kernel, 1), func(e *trace.Event) { e.Dispatch = 2 }), "DID-1"},
		{"callback carries other id", edit(fixed3, passCB(trace.PhaseEnter, 1), func(e *trace.Event) { e.Dispatch = 2 }), "DID-2"},
		{"ids jump", edit(seq, dispatchIs(2), func(e *trace.Event) { e.Dispatch = 3 }), "DID-3"},
		{"same kernel time per pass", edit(fixed3, typ(trace.Kernel), func(e *trace.Event) { e.Start, e.End = 5, 9 }), "DID-4"},
		{"record without pass", edit(fixed3, and(typ(trace.Record), withPass(trace.Record, 1)), func(e *trace.Event) { e.Pass = nil }), "DID-5"},
		// CMP
		{"completion every pass", completionEveryPass(fixed3), "CMP-1"},
		{"completion before loop ends", moveBefore(fixed3, typ(trace.Signal), passCB(trace.PhaseEnter, 2)), "CMP-2"},
		{"pass kernel carries app signal", edit(fixed3, inPass(fixed3, trace.Kernel, 1), func(e *trace.Event) { e.Signal = 501 }), "CMP-2"},
		{"the application sees two completions of one loop", insertAfter(fixed3, typ(trace.AppComplete), first(fixed3, typ(trace.AppComplete))), "CMP-1"},
		{"a buffer is read back twice after one completion", insertAfter(fixed3, typ(trace.AppReadback), first(fixed3, typ(trace.AppReadback))), "CMP-3"},
		{"never ended yet completed", insertAfter(neverEnded(), typ(trace.AppTimeout), trace.Event{Type: trace.AppComplete, Thread: 1, Label: "k", Signal: 501}), "CMP-4"},
		{"never ended fixed loop", edit(neverEnded(), typ(trace.PassCount), func(e *trace.Event) { e.Result = trace.I64(9) }), "CMP-4"},
		{"never ended miscounts its passes", edit(neverEnded(), typ(trace.NeverEnded), func(e *trace.Event) { e.Pass = trace.U64(1) }), "CMP-4"},
		{"timeout without never ended", insertAfter(fixed3, typ(trace.AppComplete), trace.Event{Type: trace.AppTimeout, Thread: 1, Label: "k", Signal: 501}), "CMP-1"},
		// COR
		{"internal id changes per pass", edit(fixed3, passCB(trace.PhaseEnter, 2), func(e *trace.Event) { e.Corr = &trace.Corr{Internal: 555, Ancestor: 7} }), "COR-1"},
		{"record internal id differs", edit(fixed3, and(typ(trace.Record), withPass(trace.Record, 1)), func(e *trace.Event) { e.Corr = &trace.Corr{Internal: 555, External: e.Corr.External, Ancestor: 7} }), "COR-2"},
		{"external id asked before CONFIG ENTER", moveBefore(plain, typ(trace.Correlation), configCB(trace.PhaseEnter)), "COR-3"},
		{"external id not from its submit", edit(fixed3, and(typ(trace.Record), withPass(trace.Record, 1)), func(e *trace.Event) { e.Corr = &trace.Corr{Internal: 101, External: 910, Ancestor: 7} }), "COR-3"},
		// LCX, SVC
		{"local call from CONFIG ENTER succeeds", insertAfter(fixed3, configCB(trace.PhaseEnter), trace.Event{Type: trace.Local, Thread: 1, Dispatch: 1, Call: trace.LocalStop, Context: 10, Op: trace.OpConfig, Phase: trace.PhaseEnter, Status: "SUCCESS"}), "LCX-2"},
		{"local start of inactive context", insertAfter(fixed3, passCB(trace.PhaseEnter, 1), trace.Event{Type: trace.Local, Thread: 1, Dispatch: 1, Call: trace.LocalStart, Context: 12, Op: trace.OpPass, Phase: trace.PhaseEnter, Pass: trace.U64(1), Status: "SUCCESS"}), "LCX-7"},
		{"a context stopped in pass 1 records again in pass 2 without a start", sequenceKeeping(2), "LCX-3"},
		{"a context stopped in this pass still records in it", sequenceKeeping(1), "SVC-1"},
		{"local toggle leaks to next dispatch", drop(seq, and(typ(trace.Record), dispatchIs(2))), "LCX-4"},
		{"local toggle leaks to other thread", concurrent(true), "LCX-6"},
		{"global stop inside window", insertAfter(fixed3, passCB(trace.PhaseEnter, 1), trace.Event{Type: trace.API, Thread: 1, Call: trace.CallStopContext, Context: 10, Status: "SUCCESS"}), "LCX-5"},
		{"a counter context started again after a stop records nothing", startedButSilent(), "LCX-3"},
		{"pc sampling honours local stop", drop(pcs, and(typ(trace.Record), withPass(trace.Record, 2), func(e trace.Event) bool { return e.Service == trace.PCSampling })), "SVC-2"},
		{"spm and thread trace share a pass", new(builder).prelude().dispatch(loop{label: "k", dispatch: 1, count: 2, services: []trace.Service{trace.SPM, trace.ThreadTrace}}).trace(), "SVC-3"},
		// AGT
		{"the last pass collects the first pass's group again", edit(fixed3, and(typ(trace.Record), withPass(trace.Record, 2)), func(e *trace.Event) {
			if e.Service == trace.CounterCollection {
				e.Counters = []trace.Counter{{Name: "G0a"}, {Name: "G0b"}}
			}
		}), "AGT-1"},
	}
	for _, c := range cases {
		t.Run(c.want+" "+c.reason, func(t *testing.T) {
			vs := Trace(renumber(c.tr))
			var got []string
			for _, v := range vs {
				if v.Rule == c.want {
					if v.Requires == "" || v.Message == "" || len(v.Events) == 0 {
						t.Errorf("violation lacks requirement, message or events:\n%s", v)
					}
					return
				}
				got = append(got, v.String())
			}
			t.Errorf("want a %s violation, got %d others:\n%s", c.want, len(got), strings.Join(got, "\n"))
		})
	}
}

// The registry names every rule of the catalogue but rocprofv3's, once,
// with sources that exist: a rule cannot silently lose its oracle.
func TestRegistryMatchesCatalogue(t *testing.T) {
	var got []string
	for _, o := range registry {
		got = append(got, o.rule)
		if len(o.sources) == 0 {
			t.Errorf("%s declares no sources", o.rule)
		}
		for _, alt := range o.sources {
			for _, src := range alt {
				if !slices.Contains(trace.AllSources, src) {
					t.Errorf("%s needs source %q, which no trace has", o.rule, src)
				}
			}
		}
	}
	if want := JudgedRules(); !slices.Equal(got, want) {
		t.Errorf("registry rules\n got %v\nwant %v (the catalogue less RPV)", got, want)
	}
}

// Silence is never a pass: a trace with a header and nothing else leaves
// every rule not exercised, and one without the sources a rule needs
// leaves it not observable.
func TestNoPassWithoutInstances(t *testing.T) {
	empty := trace.Trace{Header: trace.Header{Trace: trace.Version, Sources: trace.AllSources}}
	for _, r := range Judge(empty).Rules {
		if r.Verdict != NotExercised || r.Instances != 0 {
			t.Errorf("%s on an empty trace: %s with %d instances, want not exercised", r.Rule, r.Verdict, r.Instances)
		}
	}
	blind := validTraces()["fixed 3"]
	blind.Header.Sources = nil
	for _, r := range Judge(blind).Rules {
		if r.Verdict != NotObservable {
			t.Errorf("%s with no sources declared: %s, want not observable", r.Rule, r.Verdict)
		}
	}
}

// Every violation an oracle reports belongs to a registered rule, and a
// skipped restore is the memory family's business alone.
func TestViolationsNameRegisteredRules(t *testing.T) {
	broken := drop(validTraces()["fixed 3"], withPass(trace.Restore, 1))
	j := Judge(broken)
	if len(j.Violations) == 0 {
		t.Fatal("a skipped restore went unnoticed")
	}
	for _, v := range j.Violations {
		if _, ok := j.Rule(v.Rule); !ok {
			t.Errorf("violation of %s, which is not a registered rule", v.Rule)
		}
		if !strings.HasPrefix(v.Rule, "MEM-") {
			t.Errorf("a skipped restore reported as %s:\n%s", v.Rule, v)
		}
	}
	if r, _ := j.Rule("MEM-2"); r.Verdict != Fail {
		t.Errorf("MEM-2 is %s on a skipped restore, want fail", r.Verdict)
	}
}

func first(t trace.Trace, m match) trace.Event {
	for _, e := range t.Events {
		if m(e) {
			return e
		}
	}
	panic("no event matches")
}

// moveBefore moves the first event matching what to just before the first
// event matching where.
func moveBefore(t trace.Trace, what, where match) trace.Trace {
	e := first(t, what)
	out := drop(t, func(x trace.Event) bool { return x.Seq == e.Seq })
	return insertBefore(out, where, e)
}

// dropPass removes pass p entirely (its callbacks and what ran inside).
func dropPass(t trace.Trace, p uint64) trace.Trace {
	open := false
	out := clone(t)
	out.Events = out.Events[:0]
	for _, e := range t.Events {
		if passCB(trace.PhaseEnter, p)(e) {
			open = true
		}
		r, _ := e.PassOf()
		skip := open || (e.Type == trace.Restore && r == p) || (e.Type == trace.Continue && r == p-1)
		if passCB(trace.PhaseExit, p)(e) {
			open = false
		}
		if !skip {
			out.Events = append(out.Events, e)
		}
	}
	return out
}

// bumpIDPerPass: the SDK reserves a new id for every pass after the first.
func bumpIDPerPass(t trace.Trace) trace.Trace {
	for p := uint64(1); p < 3; p++ {
		id := 1 + p
		inP := func(tt trace.Trace) match {
			open := false
			set := map[uint64]bool{}
			for _, e := range tt.Events {
				if passCB(trace.PhaseEnter, p)(e) {
					open = true
				}
				if open {
					set[e.Seq] = true
				}
				if passCB(trace.PhaseExit, p)(e) {
					open = false
				}
			}
			return func(e trace.Event) bool { return set[e.Seq] }
		}(t)
		t = edit(t, inP, func(e *trace.Event) { e.Dispatch = id })
		t = insertBefore(t, passCB(trace.PhaseEnter, p), trace.Event{Seq: 9000 + p, Type: trace.DispatchID, Thread: 1, Dispatch: id, Agent: 1})
	}
	return t
}

// completionEveryPass: the application signal fires after every pass.
func completionEveryPass(t trace.Trace) trace.Trace {
	for p := uint64(0); p < 2; p++ {
		t = insertAfter(t, passCB(trace.PhaseExit, p),
			trace.Event{Seq: 8000 + 2*p, Type: trace.Signal, Thread: 1, Signal: 501, Value: trace.I64(0)},
			trace.Event{Seq: 8001 + 2*p, Type: trace.AppComplete, Thread: 1, Label: "k", Signal: 501})
	}
	return t
}

// sequenceKeeping rebuilds sequence() but keeps the records of pass keep,
// which the local stop in pass 1 should have masked.
func sequenceKeeping(keep uint64) trace.Trace {
	b := new(builder).prelude()
	b.dispatch(loop{label: "a", dispatch: 1, count: 3, locals: map[int][]trace.Event{1: {ctxStop(10)}}})
	return drop(b.trace(), and(typ(trace.Record), func(e trace.Event) bool { p, _ := e.PassOf(); return p >= 1 && p != keep }))
}

// startedButSilent: counters stopped in pass 1 and started again in pass
// 2, yet pass 2 has no counter record.
func startedButSilent() trace.Trace {
	b := new(builder).prelude()
	b.dispatch(loop{label: "a", dispatch: 1, count: 4, services: []trace.Service{trace.CounterCollection},
		locals: map[int][]trace.Event{1: {ctxStop(10)}, 2: {ctxStart(10)}}})
	return drop(b.trace(), and(typ(trace.Record), func(e trace.Event) bool { p, _ := e.PassOf(); return p == 1 || p == 2 }))
}

// Situations of LCX-4 and LCX-6 beyond a plain dispatch (issue 20): a
// context stopped locally in one loop must still record in every dispatch
// outside that loop, whatever kind it is.

// nextLoop: loop a stops context 10 in pass 0; loop b follows on the same
// thread and never toggles it. masked drops b's records: the override
// survived into the next loop (LCX-4).
func nextLoop(masked bool) trace.Trace {
	b := new(builder).prelude()
	b.dispatch(loop{label: "a", dispatch: 1, count: 2, locals: map[int][]trace.Event{0: {ctxStop(10)}}})
	t := drop(b.trace(), and(typ(trace.Record), dispatchIs(1)))
	early := &builder{clock: 500, allocated: map[uint64]bool{1: true}}
	early.dispatch(loop{label: "p", dispatch: 3, thread: 2, count: -1})
	t = insertAfter(t, typ(trace.AppAlloc), early.ev...) // after the buffer it reads back exists
	b = &builder{ev: t.Events, clock: 10000, allocated: map[uint64]bool{1: true}}
	b.dispatch(loop{label: "b", dispatch: 2, count: 3})
	t = b.trace()
	if masked {
		t = drop(t, and(typ(trace.Record), dispatchIs(2)))
	}
	return renumber(t)
}

// concurrentLoop: thread 2 replays on agent 2 while thread 1's loop has
// context 10 stopped locally (from pass 0). masked drops thread 2's
// records: the override was kept for the process, not the thread (LCX-6).
func concurrentLoop(masked bool) trace.Trace {
	b := new(builder).prelude()
	b.dispatch(loop{label: "a", dispatch: 1, agent: 1, count: 3, locals: map[int][]trace.Event{0: {ctxStop(10)}}})
	t := drop(b.trace(), and(typ(trace.Record), dispatchIs(1)))
	early := &builder{clock: 5000}
	early.dispatch(loop{label: "p", dispatch: 2, thread: 2, agent: 2, count: -1})
	mid := &builder{clock: 6000, allocated: map[uint64]bool{2: true}}
	mid.dispatch(loop{label: "c", dispatch: 3, thread: 2, agent: 2, count: 2})
	es := mid.ev
	if masked {
		es = drop(mid.trace(), typ(trace.Record)).Events
	}
	t = insertAfter(t, passCB(trace.PhaseEnter, 1), es...)
	t = insertAfter(t, typ(trace.API), early.ev...)
	return renumber(t)
}

// afterOtherLoop: thread 2's plain dispatch runs after thread 1's loop,
// which stopped context 10 locally, has ended. masked drops its record:
// the override outlived its loop (LCX-4).
func afterOtherLoop(masked bool) trace.Trace {
	b := new(builder).prelude()
	b.dispatch(loop{label: "a", dispatch: 1, agent: 1, count: 2, locals: map[int][]trace.Event{0: {ctxStop(10)}}})
	t := drop(b.trace(), and(typ(trace.Record), dispatchIs(1)))
	early := &builder{clock: 500}
	early.dispatch(loop{label: "p", dispatch: 2, thread: 2, agent: 2, count: -1})
	t = insertAfter(t, typ(trace.API), early.ev...)
	later := &builder{clock: 20000, allocated: map[uint64]bool{2: true}}
	later.dispatch(loop{label: "c", dispatch: 3, thread: 2, agent: 2, count: -1})
	es := later.ev
	if masked {
		es = drop(later.trace(), typ(trace.Record)).Events
	}
	return renumber(trace.Trace{Header: t.Header, Events: append(t.Events, es...)})
}

// toolDispatchInLoop: in PASS ENTER of pass 1 of a loop that stopped
// context 10 in pass 0, the tool writes a dispatch of its own. masked
// drops its record: the loop's override was applied to it (LCX-6).
func toolDispatchInLoop(masked bool) trace.Trace {
	b := new(builder).prelude()
	b.dispatch(loop{label: "before", dispatch: 1, count: -1})
	b.dispatch(loop{label: "a", dispatch: 2, count: 3, locals: map[int][]trace.Event{0: {ctxStop(10)}}})
	t := drop(b.trace(), and(typ(trace.Record), dispatchIs(2)))
	// A candidate like any other (MEM-6, clarified 2026-12-01): its own
	// CONFIG, where the tool installs no pass count, so it runs once.
	corr := &trace.Corr{Internal: 103, Ancestor: 102}
	config := func(ty trace.Type, ph trace.Phase) trace.Event {
		e := trace.Event{Type: ty, Thread: 1, Dispatch: 3, Context: 1, Op: trace.OpConfig, Phase: ph, Pass: trace.U64(0),
			UserData: trace.U64(0), Payload: []string{trace.MemberSize, trace.MemberDispatchInfo}}
		if ty == trace.Callback {
			e.Agent, e.Total, e.Corr, e.PayloadSize = 1, trace.U64(0), corr, trace.U64(trace.PayloadSize)
			e.Info = &trace.DispatchInfo{Size: trace.DispatchInfoSize, KernelID: 2, Grid: trace.Dim3{256, 1, 1}, Workgroup: trace.Dim3{64, 1, 1}}
		}
		return e
	}
	own := []trace.Event{
		{Type: trace.ToolDispatch, Thread: 1, Label: "side", Kernel: "fill", Agent: 1, Signal: 777, Op: trace.OpPass, Phase: trace.PhaseEnter, Pass: trace.U64(1), Dispatch: 2},
		{Type: trace.DispatchID, Thread: 1, Dispatch: 3, Agent: 1, Kernel: "fill"},
		config(trace.Callback, trace.PhaseEnter), config(trace.Returned, trace.PhaseEnter),
		config(trace.Callback, trace.PhaseExit), config(trace.Returned, trace.PhaseExit),
		{Type: trace.Correlation, Thread: 1, Dispatch: 3, Result: trace.I64(990)},
		{Type: trace.Kernel, Thread: 1, Dispatch: 3, Agent: 1, Kernel: "fill", Start: 90001, End: 90005, Signal: 777},
		{Type: trace.Record, Service: trace.KernelTrace, Context: 10, Thread: 1, Dispatch: 3, Agent: 1, Kernel: "fill", Corr: &trace.Corr{Internal: 103, External: 990, Ancestor: 102}, Start: 90001, End: 90005},
		{Type: trace.Signal, Thread: 1, Signal: 777, Value: trace.I64(0)},
		{Type: trace.ToolComplete, Thread: 1, Label: "side", Signal: 777},
	}
	if masked {
		own = slices.DeleteFunc(own, func(e trace.Event) bool { return e.Type == trace.Record })
	}
	t = insertBefore(t, and(typ(trace.Returned), func(e trace.Event) bool {
		p, ok := e.PassOf()
		return e.Dispatch == 2 && e.Op == trace.OpPass && e.Phase == trace.PhaseEnter && ok && p == 1
	}), own...)
	return renumber(t)
}

// restartedSilent: a plain run shows context 10's trace records; then a
// loop stops it in pass 0 and starts it again in pass 1 (so the loop never
// sees it record before the stop). With silent, passes 1 and 2 have no
// record either: the start did not bring it back (SVC-1 in pass 1).
func restartedSilent(silent bool) trace.Trace {
	b := new(builder).prelude()
	b.dispatch(loop{label: "before", dispatch: 1, count: -1})
	b.dispatch(loop{label: "a", dispatch: 2, count: 3, locals: map[int][]trace.Event{0: {ctxStop(10)}, 1: {ctxStart(10)}}})
	return drop(b.trace(), and(typ(trace.Record), dispatchIs(2), func(e trace.Event) bool { p, _ := e.PassOf(); return p == 0 || silent }))
}

func TestSituationsOfLocalOverrides(t *testing.T) {
	for _, c := range []struct {
		name   string
		tr     func(bool) trace.Trace
		want   string
		reason string
	}{
		{"next loop on the thread", nextLoop, "LCX-4", "an override from one loop survives into the next loop on its thread"},
		{"another thread's concurrent loop", concurrentLoop, "LCX-6", "local overrides kept for the process, not per thread"},
		{"another thread after the loop", afterOtherLoop, "LCX-4", "an override outlives its loop for another thread"},
		{"the tool's own dispatch", toolDispatchInLoop, "LCX-6", "a tool dispatch masked by the loop's overrides"},
		{"brought back by a local start", restartedSilent, "SVC-1", "a local start after a local stop does not bring the context back"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, v := range Trace(c.tr(false)) {
				t.Errorf("valid trace: unexpected\n%s", v)
			}
			if r, _ := Judge(c.tr(false)).Rule(c.want); r.Instances == 0 {
				t.Errorf("valid trace: %s examined nothing", c.want)
			}
			// The tool's and the application's events alone show it too
			// (black-box): LCX-4 and LCX-6 need nothing else.
			for _, tr := range []trace.Trace{c.tr(true), blackBox(c.tr(true))} {
				var got []string
				found := false
				for _, v := range Trace(tr) {
					if v.Rule == c.want {
						found = true
						break
					}
					got = append(got, v.String())
				}
				if !found {
					t.Errorf("%s (sources %v): want a %s violation, got:\n%s", c.reason, tr.Header.Sources, c.want, strings.Join(got, "\n"))
				}
			}
			for _, v := range Trace(blackBox(c.tr(false))) {
				t.Errorf("valid trace at black-box: unexpected\n%s", v)
			}
		})
	}
}

// MEM-4: a restore skips a region freed or reallocated since the snapshot.
// In pass 0 another thread frees the loop's buffer and a new buffer takes
// its address; the restore before pass 1 writing there is caught, whether
// the trace shows the new buffer or only the free.
func TestRestoreIntoReusedAddress(t *testing.T) {
	fixed3 := new(builder).prelude().dispatch(loop{label: "k", dispatch: 1, count: 3}).trace()
	addr := uint64(1<<32 + 1<<16)
	reuse := []trace.Event{
		{Type: trace.AppFree, Thread: 2, Buffer: "buf-1", Addr: addr},
		{Type: trace.AppAlloc, Thread: 2, Buffer: "late", Agent: 1, MemKind: trace.MemDevice, Addr: addr, Bytes: 16},
	}
	tr := renumber(insertAfter(fixed3, passCB(trace.PhaseExit, 0), reuse...))
	var got []string
	for _, v := range Trace(tr) {
		if v.Rule == "MEM-4" && strings.Contains(v.Message, "late") {
			return
		}
		got = append(got, v.String())
	}
	t.Errorf("a restore into a buffer that reuses a freed address: want MEM-4, got:\n%s", strings.Join(got, "\n"))
}

// nestedToolLoop: from PASS ENTER of pass 1 of a loop that stopped context
// 10 in pass 0, the tool writes a dispatch of its own on agent 2, which
// opens its own window there (MEM-6, clarified 2026-12-01) and replays
// twice. masked drops its records from pass 1 on: the outer loop's override
// reached a later pass of the nested window (LCX-6).
func nestedToolLoop(masked bool) trace.Trace {
	b := new(builder).prelude()
	b.dispatch(loop{label: "a", dispatch: 1, count: 3, locals: map[int][]trace.Event{0: {ctxStop(10)}}})
	t := drop(b.trace(), and(typ(trace.Record), dispatchIs(1)))
	early := &builder{clock: 500}
	early.dispatch(loop{label: "p", dispatch: 3, thread: 2, agent: 2, count: -1})
	t = insertAfter(t, typ(trace.API), early.ev...)
	inner := &builder{clock: 50000, allocated: map[uint64]bool{2: true}}
	inner.dispatch(loop{label: "side", dispatch: 2, thread: 1, agent: 2, count: 2})
	own := drop(inner.trace(), func(e trace.Event) bool {
		return e.Type == trace.AppDispatch || e.Type == trace.AppComplete || e.Type == trace.AppReadback
	}).Events
	if masked {
		own = drop(trace.Trace{Events: own}, func(e trace.Event) bool {
			p, _ := e.PassOf()
			return e.Type == trace.Record && p >= 1
		}).Events
	}
	wrapped := append([]trace.Event{{Type: trace.ToolDispatch, Thread: 1, Label: "side", Kernel: "increment", Agent: 2, Signal: 502,
		Op: trace.OpPass, Phase: trace.PhaseEnter, Pass: trace.U64(1), Dispatch: 1}}, own...)
	wrapped = append(wrapped, trace.Event{Type: trace.ToolComplete, Thread: 1, Label: "side", Signal: 502})
	t = insertBefore(t, and(typ(trace.Returned), func(e trace.Event) bool {
		p, ok := e.PassOf()
		return e.Dispatch == 1 && e.Op == trace.OpPass && e.Phase == trace.PhaseEnter && ok && p == 1
	}), wrapped...)
	return renumber(t)
}

func TestNestedToolLoopUnmasked(t *testing.T) {
	for _, v := range Trace(nestedToolLoop(false)) {
		if strings.HasPrefix(v.Rule, "LCX") || strings.HasPrefix(v.Rule, "SVC") {
			t.Errorf("valid nested window: unexpected\n%s", v)
		}
	}
	for _, v := range Trace(nestedToolLoop(true)) {
		if v.Rule == "LCX-6" && strings.Contains(v.Message, "pass 1 of") {
			return
		}
	}
	t.Errorf("a later pass of the tool's nested window, masked by the outer loop's override: want LCX-6")
}
