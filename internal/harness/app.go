package harness

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

// Hooks connect the application to the tool that profiles it: the tool
// learns which thread is which, what each thread is submitting, and says
// which pass a dispatch is in (for dispatches that start "during" one).
type Hooks interface {
	ThreadStarted(thread hsa.ThreadID)
	Submitting(thread hsa.ThreadID, dispatch string)
	InPass(dispatch string) (pass uint64, ok bool)
	Completed(thread hsa.ThreadID, dispatch string)
}

// RunApplication plays s's application (buffers, queues, threads and
// dispatches) on rt under sdk, recording what the application observes,
// and returns once every thread is done. Agents of rt are matched to the
// spec's agents in order. Any tool, the spec's own or rocprofv3's, drives
// it through hooks.
func RunApplication(rt hsa.Runtime, th Threads, sdk *replay.SDK, rec *trace.Recorder, s spec.Spec, hooks Hooks) error {
	return runApplication(context.Background(), rt, th, sdk, rec, s, hooks)
}

// runApplication is RunApplication that stops starting dispatches once ctx
// is done (the run's time is up, or it was interrupted).
func runApplication(ctx context.Context, rt hsa.Runtime, th Threads, sdk *replay.SDK, rec *trace.Recorder, s spec.Spec, hooks Hooks) error {
	agents := rt.Agents()
	if len(agents) < len(s.Agents) {
		return fmt.Errorf("the spec needs %d agents; the runtime has %d", len(s.Agents), len(agents))
	}
	a := &app{ctx: ctx, rt: rt, sdk: sdk, hooks: hooks, rec: rec, s: s, th: th,
		agents: map[string]hsa.AgentID{}, buffers: map[string]hsa.Allocation{},
		queues: map[string]hsa.Queue{}, completed: map[string]bool{}, freed: map[string]bool{}, toolMemory: map[string]bool{},
		signals: map[hsa.ThreadID]hsa.Signal{}, diedIn: map[hsa.ThreadID]bool{}}
	a.read.mapper, _ = rt.(hsa.Mapper) // asked once, not at every copy
	a.read.digester, _ = rt.(digestReader)
	for i, ag := range s.Agents {
		a.agents[ag.Name] = agents[i].ID
	}
	if t, ok := hooks.(toolWithApp); ok {
		t.attach(a)
	}
	for _, b := range s.Application.Buffers {
		if b.AllocAfter == "" && !b.ByTool {
			if err := a.allocate(0, b); err != nil {
				return err
			}
		}
	}
	// Each thread's dispatches as places in the spec's list: a copy of
	// each cost a dispatch's size again (a spec of a million dispatches).
	byThread := map[hsa.ThreadID][]int{}
	for i, d := range s.Application.Dispatches {
		if d.ByTool {
			continue // the tool writes it from a callback
		}
		byThread[hsa.ThreadID(d.Thread)] = append(byThread[hsa.ThreadID(d.Thread)], i)
	}
	ids := make([]hsa.ThreadID, 0, len(byThread))
	for id := range byThread {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		if err := th.Go(id, func() { a.runThread(id, s.Application.Dispatches, byThread[id]) }); err != nil {
			return err
		}
	}
	waitErr := th.Wait()
	if a.aborted() {
		// The process died at the failed restore: nothing reads memory
		// back, and the caller learns why.
		return errors.Join(a.abort, waitErr)
	}
	a.readBack()
	a.mu.Lock()
	defer a.mu.Unlock()
	return errors.Join(append(a.errs, waitErr)...)
}

// toolWithApp is a tool that writes dispatches of its own from inside its
// callbacks, through the application's queues and buffers.
type toolWithApp interface{ attach(a *app) }

