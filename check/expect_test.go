package check

import (
	"slices"
	"strings"
	"testing"

	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

func TestExpectations(t *testing.T) {
	base := new(builder).prelude()
	base.dispatch(loop{label: "k", dispatch: 1, count: 5, cont: []int64{1, 1, 0}, services: []trace.Service{trace.KernelTrace, trace.CounterCollection}})
	base.add(trace.Event{Type: trace.AppAlloc, Thread: 1, Buffer: "buf", Agent: 1, MemKind: trace.MemDevice, Addr: 1 << 40, Bytes: 16})
	base.add(readBack("buf", trace.Run{Value: 1, Count: 4}))
	base.add(trace.Event{Type: trace.Local, Thread: 1, Dispatch: 1, Call: trace.LocalStop, Context: 2, Op: trace.OpConfig, Phase: trace.PhaseEnter, Status: "ERROR_CONTEXT_ERROR"})
	tr := base.trace()
	one := int64(1)
	ctxs := []spec.Context{{Name: "replay"}, {Name: "timing"}}
	good := spec.Expect{
		Passes:            map[string]spec.Count{"k": spec.Exactly(3)},
		ContinueConsulted: map[string][]uint64{"k": {0, 1, 2}},
		Completions:       map[string]spec.Count{"k": spec.Exactly(1)},
		Memory:            map[string]spec.MemoryExpect{"buf": {All: &one}},
		Records:           map[string]spec.Count{string(trace.KernelTrace): spec.Exactly(3), string(trace.CounterCollection): {Min: 1, Max: 9}},
		Statuses:          []spec.StatusExpect{{Call: "local_stop", Context: "timing", Status: "ERROR_CONTEXT_ERROR"}, {Call: string(trace.CallConfigureCallback), Context: "replay", Status: "SUCCESS"}},
		NoWarnings:        true,
		Timestamps:        "differ_per_pass",
	}
	if vs := Expectations(spec.Spec{Contexts: ctxs, Expect: good}, tr); len(vs) > 0 {
		for _, v := range vs {
			t.Errorf("unexpected:\n%s", v)
		}
	}
	cases := []struct {
		key    string
		expect spec.Expect
		tr     trace.Trace
		reason string
	}{
		{"passes", spec.Expect{Passes: map[string]spec.Count{"k": spec.Exactly(5)}}, tr, "continue ended the loop after three of five passes"},
		{"passes", spec.Expect{Passes: map[string]spec.Count{"nope": spec.Exactly(1)}}, tr, "no dispatch is labelled nope"},
		{"continue_consulted", spec.Expect{ContinueConsulted: map[string][]uint64{"k": {0, 1, 2, 3}}}, tr, "continue was not consulted after pass 3, which never ran"},
		{"completions", spec.Expect{Completions: map[string]spec.Count{"k": spec.Exactly(2)}}, tr, "the application saw one completion"},
		{"memory", spec.Expect{Memory: map[string]spec.MemoryExpect{"buf": {Values: []int64{1, 2}}}}, tr, "the second element is 1"},
		{"memory", spec.Expect{Memory: map[string]spec.MemoryExpect{"buf": {All: new(int64)}}}, tr, "every element is 1, not 0"},
		{"memory", spec.Expect{Memory: map[string]spec.MemoryExpect{"other": {All: &one}}}, tr, "buffer other was never read back"},
		{"records", spec.Expect{Records: map[string]spec.Count{string(trace.KernelTrace): {Min: 4, Max: 10}}}, tr, "three kernel trace records, below the range"},
		{"statuses", spec.Expect{Statuses: []spec.StatusExpect{{Call: "local_stop", Context: "timing", Status: "SUCCESS"}}}, tr, "the local stop returned ERROR_CONTEXT_ERROR"},
		{"statuses", spec.Expect{Statuses: []spec.StatusExpect{{Call: "local_start", Status: "SUCCESS"}}}, tr, "no local start was made"},
		{"warnings", spec.Expect{Warnings: []string{"graph_launch"}}, tr, "no warning was printed"},
		{"no_warnings", spec.Expect{NoWarnings: true}, insertAfter(tr, typ(trace.API), trace.Event{Type: trace.Warning, Code: "graph_launch"}), "a warning was printed"},
		{"never_ends", spec.Expect{NeverEnds: []string{"k"}}, tr, "k's loop ended and completed"},
		{"timestamps", spec.Expect{Timestamps: "differ_per_pass"}, edit(tr, typ(trace.Kernel), func(e *trace.Event) { e.Start, e.End = 1, 2 }), "every pass's kernel has the same start and end"},
	}
	for _, c := range cases {
		t.Run(c.key+"/"+c.reason, func(t *testing.T) {
			vs := Expectations(spec.Spec{Contexts: ctxs, Expect: c.expect}, c.tr)
			if len(vs) == 0 {
				t.Fatalf("expect.%s: no violation, although %s", c.key, c.reason)
			}
			for _, v := range vs {
				if v.Rule != ExpectRule || !strings.HasPrefix(v.Requires, "expect."+c.key+":") {
					t.Errorf("violation names %s / %q, want EXPECT and expect.%s", v.Rule, v.Requires, c.key)
				}
			}
		})
	}
	// never_ends holds on a trace that never ended.
	if vs := Expectations(spec.Spec{Expect: spec.Expect{NeverEnds: []string{"k"}}}, neverEnded()); len(vs) > 0 {
		t.Errorf("never_ends on a never-ended trace: %v", vs)
	}
}

// objectsTrace is a fixed loop of up to 5 passes that continue ends after
// pass 2 (three passes), with kernel trace and counters in context 10, a
// local stop from CONFIG ENTER (refused) and one in PASS ENTER of pass 1
// (accepted), and a dispatch the tool writes from PASS ENTER of pass 1
// (dispatch id 2, one kernel, one kernel trace record).
func objectsTrace() trace.Trace {
	b := new(builder).prelude()
	b.dispatch(loop{label: "k", dispatch: 1, count: 5, cont: []int64{1, 1, 0}, services: []trace.Service{trace.KernelTrace, trace.CounterCollection}})
	tr := insertAfter(b.trace(), configCB(trace.PhaseEnter),
		trace.Event{Type: trace.Local, Thread: 1, Dispatch: 1, Call: trace.LocalStop, Context: 2, Op: trace.OpConfig, Phase: trace.PhaseEnter, Status: "ERROR_CONTEXT_ERROR"})
	tr = insertAfter(tr, passCB(trace.PhaseEnter, 1),
		trace.Event{Type: trace.Local, Thread: 1, Dispatch: 1, Call: trace.LocalStop, Context: 2, Op: trace.OpPass, Phase: trace.PhaseEnter, Pass: trace.U64(1), Status: "SUCCESS"},
		trace.Event{Type: trace.ToolDispatch, Thread: 1, Label: "side", Kernel: "increment", Agent: 1, Signal: 777, Op: trace.OpPass, Phase: trace.PhaseEnter, Pass: trace.U64(1), Dispatch: 1},
		trace.Event{Type: trace.DispatchID, Thread: 1, Dispatch: 2, Agent: 1, Kernel: "increment"},
		trace.Event{Type: trace.Kernel, Thread: 1, Dispatch: 2, Agent: 1, Kernel: "increment", Start: 90000, End: 90005, Signal: 777},
		trace.Event{Type: trace.Record, Thread: 1, Dispatch: 2, Agent: 1, Service: trace.KernelTrace, Context: 10, Corr: &trace.Corr{Internal: 300}, Start: 90000, End: 90005},
		trace.Event{Type: trace.ToolComplete, Thread: 1, Label: "side", Signal: 777})
	// The snapshot saves the dispatch's buffer, at the address it got.
	tr = edit(tr, typ(trace.Snapshot), func(e *trace.Event) { e.Regions = []trace.Region{{Addr: 1<<32 + 1<<16, Bytes: 16}} })
	return renumber(tr)
}

// abortTrace: a fixed loop of 3 whose restore before pass 1 fails
// part-way: the runtime wrote some memory, the SDK claims no restore, and
// nothing follows.
func abortTrace() trace.Trace {
	b := new(builder).prelude()
	b.dispatch(loop{label: "k", dispatch: 1, count: 3})
	tr := b.trace()
	cut := 0
	for i, e := range tr.Events {
		if withPass(trace.Restore, 1)(e) {
			cut = i
			break
		}
	}
	tr.Events = append(tr.Events[:cut:cut], trace.Event{Type: trace.MemWrite, Thread: 1, Agent: 1, Bytes: 4096,
		Regions: []trace.Region{{Addr: 1<<32 + 1<<16, Bytes: 4096}}})
	tr.Header.Sources = trace.AllSources
	return renumber(tr)
}

func TestObjectExpectations(t *testing.T) {
	tr := objectsTrace()
	one := int64(1)
	u := trace.U64
	ctxs := []spec.Context{{Name: "replay"}, {Name: "timing"}}
	seq := []string{"CONFIG_ENTER", "local_stop timing", "pass_count", "snapshot",
		"PASS_ENTER 0", "kernel", "PASS_EXIT 0", "continue 0", "restore 1",
		"PASS_ENTER 1", "local_stop timing", "dispatch side", "kernel", "PASS_EXIT 1", "continue 1", "restore 2",
		"PASS_ENTER 2", "kernel", "PASS_EXIT 2", "continue 2", "CONFIG_EXIT", "complete"}
	good := spec.Expect{
		Statuses: []spec.StatusExpect{
			{Call: "local_stop", Context: "timing", In: "CONFIG_ENTER", Dispatch: "k", Status: "ERROR_CONTEXT_ERROR"},
			{Call: "local_stop", Context: "timing", In: "PASS_ENTER", Pass: u(1), Status: "SUCCESS"},
		},
		MemoryAfter: map[string]map[string]spec.MemoryExpect{"k": {"buf-1": {All: &one}}},
		UserData: []spec.UserDataExpect{
			{Dispatch: "k", At: "CONFIG_ENTER", Value: 0},
			{Dispatch: "k", At: "pass_count", Value: 41},
			{Dispatch: "k", At: "PASS_ENTER", Value: 41},
			{Dispatch: "k", At: "continue", Pass: u(1), Value: 41},
		},
		Sequence:    map[string][]string{"k": seq, "side": {"kernel", "complete"}},
		DispatchIDs: map[string][]uint64{"k": {1}, "side": {2}},
		Correlation: map[string]spec.CorrelationExpect{"k": {External: []uint64{910, 911, 912}, SameInternal: true}},
		RecordCounts: []spec.RecordCount{
			{Service: "kernel_trace", Count: spec.Exactly(4)},
			{Service: "kernel_trace", Dispatch: "k", Pass: u(1), Context: "10", Count: spec.Exactly(1)},
			{Service: "kernel_trace", Dispatch: "side", Count: spec.Exactly(1)},
			{Service: "counter_collection", Dispatch: "k", Count: spec.Exactly(3)},
		},
		Runs:  map[string]spec.Count{"k": spec.Exactly(3), "side": spec.Exactly(1)},
		Saved: map[string][]string{"k": {"buf-1"}, "side": {}},
		Payload: []spec.PayloadExpect{
			{Dispatch: "k", At: "PASS_ENTER", Pass: u(1), Members: []string{"size", "dispatch_info", "current_pass", "total_passes", "replay_start_context", "replay_stop_context"}, Size: u(128)},
			{Dispatch: "k", At: "PASS_EXIT", Pass: u(0), Members: []string{"size", "dispatch_info", "total_passes", "replay_start_context", "replay_stop_context"}},
		},
		Counters: []spec.CountersExpect{{Dispatch: "k", Pass: u(1), Context: "10", Names: []string{"G1b", "G1a"}}},
	}
	if vs := Expectations(spec.Spec{Contexts: ctxs, Expect: good}, tr); len(vs) > 0 {
		for _, v := range vs {
			t.Errorf("unexpected on the good trace:\n%s", v)
		}
	}
	if vs := Expectations(spec.Spec{Expect: spec.Expect{Aborts: []string{"k"}}}, abortTrace()); len(vs) > 0 {
		t.Errorf("aborts on a trace that aborts at its restore: %v", vs)
	}

	seqWithout := func(drop string) []string {
		out := slices.Clone(seq)
		return slices.DeleteFunc(out, func(s string) bool { return s == drop })
	}
	cases := []struct {
		key    string
		expect spec.Expect
		tr     trace.Trace
		reason string
	}{
		{"statuses", spec.Expect{Statuses: []spec.StatusExpect{{Call: "local_stop", In: "PASS_ENTER", Pass: u(1), Status: "SUCCESS"}}},
			edit(tr, withPass(trace.Local, 1), func(e *trace.Event) { e.Status = "ERROR_CONTEXT_NOT_STARTED" }),
			"the call in PASS ENTER of pass 1 returned another status"},
		{"statuses", spec.Expect{Statuses: []spec.StatusExpect{{Call: "local_stop", In: "PASS_ENTER", Pass: u(2), Status: "SUCCESS"}}}, tr,
			"no local stop was made in pass 2, so the scope matches nothing"},
		{"statuses", spec.Expect{Statuses: []spec.StatusExpect{{Call: "local_stop", In: "PASS_EXIT", Status: "ERROR_CONTEXT_ERROR"}}}, tr,
			"a window with no such call must not pass by silence"},
		{"memory_after", spec.Expect{MemoryAfter: map[string]map[string]spec.MemoryExpect{"k": {"buf-1": {Values: []int64{1, 1, 2}}}}}, tr,
			"the third element read back after k is 1, not 2"},
		{"memory_after", spec.Expect{MemoryAfter: map[string]map[string]spec.MemoryExpect{"k": {"buf-1": {All: &one}}}},
			drop(tr, typ(trace.AppReadback)), "without an app_readback nothing was read after k"},
		{"user_data", spec.Expect{UserData: []spec.UserDataExpect{{Dispatch: "k", At: "PASS_ENTER", Value: 41}}},
			edit(tr, passCB(trace.PhaseEnter, 2), func(e *trace.Event) { e.UserData = trace.U64(1001) }),
			"PASS ENTER of pass 2 was handed the value an earlier pass wrote"},
		{"user_data", spec.Expect{UserData: []spec.UserDataExpect{{Dispatch: "k", At: "PASS_EXIT", Pass: u(4), Value: 41}}}, tr,
			"pass 4 never ran, so its EXIT cannot be judged as holding"},
		{"user_data", spec.Expect{UserData: []spec.UserDataExpect{{Dispatch: "k", At: "pass_count", Value: 41}}},
			edit(tr, typ(trace.PassCount), func(e *trace.Event) { e.UserData = nil }),
			"replay_pass_count shown without user data was not handed 41"},
		{"sequence", spec.Expect{Sequence: map[string][]string{"k": seq}}, drop(tr, withPass(trace.Restore, 2)),
			"the restore before pass 2 is missing"},
		{"sequence", spec.Expect{Sequence: map[string][]string{"k": seq}}, moveBefore(tr, withPass(trace.Continue, 0), passCB(trace.PhaseExit, 0)),
			"continue was consulted before the pass's EXIT"},
		{"sequence", spec.Expect{Sequence: map[string][]string{"k": seqWithout("dispatch side")}}, tr,
			"the tool's dispatch from PASS ENTER of pass 1 is a step the spec left out"},
		{"sequence", spec.Expect{Sequence: map[string][]string{"k": append(slices.Clone(seq), "kernel")}}, tr,
			"the spec wants a step after the completion that never came"},
		{"dispatch_ids", spec.Expect{DispatchIDs: map[string][]uint64{"k": {2}}}, tr,
			"k's reserved id is 1"},
		{"dispatch_ids", spec.Expect{DispatchIDs: map[string][]uint64{"k": {1}}},
			edit(tr, and(typ(trace.Kernel), dispatchIs(1), inPass(tr, trace.Kernel, 2)), func(e *trace.Event) { e.Dispatch = 3 }),
			"the kernel of pass 2 carries another id than k's"},
		{"dispatch_ids", spec.Expect{DispatchIDs: map[string][]uint64{"side": {2, 3}}}, tr,
			"the tool's dispatch reserved one id, not two"},
		{"correlation", spec.Expect{Correlation: map[string]spec.CorrelationExpect{"k": {External: []uint64{910, 911, 912}}}},
			edit(tr, and(typ(trace.Record), withPass(trace.Record, 1)), func(e *trace.Event) {
				e.Corr = &trace.Corr{Internal: e.Corr.Internal, External: 5, Ancestor: e.Corr.Ancestor}
			}),
			"the records of pass 1 carry another external id"},
		{"correlation", spec.Expect{Correlation: map[string]spec.CorrelationExpect{"k": {External: []uint64{910, 911}}}}, tr,
			"k's records come from three passes, not two"},
		{"correlation", spec.Expect{Correlation: map[string]spec.CorrelationExpect{"k": {SameInternal: true}}},
			edit(tr, passCB(trace.PhaseEnter, 2), func(e *trace.Event) { e.Corr = &trace.Corr{Internal: 555, Ancestor: 7} }),
			"PASS ENTER of pass 2 carries another internal id"},
		{"record_counts", spec.Expect{RecordCounts: []spec.RecordCount{{Service: "kernel_trace", Dispatch: "k", Pass: u(1), Count: spec.Exactly(1)}}},
			drop(tr, and(typ(trace.Record), dispatchIs(1), withPass(trace.Record, 1), func(e trace.Event) bool { return e.Service == trace.KernelTrace })),
			"pass 1 delivered no kernel trace record"},
		{"record_counts", spec.Expect{RecordCounts: []spec.RecordCount{{Service: "kernel_trace", Dispatch: "k", Context: "11", Count: spec.Exactly(3)}}}, tr,
			"context 11 delivered none of k's kernel trace records"},
		{"record_counts", spec.Expect{RecordCounts: []spec.RecordCount{{Service: "kernel_trace", Dispatch: "k", Count: spec.Exactly(3)}}},
			insertAfter(tr, inPass(tr, trace.Record, 0), trace.Event{Type: trace.Record, Thread: 1, Dispatch: 1, Service: trace.KernelTrace, Context: 10, Pass: trace.U64(0)}),
			"a fourth kernel trace record of k, in pass 0"},
		{"runs", spec.Expect{Runs: map[string]spec.Count{"k": spec.Exactly(3)}},
			insertAfter(tr, typ(trace.AppComplete), trace.Event{Type: trace.Kernel, Thread: 1, Dispatch: 1, Agent: 1, Kernel: "increment"}),
			"k's kernel ran a fourth time after the loop"},
		{"runs", spec.Expect{Runs: map[string]spec.Count{"nope": spec.Exactly(1)}}, tr,
			"no dispatch is labelled nope"},
		{"saved", spec.Expect{Saved: map[string][]string{"k": {"buf-1", "other"}}}, tr,
			"k's snapshot saved buf-1 alone"},
		{"saved", spec.Expect{Saved: map[string][]string{"k": {"buf-1"}}},
			insertBefore(tr, typ(trace.Snapshot), trace.Event{Type: trace.AppFree, Buffer: "buf-1", Addr: 1<<32 + 1<<16}),
			"buf-1 was freed before the snapshot, so the region saved is no buffer of the application's"},
		{"saved", spec.Expect{Saved: map[string][]string{"k": {}}}, tr,
			"k took a snapshot, so it saved something"},
		{"payload", spec.Expect{Payload: []spec.PayloadExpect{{Dispatch: "k", At: "PASS_ENTER", Members: []string{"size", "dispatch_info", "current_pass", "total_passes", "replay_start_context", "replay_stop_context"}}}},
			tr, "pass 0 arrives with current_pass zero, so it is not among the members"},
		{"payload", spec.Expect{Payload: []spec.PayloadExpect{{Dispatch: "k", At: "PASS_ENTER", Pass: u(2), Members: []string{"size", "dispatch_info", "current_pass", "total_passes", "replay_start_context", "replay_stop_context"}}}},
			edit(tr, passCB(trace.PhaseEnter, 2), func(e *trace.Event) {
				e.Payload = []string{"size", "dispatch_info", "current_pass", "total_passes", "replay_start_context"}
			}),
			"pass 2 arrived without replay_stop_context (LCX-1)"},
		{"payload", spec.Expect{Payload: []spec.PayloadExpect{{Dispatch: "k", At: "CONFIG_ENTER", Size: u(64)}}}, tr,
			"the payload's size is the whole payload's, 128, not 64 (API-5)"},
		{"payload", spec.Expect{Payload: []spec.PayloadExpect{{Dispatch: "k", At: "CONFIG_ENTER", Size: u(128)}}},
			edit(tr, configCB(trace.PhaseEnter), func(e *trace.Event) { e.PayloadSize = nil }),
			"a callback that shows no size cannot be held to have one"},
		{"payload", spec.Expect{Payload: []spec.PayloadExpect{{Dispatch: "k", At: "PASS_EXIT", Pass: u(7), Members: []string{"size"}}}}, tr,
			"pass 7 never ran"},
		{"counters", spec.Expect{Counters: []spec.CountersExpect{{Dispatch: "k", Pass: u(2), Names: []string{"G2a", "G2b"}}}},
			edit(tr, and(typ(trace.Record), withPass(trace.Record, 2)), func(e *trace.Event) {
				if e.Service == trace.CounterCollection {
					e.Counters = []trace.Counter{{Name: "G0a"}, {Name: "G0b"}}
				}
			}), "pass 2 collected group 0 again (a wrap, AGT-1)"},
		{"counters", spec.Expect{Counters: []spec.CountersExpect{{Dispatch: "k", Pass: u(3), Names: []string{"G3a"}}}}, tr,
			"no pass 3 ran, so no record carries its counters"},
		{"aborts", spec.Expect{Aborts: []string{"k"}}, withSources(tr), "every restore of k finished and the loop completed"},
		{"aborts", spec.Expect{Aborts: []string{"k"}}, drop(abortTrace(), typ(trace.MemWrite)),
			"without the runtime's writes after the last pass, no restore began"},
		{"aborts", spec.Expect{Aborts: []string{"k"}},
			insertAfter(abortTrace(), typ(trace.MemWrite), trace.Event{Type: trace.AppMemory, Buffer: "buf-1", Elements: 4, Runs: []trace.Run{{Value: 1, Count: 4}}}),
			"the application read memory after the process should have died"},
		{"aborts", spec.Expect{Aborts: []string{"k"}},
			insertAfter(abortTrace(), typ(trace.MemWrite), trace.Event{Type: trace.Callback, Thread: 1, Dispatch: 1, Op: trace.OpConfig, Phase: trace.PhaseExit}),
			"CONFIG EXIT fired after the failed restore"},
		{"aborts", spec.Expect{Aborts: []string{"k"}},
			insertAfter(abortTrace(), typ(trace.MemWrite), trace.Event{Type: trace.Restore, Thread: 1, Dispatch: 1, Pass: trace.U64(1), Bytes: 4096}),
			"the SDK claims the restore before pass 1, so it finished"},
	}
	for _, c := range cases {
		t.Run(c.key+"/"+c.reason, func(t *testing.T) {
			vs := Expectations(spec.Spec{Contexts: ctxs, Expect: c.expect}, renumber(c.tr))
			if len(vs) == 0 {
				t.Fatalf("expect.%s: no violation, although %s", c.key, c.reason)
			}
			t.Logf("%s: %s", vs[0].Requires, vs[0].Message)
			for _, v := range vs {
				if v.Rule != ExpectRule || !strings.HasPrefix(v.Requires, "expect."+c.key+":") || v.Message == "" {
					t.Errorf("violation names %s / %q / %q, want EXPECT, expect.%s and a message", v.Rule, v.Requires, v.Message, c.key)
				}
			}
		})
	}
}

// withSources gives a hand-made trace a header that reports every source.
func withSources(t trace.Trace) trace.Trace {
	t.Header.Sources = trace.AllSources
	return t
}

// An expectation whose events come from a source the trace lacks is not
// observable there: neither judged nor passed, and said so.
func TestExpectationsNotObservable(t *testing.T) {
	b := new(builder).prelude()
	b.dispatch(loop{label: "k", dispatch: 1, count: 3})
	tr := b.trace()
	tr.Header.Sources = []trace.Source{trace.SourceTool, trace.SourceApp} // a black-box port
	ex := spec.Expect{
		DispatchIDs: map[string][]uint64{"k": {7}}, // would fail: the id is 1
		Runs:        map[string]spec.Count{"k": spec.Exactly(9)},
		Aborts:      []string{"k"},
		Passes:      map[string]spec.Count{"k": spec.Exactly(3)}, // observable, holds
	}
	vs, unobserved := JudgeExpectations(spec.Spec{Expect: ex}, tr)
	for _, v := range vs {
		t.Errorf("judged without its sources:\n%s", v)
	}
	want := []string{"dispatch_ids", "runs", "aborts"}
	for _, k := range want {
		if !slices.Contains(unobserved, k) {
			t.Errorf("%s not reported as not observable (got %v)", k, unobserved)
		}
	}
	if slices.Contains(unobserved, "passes") {
		t.Errorf("passes needs only the tool's events, yet was called not observable")
	}
	// The warnings the SDK printed are what the application's process
	// shows: a black-box trace judges them, and one never printed fails.
	warned := spec.Expect{Warnings: []string{string(trace.WarnGraphLaunch)}}
	if vs, unobserved := JudgeExpectations(spec.Spec{Expect: warned}, tr); len(vs) != 1 || len(unobserved) > 0 {
		t.Errorf("a warning never printed, at the black-box profile: %d violations, not observable %v; want one violation", len(vs), unobserved)
	}
	// With every source, the same expectations are judged and fail.
	tr.Header.Sources = trace.AllSources
	if vs, _ := JudgeExpectations(spec.Spec{Expect: ex}, tr); len(vs) < 3 {
		t.Errorf("with every source only %d expectations failed, want the dispatch_ids, runs and aborts ones", len(vs))
	}
}

// Whole buffers: the 17th element is judged like the first (v1 looked at 16
// leading values only), and a values list longer than 16 can pass.
func TestMemoryJudgesEveryElement(t *testing.T) {
	b := new(builder).prelude()
	b.dispatch(loop{label: "k", dispatch: 1, count: 3})
	mem := func(runs ...trace.Run) trace.Trace {
		bb := *b
		bb.ev = slices.Clone(b.ev)
		bb.add(trace.Event{Type: trace.AppAlloc, Thread: 1, Buffer: "big", Agent: 1, MemKind: trace.MemDevice, Addr: 1 << 40, Bytes: trace.CountOf(runs) * 4})
		bb.add(readBack("big", runs...))
		return bb.trace()
	}
	one := int64(1)
	cases := []struct {
		reason string
		tr     trace.Trace
		want   spec.MemoryExpect
		fails  bool
	}{
		{"element 16 of 64 is wrong", mem(trace.Run{Value: 1, Count: 16}, trace.Run{Value: 0, Count: 1}, trace.Run{Value: 1, Count: 47}), spec.MemoryExpect{All: &one}, true},
		{"the last element of 1<<20 is wrong", mem(trace.Run{Value: 1, Count: 1<<20 - 1}, trace.Run{Value: 2, Count: 1}), spec.MemoryExpect{All: &one}, true},
		{"every element holds", mem(trace.Run{Value: 1, Count: 1 << 20}), spec.MemoryExpect{All: &one}, false},
		{"20 listed values hold", mem(trace.Run{Value: 3, Count: 20}, trace.Run{Value: 0, Count: 4}), spec.MemoryExpect{Values: slices.Repeat([]int64{3}, 20)}, false},
		{"the 20th of 20 listed values differs", mem(trace.Run{Value: 3, Count: 19}, trace.Run{Value: 4, Count: 5}), spec.MemoryExpect{Values: slices.Repeat([]int64{3}, 20)}, true},
		{"more values listed than the buffer has", mem(trace.Run{Value: 3, Count: 4}), spec.MemoryExpect{Values: slices.Repeat([]int64{3}, 5)}, true},
	}
	for _, c := range cases {
		vs := Expectations(spec.Spec{Expect: spec.Expect{Memory: map[string]spec.MemoryExpect{"big": c.want}}}, c.tr)
		if got := len(vs) > 0; got != c.fails {
			t.Errorf("%s: failed %v, want %v (%v)", c.reason, got, c.fails, vs)
		}
		if c.fails && len(vs) > 0 && !strings.Contains(vs[0].Message, "differ") && !strings.Contains(vs[0].Message, "fewer") {
			t.Errorf("%s: the message does not say what differs: %s", c.reason, vs[0].Message)
		}
	}
}

// readBack is the application's read of a whole buffer at the end: its
// runs, their count and the digest of the bytes they spell.
func readBack(buffer string, runs ...trace.Run) trace.Event {
	return trace.Event{Type: trace.AppMemory, Buffer: buffer, Elements: trace.CountOf(runs), Runs: runs, Digest: trace.DigestRuns(runs)}
}

// A read-back is judged on the whole buffer the application allocated: a
// port that reads back 10 of 256 elements, says 10 and digests the 10 does
// not pass expect.memory {all: V} (issue 20), nor does one whose digest is
// not that of the values it reports, nor one that says nothing of its size.
func TestMemoryIsTheWholeBuffer(t *testing.T) {
	b := new(builder).prelude()
	b.dispatch(loop{label: "k", dispatch: 1, count: 3})
	alloc := trace.Event{Type: trace.AppAlloc, Thread: 1, Buffer: "x", Agent: 1, MemKind: trace.MemDevice, Addr: 1 << 40, Bytes: 256 * 4}
	with := func(evs ...trace.Event) trace.Trace {
		bb := *b
		bb.ev = slices.Clone(b.ev)
		for _, e := range evs {
			bb.add(e)
		}
		return bb.trace()
	}
	seven := int64(7)
	whole := readBack("x", trace.Run{Value: 7, Count: 256})
	badDigest := whole
	badDigest.Digest = readBack("x", trace.Run{Value: 7, Count: 255}, trace.Run{Value: 0, Count: 1}).Digest
	lying := readBack("x", trace.Run{Value: 7, Count: 10})
	lying.Elements = 256 // says whole, spells 10
	noDigest := whole
	noDigest.Digest = ""
	cases := []struct {
		reason string
		tr     trace.Trace
		msg    string // "" holds
	}{
		{"all 256 elements read and equal", with(alloc, whole), ""},
		{"10 of 256 read back, and it says 10", with(alloc, readBack("x", trace.Run{Value: 7, Count: 10})), "read 10 elements of buffer x, but the buffer has 256"},
		{"10 of 256 read back, and it says 256", with(alloc, lying), "runs spell 10 elements of buffer x, but it says it holds 256"},
		{"the digest is not the values'", with(alloc, badDigest), "but the values its runs spell digest to"},
		{"no digest", with(alloc, noDigest), "carries no digest"},
		{"no app_alloc: its size is unknown", with(whole), "no app_alloc of buffer x"},
		{"allocated after it was read", with(whole, alloc), "no app_alloc of buffer x"},
	}
	for _, c := range cases {
		for _, key := range []string{"memory", "memory_after"} {
			ex := spec.Expect{Memory: map[string]spec.MemoryExpect{"x": {All: &seven}}}
			tr := c.tr
			if key == "memory_after" {
				ex = spec.Expect{MemoryAfter: map[string]map[string]spec.MemoryExpect{"k": {"x": {All: &seven}}}}
				tr = edit(tr, typ(trace.AppMemory), func(e *trace.Event) { e.Type, e.Label = trace.AppReadback, "k" })
			}
			vs := Expectations(spec.Spec{Expect: ex}, tr)
			switch {
			case c.msg == "" && len(vs) > 0:
				t.Errorf("%s (%s): %v", c.reason, key, vs)
			case c.msg != "" && (len(vs) != 1 || !strings.Contains(vs[0].Message, c.msg)):
				t.Errorf("%s (%s): got %v, want one violation saying %q", c.reason, key, vs, c.msg)
			}
		}
	}
}

// expect.memory is what the buffer holds at the end: of several reads of
// it, the last (a port that reads a buffer again after a stale read is
// judged on the fresh one, and one whose last read is stale fails), also
// when the reads lie in different segments of a stream.
func TestMemoryIsTheLastRead(t *testing.T) {
	b := new(builder).prelude()
	b.add(trace.Event{Type: trace.AppAlloc, Thread: 1, Buffer: "x", Agent: 1, MemKind: trace.MemDevice, Addr: 1 << 40, Bytes: 4 * 4})
	b.dispatch(loop{label: "k", dispatch: 1, count: 3})
	stale, fresh := readBack("x", trace.Run{Value: 1, Count: 4}), readBack("x", trace.Run{Value: 2, Count: 4})
	two := int64(2)
	ex := spec.Spec{Expect: spec.Expect{Memory: map[string]spec.MemoryExpect{"x": {All: &two}}}}
	for _, c := range []struct {
		reason string
		reads  []trace.Event
		fails  bool
	}{
		{"stale, then fresh", []trace.Event{stale, fresh}, false},
		{"fresh, then stale", []trace.Event{fresh, stale}, true},
	} {
		bb := *b
		bb.ev = slices.Clone(b.ev)
		bb.add(c.reads[0])
		bb.dispatch(loop{label: "m", dispatch: 2, count: 2})
		bb.add(c.reads[1])
		tr := bb.trace()
		if vs := Expectations(ex, tr); (len(vs) > 0) != c.fails {
			t.Errorf("%s, whole: failed %v, want %v (%v)", c.reason, len(vs) > 0, c.fails, vs)
		}
		_, vs, _, segments, ok := JudgeStreamSpec(ex, tr, 0)
		if !ok || segments < 2 {
			t.Fatalf("%s: judged as a stream in %d segments (separable %v), want two or more", c.reason, segments, ok)
		}
		if (len(vs) > 0) != c.fails {
			t.Errorf("%s, as a stream: failed %v, want %v (%v)", c.reason, len(vs) > 0, c.fails, vs)
		}
	}
}

// expect.aborts: nothing of the application follows the failed restore, in
// the rest of the trace. A port that completes the dispatch before its
// last pass ends, and goes on to the next dispatch after the restore
// began, leaves nothing after the pass in the stream's segment: the next
// dispatch is in another one, and the stream must not pass what the whole
// trace fails (it judges such a trace whole).
func TestAbortsLooksPastTheSegment(t *testing.T) {
	tr := abortTrace()
	lastExit := -1
	for i, e := range tr.Events {
		if passCB(trace.PhaseExit, 0)(e) {
			lastExit = i
		}
	}
	done := trace.Event{Type: trace.AppComplete, Thread: 1, Label: "k", Signal: tr.Events[0].Signal}
	for _, e := range tr.Events {
		if e.Type == trace.AppDispatch {
			done.Signal = e.Signal
		}
	}
	next := new(builder).prelude()
	next.dispatch(loop{label: "m", dispatch: 2, count: 1})
	seen := []trace.Event{done} // and what a completion brings: the signal, its load, a read-back
	for _, e := range next.trace().Events {
		if e.Type == trace.AppSignal || e.Type == trace.AppReadback || e.Type == trace.Signal {
			e.Label, e.Signal = "k", done.Signal
			seen = append(seen, e)
		}
	}
	ev := slices.Insert(slices.Clone(tr.Events), lastExit, seen...)
	for k, e := range next.trace().Events {
		if e.Type == trace.AppDispatch {
			for _, f := range next.trace().Events[k:] {
				if f.Start != 0 {
					f.Start, f.End = f.Start+1e9, f.End+1e9 // after k's records
				}
				ev = append(ev, f)
			}
			break
		}
	}
	tr.Events = ev
	tr = renumber(tr)
	ex := spec.Spec{Expect: spec.Expect{Aborts: []string{"k"}}}
	whole := Expectations(ex, tr)
	if len(whole) == 0 {
		t.Fatal("the whole trace passes expect.aborts, though the application went on to dispatch m")
	}
	if _, segments, ok := JudgeStream(tr); !ok || segments < 2 {
		t.Fatalf("the oracles judge the trace as a stream of %d segments (separable %v): it tests nothing", segments, ok)
	}
	if _, vs, _, segments, ok := JudgeStreamSpec(ex, tr, 0); ok && !slices.EqualFunc(vs, whole, func(a, b Violation) bool { return a.Message == b.Message }) {
		t.Errorf("judged as a stream of %d segments: %v, want what the whole trace says: %v", segments, vs, whole)
	}
}
