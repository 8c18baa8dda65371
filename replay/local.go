package replay

import (
	"sync"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/trace"
)

// threadState is what the SDK keeps per application thread: the replay
// loop it is running, if any, and its API correlation stack. Go has no
// thread-local storage, so it is keyed by the thread id the runtime passes.
type threadState struct {
	mu       sync.Mutex
	loop     *loopState
	apiStack []apiCall          // the API calls open on the thread, innermost last
	leaked   map[ContextID]bool // policy.localToggleLeaks: a mask that outlived its loop
	carried  map[ContextID]bool // policy.localOverrideNextLoop: a mask the next loop starts with
	shared   *sharedOverride    // policy.localOverridePerProcess: the process's one mask
	// inCallback counts the replay callbacks running on this thread: a
	// dispatch written inside one is the tool's own (docs/decisions.md).
	inCallback int
	// owns is the agent whose loop lock this thread holds (MEM-6), 0 none.
	owns hsa.AgentID
	// unmasked is set while the tool's own dispatch is prepared: the
	// loop's override is not for it (LCX-6).
	unmasked bool

	start, stop LocalContextFunc // this thread's local toggles, made once
}

// loopState is the per-thread, per-loop override map of LCX-3..7.
type loopState struct {
	before      *activeSet         // contexts active when the loop began (LCX-4, LCX-7)
	enabled     map[ContextID]bool // the mask; absent means "as before the loop"
	inPassEnter bool               // LCX-2: the only window where toggles are legal
}

func (s *SDK) thread(id hsa.ThreadID) *threadState {
	if ts, ok := s.threads.Load(id); ok {
		return ts.(*threadState)
	}
	ts := &threadState{shared: s.shared}
	ts.start = func(ctx ContextID) Status { return s.localToggle(ts, ctx, true) }
	ts.stop = func(ctx ContextID) Status { return s.localToggle(ts, ctx, false) }
	actual, _ := s.threads.LoadOrStore(id, ts)
	return actual.(*threadState)
}

// LocalContextFuncs returns the thread's replay_start_context and
// replay_stop_context, the same functions PASS payloads carry. A tool that
// keeps them and calls them outside PASS ENTER gets ERROR_CONTEXT_ERROR.
func (s *SDK) LocalContextFuncs(thread hsa.ThreadID) (start, stop LocalContextFunc) {
	ts := s.thread(thread)
	return ts.start, ts.stop
}

// localToggle masks ctx in or out of the thread's current loop. It never
// touches global state (LCX-5).
func (s *SDK) localToggle(ts *threadState, ctx ContextID, on bool) Status {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	loop := ts.loop
	if loop == nil || (!loop.inPassEnter && !s.pol.localToggleAnywhere) {
		return StatusErrorContextError // LCX-2
	}
	s.mu.Lock()
	_, exists := s.contexts[ctx]
	s.mu.Unlock()
	if !exists {
		return StatusErrorContextNotFound
	}
	if !loop.before.has(ctx) && !(on && s.pol.localStartNotStartedAllowed) {
		// LCX-7 (clarified 2026-11-30): a context that was not active when
		// the loop began can be neither started nor stopped locally.
		return StatusErrorContextNotStarted
	}
	if on && s.pol.localStartIgnored {
		if was, set := loop.enabled[ctx]; set && !was {
			return StatusSuccess // SVC-1, LCX-3 broken: the stop holds
		}
	}
	loop.enabled[ctx] = on // LCX-3: sticky; LCX-7: the last call in a pass wins
	if ts.shared != nil {
		ts.shared.set(ctx, on) // LCX-6 broken: every thread's loop sees it
	}
	return StatusSuccess
}

func (ts *threadState) beginLoop(before *activeSet) *loopState {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.loop = &loopState{before: before, enabled: map[ContextID]bool{}}
	for ctx, on := range ts.carried { // LCX-4 broken: the last loop's mask
		ts.loop.enabled[ctx] = on
	}
	return ts.loop
}

// endLoop drops the override: every context's pre-loop state holds again
// (LCX-4), unless a fault that keeps it is planted.
func (ts *threadState) endLoop(pol *policy) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if pol.localToggleLeaks && ts.loop != nil && len(ts.loop.enabled) > 0 {
		ts.leaked = ts.loop.enabled
	}
	if pol.localOverrideNextLoop && ts.loop != nil {
		ts.carried = ts.loop.enabled
	}
	if ts.shared != nil {
		ts.shared.clear()
	}
	ts.loop = nil
}

// enterCallback and exitCallback bracket a replay callback on this thread.
func (ts *threadState) enterCallback() {
	ts.mu.Lock()
	ts.inCallback++
	ts.mu.Unlock()
}

func (ts *threadState) exitCallback() {
	ts.mu.Lock()
	ts.inCallback--
	ts.mu.Unlock()
}

func (ts *threadState) insideCallback() bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.inCallback > 0
}

