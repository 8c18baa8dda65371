package harness

import (
	"sync"
	"sync/atomic"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

// tool plays the spec's tool: it configures contexts, answers the replay
// callbacks as the plan says, and records everything it observes.
type tool struct {
	sdk *replay.SDK
	rec *trace.Recorder
	s   spec.Spec
	rt  hsa.Runtime
	th  Threads

	ctxByName map[string]replay.ContextID
	counterCx []string // contexts with counter_collection, in spec order

	app *app // the application, for the tool's own dispatches

	// The spec's dispatches by name, their own plans, and the dispatches
	// that start during a pass of each: looked up on every callback, so
	// found by map, not by a walk of the spec.
	byName map[string]*spec.Dispatch // into the spec's own list: a copy each cost a dispatch's size again
	plans  map[string]*spec.Plan     // copies, made once: planFor hands out pointers, not a Plan a callback
	during map[string][]spec.Dispatch
	// awaited: the dispatches that start during a pass, whose start a pass
	// waits for (waitForDuring).
	awaited map[string]bool

	// running says which application thread runs now, where th knows
	// (Scheduler); else threadOf, learnt by goroutine id, says it.
	running func() hsa.ThreadID

	mu        sync.Mutex
	threadOf  map[uint64]hsa.ThreadID      // goroutine id -> application thread
	published map[hsa.ThreadID]*published  // the pass in "thread-local" state (CB-4), written in place (publishedOf)
	live      map[string]bool              // contexts the tool has started globally
	label     map[hsa.ThreadID]string      // the dispatch each thread is submitting
	writes    map[hsa.ThreadID][]string    // the tool's own dispatches each thread is writing, outermost first
	labelOf   map[uint64]string            // dispatch id -> spec name
	inPass    map[string]int64             // spec name -> pass running, -1 outside; only of names in during (InPass)
	started   map[string]bool              // spec names whose app_dispatch happened, of those that start during a pass
	counters  map[string]map[uint64]uint64 // "spec name/counter" -> pass -> value
	recorded  map[uint64]uint64            // dispatch id -> 1 + the pass whose first record the tool has had (passes only move on)
	extNext   atomic.Uint64

	// What the tool learnt of a repeated dispatch's repetitions and of
	// what the tool wrote inside their windows is forgotten once the
	// repetition has completed and the next one has too (a record handed
	// over late still finds its label): nothing names them any more, and
	// a million repetitions must not leave a million entries.
	repeating map[hsa.ThreadID]bool         // the thread is submitting a repetition
	kept      map[hsa.ThreadID]*[2]retained // per thread: this repetition's, and the one's before
}

// retained is what the tool noted during one repetition, to forget.
type retained struct {
	ids  []uint64 // dispatch ids labelled (labelOf, and inPass by their labels)
	recs []uint64 // dispatch ids whose first records it had (recorded)
	keys []string // counters keys
}

// keep is the thread's retained of the repetition it is submitting, nil
// when it submits none; the caller holds mu.
func (t *tool) keep(th hsa.ThreadID) *retained {
	if !t.repeating[th] {
		return nil
	}
	k := t.kept[th]
	if k == nil {
		k = &[2]retained{}
		t.kept[th] = k
	}
	return &k[0]
}

func newTool(sdk *replay.SDK, rt hsa.Runtime, th Threads, rec *trace.Recorder, s spec.Spec) *tool {
	t := &tool{sdk: sdk, rt: rt, th: th, rec: rec, s: s,
		ctxByName: map[string]replay.ContextID{}, threadOf: map[uint64]hsa.ThreadID{},
		published: map[hsa.ThreadID]*published{}, live: map[string]bool{}, label: map[hsa.ThreadID]string{},
		writes:  map[hsa.ThreadID][]string{},
		labelOf: map[uint64]string{}, inPass: map[string]int64{}, started: map[string]bool{},
		counters: map[string]map[uint64]uint64{}, recorded: map[uint64]uint64{},
		repeating: map[hsa.ThreadID]bool{}, kept: map[hsa.ThreadID]*[2]retained{},
		byName: map[string]*spec.Dispatch{}, plans: map[string]*spec.Plan{}, during: map[string][]spec.Dispatch{},
		awaited: map[string]bool{}}
	for i := range s.Application.Dispatches {
		d := &s.Application.Dispatches[i]
		if _, dup := t.byName[d.Name]; dup {
			continue // the first of a name wins, as a walk would find it
		}
		t.byName[d.Name] = d
		if d.Plan != nil {
			pl := *d.Plan
			t.plans[d.Name] = &pl
		}
	}
	for _, d := range s.Application.Dispatches {
		if d.During != nil {
			t.during[d.During.Dispatch] = append(t.during[d.During.Dispatch], d)
			t.awaited[d.Name] = true
		}
	}
	if sc, ok := th.(Scheduler); ok && sc.Scheduled() {
		t.running = sc.Running
	}
	return t
}

// published is what the tool keeps in thread-local state during a pass:
// the dispatch and its pass, so that it merges records on (dispatch id,
// current_pass) as the spec advises, and a record of another dispatch made
// inside the pass (the tool's own) is not taken for the loop's. A thread
// outside any pass has its zero value (on unset): its entry is kept and
// written in place, as a delete and an insert of it every pass cost a
// fifth of the tool's callbacks (and a store into the map half that).
type published struct {
	dispatch, pass uint64
	on             bool
}

// publishedOf is th's entry, made on first use; the caller holds mu.
func (t *tool) publishedOf(th hsa.ThreadID) *published {
	p := t.published[th]
	if p == nil {
		p = new(published)
		t.published[th] = p
	}
	return p
}

// window names the replay callback the tool acts from, as the events of
// what it does there say it: its operation and phase, the pass (nil in
// CONFIG and outside any callback) and the dispatch. Not a trace.Event:
// one of those is 704 bytes to clear each callback.
type window struct {
	op       trace.Op
	phase    trace.Phase
	pass     *uint64
	dispatch uint64
}

func (t *tool) attach(a *app) { t.app = a }

// here is the application thread the calling goroutine belongs to; claimed
// (what the SDK says) when it is none of them.
func (t *tool) here(claimed hsa.ThreadID) hsa.ThreadID {
	if t.running != nil {
		if id := t.running(); id != 0 {
			return id
		}
		return claimed
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.threadOfLocked(claimed)
}

// ThreadStarted implements Hooks: where the threads are not scheduled it
// learns which goroutine is which application thread.
func (t *tool) ThreadStarted(id hsa.ThreadID) {
	if t.running != nil {
		return
	}
	t.mu.Lock()
	t.threadOf[goroutineID()] = id
	t.mu.Unlock()
}

// Submitting implements Hooks.
func (t *tool) Submitting(id hsa.ThreadID, dispatch string) {
	t.mu.Lock()
	t.label[id] = dispatch
	if t.awaited[dispatch] {
		t.started[dispatch] = true
	}
	_, _, rep := spec.SplitRepetition(dispatch)
	t.repeating[id] = rep
	t.mu.Unlock()
}

// InPass implements Hooks.
func (t *tool) InPass(dispatch string) (uint64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p, ok := t.inPass[dispatch]
	return uint64(p), ok && p >= 0
}

// Completed implements Hooks: it stops the contexts the spec stops after
// this dispatch, and forgets the repetition before a repetition that
// completed.
func (t *tool) Completed(thread hsa.ThreadID, dispatch string) {
	for _, c := range t.s.Contexts {
		if c.StopAfter == dispatch {
			t.setStarted(thread, c.Name, false, &window{})
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.repeating[thread] {
		return
	}
	t.repeating[thread] = false
	k := t.kept[thread]
	if k == nil {
		return
	}
	old := &k[1]
	for _, id := range old.ids {
		delete(t.inPass, t.labelOf[id])
		delete(t.labelOf, id)
	}
	for _, p := range old.recs {
		delete(t.recorded, p)
	}
	for _, key := range old.keys {
		delete(t.counters, key)
	}
	k[0], k[1] = retained{ids: old.ids[:0], recs: old.recs[:0], keys: old.keys[:0]}, k[0]
}

// api records an API call the tool made while setting up: e names the
// call and its arguments; the context and the status it returned are added.
func (t *tool) api(e trace.Event, ctx replay.ContextID, st replay.Status) {
	t.apiOn(0, e, ctx, st)
}

// apiOn records an API call made from an application thread.
func (t *tool) apiOn(thread hsa.ThreadID, e trace.Event, ctx replay.ContextID, st replay.Status) {
	e.Type, e.Thread, e.Context, e.Status = trace.API, uint64(thread), uint64(ctx), st.Trace()
	t.rec.EmitRef(&e)
}

// setUp subscribes to API tracing, then creates, configures and starts the
// spec's contexts.
func (t *tool) setUp() {
	t.sdk.ConfigureAPITracing(t.onAPICall)
	for _, c := range t.s.Contexts {
		id, st := t.sdk.CreateContext()
		t.api(trace.Event{Call: trace.CallCreateContext, Label: c.Name}, id, st)
		t.ctxByName[c.Name] = id
		t.configure(id, c)
	}
	if t.s.Tool.ConfigureTwice {
		id, st := t.sdk.CreateContext()
		t.api(trace.Event{Call: trace.CallCreateContext, Label: secondReplay}, id, st)
		st = t.sdk.ConfigureCallbackTracing(id, replay.KindKernelReplay, nil, t.onReplay)
		t.api(trace.Event{Call: trace.CallConfigureCallback, Label: secondReplay, Domain: trace.DomainKernelReplay}, id, st)
	}
	if t.hasReplay() {
		t.queryOperations()
	}
	for _, c := range t.s.Contexts {
		if c.Started() {
			t.setStarted(0, c.Name, true, &window{})
		}
	}
}

// setStarted starts or stops a context globally from thread (0: while
// setting up), recording the call; where names the replay callback it is
// made from, if any (op, phase, pass, dispatch).
func (t *tool) setStarted(thread hsa.ThreadID, name string, on bool, where *window) {
	id := t.ctxByName[name]
	e := trace.Event{Call: trace.CallStopContext, Label: name, Op: where.op, Phase: where.phase, Pass: where.pass, Dispatch: where.dispatch}
	st := replay.StatusSuccess
	if on {
		e.Call, st = trace.CallStartContext, t.sdk.StartContext(id)
	} else {
		st = t.sdk.StopContext(id)
	}
	if st == replay.StatusSuccess {
		t.mu.Lock()
		t.live[name] = on
		t.mu.Unlock()
	}
	t.apiOn(thread, e, id, st)
}

// onAPICall records an API call's enter or exit as API tracing shows it,
// on the thread the tool sees it run on: the witness of the correlation
// ids a dispatch inherits (COR-1, COR-2).
func (t *tool) onAPICall(r replay.APICallRecord) {
	t.rec.EmitRef(&trace.Event{Type: trace.APICall, Thread: uint64(t.here(r.Thread)), Call: r.Call,
		Phase: trace.Phase(r.Phase.String()), Corr: Corr(r.Correlation)})
}

func (t *tool) hasReplay() bool {
	for _, c := range t.s.Contexts {
		if c.Services.KernelReplay != nil {
			return true
		}
	}
	return false
}

// queryOperations asks the domain's name/id queries (API-3, API-4): every
// id up to one past LAST, and the two real names, the two reserved ones and
// LAST, the enum's bound.
func (t *tool) queryOperations() {
	for op := replay.OpNone + 1; op <= replay.OpLast+1; op++ {
		name, st := t.sdk.OperationName(replay.KindKernelReplay, op)
		e := trace.Event{Call: trace.CallOperationName, OpID: trace.U64(uint64(op))}
		if st == replay.StatusSuccess {
			e.OpName = trace.Op(name)
		}
		t.api(e, 0, st)
	}
	for _, name := range []trace.Op{trace.OpConfig, trace.OpPass, reservedSnapshot, reservedRestore, trace.OpLast} {
		op, st := t.sdk.OperationID(replay.KindKernelReplay, string(name))
		e := trace.Event{Call: trace.CallOperationID, OpName: name}
		if st == replay.StatusSuccess {
			e.OpID = trace.U64(uint64(op))
		}
		t.api(e, 0, st)
	}
}

// The operations the spec reserves for later (API-3): a query must not
// find them.
const (
	reservedSnapshot trace.Op = "SNAPSHOT"
	reservedRestore  trace.Op = "RESTORE"
)

// secondReplay names the context of the deliberate second configuration
// (ACT-5).
const secondReplay = "second_replay"

func (t *tool) configure(id replay.ContextID, c spec.Context) {
	sv := c.Services
	if r := sv.KernelReplay; r != nil {
		var ops []replay.Operation
		e := trace.Event{Call: trace.CallConfigureCallback, Label: c.Name, Domain: trace.DomainKernelReplay}
		for _, o := range r.Operations {
			e.Operations = append(e.Operations, trace.Op(o))
			if trace.Op(o) == trace.OpConfig {
				ops = append(ops, replay.OpConfig)
			} else {
				ops = append(ops, replay.OpPass)
			}
		}
		t.api(e, id, t.sdk.ConfigureCallbackTracing(id, replay.KindKernelReplay, ops, t.onReplay))
	}
	call := func(cl trace.Call) trace.Event { return trace.Event{Call: cl, Label: c.Name} }
	if cc := sv.CounterCollection; cc != nil {
		t.counterCx = append(t.counterCx, c.Name)
		t.api(call(trace.CallConfigureCounters), id, t.sdk.ConfigureCounterCollection(id, t.selectCounters(cc.Counters), t.onRecord))
	}
	if sv.KernelTrace != nil {
		t.api(call(trace.CallConfigureKernelTrace), id, t.sdk.ConfigureKernelTrace(id, t.onRecord))
	}
	if dc := sv.DeviceCounting; dc != nil {
		t.api(call(trace.CallConfigureDevice), id, t.sdk.ConfigureDeviceCounting(id, 0, dc.Counters, t.onRecord))
	}
	if sv.PCSampling != nil {
		t.api(call(trace.CallConfigurePCSampling), id, t.sdk.ConfigurePCSampling(id, 0, t.onRecord))
	}
	if sv.SPM != nil {
		t.api(call(trace.CallConfigureSPM), id, t.sdk.ConfigureSPM(id, t.onRecord))
	}
	if sv.ThreadTrace != nil {
		t.api(call(trace.CallConfigureThreadTrace), id, t.sdk.ConfigureThreadTrace(id, t.onRecord))
	}
	if ec := sv.ExternalCorrelation; ec != nil {
		t.api(call(trace.CallConfigureExternal), id, t.sdk.ConfigureExternalCorrelation(id, t.externalID(*ec)))
	}
}

// groups splits counters into the passes the dispatch's agent needs,
// dropping counters the agent lacks (AGT-1).
func (t *tool) groups(agent hsa.AgentID, counters []string) [][]string {
	a, ok := hsa.FindAgent(t.rt, agent)
	if !ok {
		return nil
	}
	have, _ := hsa.CollectableCounters(a, counters)
	g, err := hsa.CounterGroups(a, have)
	if err != nil {
		return nil
	}
	return g
}

// selectCounters picks the group of the pass published on this thread. A
// tool that splits counters over passes ("passes: groups", or a list of
// several groups) collects group i in pass i, with no wrap (AGT-1); a list
// that fits one group is collected on every pass, as a tool sampling the
// same counters until they converge does. Outside a loop: group 0.
func (t *tool) selectCounters(counters []string) replay.CounterSelectFunc {
	return func(thread hsa.ThreadID, info replay.DispatchInfo, _ replay.CorrelationID) []string {
		g := t.groups(info.AgentID, counters)
		th := t.here(thread)
		t.mu.Lock()
		pub := *t.publishedOf(th)
		inLoop := pub.on && pub.dispatch == info.DispatchID
		pass := pub.pass
		label := t.labelOf[info.DispatchID]
		t.mu.Unlock()
		switch {
		case !inLoop:
			pass = 0
		case len(g) == 1 && t.planFor(label).Passes != spec.PassesGroups:
			pass = 0
		}
		if pass >= uint64(len(g)) {
			return nil
		}
		return g[pass]
	}
}

// threadOfLocked is here by goroutine id; the caller holds mu.
func (t *tool) threadOfLocked(claimed hsa.ThreadID) hsa.ThreadID {
	if id, ok := t.threadOf[goroutineID()]; ok {
		return id
	}
	return claimed
}

func (t *tool) externalID(ec spec.ExternalCorrelation) replay.ExternalCorrelationFunc {
	return func(thread hsa.ThreadID, info replay.DispatchInfo, _ uint64) uint64 {
		id := ec.Value
		if ec.Mode == "increment" {
			id = t.extNext.Add(1) // COR-3: a blind tool gets a new id per submit
		}
		t.rec.EmitRef(&trace.Event{Type: trace.Correlation, Thread: uint64(t.here(thread)), Dispatch: info.DispatchID, Result: trace.I64(int64(id))})
		return id
	}
}

func (t *tool) onRecord(r replay.Record) {
	th := t.here(r.Thread)
	t.mu.Lock()
	pub := *t.publishedOf(th)
	inLoop := pub.on && pub.dispatch == r.Dispatch.DispatchID
	pass := pub.pass
	label := t.labelOf[r.Dispatch.DispatchID]
	kp := t.keep(th)
	if inLoop && r.Service == replay.CounterCollection {
		for _, c := range r.Counters {
			key := label + "/" + c.Name
			if t.counters[key] == nil {
				t.counters[key] = map[uint64]uint64{}
				if kp != nil {
					kp.keys = append(kp.keys, key)
				}
			}
			t.counters[key][pass] = c.Value
		}
	}
	got, had := t.recorded[pub.dispatch]
	first := inLoop && got != pub.pass+1
	if first {
		if !had && kp != nil {
			kp.recs = append(kp.recs, pub.dispatch)
		}
		t.recorded[pub.dispatch] = pub.pass + 1
	}
	t.mu.Unlock()
	var at *uint64
	if inLoop {
		at = PassOf(pass)
	}
	var e trace.Event
	recordEvent(&e, &r, th, at)
	t.rec.EmitRef(&e)
	if first {
		// The plan's calls from a service callback within a pass: made
		// from the pass's first record (MEM-6, clarified 2026-12-01).
		pl := t.planFor(label)
		t.actions(th, pl, spec.WindowRecord, &window{dispatch: pub.dispatch, pass: at})
	}
}
