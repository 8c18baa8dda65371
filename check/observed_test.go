package check

import (
	"slices"
	"strings"
	"testing"

	"github.com/replayspec/replayspec/trace"
)

// The observations designed in for a black-box port (docs/oracles.md,
// "Observations designed in"): each judgement from them holds on a correct
// trace at every profile, and each broken trace is caught under the right
// rule with the tool's and the application's events alone.

// seenLoop is a fixed loop of three passes with every observation.
func seenLoop(l loop) trace.Trace {
	b := &builder{seen: true}
	b.prelude()
	return b.dispatch(l).trace()
}

// twoBuffers: a fixed loop whose kernel writes two device buffers of its
// agent, buf-1 and buf-3 (MEM-4's completeness is per buffer).
func twoBuffers() trace.Trace {
	t := seenLoop(loop{label: "k", dispatch: 1, count: 3})
	t = insertAfter(t, nth(typ(trace.AppAlloc), 1), trace.Event{Type: trace.AppAlloc, Thread: 1, Buffer: "buf-3", Agent: 1, MemKind: trace.MemDevice, Addr: 1<<32 + 3<<16, Bytes: 16})
	var out []trace.Event
	for _, e := range t.Events {
		if e.Type == trace.Snapshot {
			// the snapshot reads both
			read := trace.Region{Addr: 1<<32 + 3<<16, Bytes: 16}
			out = append(out, trace.Event{Type: trace.MemRead, Thread: 1, Agent: 1, Bytes: 16, Regions: []trace.Region{read}})
			e.Bytes, e.Regions = 32, append(slices.Clone(e.Regions), read)
		}
		out = append(out, e)
		if e.Type == trace.ToolMemory {
			second := e
			second.Buffer = "buf-3"
			out = append(out, second)
		}
	}
	t.Events = out
	return renumber(t)
}

// withFine adds a fine-grained buffer the kernel increments too: not saved,
// so it is never written back.
func withFine() trace.Trace {
	t := seenLoop(loop{label: "k", dispatch: 1, count: 3})
	t = insertAfter(t, nth(typ(trace.AppAlloc), 1), trace.Event{Type: trace.AppAlloc, Thread: 1, Buffer: "fine", Agent: 1, MemKind: trace.MemFine, Addr: 1<<32 + 9<<16, Bytes: 16})
	var out []trace.Event
	for _, e := range t.Events {
		out = append(out, e)
		if e.Type == trace.ToolMemory {
			p, _ := e.PassOf()
			fine := e
			fine.Buffer = "fine"
			// pass p starts from p increments and leaves p+1: never restored
			n := p
			if e.Phase == trace.PhaseExit {
				n++
			}
			fine.Digest = trace.Digest([]byte{byte(n), 0, 0, 0, byte(n), 0, 0, 0, byte(n), 0, 0, 0, byte(n), 0, 0, 0})
			out = append(out, fine)
		}
	}
	t.Events = out
	return renumber(t)
}

// peerWrite: while thread 1's loop on agent 1 takes its snapshot, thread
// 2's dispatch on agent 2 writes buf-1 through peer access: pass 0 starts
// from that write, the later passes from the snapshot (decision 18.3).
func peerWrite(args []string) trace.Trace {
	t := seenLoop(loop{label: "k", dispatch: 1, count: 3})
	written := trace.Digest(bufferAfter)
	t = edit(t, and(typ(trace.ToolMemory), func(e trace.Event) bool { return e.Phase == trace.PhaseEnter && *e.Pass == 0 }), func(e *trace.Event) { e.Digest = written })
	return renumber(insertAfter(t, typ(trace.Snapshot),
		trace.Event{Type: trace.AppDispatch, Thread: 2, Label: "peer", Kernel: "increment", Agent: 2, Signal: 777, Packets: 1, Args: args},
		trace.Event{Type: trace.Signal, Thread: 2, Signal: 777, Value: trace.I64(0)},
		trace.Event{Type: trace.AppComplete, Thread: 2, Label: "peer", Signal: 777}))
}