// setOwns records the agent whose loop lock the thread took (0: released).
func (ts *threadState) setOwns(agent hsa.AgentID) {
	ts.mu.Lock()
	ts.owns = agent
	ts.mu.Unlock()
}

func (ts *threadState) ownsAgent(agent hsa.AgentID) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.owns != 0 && ts.owns == agent
}

func (ts *threadState) setUnmasked(on bool) {
	ts.mu.Lock()
	ts.unmasked = on
	ts.mu.Unlock()
}

func (ts *threadState) setPassEnter(on bool) {
	ts.mu.Lock()
	if ts.loop != nil {
		ts.loop.inPassEnter = on
	}
	ts.mu.Unlock()
}

// participates reports whether ctx's service svc takes part in the current
// submit of this thread (SVC-1, SVC-2). Outside a loop every started
// context does.
func (ts *threadState) participates(svc Service, ctx ContextID, pol *policy) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	mask := ts.leaked
	if ts.loop != nil {
		mask = ts.loop.enabled
	}
	if ts.unmasked {
		mask = nil
	}
	on, set := mask[ctx]
	if ts.shared != nil && ts.loop != nil && !ts.unmasked {
		on, set = ts.shared.get(ctx) // LCX-6 broken: another thread's call counts
	}
	switch svc {
	case PCSampling, DeviceCounting:
		// SVC-2: agent-wide services ignore local toggles.
		if !pol.agentWideServicesHonourStops {
			return true
		}
		return !set || on
	default:
		// SVC-1: counters and SPM honour a local stop and a local start.
		// Kernel trace and thread trace honour "a stop only" (clarified
		// 2026-11-30): they skip a pass while their context is stopped in
		// it, a later local start ends the stop (LCX-3), and a start never
		// makes them collect where they would not without any override.
		// Only contexts active before the loop reach this point, so for
		// all four the answer is the mask, or "collect" when unset.
		return !set || on
	}
}

// apiCall is an open API call: its correlation id and its ancestor.
type apiCall struct{ id, ancestor uint64 }

// ConfigureAPITracing subscribes fn to the API calls of every thread: each
// call's enter and exit, with its correlation id. The reference configures
// callback tracing of a runtime API domain on a context; here it is one
// subscription for the process, delivered whatever is started. Nil ends it.
func (s *SDK) ConfigureAPITracing(fn APITracingFunc) {
	if fn == nil {
		s.apiTracing.Store(nil)
		return
	}
	s.apiTracing.Store(&fn)
}

// EnterAPI marks the start of API call name on thread and returns its
// correlation id, a new one. Its ancestor is the innermost call open on the
// same thread (0: none): a dispatch written inside it inherits both (COR-1,
// decision 20.3.1).
func (s *SDK) EnterAPI(thread hsa.ThreadID, name trace.Call) uint64 {
	c := apiCall{id: s.correlationIDs.Add(1)}
	ts := s.thread(thread)
	ts.mu.Lock()
	if n := len(ts.apiStack); n > 0 {
		c.ancestor = ts.apiStack[n-1].id
	}
	if s.pol.ancestorProcessWide {
		c.ancestor = s.lastAPI.Swap(c.id) // COR-1 broken: another thread's call
	}
	ts.apiStack = append(ts.apiStack, c)
	ts.mu.Unlock()
	s.traceAPI(thread, name, PhaseEnter, c)
	return c.id
}

// ExitAPI ends the innermost API call on thread; name is that call's.
func (s *SDK) ExitAPI(thread hsa.ThreadID, name trace.Call) {
	ts := s.thread(thread)
	ts.mu.Lock()
	n := len(ts.apiStack)
	if n == 0 {
		ts.mu.Unlock()
		return
	}
	c := ts.apiStack[n-1]
	ts.apiStack = ts.apiStack[:n-1]
	if s.pol.ancestorProcessWide {
		s.lastAPI.Store(c.ancestor)
	}
	ts.mu.Unlock()
	s.traceAPI(thread, name, PhaseExit, c)
}

// traceAPI tells the tool's API tracing, if any, of one enter or exit.
func (s *SDK) traceAPI(thread hsa.ThreadID, name trace.Call, ph Phase, c apiCall) {
	if fn := s.apiTracing.Load(); fn != nil {
		(*fn)(APICallRecord{Thread: thread, Call: name, Phase: ph, Correlation: CorrelationID{Internal: c.id, Ancestor: c.ancestor}})
	}
}

// correlation captures the internal and ancestor ids for a dispatch: those
// of the innermost API call open on the dispatching thread (COR-1). Written
// outside any call, it gets an id of its own and no ancestor.
func (s *SDK) correlation(ts *threadState) CorrelationID {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	n := len(ts.apiStack)
	if n == 0 {
		return CorrelationID{Internal: s.correlationIDs.Add(1)}
	}
	c := ts.apiStack[n-1]
	return CorrelationID{Internal: c.id, Ancestor: c.ancestor}
}