// app is one run of an application.
type app struct {
	ctx   context.Context
	rt    hsa.Runtime
	sdk   *replay.SDK
	hooks Hooks
	rec   *trace.Recorder
	s     spec.Spec
	th    Threads

	agents  map[string]hsa.AgentID
	buffers map[string]hsa.Allocation

	// memMu makes each allocation and free one step with its event, and
	// the tool's copies of the live buffers another: under free threads a
	// freed buffer's address can go to the next allocation at once, and
	// the trace must never show the new buffer before the old one's free,
	// nor a copy of the old one that read the new.
	memMu sync.RWMutex

	mu        sync.Mutex
	queues    map[string]hsa.Queue
	completed map[string]bool
	freed     map[string]bool
	// toolMemory: the tool's frees and allocations done ("free/NAME").
	toolMemory map[string]bool
	// signals are the completion signals of the dispatches the threads
	// are submitting, which the application hands its tool (CMP-2).
	signals map[hsa.ThreadID]hsa.Signal
	errs    []error
	abort   error // the failed restore that ended the process (MEM-5)
	// diedIn are the threads on which the process died inside a replay
	// callback (a nested window's restore failed): it never returns.
	diedIn map[hsa.ThreadID]bool
	// died is set once any thread has died in a callback (diedIn): until
	// then, the check after every callback takes no lock.
	died atomic.Bool
	// live is liveBuffers' answer, never changed once stored, and made
	// again only after an allocation or a free dropped it (nil): the tool
	// asks at every PASS ENTER and EXIT, and memory seldom changes
	// between. Dropped under mu, so that an answer made under mu is never
	// older than the buffers and frees.
	live atomic.Pointer[[]liveBuffer]

	// read is digestOf's one reader of whole buffers, made once: a closure
	// made per copy escaped to the heap with what it wrote (four
	// allocations a pass).
	read wholeRead
}

// diedInCallback reports whether the process died inside a replay callback
// running on thread.
func (a *app) diedInCallback(thread hsa.ThreadID) bool {
	if !a.died.Load() {
		return false // a thread's own death is stored by that thread, before it asks
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.diedIn[thread]
}

// aborted reports whether the process has died (a restore failed part-way).
func (a *app) aborted() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.abort != nil
}

func (a *app) buffer(name string) hsa.Allocation {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.buffers[name]
}

func (a *app) fail(err error) {
	a.mu.Lock()
	a.errs = append(a.errs, err)
	a.mu.Unlock()
}

// allocate makes and fills one buffer, on thread (0: while setting up).
// A runtime with hsa.AllocHook records the allocation and its fill as it
// makes it, before another thread's snapshot or copy can see it.
func (a *app) allocate(thread hsa.ThreadID, b spec.Buffer) error {
	kind, ok := hsa.ParseMemoryKind(b.Kind)
	if !ok {
		return fmt.Errorf("buffer %s: unknown kind %q", b.Name, b.Kind)
	}
	fill := func(data []byte) {
		for i := uint64(0); i < b.Elements; i++ {
			v := b.Fill
			if i < uint64(len(b.Values)) {
				v = b.Values[i]
			} else if len(b.Values) > 0 {
				v = 0
			}
			binary.LittleEndian.PutUint32(data[i*4:], uint32(int32(v)))
		}
	}
	made := func(al hsa.Allocation) {
		a.rec.EmitRef(&trace.Event{Type: trace.AppAlloc, Thread: uint64(thread), Buffer: b.Name, Agent: uint64(al.Agent),
			MemKind: memKindOf(kind), Addr: al.Handle, Bytes: al.Size})
	}
	a.memMu.Lock()
	defer a.memMu.Unlock()
	var al hsa.Allocation
	var err error
	if h, ok := a.rt.(hsa.AllocHook); ok {
		al, err = h.AllocateWith(a.agents[b.Agent], kind, b.Elements*4, func(al hsa.Allocation, data []byte) {
			made(al)
			fill(data)
		})
	} else if al, err = a.rt.Allocate(a.agents[b.Agent], kind, b.Elements*4); err == nil {
		made(al)
		if m, ok := a.rt.(hsa.Mapper); ok {
			err = m.WriteWith(al, fill) // in place: no host copy of the buffer's size
		} else {
			data := make([]byte, b.Elements*4)
			fill(data)
			err = a.rt.Write(al, 0, data)
		}
	}
	if err != nil {
		return fmt.Errorf("buffer %s: %w", b.Name, err)
	}
	a.mu.Lock()
	a.buffers[b.Name] = al
	a.live.Store(nil)
	a.mu.Unlock()
	return nil
}

