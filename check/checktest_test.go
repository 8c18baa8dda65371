package check

import (
	"fmt"
	"maps"
	"slices"

	"github.com/replayspec/replayspec/trace"
)

// builder writes short hand-made traces: a valid replay loop or plain run
// in a line, mistakes planted afterwards with edit, drop and insert.
type builder struct {
	ev        []trace.Event
	clock     uint64
	allocated map[uint64]bool // agents whose buffer exists
	// seen adds what a black-box port records besides (docs/trace.md):
	// the buffers a dispatch takes, the tool's copies of every buffer at
	// PASS ENTER and EXIT (after the runtime's read of each), the
	// application's signal as the tool loads it in EXIT callbacks and as
	// the application loads it after its wait.
	seen  bool
	state map[string][]byte // what each buffer holds, when seen
}

// copyAll records the tool's copy of every buffer from inside the callback
// (phase, pass) of dispatch id on thread; own is the buffer the loop
// works on, holding held.
func (b *builder) copyAll(thread, id uint64, phase trace.Phase, p uint64, own string, held []byte) {
	for _, agent := range slices.Sorted(maps.Keys(b.allocated)) {
		buf, addr := fmt.Sprintf("buf-%d", agent), uint64(1<<32)+agent<<16
		data := b.state[buf]
		if buf == own {
			data = held
		}
		if data == nil {
			data = bufferBefore
		}
		b.add(trace.Event{Type: trace.MemRead, Thread: thread, Agent: agent, Bytes: uint64(len(data)), Regions: []trace.Region{{Addr: addr, Bytes: uint64(len(data))}}})
		b.add(trace.Event{Type: trace.ToolMemory, Thread: thread, Dispatch: id, Op: trace.OpPass, Phase: phase, Pass: trace.U64(p), Buffer: buf, Digest: trace.Digest(data), Elements: uint64(len(data) / 4)})
	}
}

func (b *builder) add(e trace.Event) *builder {
	b.clock += 10
	e.Seq = uint64(len(b.ev) + 1)
	if e.Time == 0 {
		e.Time = b.clock
	}
	b.ev = append(b.ev, e)
	return b
}

func (b *builder) trace() trace.Trace {
	return trace.Trace{Header: trace.Header{Trace: trace.Version, Spec: "hand-made", Sources: trace.AllSources}, Events: b.ev}
}

// prelude is the tool's setup: configure replay on context 1, start the
// replay context and the service contexts 10 and 11 (11 runs pc_sampling
// when a loop asks; a local stop of it must find it active, LCX-7).
func (b *builder) prelude() *builder {
	b.add(trace.Event{Type: trace.API, Call: trace.CallConfigureCallback, Context: 1, Status: "SUCCESS", Domain: trace.DomainKernelReplay})
	b.add(trace.Event{Type: trace.API, Call: trace.CallStartContext, Context: 1, Status: "SUCCESS"})
	b.add(trace.Event{Type: trace.API, Call: trace.CallStartContext, Context: 10, Status: "SUCCESS"})
	return b.add(trace.Event{Type: trace.API, Call: trace.CallStartContext, Context: 11, Status: "SUCCESS"})
}

// loop describes one application dispatch and what the tool answers.
type loop struct {
	label    string
	thread   uint64
	dispatch uint64
	agent    uint64
	count    int64   // replay_pass_count's answer; -1: not installed
	cont     []int64 // replay_continue's answers after passes 0, 1, ...; nil: not installed
	userData uint64
	services []trace.Service // dispatch-scoped services of context 10 (default kernel_trace)
	agentPCS bool            // context 11 runs pc_sampling
	locals   map[int][]trace.Event
}

func (l loop) withDefaults() loop {
	if l.thread == 0 {
		l.thread = 1
	}
	if l.agent == 0 {
		l.agent = 1
	}
	if l.services == nil {
		l.services = []trace.Service{trace.KernelTrace}
	}
	if l.userData == 0 {
		l.userData = 40 + l.dispatch
	}
	return l
}

// passes is how many passes the plan runs.
func (l loop) passes() int {
	switch {
	case l.count == 0 && l.cont == nil, l.count == 1, l.count < 0:
		return 0
	}
	n := 0
	for {
		n++
		if l.count > 1 && n == int(l.count) {
			return n
		}
		if l.count > 1 && l.cont != nil && n-1 < len(l.cont) && l.cont[n-1] == 0 {
			return n
		}
		if l.count == 0 && (n >= len(l.cont) || l.cont[n-1] == 0) {
			return n
		}
	}
}