// TestObservationsHoldOnCorrectTraces: the traces the broken ones below
// come from break no rule, at any profile.
func TestObservationsHoldOnCorrectTraces(t *testing.T) {
	valid := map[string]trace.Trace{
		"fixed 3":                 seenLoop(loop{label: "k", dispatch: 1, count: 3}),
		"early exit":              seenLoop(loop{label: "k", dispatch: 1, count: 5, cont: []int64{1, 1, 0}}),
		"two buffers":             twoBuffers(),
		"a fine buffer":           withFine(),
		"two dispatches":          seenSequence(),
		"a peer write, said":      peerWrite([]string{"buf-1"}),
		"a peer write, all named": peerWrite(nil),
	}
	for name, tr := range valid {
		for _, p := range []struct {
			name string
			tr   trace.Trace
		}{{"full", tr}, {"runtime", runtimeProfile(tr)}, {"black-box", blackBox(tr)}} {
			for _, v := range Trace(p.tr) {
				t.Errorf("%s at the %s profile: unexpected violation:\n%s", name, p.name, v)
			}
		}
	}
	// The copies are judged: at the black-box profile the memory rules
	// pass, they are not silent.
	j := Judge(blackBox(twoBuffers()))
	for _, rule := range []string{"MEM-2", "MEM-3", "MEM-4", "CMP-1", "CMP-2"} {
		if r, _ := j.Rule(rule); r.Verdict != Pass {
			t.Errorf("%s at the black-box profile: %s with %d instances, want pass", rule, r.Verdict, r.Instances)
		}
	}
}

// seenSequence: two dispatches, ids 1 and 2, with every observation.
func seenSequence() trace.Trace {
	b := &builder{seen: true}
	b.prelude()
	b.dispatch(loop{label: "a", dispatch: 1, count: 3})
	b.dispatch(loop{label: "b", dispatch: 2, count: 1})
	return b.trace()
}