func (a *app) queue(agent, name string) (hsa.Queue, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	key := agent + "/" + name
	if q, ok := a.queues[key]; ok {
		return q, nil
	}
	q, err := a.rt.CreateQueue(a.agents[agent])
	if err != nil {
		return nil, err
	}
	a.sdk.Intercept(q)
	a.queues[key] = q
	return q, nil
}

// runThread runs one thread's dispatches in order. A repeated dispatch
// (spec.Dispatch.Repeat) is submitted once per repetition, each labelled
// as spec.RepetitionLabel says, made here one at a time: the spec never
// holds them.
func (a *app) runThread(id hsa.ThreadID, all []spec.Dispatch, mine []int) {
	a.hooks.ThreadStarted(id)
	for _, k := range mine {
		d := all[k]
		if d.Repeat == 0 {
			if !a.runOne(id, d, false) {
				return
			}
			continue
		}
		// The repetitions wait, as one, for what d waits for (after:
		// only, spec: validate): before the first, and once.
		if !a.waitToStart(id, d) {
			if !a.aborted() {
				a.fail(fmt.Errorf("dispatch %s: what it waits for never happened", d.Name))
			}
			continue
		}
		one := d
		one.After = ""
		for r := range d.Repeat {
			one.Name = spec.RepetitionLabel(d.Name, r)
			if !a.runOne(id, one, true) {
				return
			}
		}
	}
}

// runOne runs one dispatch of thread id, a repetition when repetition is
// set; false when the thread must stop (its time is up, or the process
// died).
func (a *app) runOne(id hsa.ThreadID, d spec.Dispatch, repetition bool) bool {
	if err := a.ctx.Err(); err != nil {
		a.fail(fmt.Errorf("dispatch %s not started: %w", d.Name, err))
		return false
	}
	if !a.waitToStart(id, d) {
		if !a.aborted() {
			a.fail(fmt.Errorf("dispatch %s: what it waits for never happened", d.Name))
		}
		return true
	}
	if a.aborted() {
		return false // the process is gone
	}
	err := a.dispatch(id, d)
	if errors.Is(err, replay.ErrRestoreFailed) {
		a.mu.Lock()
		a.abort = fmt.Errorf("dispatch %s: %w", d.Name, err)
		a.mu.Unlock()
		return false
	}
	if err != nil {
		a.fail(fmt.Errorf("dispatch %s: %w", d.Name, err))
	}
	// What the spec ties to the end of d happens before a dispatch
	// waiting for d may start: under free threads that dispatch would
	// otherwise run before these frees, allocations and global stops
	// (docs/decisions.md 18.5).
	a.freeAfter(id, d.Name)
	a.allocAfter(id, d.Name)
	a.hooks.Completed(id, d.Name)
	if !repetition { // nothing waits for a repetition (spec: validate): no memory of each
		a.mu.Lock()
		a.completed[d.Name] = true
		a.mu.Unlock()
	}
	return true
}

// allocAfter makes the buffers the spec allocates once this dispatch has
// completed (after its frees, so a runtime may hand their memory on).
func (a *app) allocAfter(thread hsa.ThreadID, name string) {
	for _, b := range a.s.Application.Buffers {
		if b.AllocAfter == name {
			if err := a.allocate(thread, b); err != nil {
				a.fail(err)
			}
		}
	}
}

func (a *app) waitToStart(id hsa.ThreadID, d spec.Dispatch) bool {
	switch {
	case d.After != "":
		return a.th.WaitUntil(id, func() bool {
			a.mu.Lock()
			defer a.mu.Unlock()
			return a.completed[d.After] || a.abort != nil
		})
	case d.During != nil:
		w := d.During
		return a.th.WaitUntil(id, func() bool {
			p, ok := a.hooks.InPass(w.Dispatch)
			return ok && p == w.Pass || a.aborted()
		})
	}
	return true
}