var passFlags = func(p int) []string {
	f := []string{trace.MemberSize, trace.MemberDispatchInfo}
	if p > 0 {
		f = append(f, trace.MemberCurrentPass)
	}
	return append(f, trace.MemberTotalPasses, trace.MemberReplayStartContext, trace.MemberReplayStopContext)
}

// dispatch emits the whole life of one application dispatch.
func (b *builder) dispatch(l loop) *builder {
	l = l.withDefaults()
	sig := 500 + l.dispatch
	corr := &trace.Corr{Internal: 100 + l.dispatch, Ancestor: 7}
	ud := func(v uint64) *uint64 { return trace.U64(v) }
	at := trace.Event{Thread: l.thread, Dispatch: l.dispatch, Agent: l.agent}
	with := func(e trace.Event) trace.Event {
		e.Thread, e.Dispatch, e.Agent = at.Thread, at.Dispatch, at.Agent
		return e
	}
	// One buffer per agent, allocated before its first dispatch.
	buf, addr := fmt.Sprintf("buf-%d", l.agent), uint64(1<<32)+l.agent<<16
	if b.allocated == nil {
		b.allocated = map[uint64]bool{}
	}
	if !b.allocated[l.agent] {
		b.allocated[l.agent] = true
		b.add(trace.Event{Type: trace.AppAlloc, Thread: l.thread, Buffer: buf, Agent: l.agent, MemKind: trace.MemDevice, Addr: addr, Bytes: uint64(len(bufferBefore))})
	}
	grid, wg := trace.Dim3{256, 1, 1}, trace.Dim3{64, 1, 1}
	app := trace.Event{Type: trace.AppDispatch, Thread: l.thread, Label: l.label, Kernel: "increment", Agent: l.agent, Signal: sig, Packets: 1, Grid: &grid, Workgroup: &wg}
	if b.seen {
		app.Args = []string{buf}
		if b.state == nil {
			b.state = map[string][]byte{}
		}
	}
	start := b.state[buf]
	if start == nil {
		start = bufferBefore
	}
	b.add(app)
	b.add(with(trace.Event{Type: trace.DispatchID, Kernel: "increment"}))
	// cb is a callback as the tool received it, ret what it left when it
	// returned.
	cb := func(e trace.Event) {
		e.Type, e.Context, e.Corr = trace.Callback, 1, corr
		e.PayloadSize = trace.U64(trace.PayloadSize)
		e.Info = &trace.DispatchInfo{Size: trace.DispatchInfoSize, KernelID: 1, Grid: grid, Workgroup: wg}
		b.add(with(e))
	}
	ret := func(op trace.Op, phase trace.Phase, pass, userData uint64, payload []string) {
		b.add(with(trace.Event{Type: trace.Returned, Context: 1, Op: op, Phase: phase, Pass: trace.U64(pass), UserData: ud(userData), Payload: payload}))
	}
	configFlags := []string{trace.MemberSize, trace.MemberDispatchInfo}
	cb(trace.Event{Op: trace.OpConfig, Phase: trace.PhaseEnter, Pass: trace.U64(0), Total: trace.U64(0), UserData: ud(0), Payload: configFlags})
	set := slices.Clone(configFlags)
	if l.count >= 0 {
		set = append(set, trace.MemberReplayPassCount)
	}
	if l.cont != nil {
		set = append(set, trace.MemberReplayContinue)
	}
	ret(trace.OpConfig, trace.PhaseEnter, 0, l.userData, set)
	n := l.passes()
	total := uint64(0)
	if l.count > 1 {
		total = uint64(l.count)
	}
	if l.count >= 0 {
		b.add(with(trace.Event{Type: trace.PassCount, UserData: ud(l.userData), Result: trace.I64(l.count)}))
		if l.count == 0 && l.cont == nil {
			b.add(trace.Event{Type: trace.Warning, Code: trace.WarnPassCountZeroWithoutContinue, Dispatch: l.dispatch, Message: "replay_pass_count returned 0 without replay_continue"})
		}
	}
	run := func(p int, signal uint64) {
		ext := uint64(900 + 10*l.dispatch + uint64(p))
		b.add(with(trace.Event{Type: trace.Correlation, Result: trace.I64(int64(ext))}))
		start := b.clock + 1
		b.add(with(trace.Event{Type: trace.Kernel, Kernel: "increment", Start: start, End: start + 5, Signal: signal, MemIn: trace.Digest(bufferBefore), MemOut: trace.Digest(bufferAfter)}))
		var pass *uint64
		if signal == 0 {
			pass = trace.U64(uint64(p))
		}
		rc := &trace.Corr{Internal: corr.Internal, External: ext, Ancestor: corr.Ancestor}
		for k, s := range l.services {
			rec := with(trace.Event{Type: trace.Record, Service: s, Context: 10, Kernel: "increment", Corr: rc, Start: start + uint64(k), End: start + 5, Pass: pass})
			if s == trace.CounterCollection {
				rec.Counters = []trace.Counter{{Name: fmt.Sprintf("G%da", p), Value: 1}, {Name: fmt.Sprintf("G%db", p), Value: 2}}
			}
			b.add(rec)
		}
		if l.agentPCS {
			b.add(with(trace.Event{Type: trace.Record, Service: trace.PCSampling, Context: 11, Corr: rc, Pass: pass}))
		}
	}
	if n == 0 {
		cb(trace.Event{Op: trace.OpConfig, Phase: trace.PhaseExit, Pass: trace.U64(0), Total: trace.U64(0), UserData: ud(l.userData), Payload: set})
		ret(trace.OpConfig, trace.PhaseExit, 0, l.userData, set)
		run(0, sig)
	} else {
		saved := []trace.Region{{Addr: addr, Bytes: uint64(len(bufferBefore))}}
		b.add(with(trace.Event{Type: trace.MemRead, Bytes: saved[0].Bytes, Regions: saved}))
		b.add(with(trace.Event{Type: trace.Snapshot, Bytes: saved[0].Bytes, Regions: saved}))
		for p := 0; p < n; p++ {
			if p > 0 {
				b.add(with(trace.Event{Type: trace.MemWrite, Bytes: saved[0].Bytes, Regions: saved}))
				b.add(with(trace.Event{Type: trace.Restore, Pass: trace.U64(uint64(p)), Bytes: saved[0].Bytes, Regions: saved}))
			}
			cb(trace.Event{Op: trace.OpPass, Phase: trace.PhaseEnter, Pass: trace.U64(uint64(p)), Total: trace.U64(total), UserData: ud(l.userData), Payload: passFlags(p)})
			for _, e := range l.locals[p] {
				e.Type, e.Op, e.Phase, e.Pass = trace.Local, trace.OpPass, trace.PhaseEnter, trace.U64(uint64(p))
				if e.Status == "" {
					e.Status = "SUCCESS"
				}
				b.add(with(e))
			}
			if b.seen {
				b.copyAll(l.thread, l.dispatch, trace.PhaseEnter, uint64(p), buf, start)
			}
			ret(trace.OpPass, trace.PhaseEnter, uint64(p), l.userData, passFlags(p))
			run(p, 0)
			cb(trace.Event{Op: trace.OpPass, Phase: trace.PhaseExit, Pass: trace.U64(uint64(p)), Total: trace.U64(total), UserData: ud(l.userData), Payload: passFlags(p)})
			if b.seen {
				b.copyAll(l.thread, l.dispatch, trace.PhaseExit, uint64(p), buf, bufferAfter)
				b.add(with(trace.Event{Type: trace.ToolSignal, Op: trace.OpPass, Phase: trace.PhaseExit, Pass: trace.U64(uint64(p)), Signal: sig, Value: trace.I64(1), Agent: 0}))
			}
			ret(trace.OpPass, trace.PhaseExit, uint64(p), l.userData, passFlags(p))
			if l.cont != nil && !(l.count > 1 && p == int(l.count)-1) {
				b.add(with(trace.Event{Type: trace.Continue, Pass: trace.U64(uint64(p)), Total: trace.U64(total), UserData: ud(l.userData), Result: trace.I64(l.cont[p])}))
			}
		}
		cb(trace.Event{Op: trace.OpConfig, Phase: trace.PhaseExit, Pass: trace.U64(0), Total: trace.U64(0), UserData: ud(l.userData), Payload: set})
		if b.seen {
			b.add(with(trace.Event{Type: trace.ToolSignal, Op: trace.OpConfig, Phase: trace.PhaseExit, Signal: sig, Value: trace.I64(1), Agent: 0}))
		}
		ret(trace.OpConfig, trace.PhaseExit, 0, l.userData, set)
	}
	b.add(trace.Event{Type: trace.Signal, Thread: l.thread, Signal: sig, Value: trace.I64(0)})
	b.add(trace.Event{Type: trace.AppComplete, Thread: l.thread, Label: l.label, Signal: sig})
	if b.seen {
		b.add(trace.Event{Type: trace.AppSignal, Thread: l.thread, Label: l.label, Signal: sig, Value: trace.I64(0)})
		b.state[buf] = bufferAfter
	}
	return b.add(trace.Event{Type: trace.AppReadback, Thread: l.thread, Label: l.label, Buffer: buf,
		Digest: trace.Digest(bufferAfter), Elements: 4, Runs: trace.RunsOf(bufferAfter)})
}