// TestObservationsCatchAtBlackBox: each planted mistake, judged with the
// tool's and the application's events only, is named under its rule.
func TestObservationsCatchAtBlackBox(t *testing.T) {
	fixed3 := seenLoop(loop{label: "k", dispatch: 1, count: 3})
	enter := func(p uint64) match {
		return func(e trace.Event) bool {
			q, ok := e.PassOf()
			return e.Type == trace.ToolMemory && e.Phase == trace.PhaseEnter && ok && q == p
		}
	}
	exit := func(p uint64) match {
		return func(e trace.Event) bool {
			q, ok := e.PassOf()
			return e.Type == trace.ToolMemory && e.Phase == trace.PhaseExit && ok && q == p
		}
	}
	buffer := func(name string) match { return func(e trace.Event) bool { return e.Buffer == name } }
	after := trace.Digest(bufferAfter)
	before := trace.Digest(bufferBefore)
	other := &builder{clock: 20000, allocated: map[uint64]bool{1: true}}
	other.dispatch(loop{label: "p", dispatch: 9, thread: 2, agent: 1, count: 1})
	sameAgent := slices.DeleteFunc(slices.Clone(other.ev), func(e trace.Event) bool { return e.Type != trace.AppDispatch && e.Type != trace.AppComplete })
	cases := []struct {
		reason string
		tr     trace.Trace
		want   string
	}{
		// MEM-2: what pass 1 starts from, as the tool copied it.
		{"no restore before pass 1: it starts from pass 0's output", edit(fixed3, enter(1), func(e *trace.Event) { e.Digest = after }), "MEM-2"},
		{"pass 0 started from other memory than the later passes, and the other dispatch in flight does not take the buffer", peerWrite([]string{"buf-2"}), "MEM-2"},
		{"a restore of part of the buffer before pass 2", edit(fixed3, enter(2), func(e *trace.Event) { e.Digest = "00000000000000aa" }), "MEM-2"},
		// MEM-3: what the application reads back.
		{"a restore after the last pass: the application reads the loop's start", edit(fixed3, typ(trace.AppReadback), func(e *trace.Event) { e.Digest = before }), "MEM-3"},
		{"the last pass left other memory than one run does", edit(edit(fixed3, exit(2), func(e *trace.Event) { e.Digest = "00000000000000bb" }), typ(trace.AppReadback), func(e *trace.Event) { e.Digest = "00000000000000bb" }), "MEM-3"},
		// MEM-4: what the restore writes, buffer by buffer.
		{"a restore writes back fine-grained memory", edit(withFine(), and(enter(1), buffer("fine")), func(e *trace.Event) {
			e.Digest = trace.Digest(bufferBefore)
		}), "MEM-4"},
		{"the snapshot missed one of two written device buffers", edit(twoBuffers(), and(enter(1), buffer("buf-3")), func(e *trace.Event) { e.Digest = after }), "MEM-4"},
		{"a buffer allocated after replay was configured is left out of the restore", edit(twoBuffers(), and(enter(1), buffer("buf-3")), func(e *trace.Event) { e.Digest = after }), "ACT-4"},
		{"a restore writes into a buffer allocated since the snapshot", allocatedSince(fixed3), "MEM-4"},
		// MEM-5: the warnings are what the process printed.
		{"a dispatch warned of as an incomplete snapshot is replayed", insertAfter(fixed3, configCB(trace.PhaseEnter), trace.Event{Type: trace.Warning, Code: trace.WarnSnapshotIncomplete, Dispatch: 1}), "MEM-5"},
		// MEM-6: another thread's dispatch on the loop's agent.
		{"another thread's dispatch on the agent ran inside the loop", insertAfter(fixed3, passCB(trace.PhaseEnter, 1), sameAgent...), "MEM-6"},
		{"another dispatch's kernel on the agent overlaps the passes", insertAfter(fixed3, passCB(trace.PhaseExit, 1), trace.Event{Type: trace.Record, Service: trace.KernelTrace, Context: 10, Thread: 2, Dispatch: 9, Agent: 1, Start: first(fixed3, and(typ(trace.Record), withPass(trace.Record, 1))).Start + 1, End: 1 << 40}), "MEM-6"},
		// CMP: the signal, as the application and the tool load it.
		{"a completion after every pass: the signal reads -2 after the wait", edit(fixed3, typ(trace.AppSignal), func(e *trace.Event) { e.Value = trace.I64(-2) }), "CMP-1"},
		{"the completion fired at the last pass, before CONFIG EXIT", edit(fixed3, func(e trace.Event) bool { return e.Type == trace.ToolSignal && e.Op == trace.OpConfig }, func(e *trace.Event) { e.Value = trace.I64(0) }), "CMP-2"},
		{"the completion fired at pass 1's EXIT", edit(fixed3, and(typ(trace.ToolSignal), withPass(trace.ToolSignal, 1)), func(e *trace.Event) { e.Value = trace.I64(0) }), "CMP-2"},
		{"a loop that never ended, yet its signal was decremented", insertAfter(neverEnded(), typ(trace.AppTimeout), trace.Event{Type: trace.AppSignal, Thread: 1, Label: "k", Signal: 501, Value: trace.I64(0)}), "CMP-4"},
		// DID-3: the next dispatch's id as the tool sees it.
		{"the counter advanced on every pass: the next dispatch's id jumps", edit(seenSequence(), dispatchIs(2), func(e *trace.Event) { e.Dispatch = 4 }), "DID-3"},
		// PC-3: with the warnings in the trace, a loop that never began
		// without a failed snapshot's warning is not excused.
		{"a loop the tool asked for never began, and no snapshot failure was printed", dropPass(dropPass(dropPass(fixed3, 0), 1), 2), "PC-3"},
		// AGT-1: the tool's records alone.
		{"the last pass collects the first pass's group again", edit(seenLoop(loop{label: "k", dispatch: 1, count: 3, services: []trace.Service{trace.CounterCollection}}),
			and(typ(trace.Record), withPass(trace.Record, 2)), func(e *trace.Event) { e.Counters = []trace.Counter{{Name: "G0a"}, {Name: "G0b"}} }), "AGT-1"},
		// SVC-3: the agent's family from the tool's query of the agents.
		{"counters and PC sampling share a pass on an MI300 agent", counterWithPCSampling(), "SVC-3"},
	}
	for _, c := range cases {
		t.Run(c.want+" "+c.reason, func(t *testing.T) {
			tr := blackBox(renumber(c.tr))
			var got []string
			for _, v := range Trace(tr) {
				if v.Rule == c.want {
					if v.Requires == "" || v.Message == "" || len(v.Events) == 0 {
						t.Errorf("violation lacks requirement, message or events:\n%s", v)
					}
					return
				}
				got = append(got, v.String())
			}
			t.Errorf("want a %s violation at the black-box profile, got %d others:\n%s", c.want, len(got), strings.Join(got, "\n"))
		})
	}
}