// packets builds d's submission: its kernel packets (the last one carries
// the completion signal), then barriers up to d.Packets.
func (a *app) packets(d spec.Dispatch, sig hsa.Signal) []hsa.Packet {
	pk := hsa.Packet{Type: hsa.KernelDispatchPacket, Kernel: d.Kernel, Grid: hsa.Dim3{X: d.Grid, Y: 1, Z: 1},
		Workgroup: hsa.Dim3{X: d.Workgroup, Y: 1, Z: 1}, FromGraph: d.Graph}
	for _, name := range d.Args {
		b := a.buffer(name)
		pk.Args = append(pk.Args, hsa.Arg{Buffer: &b})
	}
	if k, ok := spec.LookupKernel(d.Kernel); ok && k.Scalar {
		pk.Args = append(pk.Args, hsa.Arg{Scalar: d.Scalar})
	}
	kernels := max(d.KernelPackets, 1)
	var out []hsa.Packet
	for i := range kernels {
		p := pk
		if i == kernels-1 {
			p.Completion = sig
		}
		if i > 0 && d.BarriersBetween {
			out = append(out, hsa.Packet{Type: hsa.BarrierPacket})
		}
		out = append(out, p)
	}
	for len(out) < d.Packets {
		out = append(out, hsa.Packet{Type: hsa.BarrierPacket})
	}
	return out
}

func (a *app) dispatch(id hsa.ThreadID, d spec.Dispatch) error {
	q, err := a.queue(d.Agent, d.Queue)
	if err != nil {
		return err
	}
	sig := a.rt.CreateSignal(1)
	packets := a.packets(d, sig)
	pk := packets[0]
	a.hooks.Submitting(id, d.Name)
	e := trace.Event{Type: trace.AppDispatch, Thread: uint64(id), Label: d.Name, Kernel: d.Kernel,
		Agent: uint64(q.Agent()), Queue: uint64(q.ID()), Signal: uint64(sig.ID()), Packets: len(packets),
		Graph: d.Graph, Grid: &trace.Dim3{pk.Grid.X, pk.Grid.Y, pk.Grid.Z},
		Workgroup: &trace.Dim3{pk.Workgroup.X, pk.Workgroup.Y, pk.Workgroup.Z}, Args: d.Args}
	if d.KernelPackets > 1 {
		e.KernelPackets = d.KernelPackets
	}
	a.rec.EmitRef(&e)

	a.mu.Lock()
	a.signals[id] = sig
	a.mu.Unlock()
	err = a.launch(id, d.Graph, func() error { return q.Submit(id, packets...) })
	a.mu.Lock()
	delete(a.signals, id)
	a.mu.Unlock()
	switch {
	case errors.Is(err, replay.ErrNeverEnded):
		// CMP-4: the application would block here for ever.
		a.rec.EmitRef(&trace.Event{Type: trace.AppTimeout, Thread: uint64(id), Label: d.Name, Signal: uint64(sig.ID())})
		a.loadSignal(id, d.Name, sig)
		return nil
	case err != nil:
		return err
	}
	if !sig.WaitBelow(1) {
		a.rec.EmitRef(&trace.Event{Type: trace.AppTimeout, Thread: uint64(id), Label: d.Name, Signal: uint64(sig.ID())})
		a.loadSignal(id, d.Name, sig)
		return nil
	}
	a.rec.EmitRef(&trace.Event{Type: trace.AppComplete, Thread: uint64(id), Label: d.Name, Signal: uint64(sig.ID())})
	a.loadSignal(id, d.Name, sig)
	// The application reads each of the dispatch's buffers back, whole
	// (MEM-3, and expect.memory after a dispatch).
	seen := map[string]bool{}
	for _, name := range d.Args {
		if seen[name] {
			continue
		}
		seen[name] = true
		if err := a.readEvent(trace.AppReadback, name, a.buffer(name), func(e *trace.Event) {
			e.Thread, e.Label = uint64(id), d.Name
		}); err != nil {
			return err
		}
	}
	return nil
}