// Every hand-made dispatch increments a buffer of four elements, 0 to 1.
var (
	bufferBefore = make([]byte, 16)
	bufferAfter  = []byte{1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}
)

// Matching and planting mistakes.

type match func(e trace.Event) bool

func typ(t trace.Type) match { return func(e trace.Event) bool { return e.Type == t } }

func passCB(phase trace.Phase, p uint64) match {
	return func(e trace.Event) bool {
		q, ok := e.PassOf()
		return e.Type == trace.Callback && e.Op == trace.OpPass && e.Phase == phase && ok && q == p
	}
}

func configCB(phase trace.Phase) match {
	return func(e trace.Event) bool {
		return e.Type == trace.Callback && e.Op == trace.OpConfig && e.Phase == phase
	}
}

func withPass(t trace.Type, p uint64) match {
	return func(e trace.Event) bool { q, ok := e.PassOf(); return e.Type == t && ok && q == p }
}

// inPass matches events of type t between PASS ENTER p and its EXIT.
func inPass(tr trace.Trace, t trace.Type, p uint64) match {
	open := false
	set := map[uint64]bool{}
	for _, e := range tr.Events {
		switch {
		case passCB(trace.PhaseEnter, p)(e):
			open = true
		case passCB(trace.PhaseExit, p)(e):
			open = false
		case open && e.Type == t:
			set[e.Seq] = true
		}
	}
	return func(e trace.Event) bool { return set[e.Seq] }
}

