package replay

import (
	"sync"
	"sync/atomic"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/trace"
)

// threadState is what the SDK keeps per application thread: the replay
// windows open on it and its API correlation stack. Go has no thread-local
// storage, so it is keyed by the thread id the runtime passes.
type threadState struct {
	mu sync.Mutex
	// windows are the replay windows open on this thread, innermost last.
	// A dispatch the tool writes inside one is a candidate like any other
	// and may open its own window on another agent, nested inside the
	// outer pass (MEM-6, clarified 2026-12-01): they nest as deep as there
	// are agents.
	windows  []*window
	apiStack []apiCall          // the API calls open on the thread, innermost last
	leaked   map[ContextID]bool // policy.localToggleLeaks: a mask that outlived its loop
	carried  map[ContextID]bool // policy.localOverrideNextLoop: a mask the next loop starts with
	shared   *sharedOverride    // policy.localOverridePerProcess: the process's one mask
	// aborted: a restore failed part-way on this thread (MEM-5), so the
	// windows around the one it failed in take no further step. Atomic,
	// not under mu: a loop asks after every callback and record, three
	// times a pass, and nothing else is read with it.
	aborted atomic.Bool

	start, stop LocalContextFunc // this thread's local toggles, made once
}

// window is one replay window: from its dispatch's CONFIG ENTER to the end
// of its replay, or to CONFIG EXIT when it is not replayed. A submission
// that runs once inside a window has an empty one (agent 0, no loop), so
// that no loop's override reaches it (LCX-6).
type window struct {
	dispatch uint64
	agent    hsa.AgentID // 0: a run-once submission's
	holds    bool        // its loop holds the agent's lock (MEM-6)
	loop     *loopState  // its replay loop, once begun
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

// localToggle masks ctx in or out of the loop of the thread's innermost
// window. It never touches global state (LCX-5).
func (s *SDK) localToggle(ts *threadState, ctx ContextID, on bool) Status {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	loop := ts.innerLoop()
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

// innerLoop is the loop of the innermost window, nil when that window has
// none (yet, or ever); ts.mu must be held.
func (ts *threadState) innerLoop() *loopState {
	if n := len(ts.windows); n > 0 {
		return ts.windows[n-1].loop
	}
	return nil
}

// openWindow opens a window for dispatch on agent, nested in any the
// thread has open; closeWindow closes the innermost.
func (ts *threadState) openWindow(dispatch uint64, agent hsa.AgentID) *window {
	w := &window{dispatch: dispatch, agent: agent}
	ts.mu.Lock()
	ts.windows = append(ts.windows, w)
	ts.mu.Unlock()
	return w
}

func (ts *threadState) closeWindow() {
	ts.mu.Lock()
	if n := len(ts.windows); n > 0 {
		ts.windows[n-1] = nil
		ts.windows = ts.windows[:n-1]
	}
	ts.mu.Unlock()
}

// inWindow reports whether a replay window is open on the thread: then a
// dispatch written on it is the tool's own.
func (ts *threadState) inWindow() bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return len(ts.windows) > 0
}

// windowOn reports whether a window of this thread is open on agent: a
// candidate there is declined (MEM-6, clarified).
func (ts *threadState) windowOn(agent hsa.AgentID) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, w := range ts.windows {
		if w.agent != 0 && w.agent == agent {
			return true
		}
	}
	return false
}

// ownsAgent reports whether a loop of this thread holds agent's lock: a
// write there must not wait for it, since the waiting thread would be the
// one holding it.
func (ts *threadState) ownsAgent(agent hsa.AgentID) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, w := range ts.windows {
		if w.holds && w.agent == agent {
			return true
		}
	}
	return false
}

func (ts *threadState) setHolds(w *window, on bool) {
	ts.mu.Lock()
	w.holds = on
	ts.mu.Unlock()
}

func (ts *threadState) beginLoop(w *window, before *activeSet) *loopState {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	w.loop = &loopState{before: before, enabled: map[ContextID]bool{}}
	for ctx, on := range ts.carried { // LCX-4 broken: the last loop's mask
		w.loop.enabled[ctx] = on
	}
	return w.loop
}

// endLoop drops the override: every context's pre-loop state holds again
// (LCX-4), unless a fault that keeps it is planted.
func (ts *threadState) endLoop(w *window, pol *policy) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if pol.localToggleLeaks && w.loop != nil && len(w.loop.enabled) > 0 {
		ts.leaked = w.loop.enabled
	}
	if pol.localOverrideNextLoop && w.loop != nil {
		ts.carried = w.loop.enabled
	}
	if ts.shared != nil {
		ts.shared.clear()
	}
	w.loop = nil
}

func (ts *threadState) setAborted() { ts.aborted.Store(true) }

func (ts *threadState) isAborted() bool { return ts.aborted.Load() }

func (ts *threadState) setPassEnter(on bool) {
	ts.mu.Lock()
	if l := ts.innerLoop(); l != nil {
		l.inPassEnter = on
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
	loop := ts.innerLoop()
	if len(ts.windows) > 0 {
		mask = nil // inside a window: the innermost loop's pass, else nothing masked
		if loop != nil {
			mask = loop.enabled
		}
	}
	on, set := mask[ctx]
	if ts.shared != nil && loop != nil {
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