// loadSignal records the value the application loads from its completion
// signal once its wait returned or gave up. The signal starts at 1 and one
// completion takes it to 0: another value shows a completion written more
// than once (CMP-1), or one written for a loop that never ended (CMP-4).
func (a *app) loadSignal(thread hsa.ThreadID, label string, sig hsa.Signal) {
	a.rec.EmitRef(&trace.Event{Type: trace.AppSignal, Thread: uint64(thread), Label: label, Signal: uint64(sig.ID()),
		Value: trace.I64(sig.Value())})
}

// launch makes the launch call around submit, the queue submission the
// SDK intercepts: two nested API calls, so a dispatch's internal
// correlation id is the submission's and its ancestor the launch's (COR-1).
// Inside the launch, before it submits, the thread yields where the
// threads take turns (Yielder): another thread's calls then interleave
// with this one's, as they may on a machine (decision 20.3.2).
func (a *app) launch(thread hsa.ThreadID, graph bool, submit func() error) error {
	call := trace.CallLaunchKernel
	if graph {
		call = trace.CallGraphLaunch
	}
	a.sdk.EnterAPI(thread, call)
	if y, ok := a.th.(Yielder); ok {
		y.Yield(thread)
	}
	a.sdk.EnterAPI(thread, trace.CallQueueSubmit)
	err := submit()
	if errors.Is(err, replay.ErrRestoreFailed) {
		return err // the process died inside the calls: they never return
	}
	a.sdk.ExitAPI(thread, trace.CallQueueSubmit)
	a.sdk.ExitAPI(thread, call)
	return err
}

// readEvent reads b whole, as the application does, and records it as an
// event of type typ (more fills in the rest). Where the runtime maps its
// memory (hsa.Mapper) the bytes are read in place, so reading a large
// buffer back after every dispatch makes no copy of it.
func (a *app) readEvent(typ trace.Type, name string, b hsa.Allocation, more func(*trace.Event)) error {
	if m, ok := a.rt.(hsa.Mapper); ok {
		var e trace.Event
		if err := m.ReadWith(b, func(src []byte, digest string) {
			e = contentsEvent(typ, name, src, digest, more)
		}); err != nil {
			return err
		}
		a.rec.Emit(e)
		return nil
	}
	data := make([]byte, b.Size)
	if err := a.rt.Read(b, 0, data); err != nil {
		return err
	}
	a.rec.Emit(contentsEvent(typ, name, data, "", more))
	return nil
}

// contentsEvent is an event that carries a buffer whole: its digest (given,
// else computed), its element count and its elements run-length encoded.
func contentsEvent(typ trace.Type, buffer string, data []byte, digest string, more func(*trace.Event)) trace.Event {
	if digest == "" {
		digest = trace.Digest(data)
	}
	e := trace.Event{Type: typ, Buffer: buffer, Digest: digest, Elements: uint64(len(data) / 4), Runs: trace.RunsOf(data)}
	if more != nil {
		more(&e)
	}
	return e
}

// memKindOf names an allocation kind as traces do.
func memKindOf(k hsa.MemoryKind) trace.MemKind {
	switch k {
	case hsa.DeviceFine:
		return trace.MemFine
	case hsa.Host:
		return trace.MemHost
	case hsa.KernArg:
		return trace.MemKernArg
	}
	return trace.MemDevice
}

// freeAfter frees the buffers the spec ties to the end of this dispatch.
func (a *app) freeAfter(thread hsa.ThreadID, name string) {
	for _, b := range a.s.Application.Buffers {
		if b.FreeAfter == name {
			a.free(thread, b.Name)
		}
	}
}

// free frees buffer name on thread, recording it.
func (a *app) free(thread hsa.ThreadID, name string) {
	al := a.buffer(name)
	a.memMu.Lock()
	defer a.memMu.Unlock()
	freed := func() {
		a.rec.EmitRef(&trace.Event{Type: trace.AppFree, Thread: uint64(thread), Buffer: name, Addr: al.Handle})
	}
	var err error
	if h, ok := a.rt.(hsa.AllocHook); ok {
		// Recorded as the block is let go: the address may go to another
		// thread's allocation the moment after.
		if err = h.FreeWith(al, freed); err != nil {
			freed()
		}
	} else {
		err = a.rt.Free(al)
		freed()
	}
	if err != nil {
		a.fail(fmt.Errorf("free %s: %w", name, err))
	}
	a.mu.Lock()
	a.freed[name] = true
	a.live.Store(nil)
	a.mu.Unlock()
}