func and(ms ...match) match {
	return func(e trace.Event) bool {
		for _, m := range ms {
			if !m(e) {
				return false
			}
		}
		return true
	}
}

// nth matches the n-th event (1-based) that m matches.
func nth(m match, n int) match {
	seen := 0
	return func(e trace.Event) bool {
		if m(e) {
			seen++
			return seen == n
		}
		return false
	}
}

func dispatchIs(d uint64) match { return func(e trace.Event) bool { return e.Dispatch == d } }

func edit(t trace.Trace, m match, f func(e *trace.Event)) trace.Trace {
	out := clone(t)
	for i := range out.Events {
		if m(out.Events[i]) {
			f(&out.Events[i])
		}
	}
	return out
}

func drop(t trace.Trace, m match) trace.Trace {
	out := clone(t)
	out.Events = out.Events[:0]
	for _, e := range t.Events {
		if !m(e) {
			out.Events = append(out.Events, e)
		}
	}
	return out
}

// insertAfter puts es after the last event that matches (or at the end).
func insertAfter(t trace.Trace, m match, es ...trace.Event) trace.Trace {
	out := clone(t)
	at := len(out.Events)
	for i, e := range out.Events {
		if m(e) {
			at = i + 1
		}
	}
	out.Events = append(out.Events[:at], append(es, out.Events[at:]...)...)
	return out
}

// insertBefore puts es before the first event that matches.
func insertBefore(t trace.Trace, m match, es ...trace.Event) trace.Trace {
	out := clone(t)
	for i, e := range out.Events {
		if m(e) {
			out.Events = append(out.Events[:i], append(es, out.Events[i:]...)...)
			return out
		}
	}
	return out
}

func clone(t trace.Trace) trace.Trace {
	return trace.Trace{Header: t.Header, Events: append([]trace.Event(nil), t.Events...)}
}

// renumber gives events their positions as seq after planting.
func renumber(t trace.Trace) trace.Trace {
	for i := range t.Events {
		t.Events[i].Seq = uint64(i + 1)
	}
	return t
}