// allocatedSince: thread 2 allocates buf-new on the loop's agent after the
// loop's first pass began; the restore before pass 1 writes into it.
func allocatedSince(t trace.Trace) trace.Trace {
	t = insertAfter(t, passCB(trace.PhaseEnter, 0),
		trace.Event{Type: trace.AppAlloc, Thread: 2, Buffer: "buf-old", Agent: 1, MemKind: trace.MemHost, Addr: 1<<32 + 7<<16, Bytes: 16},
		trace.Event{Type: trace.AppAlloc, Thread: 2, Buffer: "buf-new", Agent: 1, MemKind: trace.MemDevice, Addr: 1<<32 + 8<<16, Bytes: 16})
	t = insertAfter(t, and(typ(trace.ToolMemory), func(e trace.Event) bool { return e.Phase == trace.PhaseExit && *e.Pass == 0 }),
		trace.Event{Type: trace.ToolMemory, Thread: 1, Dispatch: 1, Op: trace.OpPass, Phase: trace.PhaseExit, Pass: trace.U64(0), Buffer: "buf-new", Digest: trace.Digest(bufferAfter), Elements: 4})
	return insertAfter(t, and(typ(trace.ToolMemory), func(e trace.Event) bool { return e.Phase == trace.PhaseEnter && *e.Pass == 1 }),
		trace.Event{Type: trace.ToolMemory, Thread: 1, Dispatch: 1, Op: trace.OpPass, Phase: trace.PhaseEnter, Pass: trace.U64(1), Buffer: "buf-new", Digest: trace.Digest(bufferBefore), Elements: 4})
}

// counterWithPCSampling: an MI300 agent (as the tool's query lists it)
// with counter collection and PC sampling records in one pass.
func counterWithPCSampling() trace.Trace {
	b := &builder{seen: true}
	b.add(trace.Event{Type: trace.AgentInfo, Agent: 1, Family: trace.FamilyMI300})
	b.prelude()
	b.add(trace.Event{Type: trace.API, Call: trace.CallConfigureCounters, Context: 10, Status: "SUCCESS"})
	b.add(trace.Event{Type: trace.API, Call: trace.CallConfigurePCSampling, Context: 11, Status: "SUCCESS"})
	return b.dispatch(loop{label: "k", dispatch: 1, count: 2, services: []trace.Service{trace.CounterCollection}, agentPCS: true}).trace()
}

// The tool's copies go through the runtime like the SDK's snapshot does:
// a copy the tool takes inside CONFIG ENTER, between CONFIG ENTER and the
// first pass, is told from the snapshot by the tool_memory that follows
// its read, and the runtime profile's cross-checks hold; the same read
// with no tool_memory is a read the SDK did not report.
func TestToolCopiesAreNotTheSnapshot(t *testing.T) {
	fixed3 := seenLoop(loop{label: "k", dispatch: 1, count: 3})
	read := trace.Event{Type: trace.MemRead, Thread: 1, Agent: 1, Bytes: 16, Regions: []trace.Region{{Addr: 1<<32 + 1<<16, Bytes: 16}}}
	copied := trace.Event{Type: trace.ToolMemory, Thread: 1, Dispatch: 1, Op: trace.OpConfig, Phase: trace.PhaseEnter, Buffer: "buf-1", Digest: trace.Digest(bufferBefore), Elements: 4}
	withCopy := renumber(insertAfter(fixed3, configCB(trace.PhaseEnter), read, copied))
	for _, tr := range []trace.Trace{withCopy, runtimeProfile(withCopy)} {
		for _, v := range Trace(tr) {
			t.Errorf("a tool's copy in CONFIG ENTER taken for the snapshot:\n%s", v)
		}
	}
	silent := renumber(insertAfter(fixed3, configCB(trace.PhaseEnter), read))
	if !slices.Contains(rulesOf(Trace(silent)), "MEM-1") {
		t.Errorf("a read the SDK did not report, in the snapshot's stretch, went unnoticed: %v", rulesOf(Trace(silent)))
	}
}

// DID-1 at the black-box profile: a submission of two kernel packets is two
// logical dispatches, and a kernel trace started all along records both;
// one record the fewer shows a packet given no id.
func TestPacketsTracedAtBlackBox(t *testing.T) {
	traced := renumber(insertBefore(twoKernelPackets(), typ(trace.AppAlloc),
		trace.Event{Type: trace.API, Call: trace.CallConfigureKernelTrace, Context: 10, Status: "SUCCESS"}))
	got, vs := verdicts(blackBox(traced), "DID-1")
	if got["DID-1"] != Pass || len(vs) > 0 {
		t.Errorf("two kernel packets, both traced: DID-1 %s, violations %v", got["DID-1"], vs)
	}
	untraced := drop(traced, and(typ(trace.Record), dispatchIs(2)))
	if _, vs := verdicts(blackBox(renumber(untraced)), "DID-1"); !slices.Contains(rulesOf(vs), "DID-1") {
		t.Errorf("the second packet recorded nothing, yet DID-1 holds at the black-box profile (got %v)", rulesOf(vs))
	}
}