// memoryFromTool frees a buffer, or allocates a by_tool one, for the tool
// from inside a replay callback on thread: memory that comes and goes
// while a loop runs (MEM-4). Each buffer once in a run: a plan's action
// fires in every dispatch that follows the plan.
func (a *app) memoryFromTool(thread hsa.ThreadID, call, name string) {
	a.mu.Lock()
	key := call + "/" + name
	done := a.toolMemory[key]
	a.toolMemory[key] = true
	a.mu.Unlock()
	if done {
		return
	}
	if call == spec.ActionFree {
		a.free(thread, name)
		return
	}
	for _, b := range a.s.Application.Buffers {
		if b.Name == name {
			if err := a.allocate(thread, b); err != nil {
				a.fail(err)
			}
		}
	}
}

// readBack reads every live buffer at the end of the run.
func (a *app) readBack() {
	for _, b := range a.s.Application.Buffers {
		a.mu.Lock()
		al, live := a.buffers[b.Name]
		live = live && !a.freed[b.Name]
		a.mu.Unlock()
		if !live {
			continue
		}
		if err := a.readEvent(trace.AppMemory, b.Name, al, nil); err != nil {
			a.fail(fmt.Errorf("read %s: %w", b.Name, err))
		}
	}
}

// submitFromTool writes d, a dispatch of the tool's own, from inside the
// replay callback "from" on thread, and waits for it: the application's
// queue and buffers, the tool's hands. Its events are bracketed by
// tool_dispatch and tool_complete. It is a candidate like any other (MEM-6,
// clarified 2026-12-01): the tool answers its CONFIG with d's own plan, or
// the tool's, and may see a window of its own nested in the one it was
// written from.
func (a *app) submitFromTool(thread hsa.ThreadID, d spec.Dispatch, from *window) error {
	q, err := a.queue(d.Agent, d.Queue)
	if err != nil {
		return err
	}
	sig := a.rt.CreateSignal(1)
	packets := a.packets(d, sig)
	a.rec.EmitRef(&trace.Event{Type: trace.ToolDispatch, Thread: uint64(thread), Label: d.Name, Kernel: d.Kernel,
		Agent: uint64(q.Agent()), Queue: uint64(q.ID()), Signal: uint64(sig.ID()), Args: d.Args,
		Op: from.op, Phase: from.phase, Pass: from.pass, Dispatch: from.dispatch})
	// The tool knows its own dispatch's signal: the callbacks of its window
	// load that one, and the outer dispatch's comes back after.
	a.mu.Lock()
	outer, had := a.signals[thread]
	a.signals[thread] = sig
	a.mu.Unlock()
	err = a.launch(thread, d.Graph, func() error { return q.Submit(thread, packets...) })
	a.mu.Lock()
	if had {
		a.signals[thread] = outer
	} else {
		delete(a.signals, thread)
	}
	a.mu.Unlock()
	switch {
	case errors.Is(err, replay.ErrNeverEnded):
		// CMP-4: its own loop never ends, and the tool would wait here
		// for ever; it gives up as the application does (no tool_complete).
		return nil
	case errors.Is(err, replay.ErrRestoreFailed):
		a.mu.Lock()
		a.abort = fmt.Errorf("the tool's dispatch %s: %w", d.Name, err)
		a.diedIn[thread] = true
		a.died.Store(true)
		a.mu.Unlock()
		return nil // the process is gone (MEM-5), inside the callback that wrote it
	case err != nil:
		return err
	}
	if !sig.WaitBelow(1) {
		return fmt.Errorf("the tool's dispatch %s never completed", d.Name)
	}
	a.rec.EmitRef(&trace.Event{Type: trace.ToolComplete, Thread: uint64(thread), Label: d.Name, Signal: uint64(sig.ID())})
	return nil
}
